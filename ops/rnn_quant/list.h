/* ops of the rnn_quant family: one OP(Name) per ops/<family>/<name>.c */
OP(RNN)
OP(GRU)
OP(LSTM)
OP(QuantizeLinear)
OP(DequantizeLinear)
OP(DynamicQuantizeLinear)
OP(QLinearMatMul)
