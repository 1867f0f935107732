/* Winograd F(2x2, 3x3) for float 3x3 convolutions of stride 1, X and Y stored channels last:
 * each 2x2 block of outputs from a 4x4 block of inputs takes 16 products per input and output
 * channel instead of 36 (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks").
 * Its transforms multiply by 0, +-1 and +-1/2 only, so its sums round about as a direct
 * convolution's do (a 64-channel ResNet layer: within 3e-7 of the exact result relative to its
 * largest output). Where the convolutions are at this CPU's float FMA peak (oneDNN's brgemm
 * kernels on ResNet's 3x3 layers), that is up to 2.25x fewer FMAs; conv.c takes it for the
 * shapes cpu_wino_takes names. Needs AVX-512. */
#ifndef ONYX_KERNELS_CPU_CONV_WINOGRAD_H
#define ONYX_KERNELS_CPU_CONV_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fuse_chain.h"
#include "geometry/window.h"

/* How one convolution's work is cut: tiles (2x2 output blocks) per work item, output channels
 * per item, and the scratch each of `slots` concurrent items uses. Made once per shape. */
typedef struct cpu_wino_plan {
    int64_t n, h, w, c, m, oh, ow, pad_t, pad_l;
    int64_t tiles_h, tiles_w, tiles; /* 2x2 output blocks per image */
    int64_t block;                   /* tiles per work item */
    int64_t blocks;                  /* work items per image and channel part */
    int64_t part;                    /* output channels per work item (a multiple of 16) */
    int64_t parts;
    int slots;                       /* concurrent items (the arena's threads) */
    size_t slot_bytes;               /* scratch per slot: transformed inputs and products */
} cpu_wino_plan;

/* Whether Winograd runs the float convolution g on this CPU, and is worth it there: 2-D, 3x3,
 * stride and dilation 1, pads of at most 2, one group, channels in multiples of 16, and enough
 * 2x2 output tiles over the batch for each transformed weight (winograd.c, MIN_TILES: ResNet's
 * 56x56, 28x28 and 14x14 layers at batch 1, not its 7x7 ones). */
bool cpu_wino_takes(const geom_window *g);

/* The plan of g (cpu_wino_takes) for `threads` concurrent workers. */
void cpu_wino_plan_make(const geom_window *g, int threads, cpu_wino_plan *plan);

/* Bytes of the transformed weights of c input and m output channels. */
size_t cpu_wino_weights_bytes(int64_t c, int64_t m);

/* The weights w (ONNX layout [m][c][3][3], float) transformed into u (cpu_wino_weights_bytes,
 * 64-byte aligned). */
void cpu_wino_pack(const float *w, int64_t c, int64_t m, float *u);

/* What follows the products: a bias per output channel (or NULL), then ops[0..n_ops) of the
 * fusion chain in order (FUSE_RELU, FUSE_CLIP, FUSE_LINEAR, and FUSE_SUM with `addend`, stored
 * like Y), each element once. cpu_wino_epilogue_takes says which kinds. */
typedef struct cpu_wino_epilogue {
    const float *bias;
    const fuse_op *ops;
    int n_ops;
    const float *addend;
} cpu_wino_epilogue;

bool cpu_wino_epilogue_takes(fuse_kind kind);

/* y = conv(x) with the epilogue, x [n][h][w][c] and y [n][oh][ow][m] (channels last), u the
 * packed weights, scratch plan->slots * plan->slot_bytes bytes (64-byte aligned). y may be the
 * addend's buffer. */
void cpu_wino_run(const cpu_wino_plan *plan, const float *x, const float *u,
                  const cpu_wino_epilogue *ep, float *y, void *scratch);

#endif
