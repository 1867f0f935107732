/* CPU kernels of the pool family (see cpu_kernels.h for the entry forms) */
