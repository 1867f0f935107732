/* CPU kernels of the signal family (see cpu_kernels.h for the entry forms) */
