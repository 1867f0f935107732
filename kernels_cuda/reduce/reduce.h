// The reduce family's kernels that live outside reduce.cu (which holds the family's table).
#ifndef ONYX_KERNELS_CUDA_REDUCE_REDUCE_H
#define ONYX_KERNELS_CUDA_REDUCE_REDUCE_H

#include "kernels_cuda/cuda_kernels.h"

namespace rdc {

onyx_status cuda_softmax(const kernel_call *c);
onyx_status cuda_logsoftmax(const kernel_call *c);
onyx_status cuda_hardmax(const kernel_call *c);
bool cuda_softmax_supports(const kernel_prep *p);

onyx_status cuda_cumsum(const kernel_call *c);
bool cuda_cumsum_supports(const kernel_prep *p);

} // namespace rdc

#endif
