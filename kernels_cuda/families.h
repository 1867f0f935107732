/* The CUDA kernel families, each in kernels_cuda/<family>/ with a function returning its entries;
 * earlier families win when two serve the same node. */
CUDA_FAMILY(elementwise)
CUDA_FAMILY(linalg)
CUDA_FAMILY(conv)
CUDA_FAMILY(movement)
CUDA_FAMILY(reduce)
CUDA_FAMILY(norm)
CUDA_FAMILY(attention)
CUDA_FAMILY(contrib)
