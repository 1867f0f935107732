/* CPU kernels of the quant family (see cpu_kernels.h for the entry forms) */
KERNEL_CHAIN("", "QuantizeLinear", 10, 28, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16) | DT_BIT(ONYX_INT32), KF_OPAQUE_LAYOUT, cpu_quantizelinear_prepare, cpu_quantizelinear_run, cpu_opaque_release, cpu_quantizelinear_takes_chain)
KERNEL("", "DequantizeLinear", 10, 28, DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8) | DT_BIT(ONYX_INT16) | DT_BIT(ONYX_UINT16) | DT_BIT(ONYX_INT32) | DT_FLOAT8S | DT_SUBBYTE, 0, cpu_dequantizelinear_run)
KERNEL("", "DynamicQuantizeLinear", 11, 11, DT_BIT(ONYX_FLOAT), 0, cpu_dynamicquantizelinear_run)
KERNEL_FORKED("", "QLinearMatMul", 10, 21, DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8) | DT_FLOAT8S, 0,
              cpu_qlinearmatmul_prepare, cpu_qlinearmatmul_run, cpu_i8mm_rows_release,
              cpu_i8mm_rows_fork, cpu_i8mm_rows_unfork)
