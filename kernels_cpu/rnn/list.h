/* CPU kernels of the rnn family (see cpu_kernels.h for the entry forms) */
KERNEL_STATEFUL("", "RNN", 1, 22, DT_FLOATS, 0, cpu_rnn_prepare, cpu_rnn_run, cpu_rnn_release)
KERNEL_STATEFUL("", "GRU", 1, 22, DT_FLOATS, 0, cpu_gru_prepare, cpu_gru_run, cpu_rnn_release)
KERNEL_STATEFUL("", "LSTM", 1, 22, DT_FLOATS, 0, cpu_lstm_prepare, cpu_lstm_run, cpu_rnn_release)
