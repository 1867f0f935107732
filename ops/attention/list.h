/* ops of the attention family: one OP(Name) per ops/<family>/<name>.c */
OP(Attention)
OP(RotaryEmbedding)
OP(LinearAttention)
OP(FlexAttention)
