/* ops of the string family: one OP(Name) per ops/<family>/<name>.c */
OP(StringConcat)
OP(StringSplit)
OP(StringNormalizer)
OP(RegexFullMatch)
OP(TfIdfVectorizer)
OP(ImageDecoder)
