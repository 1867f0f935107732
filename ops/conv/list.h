/* ops of the conv family: one OP(Name) per ops/<family>/<name>.c */
OP(Conv)
OP(ConvTranspose)
OP(ConvInteger)
OP(QLinearConv)
