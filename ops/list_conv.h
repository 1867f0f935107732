/* ops of the conv family: one OP(Name) per ops/<name>.c */
OP(Conv)
OP(ConvTranspose)
OP(ConvInteger)
OP(QLinearConv)
