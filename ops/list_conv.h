/* ops of the conv family: one OP(Name) per ops/<name>.c */
