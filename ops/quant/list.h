/* ops of the quant family (ONNX quantization): one OP(Name) per ops/<family>/<name>.c */
OP(QuantizeLinear)
OP(DequantizeLinear)
OP(DynamicQuantizeLinear)
OP(QLinearMatMul)
