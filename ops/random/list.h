/* ops of the random family: one OP(Name) per ops/<family>/<name>.c */
OP(RandomNormal)
OP(RandomUniform)
OP(RandomNormalLike)
OP(RandomUniformLike)
OP(Bernoulli)
OP(Multinomial)
