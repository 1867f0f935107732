/* CPU kernels of the ml family (see cpu_kernels.h for the entry forms) */
