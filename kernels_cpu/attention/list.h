/* CPU kernels of the attention family (see cpu_kernels.h for the entry forms) */
KERNEL_CHAIN("", "Attention", 23, 25, DT_FLOATS, 0, cpu_attention_prepare, cpu_attention_run, cpu_attention_release, cpu_attention_takes_chain)
KERNEL_STATEFUL("ai.onnx.preview", "FlexAttention", 1, 1, DT_FLOATS, 0, cpu_flex_attention_prepare, cpu_flex_attention_run, cpu_flex_attention_release)
KERNEL("", "RotaryEmbedding", 23, 23, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16), 0, cpu_rotary_embedding)
KERNEL("", "LinearAttention", 27, 27, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16), 0, cpu_linear_attention_run)
