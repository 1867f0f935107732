/* AffineGrid on the CPU: each output point is theta[n] times the homogeneous base-grid point
 * (x, y[, z], 1), the base grid spanning [-1, 1] per dim (pixel centres unless align_corners). */
#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"

#include <string.h>

/* Base coordinate of index i in a dim of size s, as numpy's arange builds it. */
static double base_coord(int64_t i, int64_t s, bool align) {
    if (align) return s > 1 ? -1.0 + (double)i * (2.0 / (double)(s - 1)) : -1.0;
    double step = 2.0 / (double)s;
    return -1.0 + step / 2 + (double)i * step;
}

static double get(const tensor *t, int64_t i) {
    switch (t->dtype) {
    case ONYX_FLOAT: return ((const float *)t->data)[i];
    case ONYX_DOUBLE: return ((const double *)t->data)[i];
    case ONYX_FLOAT16: return fp16_to_float(((const uint16_t *)t->data)[i]);
    default: return bf16_to_float(((const uint16_t *)t->data)[i]);
    }
}

static void put(tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case ONYX_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case ONYX_DOUBLE: ((double *)t->data)[i] = v; break;
    case ONYX_FLOAT16: ((uint16_t *)t->data)[i] = float_to_fp16((float)v); break;
    default: ((uint16_t *)t->data)[i] = float_to_bf16((float)v); break;
    }
}

typedef struct ag_job {
    const tensor *theta;
    tensor *Y;
    int sp;               /* 2 or 3 */
    int64_t sz[3];        /* spatial sizes, outermost first */
    int64_t P;            /* points per batch item */
    bool align;
} ag_job;

static void ag_range(void *ctx, int64_t b, int64_t e) {
    const ag_job *j = ctx;
    int sp = j->sp;
    for (int64_t q = b; q < e; q++) {
        int64_t n = q / j->P, p = q % j->P;
        double h[4];          /* homogeneous point: innermost dim first (x, y, z), then 1 */
        int64_t rem = p;
        for (int k = sp - 1; k >= 0; k--) {
            h[sp - 1 - k] = base_coord(rem % j->sz[k], j->sz[k], j->align);
            rem /= j->sz[k];
        }
        h[sp] = 1.0;
        for (int r = 0; r < sp; r++) {
            double acc = 0;
            for (int k = 0; k <= sp; k++) acc += get(j->theta, (n * sp + r) * (sp + 1) + k) * h[k];
            put(j->Y, q * sp + r, acc);
        }
    }
}

onyx_status cpu_affinegrid_run(const kernel_call *c) {
    const tensor *theta = kernel_input(c, 0), *size = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    if (theta->rank != 3 || !((theta->dims[1] == 2 && theta->dims[2] == 3) ||
                              (theta->dims[1] == 3 && theta->dims[2] == 4)))
        return onyx_error(ONYX_ERR_SHAPE, "theta must be [N, 2, 3] or [N, 3, 4]");
    ag_job j;
    memset(&j, 0, sizeof j);
    j.theta = theta;
    j.Y = Y;
    j.sp = (int)theta->dims[1];
    j.align = attr_int(c->node, "align_corners", 0) != 0;
    if (size->numel != j.sp + 2 || size->dtype != ONYX_INT64)
        return onyx_error(ONYX_ERR_SHAPE, "size has %lld values, expected %d",
                          (long long)size->numel, j.sp + 2);
    const int64_t *s = size->data;
    if (s[0] != theta->dims[0])
        return onyx_error(ONYX_ERR_SHAPE, "size says batch %lld, theta has %lld", (long long)s[0],
                          (long long)theta->dims[0]);
    j.P = 1;
    for (int k = 0; k < j.sp; k++) {
        j.sz[k] = s[2 + k];
        j.P *= s[2 + k];
    }
    if (Y->numel != s[0] * j.P * j.sp)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(s[0] * j.P * j.sp));
    parallel_for(s[0] * j.P, 4096, ag_range, &j);
    return ONYX_OK;
}
