// The contrib family's entries on CUDA (kernels in matmulnbits.cu, gathernbits.cu and gqa.cu).
#include <stdlib.h>

#include "kernels_cuda/contrib/family.h"

onyx_status cuda_nbits_prepare(const kernel_prep *p, void **state) {
    geom_nbits *g = (geom_nbits *)malloc(sizeof *g);
    if (!g) return onyx_oom("MatMulNBits geometry");
    geom_msg m;
    onyx_status st = geom_nbits_of(attr_int(p->node, "K", 0), attr_int(p->node, "N", 0),
                                   attr_int(p->node, "bits", 4), attr_int(p->node, "block_size", 0),
                                   g, &m);
    if (st != ONYX_OK) {
        free(g);
        return onyx_error(st, "%s", m.text);
    }
    *state = g;
    return ONYX_OK;
}

void cuda_contrib_release(void *state) { free(state); }

namespace {

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs, takes_chain
    // the products' and the embedding's rows read from the tensors at run (the geometry of B is
    // the attributes'): a device plan may give them shapes only the run knows
    {"com.microsoft", "MatMulNBits", 1, 1, DEVICE_CUDA, CONTRIB_FLOATS, KF_RUN_SHAPES,
     cuda_nbits_prepare, cuda_matmul_nbits_run, cuda_contrib_release, NULL, NULL,
     cuda_matmul_nbits_supports, 0, NULL},
    {"ai.onyx", "GatherNBits", 1, 1, DEVICE_CUDA, DT_BIT(ONYX_UINT8), KF_RUN_SHAPES,
     cuda_nbits_prepare, cuda_gather_nbits_run, cuda_contrib_release, NULL, NULL,
     cuda_gather_nbits_supports, 0, NULL},
    // seqlens_k and total_sequence_length read on the host (they size the launch); every size
    // read at run, so that the present cache (as long as total_sequence_length's value) may be
    {"com.microsoft", "GroupQueryAttention", 1, 1, DEVICE_CUDA, CONTRIB_FLOATS,
     KF_CACHE_IN_PLACE | KF_RUN_SHAPES,
     cuda_gqa_prepare, cuda_gqa_run, cuda_contrib_release, NULL, NULL, cuda_gqa_supports,
     (1u << 5) | (1u << 6), NULL},
};

} // namespace

extern "C" const kernel *cuda_family_contrib(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
