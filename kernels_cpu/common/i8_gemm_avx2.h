/* The 8-bit product of CPUs without VNNI, with onnxruntime's (MLAS's) AVX2 arithmetic: raw
 * A x raw B into int32, zero points left to the caller. Why the arithmetic is what it is:
 * i8_gemm_avx2.c's opening comment. */
#ifndef ONYX_KERNELS_CPU_I8_GEMM_AVX2_H
#define ONYX_KERNELS_CPU_I8_GEMM_AVX2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which kernel the exact-as-onnxruntime 8-bit products (cpu_i8mm) take. ONYX_I8, read when a
 * session prepares: "avx2" forces the AVX2 kernels (where the CPU has AVX2), "ref" the
 * reference loops; unset, oneDNN where its int8 products are exact (VNNI), else AVX2. */
typedef enum cpu_i8_path { CPU_I8_REF, CPU_I8_ONEDNN, CPU_I8_AVX2 } cpu_i8_path;
cpu_i8_path cpu_i8_choose(void);

/* Whether this CPU runs the AVX2 kernels. */
bool i8avx2_supported(void);

/* MLAS saturates only u8 x s8 (vpmaddubsw); every other pairing of types is exact. */
static inline bool i8avx2_saturates(bool a_signed, bool b_signed) { return !a_signed && b_signed; }

/* B [k, n] (stored [n, k] when transposed; int8 when b_signed, else uint8) packed for a product
 * with an A of signedness a_signed: i8avx2_pack_bytes(...) bytes at dst (64-byte aligned), and
 * colsum[j] = sum_p B[p, j] (wrapping) when colsum is not NULL. */
size_t i8avx2_pack_bytes(int64_t k, int64_t n, bool a_signed, bool b_signed);
void i8avx2_pack(const void *b, bool b_signed, bool transposed, int64_t k, int64_t n,
                 bool a_signed, void *dst, uint32_t *colsum);

/* Scratch (64-byte aligned) of one i8avx2_gemm call. */
size_t i8avx2_scratch_bytes(int64_t m, int64_t k, bool a_signed, bool b_signed);

/* c[i, j] (row stride ldc) = sum_p A[i, p] B[p, j] as MLAS's AVX2 kernels sum it: for uint8 A and
 * int8 B, each pair of products (p = 2q, 2q + 1) saturated to int16 first; exact otherwise. A is
 * [m, k] dense (int8 when a_signed, else uint8); 32-bit wrapping sums. Runs on the thread pool. */
void i8avx2_gemm(const void *packed, const void *a, bool a_signed, bool b_signed, int64_t m,
                 int64_t k, int64_t n, int32_t *c, int64_t ldc, void *scratch);

#endif
