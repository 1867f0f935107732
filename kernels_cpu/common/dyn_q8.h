/* The range over which DynamicQuantizeLinear and com.microsoft DynamicQuantizeMatMul quantize a
 * float tensor to uint8, as onnx's reference and onnxruntime take it: [min(x, 0), max(x, 0)],
 * NaN left out. */
#ifndef ONYX_KERNELS_CPU_DYN_Q8_H
#define ONYX_KERNELS_CPU_DYN_Q8_H

#include <stdint.h>

/* *lo = min(0, x[0, n)), *hi = max(0, x[0, n)), NaN elements skipped. */
void cpu_dyn_q8_range(const float *x, int64_t n, float *lo, float *hi);

#endif
