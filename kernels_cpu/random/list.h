/* CPU kernels of the random family (see cpu_kernels.h for the entry forms) */
KERNEL("", "RandomNormal", 1, 22, 0, 0, cpu_random_normal_run)
KERNEL("", "RandomUniform", 1, 22, 0, 0, cpu_random_uniform_run)
KERNEL("", "RandomNormalLike", 1, 22, 0, 0, cpu_random_normal_run)
KERNEL("", "RandomUniformLike", 1, 22, 0, 0, cpu_random_uniform_run)
KERNEL("", "Bernoulli", 15, 22, 0, 0, cpu_bernoulli_run)
KERNEL("", "Multinomial", 7, 22, 0, 0, cpu_multinomial_run)
