/* CPU kernel of Dropout. Inference copies x (v7-v11 may share its buffer) and sets the mask to
 * all ones. Training mode draws one uniform per element, in order, from numpy's legacy
 * RandomState(seed) (core/rng.h), because ONNX's reference data was drawn that way:
 * keep = u >= ratio, y = keep * x * (1 / (1 - ratio)). */
#include <string.h>

#include "core/floatconv.h"
#include "core/rng.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/norm/common.h"

/* A float scalar of any Dropout type (float8 included) as double. */
static double scalar_f64(const tensor *t) {
    if (floatconv_is_small_float(t->dtype))
        return floatconv_decode(t->dtype, ((const uint8_t *)t->data)[0]);
    return tensor_get_f64(t, 0);
}

static double load(const tensor *t, int64_t i) {
    if (floatconv_is_small_float(t->dtype))
        return floatconv_decode(t->dtype, ((const uint8_t *)t->data)[i]);
    return norm_get(t, i);
}

static void store(tensor *t, int64_t i, double v) {
    if (floatconv_is_small_float(t->dtype))
        ((uint8_t *)t->data)[i] = floatconv_encode(t->dtype, v, true);
    else
        norm_set(t, i, v);
}

/* The mask output: bool from v10, x's type (1 or 0) before. */
static void mask_set(tensor *m, int64_t i, bool keep) {
    if (m->dtype == ONYX_BOOL)
        ((uint8_t *)m->data)[i] = keep;
    else
        store(m, i, keep ? 1.0 : 0.0);
}

/* The inference mask: every element one. The encoded one is written once and replicated by
 * doubling copies, since converting per element costs more than the model's convolutions near it
 * (SqueezeNet's v7-v9 Dropout has a float mask of the tensor's size). */
static void mask_fill_ones(tensor *m) {
    if (m->numel <= 0) return;
    if (m->dtype == ONYX_BOOL) {
        memset(m->data, 1, m->nbytes);
        return;
    }
    mask_set(m, 0, true);
    size_t esize = m->nbytes / (size_t)m->numel, total = m->nbytes;
    uint8_t *d = m->data;
    for (size_t done = esize; done < total;) {
        size_t n = done < total - done ? done : total - done;
        memcpy(d + done, d, n);
        done += n;
    }
}

onyx_status cpu_dropout(const kernel_call *c) {
    const graph_node *n = c->node;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0), *mask = kernel_output(c, 1);
    int v = n->version;
    bool training = false;
    double ratio = 0.5;
    bool ratio_double = false;
    if (v < 7) {
        training = attr_int(n, "is_test", 0) == 0;
        ratio = attr_float(n, "ratio", 0.5f);
    } else if (v < 12) {
        ratio = attr_float(n, "ratio", 0.5f);
    } else {
        const tensor *r = kernel_input(c, 1), *tm = kernel_input(c, 2);
        if (r) {
            if (r->numel != 1)
                return onyx_error(ONYX_ERR_SHAPE, "input 1 (ratio) has %lld elements, expected 1",
                                  (long long)r->numel);
            ratio = scalar_f64(r);
            ratio_double = r->dtype == ONYX_DOUBLE;
        }
        if (tm) {
            if (tm->numel != 1 || tm->dtype != ONYX_BOOL)
                return onyx_error(ONYX_ERR_SHAPE, "input 2 (training_mode): expected one bool");
            training = ((const uint8_t *)tm->data)[0] != 0;
        }
    }
    if (mask && mask->numel != x->numel)
        return onyx_error(ONYX_ERR_SHAPE, "output 1 (mask) has %lld elements, expected %lld",
                          (long long)mask->numel, (long long)x->numel);
    if (!training || ratio == 0) {
        if (y->data != x->data && x->nbytes) memcpy(y->data, x->data, x->nbytes);
        if (mask) mask_fill_ones(mask);
        return ONYX_OK;
    }
    if (!(ratio > 0 && ratio < 1))
        return onyx_error(ONYX_ERR_RUNTIME, "ratio is %g, expected a value in [0, 1)", ratio);
    rng r;
    const graph_attr *seed = v >= 12 ? node_attr(n, "seed") : NULL;
    if (seed) {
        if (seed->i < 0 || seed->i > (int64_t)UINT32_MAX)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute seed is %lld, expected 0..2^32-1",
                              (long long)seed->i);
        rng_seed(&r, (uint32_t)seed->i);
    } else {
        rng_seed_random(&r);
    }
    /* the scale is computed in the ratio's precision, as numpy does */
    double scale = ratio_double ? 1.0 / (1.0 - ratio) : (double)(1.0f / (1.0f - (float)ratio));
    int64_t count = x->numel;
    switch (x->dtype) {
    case ONYX_FLOAT: {
        const float *xs = x->data;
        float *ys = y->data, sc = (float)scale;
        for (int64_t i = 0; i < count; i++) {
            bool keep = rng_uniform(&r) >= ratio;
            ys[i] = (float)keep * xs[i] * sc;
            if (mask) mask_set(mask, i, keep);
        }
        break;
    }
    case ONYX_DOUBLE: {
        const double *xs = x->data;
        double *ys = y->data;
        for (int64_t i = 0; i < count; i++) {
            bool keep = rng_uniform(&r) >= ratio;
            ys[i] = (double)keep * xs[i] * scale;
            if (mask) mask_set(mask, i, keep);
        }
        break;
    }
    default:
        for (int64_t i = 0; i < count; i++) {
            bool keep = rng_uniform(&r) >= ratio;
            store(y, i, (float)((float)keep * (float)load(x, i) * (float)scale));
            if (mask) mask_set(mask, i, keep);
        }
        break;
    }
    return ONYX_OK;
}
