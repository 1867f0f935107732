/* CPU kernels of the string family (see cpu_kernels.h for the entry forms) */
