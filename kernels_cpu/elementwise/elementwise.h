/* Shared pieces of the elementwise CPU kernels: per-type load/store lists (float16/bfloat16
 * computed in float), and the runner that maps a dtype-indexed table of inner loops over
 * broadcast operands. */
#ifndef ONYX_KERNELS_CPU_ELEMENTWISE_H
#define ONYX_KERNELS_CPU_ELEMENTWISE_H

#include "kernels_cpu/common/broadcast.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

/* X(dtype, storage type, compute type, load, store) for every type an elementwise kernel handles
 * arithmetically: native types load/store as themselves; half types go through float. */
#define EW_ID(v) (v)
#define EW_BOOL_LD(v) ((uint8_t)((v) != 0))
/* Each list passes its trailing arguments on to X, so a callback can carry the op's name. */
#define EW_FOR_HALF(X, ...)                                                                        \
    X(ONYX_FLOAT16, uint16_t, float, cpu_fp16_to_float, cpu_float_to_fp16, __VA_ARGS__)            \
    X(ONYX_BFLOAT16, uint16_t, float, cpu_bf16_to_float, cpu_float_to_bf16, __VA_ARGS__)
#define EW_FOR_REAL(X, ...)                                                                        \
    X(ONYX_FLOAT, float, float, EW_ID, EW_ID, __VA_ARGS__)                                         \
    X(ONYX_DOUBLE, double, double, EW_ID, EW_ID, __VA_ARGS__)
#define EW_FOR_FLOAT(X, ...) EW_FOR_REAL(X, __VA_ARGS__) EW_FOR_HALF(X, __VA_ARGS__)
#define EW_FOR_SINT(X, ...)                                                                        \
    X(ONYX_INT8, int8_t, int8_t, EW_ID, EW_ID, __VA_ARGS__)                                        \
    X(ONYX_INT16, int16_t, int16_t, EW_ID, EW_ID, __VA_ARGS__)                                     \
    X(ONYX_INT32, int32_t, int32_t, EW_ID, EW_ID, __VA_ARGS__)                                     \
    X(ONYX_INT64, int64_t, int64_t, EW_ID, EW_ID, __VA_ARGS__)
#define EW_FOR_UINT(X, ...)                                                                        \
    X(ONYX_UINT8, uint8_t, uint8_t, EW_ID, EW_ID, __VA_ARGS__)                                     \
    X(ONYX_UINT16, uint16_t, uint16_t, EW_ID, EW_ID, __VA_ARGS__)                                  \
    X(ONYX_UINT32, uint32_t, uint32_t, EW_ID, EW_ID, __VA_ARGS__)                                  \
    X(ONYX_UINT64, uint64_t, uint64_t, EW_ID, EW_ID, __VA_ARGS__)
#define EW_FOR_INT(X, ...) EW_FOR_SINT(X, __VA_ARGS__) EW_FOR_UINT(X, __VA_ARGS__)
#define EW_FOR_NUMERIC(X, ...) EW_FOR_FLOAT(X, __VA_ARGS__) EW_FOR_INT(X, __VA_ARGS__)
/* bool is read as a byte and normalized, never as C bool (a stray 2 would be UB). */
#define EW_FOR_BOOL(X, ...) X(ONYX_BOOL, uint8_t, uint8_t, EW_BOOL_LD, EW_ID, __VA_ARGS__)

/* X callback writing a table entry: [dtype] = name_dtype, */
#define EW_ENTRY(DT, ST, CT, LD, STO, name, ...) [DT] = name##_##DT,

/* float's unary and binary loops are also built for AVX2 and AVX-512 (CPU_CLONES): a broadcast
 * Add of attention scores and mask ran 1.4x faster so. The other types keep the baseline alone,
 * since clones of every type's loops grew the library's code by half. */
#define EW_CLONES_ONYX_FLOAT CPU_CLONES
#define EW_CLONES_ONYX_FLOAT16
#define EW_CLONES_ONYX_BFLOAT16
#define EW_CLONES_ONYX_DOUBLE
#define EW_CLONES_ONYX_INT8
#define EW_CLONES_ONYX_INT16
#define EW_CLONES_ONYX_INT32
#define EW_CLONES_ONYX_INT64
#define EW_CLONES_ONYX_UINT8
#define EW_CLONES_ONYX_UINT16
#define EW_CLONES_ONYX_UINT32
#define EW_CLONES_ONYX_UINT64
#define EW_CLONES_ONYX_BOOL
#define EW_CLONES_ONYX_FLOAT8E4M3FN
#define EW_CLONES_ONYX_FLOAT8E4M3FNUZ
#define EW_CLONES_ONYX_FLOAT8E5M2
#define EW_CLONES_ONYX_FLOAT8E5M2FNUZ

/* Inner loop `name_DT` for a two-input op: x and y are the loaded operands (compute type CT),
 * EXPR their result, stored as OT through OSTO. Specialized runs for the common stride
 * patterns (both contiguous, one a broadcast scalar) so they vectorize. */
#define EW_BINARY_LOOP(name, DT, ST, CT, LD, OT, OSTO, EXPR)                                       \
    EW_CLONES_##DT static void name##_##DT(void *ctx, int64_t n, char *const *p,                   \
                                           const int64_t *s) {                                     \
        (void)ctx;                                                                                 \
        OT *o = (OT *)p[0];                                                                        \
        const ST *a = (const ST *)p[1], *b = (const ST *)p[2];                                     \
        if (s[1] == 1 && s[2] == 1 && (size_t)n * sizeof(OT) >= CPU_STREAM_MIN_BYTES) {           \
            /* huge output: computed a block at a time in L1, then streamed out */                 \
            enum { BLOCK = CPU_STREAM_BLOCK_BYTES / sizeof(OT) };                                  \
            OT buf[BLOCK] __attribute__((aligned(64)));                                            \
            for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {                                            \
                int64_t m = n - i0 < BLOCK ? n - i0 : BLOCK;                                       \
                CPU_SIMD for (int64_t i = 0; i < m; i++) {                                         \
                    CT x = LD(a[i0 + i]), y = LD(b[i0 + i]);                                       \
                    buf[i] = OSTO(EXPR);                                                           \
                }                                                                                  \
                cpu_stream_copy(o + i0, buf, (size_t)m * sizeof(OT));                              \
            }                                                                                      \
            cpu_stream_fence();                                                                    \
        } else if (s[1] == 1 && s[2] == 1) {                                                       \
            CPU_SIMD for (int64_t i = 0; i < n; i++) {                                             \
                CT x = LD(a[i]), y = LD(b[i]);                                                     \
                o[i] = OSTO(EXPR);                                                                 \
            }                                                                                      \
        } else if (s[1] == 0 && s[2] == 1) {                                                       \
            CT x = LD(a[0]);                                                                       \
            CPU_SIMD for (int64_t i = 0; i < n; i++) {                                             \
                CT y = LD(b[i]);                                                                   \
                o[i] = OSTO(EXPR);                                                                 \
            }                                                                                      \
        } else if (s[1] == 1 && s[2] == 0) {                                                       \
            CT y = LD(b[0]);                                                                       \
            CPU_SIMD for (int64_t i = 0; i < n; i++) {                                             \
                CT x = LD(a[i]);                                                                   \
                o[i] = OSTO(EXPR);                                                                 \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                CT x = LD(a[i * s[1]]), y = LD(b[i * s[2]]);                                       \
                o[i] = OSTO(EXPR);                                                                 \
            }                                                                                      \
        }                                                                                          \
    }

/* X callbacks: a binary op whose result has the inputs' type, or is bool (uint8_t 0/1). */
#define EW_BINARY_SAME(DT, ST, CT, LD, STO, name, EXPR)                                            \
    EW_BINARY_LOOP(name, DT, ST, CT, LD, ST, STO, EXPR)
#define EW_BINARY_BOOL(DT, ST, CT, LD, STO, name, EXPR)                                            \
    EW_BINARY_LOOP(name, DT, ST, CT, LD, uint8_t, EW_ID, (uint8_t)(EXPR))

/* Inner loop `name_DT` for a one-input op (x loaded as CT) producing OT via OSTO. */
#define EW_UNARY_LOOP(name, DT, ST, CT, LD, OT, OSTO, EXPR)                                        \
    EW_CLONES_##DT static void name##_##DT(void *ctx, int64_t n, char *const *p,                   \
                                           const int64_t *s) {                                     \
        (void)ctx;                                                                                 \
        OT *o = (OT *)p[0];                                                                        \
        const ST *a = (const ST *)p[1];                                                            \
        if (s[1] == 1) {                                                                           \
            CPU_SIMD for (int64_t i = 0; i < n; i++) {                                             \
                CT x = LD(a[i]);                                                                   \
                o[i] = OSTO(EXPR);                                                                 \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                CT x = LD(a[i * s[1]]);                                                            \
                o[i] = OSTO(EXPR);                                                                 \
            }                                                                                      \
        }                                                                                          \
    }
#define EW_UNARY_SAME(DT, ST, CT, LD, STO, name, EXPR)                                             \
    EW_UNARY_LOOP(name, DT, ST, CT, LD, ST, STO, EXPR)
#define EW_UNARY_BOOL(DT, ST, CT, LD, STO, name, EXPR)                                             \
    EW_UNARY_LOOP(name, DT, ST, CT, LD, uint8_t, EW_ID, (uint8_t)(EXPR))

/* Unsigned type at least as wide as int, for wrapping integer arithmetic without signed
 * overflow or promotion to (signed) int. */
#define EW_UWIDE(T)                                                                                \
    __typeof__(_Generic((T)0, int64_t: (uint64_t)0, uint64_t: (uint64_t)0, default: 0u))

/* Inner loops indexed by dtype; NULL where the op does not take that type. */
typedef cpu_bcast_fn cpu_ew_table[ONYX_DTYPE_COUNT];

/* Runs table[dtype of input `key`] over inputs [0, n_in) broadcast to output 0. Handles the
 * legacy (opset < 7) broadcast/axis attributes of two-input nodes. With key 0 every input must
 * have input 0's type. */
onyx_status cpu_ew_run(const kernel_call *c, const cpu_bcast_fn *table, int key, int n_in,
                       void *ctx);

/* Folds a variadic op: out = op(in0, in1), then out = op(out, ink); one input is copied. */
onyx_status cpu_ew_run_variadic(const kernel_call *c, const cpu_bcast_fn *table, void *ctx);

#endif
