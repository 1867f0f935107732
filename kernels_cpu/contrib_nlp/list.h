/* CPU kernels of the contrib_nlp family (com.microsoft contrib ops; see cpu_kernels.h for the entry forms) */
