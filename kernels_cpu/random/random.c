/* CPU kernels of the random ops (RandomNormal/Uniform and their Like forms, Bernoulli,
 * Multinomial). Draws are sequential on purpose: a seeded node must give numpy's exact stream. */
#include <math.h>
#include <string.h>

#include "core/floatconv.h"
#include "ops/random/random.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"

/* Rounds a double to the nearest value of the float type d. The ONNX reference computes
 * `x.astype(T) * scale + mean` with each step rounded to T (numpy's NEP 50 rules turn the Python
 * float attributes into T first); an exact double product or sum rounded once to T equals that,
 * because double (and float, for half/bfloat16) carries more than twice T's precision. */
static double round_to(onyx_dtype d, double v) {
    switch (d) {
    case ONYX_FLOAT: return (double)(float)v;
    case ONYX_FLOAT16: return (double)fp16_to_float(floatconv_double_to_fp16(v));
    case ONYX_BFLOAT16: return (double)bf16_to_float(floatconv_double_to_bf16(v));
    default: return v;
    }
}

static void store_float(onyx_dtype d, void *data, int64_t i, double v) {
    switch (d) {
    case ONYX_FLOAT: ((float *)data)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)data)[i] = floatconv_double_to_fp16(v); break;
    case ONYX_BFLOAT16: ((uint16_t *)data)[i] = floatconv_double_to_bf16(v); break;
    default: break;
    }
}

/* out = round(round(round(draw) * mul) + add) per element, draws from normal or uniform. */
static onyx_status random_fill(const kernel_call *c, bool normal, double mul, double add) {
    tensor *y = kernel_output(c, 0);
    onyx_dtype d = y->dtype;
    if (!dtype_in(d, DT_FLOATS))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "random output of type %s, expected a float type",
                          onyx_dtype_name(d));
    rng r;
    TRY(ops_random_init(c->node, &r));
    double m = round_to(d, mul), a = round_to(d, add);
    for (int64_t i = 0; i < y->numel; i++) {
        double v = round_to(d, normal ? rng_normal(&r) : rng_uniform(&r));
        v = round_to(d, v * m);
        store_float(d, y->data, i, v + a);
    }
    return ONYX_OK;
}

onyx_status cpu_random_normal_run(const kernel_call *c) {
    return random_fill(c, true, (double)attr_float(c->node, "scale", 1.0f),
                       (double)attr_float(c->node, "mean", 0.0f));
}

onyx_status cpu_random_uniform_run(const kernel_call *c) {
    /* the reference scales by `high - low` computed in double from the float attributes */
    double high = (double)attr_float(c->node, "high", 1.0f);
    double low = (double)attr_float(c->node, "low", 0.0f);
    return random_fill(c, false, high - low, low);
}

onyx_status cpu_bernoulli_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    size_t es = dtype_size(y->dtype);
    /* numpy checks every probability before drawing any */
    for (int64_t i = 0; i < x->numel; i++) {
        double p = tensor_get_f64(x, i);
        if (!(p >= 0.0 && p <= 1.0))
            return onyx_error(ONYX_ERR_RUNTIME,
                              "input element %lld is %g, expected a probability in [0, 1]",
                              (long long)i, p);
    }
    rng r;
    TRY(ops_random_init(c->node, &r));
    for (int64_t i = 0; i < x->numel; i++) {
        double v = (double)rng_binomial(&r, 1, tensor_get_f64(x, i));
        TRY(cpu_scalar_from_double(y->dtype, v, (char *)y->data + (size_t)i * es));
    }
    return ONYX_OK;
}

onyx_status cpu_multinomial_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank != 2 || y->rank != 2)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 2", x->rank);
    int64_t batch = x->dims[0], classes = x->dims[1], samples = y->dims[1];
    if (classes == 0 && samples > 0)
        return onyx_error(ONYX_ERR_SHAPE, "input has 0 classes to sample from");
    rng r;
    TRY(ops_random_init(c->node, &r));
    for (int64_t b = 0; b < batch; b++) {
        int64_t row = b * classes;
        double mx = -INFINITY;
        for (int64_t j = 0; j < classes; j++) {
            double v = tensor_get_f64(x, row + j);
            if (v > mx) mx = v;
        }
        /* the inputs are unnormalized log-probabilities: shifting by the max keeps exp finite */
        double total = 0.0;
        for (int64_t j = 0; j < classes; j++) total += exp(tensor_get_f64(x, row + j) - mx);
        if (!(total > 0.0) || !isfinite(total))
            return onyx_error(ONYX_ERR_RUNTIME, "row %lld has no finite positive probability",
                              (long long)b);
        for (int64_t s = 0; s < samples; s++) {
            double u = rng_uniform(&r) * total, acc = 0.0;
            int64_t pick = -1;
            for (int64_t j = 0; j < classes; j++) {
                double pj = exp(tensor_get_f64(x, row + j) - mx);
                acc += pj;
                if (pj > 0.0) pick = j;
                if (u < acc) break;
            }
            int64_t o = b * samples + s;
            if (y->dtype == ONYX_INT32)
                ((int32_t *)y->data)[o] = (int32_t)pick;
            else
                ((int64_t *)y->data)[o] = pick;
        }
    }
    return ONYX_OK;
}
