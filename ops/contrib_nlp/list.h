/* ops of the contrib_nlp family (com.microsoft contrib ops): one OP(Name) per ops/contrib_nlp/<name>.c */
