/* Kernels over float tensors kept in the convolutions' channel-blocked layout (core/fuse.h):
 * [N, ceil(C/16), spatial..., 16], channels padded to the block with zeros. These are the steps
 * between convolutions of mobile networks' squeeze-and-excitation blocks: the global pooling of
 * the block's input and the scaling of that input by the per-channel factors. Each keeps the
 * padding zero, as oneDNN does for the tensors it writes. */
#include "kernels_cpu/common/blocked.h"

#include <float.h>
#include <string.h>

#include "core/fuse.h"
#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"

#define BLK 16

/* N, channel blocks and spatial size of a blocked tensor of logical dims `dims`. */
typedef struct {
    int64_t n, c, cb, sp;
} blocked_geom;

static blocked_geom geom_of(const tensor *t) {
    blocked_geom g = {t->dims[0], t->dims[1], (t->dims[1] + BLK - 1) / BLK, 1};
    for (int i = 2; i < t->rank; i++) g.sp *= t->dims[i];
    return g;
}

/* Lanes of channel block cb that hold real channels. */
static int lanes_of(const blocked_geom *g, int64_t cb) {
    int64_t left = g->c - cb * BLK;
    return left < BLK ? (int)left : BLK;
}

typedef struct {
    const float *x;
    float *y;
    blocked_geom g;
    bool max;
} pool_job;

CPU_CLONES static void pool_blocks(void *ctx, int64_t begin, int64_t end) {
    const pool_job *j = ctx;
    for (int64_t b = begin; b < end; b++) {
        const float *x = j->x + b * j->g.sp * BLK;
        float acc[BLK];
        for (int l = 0; l < BLK; l++) acc[l] = j->max ? x[l] : 0.f;
        if (j->max) {
            for (int64_t s = 1; s < j->g.sp; s++)
                for (int l = 0; l < BLK; l++) acc[l] = x[s * BLK + l] > acc[l] ? x[s * BLK + l] : acc[l];
        } else {
            for (int64_t s = 0; s < j->g.sp; s++)
                for (int l = 0; l < BLK; l++) acc[l] += x[s * BLK + l];
            float inv = 1.f / (float)j->g.sp;
            for (int l = 0; l < BLK; l++) acc[l] *= inv;
        }
        int lanes = lanes_of(&j->g, b % j->g.cb);
        float *y = j->y + b * BLK;
        for (int l = 0; l < BLK; l++) y[l] = l < lanes ? acc[l] : 0.f;
    }
}

onyx_status cpu_blocked_global_pool(const tensor *x, tensor *y, bool max) {
    if (x->dtype != ONYX_FLOAT || x->rank < 3 || y->rank != x->rank)
        return onyx_error(ONYX_ERR_RUNTIME, "blocked global pooling takes float tensors of rank 3+");
    pool_job j = {x->data, y->data, geom_of(x), max};
    if (j.g.sp == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has an empty spatial extent: nothing to pool");
    int64_t blocks = j.g.n * j.g.cb;
    int64_t grain = (16384 + j.g.sp * BLK - 1) / (j.g.sp * BLK);
    parallel_for(blocks, grain > 0 ? grain : 1, pool_blocks, &j);
    return ONYX_OK;
}

typedef struct {
    const float *x, *f; /* f: the factors, [N or 1, cb, 16], or a tensor of x's size */
    float *y;
    blocked_geom g;
    bool per_channel, f_batched;
} mul_job;

CPU_CLONES static void mul_blocks(void *ctx, int64_t begin, int64_t end) {
    const mul_job *j = ctx;
    int64_t inner = j->g.sp * BLK;
    for (int64_t b = begin; b < end; b++) {
        const float *x = j->x + b * inner;
        float *y = j->y + b * inner;
        if (!j->per_channel) {
            const float *f = j->f + b * inner;
            for (int64_t i = 0; i < inner; i++) y[i] = x[i] * f[i];
            continue;
        }
        int64_t n = b / j->g.cb, cb = b % j->g.cb;
        const float *src = j->f + ((j->f_batched ? n * j->g.cb : 0) + cb) * BLK;
        /* lanes past C multiply the zero padding by zero: the factors' own padding may be
         * anything a post-op made of 0 (a hard sigmoid's 0.5) */
        float f[BLK];
        int lanes = lanes_of(&j->g, cb);
        for (int l = 0; l < BLK; l++) f[l] = l < lanes ? src[l] : 0.f;
        for (int64_t s = 0; s < j->g.sp; s++)
            for (int l = 0; l < BLK; l++) y[s * BLK + l] = x[s * BLK + l] * f[l];
    }
}

onyx_status cpu_blocked_mul(const tensor *a, const tensor *b, tensor *y) {
    bool a_full = a->rank == y->rank && !memcmp(a->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
    const tensor *x = a_full ? a : b, *f = a_full ? b : a;
    if (x->dtype != ONYX_FLOAT || f->dtype != ONYX_FLOAT || y->rank < 3 || f->rank != y->rank ||
        memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) || f->dims[1] != y->dims[1])
        return onyx_error(ONYX_ERR_RUNTIME, "blocked Mul takes a float tensor and per-channel "
                          "factors or a tensor of its shape");
    mul_job j = {x->data, f->data, y->data, geom_of(y), false, false};
    bool f_full = !memcmp(f->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
    if (!f_full) {
        for (int i = 2; i < f->rank; i++)
            if (f->dims[i] != 1)
                return onyx_error(ONYX_ERR_RUNTIME, "blocked Mul: the factors must be per channel");
        j.per_channel = true;
        j.f_batched = f->dims[0] != 1;
    }
    int64_t inner = j.g.sp * BLK;
    int64_t grain = (16384 + inner - 1) / (inner > 0 ? inner : 1);
    parallel_for(j.g.n * j.g.cb, grain > 0 ? grain : 1, mul_blocks, &j);
    return ONYX_OK;
}

/* The fusion pass keeps a step's tensors blocked all together or not at all, but for a Y that is
 * the same blocked or plain (fuse_blocked_is_plain). */
static const int blocked_marker;

onyx_status cpu_blocked_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    if (!p->fused || !p->fused->opaque_in0) return ONYX_OK;
    if (!p->fused->opaque_out0 && !fuse_blocked_is_plain(p->node, p->out_type))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "a blocked-layout step needs its input and output "
                          "both blocked");
    *state = (void *)&blocked_marker;
    return ONYX_OK;
}

void cpu_blocked_release(void *state) { (void)state; /* the marker owns nothing */ }
