/* MatMulNBits at accuracy_level 4 on 4-bit weights as an int8 GEMM (kernels_cpu/contrib_nlp/
 * nbits_i8.c): the weight repacked once for the int8 dot-product instructions, activations
 * quantized per block to int8, tiles of rows x 16 columns accumulated in registers. Runs for any
 * number of rows (decode and prefill), with AVX-512 VNNI or AVX2. */
#ifndef ONYX_KERNELS_CPU_NBITS_I8_H
#define ONYX_KERNELS_CPU_NBITS_I8_H

#include <stdint.h>

#include "core/status.h"
#include "kernels_cpu/contrib_nlp/nbits_dot.h"

/* Columns of one group: one 32-bit lane of a 512-bit register each. */
#define NBI8_COLS 16

/* The instruction sets the int8 kernels are written for. */
typedef enum { NBI8_NONE, NBI8_AVX2, NBI8_VNNI } nbi8_isa;

/* The weight repacked: columns in groups of 16; per group, per block of K, per 8 elements of K,
 * 64 bytes: column c's 32-bit lane c holds in byte i the code of element 8s+i (low nibble) and of
 * element 8s+4+i (high nibble), so that a nibble mask gives 4 consecutive codes of 16 columns,
 * the operand of one 4-way int8 dot product against 4 activations broadcast. Scales and integer
 * zero points laid out [group][block][16]; zp NULL: the midpoint 8. Columns past N are zero. */
typedef struct nbi8_pack {
    int64_t k, n, block, k_blocks, groups;
    uint8_t *codes;
    float *scale;
    uint8_t *zp;
} nbi8_pack;

/* The kernels this CPU runs, or NBI8_AVX2 where the environment variable ONYX_NBITS_I8=avx2 asks
 * for it (to test that path on a CPU with VNNI); NBI8_NONE where neither runs. */
nbi8_isa nbi8_choose(void);

/* Whether w can be repacked: 4-bit codes with integer zero points or none, and blocks of 8k. */
int nbi8_fits(const nb_weight *w);

/* Repacks w (nbi8_fits) into a new pack, in parallel over the groups; nbi8_free frees it. */
onyx_status nbi8_pack_make(const nb_weight *w, nbi8_pack **out);
void nbi8_free(nbi8_pack *p);

/* The weight's codes as MatMulNBits stores them ([n][k_blocks][block / 2] bytes, low nibble
 * first), rebuilt exactly from the pack: every code of the n columns is in it. */
void nbi8_unpack_codes(const nbi8_pack *p, uint8_t *b);

/* Column n of the weight (a row of B) dequantized into out[k], (code - zero point) * scale in
 * float: the same values nb_dequant_column gives from B as stored. */
void nbi8_dequant_column(const nbi8_pack *p, int64_t n, float *out);

/* Bytes of scratch nbi8_matmul takes for m rows. */
size_t nbi8_scratch_bytes(const nbi8_pack *p, int64_t m);

/* y[m, n] = a[m, k] (float, quantized here per block to int8 as onnxruntime's level 4 does:
 * scale max|a| / 127, codes rounded to nearest even) times the weight; `scratch` as sized above,
 * 64-byte aligned. Parallel over groups of columns. */
void nbi8_matmul(const nbi8_pack *p, nbi8_isa isa, const float *a, int64_t m, float *y,
                 void *scratch);

#endif
