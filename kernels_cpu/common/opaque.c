/* Kernels over float tensors kept in the opaque layout between convolutions (core/fuse.h):
 * channels last, [N, spatial..., C] in memory for the logical [N, C, spatial...], no padding.
 * These are the steps between convolutions of mobile networks' squeeze-and-excitation blocks:
 * the global pooling of the block's input and the scaling of that input by the per-channel
 * factors. (The channel Concat of opaque tensors is cpu_concat_run's, given this prepare.) */
#include "kernels_cpu/common/opaque.h"

#include <string.h>

#include "core/exec_frame.h"
#include "core/fuse_blocked.h"
#include "core/fuse_chain.h"
#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"

/* N, channels and spatial size of a tensor of logical dims [N, C, spatial...]. */
typedef struct {
    int64_t n, c, sp;
} opaque_geom;

static opaque_geom geom_of(const tensor *t) {
    opaque_geom g = {t->dims[0], t->dims[1], 1};
    for (int i = 2; i < t->rank; i++) g.sp *= t->dims[i];
    return g;
}

/* Global pooling in two passes: each image's pixels in up to POOL_PARTS runs of about
 * POOL_ELEMS elements, each run reduced over all channels at once (contiguous rows of C), then
 * the runs' partial results combined in order. Reducing per channel block instead reads every
 * row strided, 16 floats at a time, and ran two to three times slower than the blocked layout's
 * contiguous planes. The runs depend on the shape alone: results do not change with threads. */
#define POOL_PARTS 32
#define POOL_ELEMS 16384

typedef struct {
    const float *x;
    float *part; /* [N, parts, C] */
    opaque_geom g;
    int64_t parts, per; /* runs per image, pixels per run */
    bool max;
} pool_job;

CPU_CLONES static void pool_runs(void *ctx, int64_t begin, int64_t end) {
    const pool_job *j = ctx;
    int64_t c = j->g.c, sp = j->g.sp;
    for (int64_t t = begin; t < end; t++) {
        int64_t n = t / j->parts, s0 = t % j->parts * j->per;
        int64_t s1 = s0 + j->per < sp ? s0 + j->per : sp;
        const float *x = j->x + n * sp * c;
        float *acc = j->part + t * c;
        if (j->max) {
            memcpy(acc, x + s0 * c, (size_t)c * sizeof *acc);
            for (int64_t s = s0 + 1; s < s1; s++) {
                const float *row = x + s * c;
                CPU_SIMD for (int64_t l = 0; l < c; l++) acc[l] = row[l] > acc[l] ? row[l] : acc[l];
            }
        } else {
            memset(acc, 0, (size_t)c * sizeof *acc);
            /* four rows per pass over acc: with few channels (32: EfficientNet's first block)
             * loading and storing acc for every row cost twice the rows' own reads */
            int64_t s = s0;
            for (; s + 4 <= s1; s += 4) {
                const float *r0 = x + s * c, *r1 = r0 + c, *r2 = r1 + c, *r3 = r2 + c;
                CPU_SIMD for (int64_t l = 0; l < c; l++) acc[l] += (r0[l] + r1[l]) + (r2[l] + r3[l]);
            }
            for (; s < s1; s++) {
                const float *row = x + s * c;
                CPU_SIMD for (int64_t l = 0; l < c; l++) acc[l] += row[l];
            }
        }
    }
}

onyx_status cpu_opaque_global_pool(const kernel_call *call, bool max) {
    const tensor *x = kernel_input(call, 0);
    tensor *y = kernel_output(call, 0);
    if (x->dtype != ONYX_FLOAT || x->rank < 3 || y->rank != x->rank || x->dims[1] <= 0 ||
        y->numel != x->dims[0] * x->dims[1])
        return onyx_error(ONYX_ERR_RUNTIME, "channels-last global pooling takes float tensors of "
                          "rank 3+ with channels, into [N, C, 1, ...]");
    pool_job j = {x->data, NULL, geom_of(x), 0, 0, max};
    int64_t c = j.g.c, sp = j.g.sp;
    if (sp == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has an empty spatial extent: nothing to pool");
    if (j.g.n == 0) return ONYX_OK;
    j.per = (POOL_ELEMS + c - 1) / c;
    if (j.per < (sp + POOL_PARTS - 1) / POOL_PARTS) j.per = (sp + POOL_PARTS - 1) / POOL_PARTS;
    j.parts = (sp + j.per - 1) / j.per;
    void *mem;
    TRY(kernel_scratch(call, (size_t)(j.g.n * j.parts * c) * sizeof(float), &mem));
    j.part = mem;
    parallel_for(j.g.n * j.parts, 1, pool_runs, &j);
    float inv = 1.f / (float)sp, *out = y->data;
    for (int64_t n = 0; n < j.g.n; n++) {
        float *o = out + n * c;
        const float *p = j.part + n * j.parts * c;
        memcpy(o, p, (size_t)c * sizeof *o);
        for (int64_t r = 1; r < j.parts; r++) {
            const float *q = p + r * c;
            if (max) {
                CPU_SIMD for (int64_t l = 0; l < c; l++) o[l] = q[l] > o[l] ? q[l] : o[l];
            } else {
                CPU_SIMD for (int64_t l = 0; l < c; l++) o[l] += q[l];
            }
        }
        if (!max) CPU_SIMD for (int64_t l = 0; l < c; l++) o[l] *= inv;
    }
    return ONYX_OK;
}

typedef struct {
    const float *x, *f; /* f: the factors, [N or 1, C], or a tensor of x's size */
    float *y;
    opaque_geom g;
    bool per_channel, f_batched;
} mul_job;

/* Over pixels (rows of C channels) [begin, end) of all images. */
CPU_CLONES static void mul_rows(void *ctx, int64_t begin, int64_t end) {
    const mul_job *j = ctx;
    int64_t c = j->g.c;
    if (!j->per_channel) {
        const float *x = j->x + begin * c, *f = j->f + begin * c;
        float *y = j->y + begin * c;
        int64_t n = (end - begin) * c;
        CPU_SIMD for (int64_t i = 0; i < n; i++) y[i] = x[i] * f[i];
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        const float *x = j->x + r * c, *f = j->f + (j->f_batched ? r / j->g.sp * c : 0);
        float *y = j->y + r * c;
        CPU_SIMD for (int64_t i = 0; i < c; i++) y[i] = x[i] * f[i];
    }
}

onyx_status cpu_opaque_mul(const tensor *a, const tensor *b, tensor *y) {
    bool a_full = a->rank == y->rank && !memcmp(a->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
    const tensor *x = a_full ? a : b, *f = a_full ? b : a;
    if (x->dtype != ONYX_FLOAT || f->dtype != ONYX_FLOAT || y->rank < 3 || f->rank != y->rank ||
        memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) || f->dims[1] != y->dims[1])
        return onyx_error(ONYX_ERR_RUNTIME, "channels-last Mul takes a float tensor and "
                          "per-channel factors or a tensor of its shape");
    mul_job j = {x->data, f->data, y->data, geom_of(y), false, false};
    bool f_full = !memcmp(f->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
    if (!f_full) {
        for (int i = 2; i < f->rank; i++)
            if (f->dims[i] != 1)
                return onyx_error(ONYX_ERR_RUNTIME, "channels-last Mul: the factors must be per "
                                  "channel");
        j.per_channel = true;
        j.f_batched = f->dims[0] != 1;
    }
    if (j.g.c <= 0) return ONYX_OK; /* no channels: no elements */
    int64_t grain = (16384 + j.g.c - 1) / j.g.c;
    parallel_for(j.g.n * j.g.sp, grain > 0 ? grain : 1, mul_rows, &j);
    return ONYX_OK;
}

bool cpu_chain_layout_only(const fuse_chain *f) {
    return f->n == 0 && f->n_pre == 0 && !f->opaque_addend && !f->x_scale &&
           !f->x_channels_last && !f->y_channels_last && !f->view_rank[0] && !f->view_rank[1] &&
           !f->view_rank[2] && !f->view_rank[3] && !f->has_in_scale && !f->attention;
}

/* The fusion pass keeps a step's tensors opaque all together or not at all, but for a Y that is
 * the same opaque or plain (fuse_opaque_is_plain). */
static const int opaque_marker;

bool cpu_opaque_takes_chain(const kernel_prep *p) {
    const fuse_chain *f = p->fused;
    if (!f) return true;
    if (!cpu_chain_layout_only(f)) return false;
    return f->opaque_in0 ? f->opaque_out0 || fuse_opaque_is_plain(p->node, p->out_type)
                         : !f->opaque_out0;
}

onyx_status cpu_opaque_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    if (!cpu_opaque_takes_chain(p))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "an opaque-layout step takes no chain but its "
                          "layouts, with its input and output both opaque (or a plain output "
                          "stored as the opaque one)");
    if (p->fused && p->fused->opaque_in0) *state = (void *)&opaque_marker;
    return ONYX_OK;
}

void cpu_opaque_release(void *state) { (void)state; /* the marker owns nothing */ }
