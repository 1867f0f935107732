/* ops of the random_training family: one OP(Name) per ops/<name>.c */
