/* ops of the attention family: one OP(Name) per ops/<name>.c */
