// The conv family's entries on CUDA: convolutions, pools and the per-channel normalizations of
// convolutional networks (kernels in conv.cu, pool.cu and norm.cu).
#include "kernels_cuda/common.cuh"
#include "kernels_cuda/conv/family.h"

namespace {

const dtype_mask CONV_TYPES = DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16);

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs, takes_chain
    {"", "Conv", 1, 22, DEVICE_CUDA, CONV_TYPES, KF_DEVICE_EPILOGUE, cuda_conv_prepare,
     cuda_conv_run, cuda_conv_release, NULL, NULL, cuda_conv_supports, 0, cuda_conv_takes_chain},
    {"", "ConvTranspose", 1, 22, DEVICE_CUDA, CONV_TYPES, 0, cuda_convtranspose_prepare,
     cuda_conv_run, cuda_conv_release, NULL, NULL, cuda_convtranspose_supports, 0},
    {"", "MaxPool", 1, 22, DEVICE_CUDA, DT_FLOATS | DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8), 0,
     cuda_maxpool_prepare, cuda_pool_run, cuda_pool_release, NULL, NULL, cuda_maxpool_supports,
     0},
    {"", "AveragePool", 1, 22, DEVICE_CUDA, DT_FLOATS, 0, cuda_averagepool_prepare, cuda_pool_run,
     cuda_pool_release, NULL, NULL, cuda_averagepool_supports, 0},
    {"", "GlobalAveragePool", 1, 22, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_globalaveragepool_run,
     NULL, NULL, NULL, cuda_global_pool_supports, 0},
    {"", "GlobalMaxPool", 1, 22, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_globalmaxpool_run, NULL,
     NULL, NULL, cuda_global_pool_supports, 0},
    {"", "BatchNormalization", 1, 15, DEVICE_CUDA, DT_FLOATS, KF_DEVICE_EPILOGUE,
     cuda_batchnorm_prepare, cuda_batchnorm_run, cuda_batchnorm_release, NULL, NULL,
     cuda_batchnorm_supports, 0, cuda_batchnorm_takes_chain},
    {"", "LRN", 1, 13, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_lrn_run, NULL, NULL, NULL,
     cuda_lrn_supports, 0},
};

} // namespace

extern "C" const kernel *cuda_family_conv(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
