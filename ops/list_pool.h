/* ops of the pool family: one OP(Name) per ops/<name>.c */
