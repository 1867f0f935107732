/* ops of the rnn family: one OP(Name) per ops/<family>/<name>.c */
OP(RNN)
OP(GRU)
OP(LSTM)
