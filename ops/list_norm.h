/* ops of the norm family: one OP(Name) per ops/<name>.c */
