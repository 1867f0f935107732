/* CPU kernels of the conv family (see cpu_kernels.h for the entry forms) */
KERNEL_FORKED_CHAIN("", "Conv", 1, 22, DT_FLOATS, KF_POST_OPS | KF_INPLACE_ADDEND, cpu_conv_prepare, cpu_conv_run, cpu_conv_release,
                    cpu_conv_fork, cpu_conv_unfork, cpu_conv_takes_chain)
KERNEL_FORKED("", "ConvTranspose", 1, 22, DT_FLOATS, 0, cpu_convtranspose_prepare, cpu_convtranspose_run, cpu_convtranspose_release,
              cpu_convtranspose_fork, cpu_convtranspose_unfork)
KERNEL_STATEFUL("", "ConvInteger", 10, 10, DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8), 0, cpu_convinteger_prepare, cpu_convinteger_run, cpu_convinteger_release)
KERNEL_FORKED_CHAIN("", "QLinearConv", 10, 10, DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8), KF_OPAQUE_LAYOUT, cpu_qlinearconv_prepare, cpu_qlinearconv_run, cpu_qlinearconv_release, cpu_qlinearconv_fork, cpu_qlinearconv_unfork,
                    cpu_qlinearconv_takes_chain)
