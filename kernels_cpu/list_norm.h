/* CPU kernels of the norm family (see cpu_kernels.h for the entry forms) */
