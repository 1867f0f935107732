/* MelWeightMatrix on the CPU: triangular filters between mel-spaced bin edges, rounded to DFT
 * bins exactly as the ONNX reference does (edges in the inputs' float type, bins in double). */
#include "ops/signal/signal_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/signal/signal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


onyx_status cpu_mel_weight_matrix_run(const kernel_call *c) {
    tensor *Y = kernel_output(c, 0);
    int64_t bins, len, rate;
    TRY(ops_scalar_int(kernel_input(c, 0), "num_mel_bins", &bins));
    TRY(ops_scalar_int(kernel_input(c, 1), "dft_length", &len));
    TRY(ops_scalar_int(kernel_input(c, 2), "sample_rate", &rate));
    const tensor *lo_t = kernel_input(c, 3), *hi_t = kernel_input(c, 4);
    if (lo_t->numel != 1 || hi_t->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "lower_edge_hertz and upper_edge_hertz must be scalars");
    if (bins < 1 || len < 1 || rate < 1)
        return onyx_error(ONYX_ERR_SHAPE,
                          "num_mel_bins %lld, dft_length %lld, sample_rate %lld: expected all > 0",
                          (long long)bins, (long long)len, (long long)rate);
    int64_t spec = len / 2 + 1;
    if (Y->rank != 2 || Y->dims[0] != spec || Y->dims[1] != bins)
        return onyx_error(ONYX_ERR_SHAPE, "output shape does not match [%lld, %lld]",
                          (long long)spec, (long long)bins);
    double lo = tensor_get_f64(lo_t, 0), hi = tensor_get_f64(hi_t, 0);
    if (!(lo >= 0 && hi > lo && isfinite(hi)))
        return onyx_error(ONYX_ERR_SHAPE,
                          "edges %g..%g Hz: expected 0 <= lower_edge_hertz < upper_edge_hertz", lo,
                          hi);
    double lo_mel, step;
    if (lo_t->dtype == ONYX_DOUBLE) {
        lo_mel = 2595 * log10(1 + lo / 700);
        step = (2595 * log10(1 + hi / 700) - lo_mel) / (double)(bins + 2);
    } else { /* the reference computes the edges in float32 */
        float l = 2595.0f * log10f(1.0f + (float)lo / 700.0f);
        float h = 2595.0f * log10f(1.0f + (float)hi / 700.0f);
        lo_mel = l;
        step = (float)((h - l) / (float)(bins + 2));
    }
    int64_t *edge = malloc((size_t)(bins + 2) * sizeof *edge);
    double *out = calloc((size_t)(spec * bins), sizeof *out);
    onyx_status st = ONYX_OK;
    if (!edge || !out) {
        st = onyx_oom("mel matrix");
        goto done;
    }
    for (int64_t i = 0; i < bins + 2; i++) {
        double f = 700 * (pow(10, ((double)i * step + lo_mel) / 2595) - 1);
        double b = floor((double)(len + 1) * f / (double)rate);
        if (!(b >= 0 && b < (double)spec)) {
            st = onyx_error(ONYX_ERR_SHAPE,
                            "upper_edge_hertz %g maps past the last DFT bin (%lld) for sample_rate "
                            "%lld",
                            hi, (long long)spec - 1, (long long)rate);
            goto done;
        }
        edge[i] = (int64_t)b;
    }
    for (int64_t i = 0; i < bins; i++) {
        int64_t l = edge[i], m = edge[i + 1], h = edge[i + 2];
        if (m == l) out[m * bins + i] = 1;
        else
            for (int64_t j = l; j <= m; j++) out[j * bins + i] = (double)(j - l) / (double)(m - l);
        if (h > m)
            for (int64_t j = m; j < h; j++) out[j * bins + i] = (double)(h - j) / (double)(h - m);
    }
    for (int64_t i = 0; i < spec * bins; i++) cpu_signal_store(Y, i, out[i]);
done:
    free(edge);
    free(out);
    return st;
}
