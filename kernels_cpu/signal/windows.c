/* HannWindow, HammingWindow and BlackmanWindow on the CPU: one file because they differ only in
 * the cosine-sum formula; values are computed in double and cast like the reference (integers
 * truncate). */
#include "ops/signal/signal_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/signal/signal.h"

#include <math.h>
#include <string.h>

enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN };

static double window_value(int kind, double n, double n1) {
    /* a symmetric window of one sample has no span: torch and numpy give 1 there */
    if (n1 == 0) return 1.0;
    switch (kind) {
    case WIN_HANN: {
        double s = sin(n * M_PI / n1);
        return s * s;
    }
    case WIN_HAMMING: {
        double alpha = 25.0 / 46.0;
        return alpha - cos(n * M_PI * 2 / n1) * (1 - alpha);
    }
    default: return 0.42 - 0.5 * cos(n * M_PI * 2 / n1) + 0.08 * cos(n * M_PI * 4 / n1);
    }
}

void cpu_signal_store(tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case ONYX_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)t->data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)t->data)[i] = float_to_fp16((float)v); break;
    case ONYX_BFLOAT16: ((uint16_t *)t->data)[i] = float_to_bf16((float)v); break;
#define ST(D, T, LO, HI)                                                                           \
    case D: ((T *)t->data)[i] = v != v ? 0 : v <= (double)(LO) ? (T)(LO) : v >= (double)(HI) ? (T)(HI) : (T)v; break;
        ST(ONYX_UINT8, uint8_t, 0, UINT8_MAX)
        ST(ONYX_UINT16, uint16_t, 0, UINT16_MAX)
        ST(ONYX_UINT32, uint32_t, 0, UINT32_MAX)
        ST(ONYX_UINT64, uint64_t, 0, UINT64_MAX)
        ST(ONYX_INT8, int8_t, INT8_MIN, INT8_MAX)
        ST(ONYX_INT16, int16_t, INT16_MIN, INT16_MAX)
        ST(ONYX_INT32, int32_t, INT32_MIN, INT32_MAX)
        ST(ONYX_INT64, int64_t, INT64_MIN, INT64_MAX)
#undef ST
    default: break;
    }
}

static onyx_status window_run(const kernel_call *c, int kind) {
    tensor *Y = kernel_output(c, 0);
    int64_t size;
    TRY(ops_scalar_int(kernel_input(c, 0), "size", &size));
    if (Y->rank != 1 || Y->dims[0] != size)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld values, expected %lld",
                          (long long)Y->numel, (long long)size);
    double n1 = attr_int(c->node, "periodic", 1) ? (double)size : (double)(size - 1);
    for (int64_t i = 0; i < size; i++) cpu_signal_store(Y, i, window_value(kind, (double)i, n1));
    return ONYX_OK;
}

onyx_status cpu_hann_window_run(const kernel_call *c) { return window_run(c, WIN_HANN); }
onyx_status cpu_hamming_window_run(const kernel_call *c) { return window_run(c, WIN_HAMMING); }
onyx_status cpu_blackman_window_run(const kernel_call *c) { return window_run(c, WIN_BLACKMAN); }
