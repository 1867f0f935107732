/* ops of the string family: one OP(Name) per ops/<name>.c */
