// The contrib family's kernels on CUDA (onnxruntime's com.microsoft ops and onyx's own that LLM
// exports need), spread over matmulnbits.cu (MatMulNBits), gathernbits.cu (ai.onyx GatherNBits,
// a tied int4 embedding's rows) and gqa.cu (GroupQueryAttention); family.cu gathers their
// entries and holds what they share.
#ifndef ONYX_KERNELS_CUDA_CONTRIB_FAMILY_H
#define ONYX_KERNELS_CUDA_CONTRIB_FAMILY_H

#include "kernels_cuda/common.cuh"

extern "C" {
#include "geometry/nbits.h"
}

// The float types the family computes in (float accumulation for the 16-bit ones).
const dtype_mask CONTRIB_FLOATS =
    DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16);

static inline bool contrib_float(onyx_dtype t) { return (CONTRIB_FLOATS & DT_BIT(t)) != 0; }

// Input i's type at prepare, NULL where it is absent.
static inline const type_info *contrib_in_type(const kernel_prep *p, int i) {
    return i < p->n_in ? p->in_type[i] : NULL;
}

// Calls F::template run<T>(args...) with T the element type of `dtype`, one of CONTRIB_FLOATS;
// falls through for the others.
#define CONTRIB_DISPATCH(dtype, F, ...)                                                            \
    switch (dtype) {                                                                               \
        CUDA_CASE(ONYX_FLOAT, F, __VA_ARGS__)                                                      \
        CUDA_CASE(ONYX_FLOAT16, F, __VA_ARGS__)                                                    \
        CUDA_CASE(ONYX_BFLOAT16, F, __VA_ARGS__)                                                   \
    default: break;                                                                                \
    }

// Prepare of MatMulNBits and GatherNBits: the node's weight geometry (geometry/nbits.h) from its
// attributes K, N, bits and block_size, read once; the state is a geom_nbits.
onyx_status cuda_nbits_prepare(const kernel_prep *p, void **state);
// Release of the family's states (plain allocations).
void cuda_contrib_release(void *state);

bool cuda_matmul_nbits_supports(const kernel_prep *p);
onyx_status cuda_matmul_nbits_run(const kernel_call *c);
bool cuda_gather_nbits_supports(const kernel_prep *p);
onyx_status cuda_gather_nbits_run(const kernel_call *c);
bool cuda_gqa_supports(const kernel_prep *p);
onyx_status cuda_gqa_prepare(const kernel_prep *p, void **state);
onyx_status cuda_gqa_run(const kernel_call *c);

#endif
