/* Schema of TfIdfVectorizer: n-gram counts (optionally IDF-weighted) of each row of a [C] or
 * [B, C] int or string tensor against a pool of n-grams given as attributes. */
#include <string.h>

#include "ops/schema.h"

static onyx_status tfidf_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_STRING) | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    static const char *const required[] = {"mode", "ngram_indexes", "ngram_counts",
                                           "max_skip_count", "min_gram_length",
                                           "max_gram_length"};
    for (size_t k = 0; k < sizeof required / sizeof *required; k++)
        if (!node_attr(n, required[k]))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute '%s' is missing", required[k]);
    const char *mode = attr_string(n, "mode", "");
    if (strcmp(mode, "TF") != 0 && strcmp(mode, "IDF") != 0 && strcmp(mode, "TFIDF") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "mode is '%s', expected TF, IDF or TFIDF", mode);
    const graph_attr *ps = node_attr(n, "pool_strings"), *pi = node_attr(n, "pool_int64s");
    if ((ps && ps->n) && (pi && pi->n))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "both pool_strings and pool_int64s are set, "
                          "expected one of them");
    onyx_dtype dt = c->in[0]->dtype;
    if (ps && ps->n && dt != ONYX_STRING && dt != ONYX_UNDEFINED)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has type %s, expected string with "
                          "pool_strings", onyx_dtype_name(dt));
    if (pi && pi->n && dt == ONYX_STRING)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has type string, expected int32 or int64 "
                          "with pool_int64s");
    const int64_t *idx;
    size_t n_idx = attr_ints(n, "ngram_indexes", &idx);
    if (n_idx == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "ngram_indexes is empty");
    int64_t out_size = 0;
    for (size_t k = 0; k < n_idx; k++) {
        if (idx[k] < 0 || idx[k] >= INT32_MAX)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "ngram_indexes[%zu] = %lld is out of range "
                              "[0, %d)", k, (long long)idx[k], INT32_MAX);
        if (idx[k] + 1 > out_size) out_size = idx[k] + 1;
    }
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], ONYX_FLOAT, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank > 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected [C] or [B, C]", x->rank);
    if (x->rank == 2) {
        int64_t dims[2] = {x->dims[0], out_size};
        type_set_tensor(&c->out[0], ONYX_FLOAT, 2, dims);
    } else {
        type_set_tensor(&c->out[0], ONYX_FLOAT, 1, &out_size);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {
    {"mode", ATTR_STRING},          {"ngram_indexes", ATTR_INTS},   {"ngram_counts", ATTR_INTS},
    {"weights", ATTR_FLOATS},       {"pool_int64s", ATTR_INTS},     {"pool_strings", ATTR_STRINGS},
    {"max_skip_count", ATTR_INT},   {"min_gram_length", ATTR_INT},  {"max_gram_length", ATTR_INT},
    {NULL, 0}};

const op_schema op_TfIdfVectorizer[] = {
    {"", "TfIdfVectorizer", 9, 1, 1, 1, 1, attrs, tfidf_infer, 0}, OP_END};
