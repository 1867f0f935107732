/* CPU kernels of the rnn_quant family (see cpu_kernels.h for the entry forms) */
