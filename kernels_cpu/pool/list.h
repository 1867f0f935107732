/* CPU kernels of the pool family (see cpu_kernels.h for the entry forms) */
KERNEL_FORKED_CHAIN("", "MaxPool", 1, 22, DT_FLOATS | DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8), KF_OPAQUE_LAYOUT, cpu_maxpool_prepare, cpu_pool_run, cpu_pool_release,
                    cpu_pool_fork, cpu_pool_unfork, cpu_maxpool_takes_chain)
KERNEL_FORKED_CHAIN("", "AveragePool", 1, 22, DT_FLOATS, KF_OPAQUE_LAYOUT, cpu_averagepool_prepare, cpu_pool_run, cpu_pool_release,
                    cpu_pool_fork, cpu_pool_unfork, cpu_averagepool_takes_chain)
KERNEL_FORKED("", "LpPool", 1, 22, DT_FLOATS, 0, cpu_lppool_prepare, cpu_pool_run, cpu_pool_release,
              cpu_pool_fork, cpu_pool_unfork)
KERNEL_CHAIN("", "GlobalAveragePool", 1, 22, DT_FLOATS, KF_OPAQUE_LAYOUT, cpu_opaque_prepare, cpu_globalaveragepool_run, cpu_opaque_release, cpu_opaque_takes_chain)
KERNEL_CHAIN("", "GlobalMaxPool", 1, 22, DT_FLOATS, KF_OPAQUE_LAYOUT, cpu_opaque_prepare, cpu_globalmaxpool_run, cpu_opaque_release, cpu_opaque_takes_chain)
KERNEL("", "GlobalLpPool", 1, 22, DT_FLOATS, 0, cpu_globallppool_run)
KERNEL("", "MaxUnpool", 9, 22, DT_FLOATS, 0, cpu_maxunpool_run)
KERNEL("", "RoiAlign", 10, 22, DT_FLOATS, 0, cpu_roialign_run)
KERNEL("", "DeformConv", 19, 22, DT_FLOATS, 0, cpu_deformconv_run)
KERNEL("", "Col2Im", 18, 18, DT_NUMERIC, 0, cpu_col2im_run)
KERNEL("", "CausalConvWithState", 27, 27, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16), 0, cpu_causal_conv_with_state_run)
