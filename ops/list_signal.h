/* ops of the signal family: one OP(Name) per ops/<name>.c */
