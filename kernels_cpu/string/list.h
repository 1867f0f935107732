/* CPU kernels of the string family (see cpu_kernels.h for the entry forms) */
KERNEL("", "StringConcat", 20, 20, DT_BIT(ONYX_STRING), 0, cpu_string_concat_run)
KERNEL("", "StringSplit", 20, 20, DT_BIT(ONYX_STRING), KF_DYNAMIC_OUTPUT, cpu_string_split_run)
KERNEL_STATEFUL("", "StringNormalizer", 10, 10, DT_BIT(ONYX_STRING), KF_DYNAMIC_OUTPUT,
                cpu_string_normalizer_prepare, cpu_string_normalizer_run,
                cpu_string_normalizer_release)
KERNEL_STATEFUL("", "RegexFullMatch", 20, 20, DT_BIT(ONYX_STRING), 0,
                cpu_regex_full_match_prepare, cpu_regex_full_match_run,
                cpu_regex_full_match_release)
KERNEL_STATEFUL("", "TfIdfVectorizer", 9, 9,
                DT_BIT(ONYX_STRING) | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64), 0,
                cpu_tfidf_prepare, cpu_tfidf_run, cpu_tfidf_release)
KERNEL("", "ImageDecoder", 20, 20, DT_BIT(ONYX_UINT8), KF_DYNAMIC_OUTPUT, cpu_image_decoder_run)
