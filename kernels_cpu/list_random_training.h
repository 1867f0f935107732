/* CPU kernels of the random_training family (see cpu_kernels.h for the entry forms) */
