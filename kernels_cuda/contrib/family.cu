// The contrib family's entries on CUDA (kernels in matmulnbits.cu, gathernbits.cu and gqa.cu).
#include "kernels_cuda/common.cuh"
#include "kernels_cuda/contrib/family.h"

onyx_status cuda_nbits_geometry(const graph_node *n, geom_nbits *g) {
    geom_msg m;
    GEOM_TRY(m, geom_nbits_of(attr_int(n, "K", 0), attr_int(n, "N", 0), attr_int(n, "bits", 4),
                              attr_int(n, "block_size", 0), g, &m));
    return ONYX_OK;
}

namespace {

const dtype_mask NB_TYPES = DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16);

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs, takes_chain
    {"com.microsoft", "MatMulNBits", 1, 1, DEVICE_CUDA, NB_TYPES, 0, NULL, cuda_matmul_nbits_run,
     NULL, NULL, NULL, cuda_matmul_nbits_supports, 0, NULL},
    {"ai.onyx", "GatherNBits", 1, 1, DEVICE_CUDA, DT_BIT(ONYX_UINT8), 0, NULL,
     cuda_gather_nbits_run, NULL, NULL, NULL, cuda_gather_nbits_supports, 0, NULL},
    // seqlens_k and total_sequence_length read on the host (they size the launch)
    {"com.microsoft", "GroupQueryAttention", 1, 1, DEVICE_CUDA, NB_TYPES, KF_CACHE_IN_PLACE, NULL,
     cuda_gqa_run, NULL, NULL, NULL, cuda_gqa_supports, (1u << 5) | (1u << 6), NULL},
};

} // namespace

extern "C" const kernel *cuda_family_contrib(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
