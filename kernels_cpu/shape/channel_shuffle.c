/* CPU kernel of ai.onyx ChannelShuffle (ops/shape/channelshuffle.c): output channel j * g + i is
 * input channel i * (C / g) + j. Plain tensors move whole channel planes (the strided engine);
 * tensors the fusion pass keeps opaque (channels last, core/fuse.h; the state then non-NULL,
 * cpu_opaque_prepare) permute the channels of each pixel, so that a shuffle between channels-last
 * convolutions (ShuffleNet's) reorders nothing. */
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/move.h"
#include "kernels_cpu/common/opaque.h"
#include "kernels_cpu/cpu_kernels.h"

typedef struct {
    const void *x;
    void *y;
    int64_t ch, g, cpg;
    size_t es;
} pixels_job;

/* Pixels [b, e) of a channels-last tensor, each a [g][cpg] block read into [cpg][g]: the reads
 * run along the input, the writes g apart within one pixel's channels (in L1). */
#define SHUFFLE_PIXELS(T)                                                                          \
    for (int64_t p = b; p < e; p++) {                                                              \
        const T *in = (const T *)j->x + p * j->ch;                                                 \
        T *out = (T *)j->y + p * j->ch;                                                            \
        for (int64_t i = 0; i < j->g; i++)                                                         \
            for (int64_t k = 0; k < j->cpg; k++) out[k * j->g + i] = in[i * j->cpg + k];           \
    }

static void shuffle_pixels(void *ctx, int64_t b, int64_t e) {
    const pixels_job *j = ctx;
    switch (j->es) {
    case 1: SHUFFLE_PIXELS(uint8_t) break;
    case 2: SHUFFLE_PIXELS(uint16_t) break;
    case 4: SHUFFLE_PIXELS(uint32_t) break;
    case 8: SHUFFLE_PIXELS(uint64_t) break;
    default: /* 16-byte elements (complex double) */
        for (int64_t p = b; p < e; p++)
            for (int64_t i = 0; i < j->g; i++)
                for (int64_t k = 0; k < j->cpg; k++)
                    memcpy((char *)j->y + (size_t)(p * j->ch + k * j->g + i) * j->es,
                           (const char *)j->x + (size_t)(p * j->ch + i * j->cpg + k) * j->es,
                           j->es);
    }
}

onyx_status cpu_channelshuffle_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t g = attr_int(c->node, "group", 0);
    if (x->rank < 3 || g < 1 || x->dims[1] % g != 0 || y->numel != x->numel)
        return onyx_error(ONYX_ERR_SHAPE, "ChannelShuffle of rank %d, %lld channels into %lld "
                          "groups", x->rank, (long long)x->dims[1], (long long)g);
    int64_t n = x->dims[0], ch = x->dims[1], cpg = ch / g, px = 1;
    for (int i = 2; i < x->rank; i++) px *= x->dims[i];
    if (x->numel == 0) return ONYX_OK;
    size_t es = cpu_move_esize(x);
    if (c->state) { /* channels last; strings are never opaque */
        pixels_job j = {x->data, y->data, ch, g, cpg, es};
        parallel_for(n * px, 8192 / ch + 1, shuffle_pixels, &j);
        return ONYX_OK;
    }
    /* (image, i, j, pixel) of input channel i * cpg + j, output channel j * g + i */
    int64_t dims[4] = {n, g, cpg, px}, ds[4] = {ch * px, px, g * px, 1},
            ss[4] = {ch * px, cpg * px, px, 1};
    cpu_move_begin(y);
    cpu_copy_strided(y->data, x->data, es, 4, dims, ds, ss);
    return cpu_move_end(y);
}
