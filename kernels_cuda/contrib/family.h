// The contrib family's kernels on CUDA (onnxruntime's com.microsoft ops and onyx's own that LLM
// exports need), spread over matmulnbits.cu (MatMulNBits) and gathernbits.cu (ai.onyx
// GatherNBits, a tied int4 embedding's rows); family.cu gathers their entries.
#ifndef ONYX_KERNELS_CUDA_CONTRIB_FAMILY_H
#define ONYX_KERNELS_CUDA_CONTRIB_FAMILY_H

#include "kernels_cuda/cuda_kernels.h"

extern "C" {
#include "geometry/nbits.h"
}

// The node's weight geometry from its attributes K, N, bits and block_size (geometry/nbits.h).
onyx_status cuda_nbits_geometry(const graph_node *n, geom_nbits *g);

bool cuda_matmul_nbits_supports(const kernel_prep *p);
onyx_status cuda_matmul_nbits_run(const kernel_call *c);
bool cuda_gather_nbits_supports(const kernel_prep *p);
onyx_status cuda_gather_nbits_run(const kernel_call *c);
bool cuda_gqa_supports(const kernel_prep *p);
onyx_status cuda_gqa_run(const kernel_call *c);

#endif
