/* CPU kernel of ai.onyx ChannelShuffle (ops/shape/channelshuffle.c): output channel j * g + i is
 * input channel i * (C / g) + j. Plain tensors move whole channel planes (the strided engine);
 * tensors the fusion pass keeps opaque (channels last, core/fuse.h; the state then non-NULL,
 * cpu_opaque_prepare) permute the channels of each pixel, so that a shuffle between channels-last
 * convolutions (ShuffleNet's) reorders nothing. */
#include "core/parallel.h"
#include "kernels_cpu/common/move.h"
#include "kernels_cpu/common/opaque.h"
#include "kernels_cpu/cpu_kernels.h"

typedef struct {
    const float *x;
    float *y;
    int64_t ch, g, cpg;
} pixels_job;

/* Pixels [b, e) of a channels-last tensor, each a [g][cpg] block read into [cpg][g]: the reads
 * run along the input, the writes g apart within one pixel's channels (in L1). */
static void shuffle_pixels(void *ctx, int64_t b, int64_t e) {
    const pixels_job *j = ctx;
    for (int64_t p = b; p < e; p++) {
        const float *in = j->x + p * j->ch;
        float *out = j->y + p * j->ch;
        for (int64_t i = 0; i < j->g; i++)
            for (int64_t k = 0; k < j->cpg; k++) out[k * j->g + i] = in[i * j->cpg + k];
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
    if (c->state) { /* channels last (float: the opaque layout's, core/fuse.h) */
        if (x->dtype != ONYX_FLOAT)
            return onyx_error(ONYX_ERR_RUNTIME, "a channels-last ChannelShuffle takes float, not "
                              "%s", onyx_dtype_name(x->dtype));
        pixels_job j = {x->data, y->data, ch, g, cpg};
        parallel_for(n * px, 8192 / ch + 1, shuffle_pixels, &j);
        return ONYX_OK;
    }
    /* (image, i, j, pixel) of input channel i * cpg + j, output channel j * g + i */
    int64_t dims[4] = {n, g, cpg, px}, ds[4] = {ch * px, px, g * px, 1},
            ss[4] = {ch * px, cpg * px, px, 1};
    cpu_move_begin(y);
    cpu_copy_strided(y->data, x->data, cpu_move_esize(x), 4, dims, ds, ss);
    return cpu_move_end(y);
}
