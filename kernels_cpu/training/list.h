/* CPU kernels of the training family (see cpu_kernels.h for the entry forms) */
KERNEL("ai.onnx.preview.training", "Adagrad", 1, 1, 0, 0, cpu_adagrad_run)
KERNEL("ai.onnx.preview.training", "Adam", 1, 1, 0, 0, cpu_adam_run)
KERNEL("ai.onnx.preview.training", "Momentum", 1, 1, 0, 0, cpu_momentum_run)
KERNEL("ai.onnx.preview.training", "Gradient", 1, 1, 0, 0, cpu_gradient_run)
