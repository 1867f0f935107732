/* The range of dynamic uint8 quantization (dyn_q8.h): GROUPS x LANES running minima and maxima
 * (four vectors of each on AVX-512, so that no step waits for the one before), folded at the
 * end. Written as an omp simd min/max reduction, GCC kept the accumulators on the stack, a store
 * and a reload every 16 elements, which made this pass as slow as the quantizing one after it
 * (perf, BERT-base dynamic at 12 tokens). */
#include "kernels_cpu/common/dyn_q8.h"

#include "kernels_cpu/common/cpu_types.h"

#define LANES 16
#define GROUPS 4

/* x < m ? x : m keeps m where x is NaN, as x > m ? x : m does */
CPU_CLONES void cpu_dyn_q8_range(const float *x, int64_t n, float *lo, float *hi) {
    float mn[GROUPS][LANES] = {{0}}, mx[GROUPS][LANES] = {{0}};
    int64_t i = 0;
    for (; i + GROUPS * LANES <= n; i += GROUPS * LANES)
        _Pragma("GCC unroll 4") for (int g = 0; g < GROUPS; g++) {
            const float *v = x + i + g * LANES;
            for (int l = 0; l < LANES; l++) {
                mn[g][l] = v[l] < mn[g][l] ? v[l] : mn[g][l];
                mx[g][l] = v[l] > mx[g][l] ? v[l] : mx[g][l];
            }
        }
    for (; i < n; i++) {
        mn[0][0] = x[i] < mn[0][0] ? x[i] : mn[0][0];
        mx[0][0] = x[i] > mx[0][0] ? x[i] : mx[0][0];
    }
    float a = 0, b = 0;
    for (int g = 0; g < GROUPS; g++)
        for (int l = 0; l < LANES; l++) {
            a = mn[g][l] < a ? mn[g][l] : a;
            b = mx[g][l] > b ? mx[g][l] : b;
        }
    *lo = a;
    *hi = b;
}
