/* ops of the contrib_nlp family (com.microsoft contrib ops, onnxruntime's default-domain
 * SimplifiedLayerNormalization, onyx's own ai.onyx GatherNBits): one OP(Name) per
 * ops/contrib_nlp/<name>.c; names carry a prefix (Ms, Ort) because ai.onnx has ops of the same
 * names (Attention, Gelu, RotaryEmbedding) */
OP(MsAttention)
OP(MsMultiHeadAttention)
OP(MsGroupQueryAttention)
OP(MsSkipLayerNormalization)
OP(MsSkipSimplifiedLayerNormalization)
OP(OrtSimplifiedLayerNormalization)
OP(MsEmbedLayerNormalization)
OP(MsGelu)
OP(MsBiasGelu)
OP(MsFastGelu)
OP(MsQuickGelu)
OP(MsFusedMatMul)
OP(MsBiasSoftmax)
OP(MsRotaryEmbedding)
OP(MsMatMulNBits)
OP(MsGatherBlockQuantized)
OP(GatherNBits)
