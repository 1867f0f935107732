/* CPU kernels of the conv family (see cpu_kernels.h for the entry forms) */
