/* ops of the attention family: one OP(Name) per ops/<name>.c */
OP(Attention)
OP(RotaryEmbedding)
OP(LinearAttention)
OP(FlexAttention)
