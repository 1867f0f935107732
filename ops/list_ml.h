/* ops of the ml family: one OP(Name) per ops/<name>.c */
