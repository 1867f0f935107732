/* ops of the norm family: one OP(Name) per ops/<family>/<name>.c (LayerNormalization/RMSNormalization and
 * the two losses share a file each) */
OP(BatchNormalization)
OP(InstanceNormalization)
OP(LayerNormalization)
OP(RMSNormalization)
OP(GroupNormalization)
OP(LRN)
OP(NegativeLogLikelihoodLoss)
OP(SoftmaxCrossEntropyLoss)
OP(Dropout)
OP(NonMaxSuppression)
