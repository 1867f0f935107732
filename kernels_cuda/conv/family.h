// The conv family's kernels on CUDA, spread over conv.cu (Conv, ConvTranspose), pool.cu (the
// pools) and norm.cu (BatchNormalization, LRN); family.cu gathers their entries.
#ifndef ONYX_KERNELS_CUDA_CONV_FAMILY_H
#define ONYX_KERNELS_CUDA_CONV_FAMILY_H

#include "kernels_cuda/cuda_kernels.h"

bool cuda_conv_supports(const kernel_prep *p);
bool cuda_convtranspose_supports(const kernel_prep *p);
onyx_status cuda_conv_prepare(const kernel_prep *p, void **state);
bool cuda_conv_takes_chain(const kernel_prep *p);
onyx_status cuda_convtranspose_prepare(const kernel_prep *p, void **state);
onyx_status cuda_conv_run(const kernel_call *c);
void cuda_conv_release(void *state);

bool cuda_maxpool_supports(const kernel_prep *p);
bool cuda_averagepool_supports(const kernel_prep *p);
onyx_status cuda_maxpool_prepare(const kernel_prep *p, void **state);
onyx_status cuda_averagepool_prepare(const kernel_prep *p, void **state);
onyx_status cuda_pool_run(const kernel_call *c);
void cuda_pool_release(void *state);
bool cuda_global_pool_supports(const kernel_prep *p);
onyx_status cuda_globalmaxpool_run(const kernel_call *c);
onyx_status cuda_globalaveragepool_run(const kernel_call *c);

bool cuda_batchnorm_supports(const kernel_prep *p);
onyx_status cuda_batchnorm_prepare(const kernel_prep *p, void **state);
bool cuda_batchnorm_takes_chain(const kernel_prep *p);
void cuda_batchnorm_release(void *state);
onyx_status cuda_batchnorm_run(const kernel_call *c);
bool cuda_lrn_supports(const kernel_prep *p);
onyx_status cuda_lrn_run(const kernel_call *c);

#endif
