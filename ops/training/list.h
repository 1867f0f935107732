/* ops of the training family (ai.onnx.preview.training): one OP(Name) per ops/<family>/<name>.c */
OP(Adagrad)
OP(Adam)
OP(Momentum)
OP(Gradient)
