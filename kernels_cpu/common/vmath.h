/* Vectorized float32 math for the CPU kernels: exp, expm1, log, tanh, erf, sigmoid, the
 * activations built on them and the pieces of a softmax, with an AVX-512 and an AVX2 path chosen
 * once at run time (cpuid) and a scalar fallback. Accuracy and speed: see vmath.c. */
#ifndef ONYX_KERNELS_CPU_VMATH_H
#define ONYX_KERNELS_CPU_VMATH_H

#include <math.h>
#include <stdint.h>

/* Every function works on x[0, n) into y[0, n); y may be x (in place), never a partial overlap.
 * Special values as libm: NaN in gives NaN out, ±inf and overflow/underflow give the limits. */
typedef void (*cpu_vm_map_fn)(const float *x, float *y, int64_t n);

typedef struct cpu_vmath {
    const char *name; /* "avx512", "avx2" or "scalar" */
    cpu_vm_map_fn exp, expm1, log, tanh, erf, sigmoid;
    cpu_vm_map_fn gelu;      /* 0.5 x (1 + erf(x / sqrt 2)), the negative tail through erfc */
    cpu_vm_map_fn gelu_tanh; /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    cpu_vm_map_fn mish;      /* x tanh(softplus x) */
    cpu_vm_map_fn softplus;  /* log(1 + e^x) */
    /* x sigmoid(alpha x): SiLU at alpha 1 */
    void (*swish)(const float *x, float *y, int64_t n, float alpha);
    /* x > 0 ? gamma x : gamma alpha expm1(x * in_scale): Elu (gamma 1, in_scale 1), Selu,
     * Celu (gamma 1, in_scale 1/alpha) */
    void (*elu)(const float *x, float *y, int64_t n, float alpha, float gamma, float in_scale);
    /* x max(0, min(1, alpha x + beta)) with mul_x, else the clamp alone (HardSwish/HardSigmoid) */
    void (*hard)(const float *x, float *y, int64_t n, float alpha, float beta, int mul_x);
    /* max over x[0, n) (n >= 1); NaN when any element is NaN */
    float (*max)(const float *x, int64_t n);
    /* y = exp(x - sub) (y NULL: not stored); returns the sum of those exps */
    float (*exp_sum)(const float *x, float *y, int64_t n, float sub);
    /* y = a x + b (one rounding) */
    void (*affine)(const float *x, float *y, int64_t n, float a, float b);
} cpu_vmath;

typedef enum cpu_vmath_isa { CPU_VMATH_SCALAR, CPU_VMATH_AVX2, CPU_VMATH_AVX512 } cpu_vmath_isa;

/* The fastest path this CPU runs, chosen on the first call. */
const cpu_vmath *cpu_vmath_get(void);

/* A given path (tests, benchmarks), or NULL when this CPU cannot run it. */
const cpu_vmath *cpu_vmath_for(cpu_vmath_isa isa);

/* Softmax of one contiguous row, y may be x: max, exps and their sum, one scale. */
static inline void cpu_vm_softmax_row(const cpu_vmath *vm, const float *x, float *y, int64_t n) {
    float mx = vm->max(x, n);
    float s = vm->exp_sum(x, y, n, mx);
    vm->affine(y, y, n, 1 / s, 0);
}

/* The same with one more logit `sink` that takes part in the normalization but has no output
 * (an attention sink; sink 0 is onnxruntime's smooth softmax): the max over both, the sink's
 * exp added to the sum. */
static inline void cpu_vm_softmax_row_sink(const cpu_vmath *vm, const float *x, float *y,
                                           int64_t n, float sink) {
    if (n <= 0) return;
    float mx = vm->max(x, n);
    if (sink > mx) mx = sink;
    float s = vm->exp_sum(x, y, n, mx) + expf(sink - mx);
    vm->affine(y, y, n, 1 / s, 0);
}

#endif
