/* CPU kernels of the attention family (see cpu_kernels.h for the entry forms) */
