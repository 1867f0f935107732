/* The last post-op of a fused step computed by vmath over the primitive's output, where oneDNN's
 * post-op would cost more: on Zen 4 its injected exp-based activations add 2 to 4 times the
 * time vmath takes for the same elements (a 16 -> 96 channel 1x1 conv at 112x112: 180 us
 * alone, 560 us with SiLU, 650 with erf GELU; vmath's SiLU over its 1.2M outputs: 217 us on
 * two threads), so a SiLU-heavy network (EfficientNet) spent most of its conv time there. */
#ifndef ONYX_KERNELS_CPU_POST_VMATH_H
#define ONYX_KERNELS_CPU_POST_VMATH_H

#include <stdint.h>

#include "core/fuse_chain.h"

/* The index of the chain's last op when vmath takes it (SiLU/Swish, GELU, Tanh), else -1. */
int cpu_post_vmath_tail(const fuse_chain *chain);

/* The same after a oneDNN convolution, except a SiLU on Intel's AVX-512 cores: there oneDNN's
 * injected one, applied in the convolution's own pass over Y, costs less than vmath's second
 * pass (a Sapphire Rapids Xeon, 2 threads: EfficientNet-B0's convolutions 5.91 -> 5.62 ms, sum
 * of node minima, and its output 2.1e-6 from onnxruntime's against 2.9e-6); on AMD's Zen 4,
 * whose AVX-512 is half as wide, it costs 2-4x vmath's. Intel's AVX2 cores (not measured) keep
 * vmath. */
int cpu_post_vmath_conv_tail(const fuse_chain *chain);

/* y[0, n) = op(y) in place, split over the rep's threads. */
void cpu_post_vmath_apply(const fuse_op *op, float *y, int64_t n);

#endif
