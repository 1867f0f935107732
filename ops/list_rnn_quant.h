/* ops of the rnn_quant family: one OP(Name) per ops/<name>.c */
