/* CPU kernel of TfIdfVectorizer: the n-gram pool becomes a trie at prepare (one hash table of
 * (parent node, token) -> child), and each row walks it from every start position and skip
 * distance, counting the n-grams it finds, as onnxruntime and the ONNX reference do. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"

typedef enum weighting { W_TF, W_IDF, W_TFIDF } weighting;

typedef struct trie_node {
    int64_t id;        /* 1-based n-gram number; 0 = not an n-gram of a counted size */
    int64_t children;
} trie_node;

typedef struct trie_slot {
    int64_t parent;    /* -1 = empty slot */
    int64_t child;
    int64_t ival;
    const char *sval;  /* string pools: borrowed from the node's attribute (the model outlives the
                          rep) */
} trie_slot;

typedef struct tfidf {
    weighting mode;
    bool strings;
    int64_t min_gram, max_gram, max_skip;
    int64_t out_size;
    const int64_t *indexes;  /* ngram_indexes (attribute storage) */
    int64_t n_indexes;
    const float *weights;    /* NULL when absent */
    trie_node *nodes;
    int64_t n_nodes;
    trie_slot *slots;
    uint64_t mask;           /* slot count - 1 */
} tfidf;

void cpu_tfidf_release(void *state) {
    tfidf *t = state;
    if (!t) return;
    free(t->nodes);
    free(t->slots);
    free(t);
}

static uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t token_hash(int64_t parent, int64_t ival, const char *sval) {
    uint64_t h = 1469598103934665603ULL;
    if (sval) {
        for (const unsigned char *p = (const unsigned char *)sval; *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
    } else {
        h = (uint64_t)ival;
    }
    return mix(h ^ mix((uint64_t)parent + 0x9e3779b97f4a7c15ULL));
}

static bool slot_is(const trie_slot *s, int64_t parent, int64_t ival, const char *sval) {
    return s->parent == parent && (sval ? strcmp(s->sval, sval) == 0 : s->ival == ival);
}

/* Child of `parent` for the token, or -1. */
static int64_t find_child(const tfidf *t, int64_t parent, int64_t ival, const char *sval) {
    for (uint64_t h = token_hash(parent, ival, sval) & t->mask;; h = (h + 1) & t->mask) {
        const trie_slot *s = &t->slots[h];
        if (s->parent < 0) return -1;
        if (slot_is(s, parent, ival, sval)) return s->child;
    }
}

/* Child of `parent` for the token, added when absent (the table has room for every pool item). */
static int64_t add_child(tfidf *t, int64_t parent, int64_t ival, const char *sval) {
    uint64_t h = token_hash(parent, ival, sval) & t->mask;
    for (;; h = (h + 1) & t->mask) {
        trie_slot *s = &t->slots[h];
        if (s->parent < 0) break;
        if (slot_is(s, parent, ival, sval)) return s->child;
    }
    int64_t child = t->n_nodes++;
    t->nodes[child] = (trie_node){0, 0};
    t->nodes[parent].children++;
    t->slots[h] = (trie_slot){parent, child, ival, sval};
    return child;
}

static onyx_status build_trie(tfidf *t, const graph_node *node) {
    const int64_t *counts, *pool_i = NULL;
    size_t n_counts = attr_ints(node, "ngram_counts", &counts);
    const graph_attr *ps = node_attr(node, "pool_strings");
    size_t total = 0;
    if (t->strings) {
        total = ps ? ps->n : 0;
    } else {
        total = attr_ints(node, "pool_int64s", &pool_i);
    }
    if (total > (size_t)INT32_MAX)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "the pool has %zu items, more than supported",
                          total);
    /* one node per pool item at most, plus the root; slots at most half full */
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)(total + 1)) cap *= 2;
    t->nodes = malloc((total + 1) * sizeof *t->nodes);
    t->slots = malloc(cap * sizeof *t->slots);
    if (!t->nodes || !t->slots) return onyx_oom("TfIdfVectorizer n-gram table");
    for (uint64_t k = 0; k < cap; k++) t->slots[k].parent = -1;
    t->mask = cap - 1;
    t->nodes[0] = (trie_node){0, 0};
    t->n_nodes = 1;
    int64_t id = 1;
    for (size_t i = 0; i < n_counts; i++) {
        int64_t gram = (int64_t)i + 1;
        int64_t start = counts[i], end = i + 1 < n_counts ? counts[i + 1] : (int64_t)total;
        if (start < 0 || start > (int64_t)total || end < start || end > (int64_t)total)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "ngram_counts[%zu] = %lld (next %lld) is "
                              "not an increasing position in the pool of %zu items", i,
                              (long long)start, (long long)end, total);
        int64_t grams = (end - start) / gram;
        if (gram < t->min_gram || gram > t->max_gram) {
            id += grams;
            continue;
        }
        int64_t item = start;
        for (int64_t g = 0; g < grams; g++) {
            int64_t at = 0;
            for (int64_t k = 0; k < gram; k++, item++)
                at = add_child(t, at, t->strings ? 0 : pool_i[item],
                               t->strings ? ps->strings[item] : NULL);
            if (id > t->n_indexes)
                return onyx_error(ONYX_ERR_INVALID_MODEL, "the pool has n-gram %lld but "
                                  "ngram_indexes only %lld entries", (long long)id,
                                  (long long)t->n_indexes);
            t->nodes[at].id = id++;
        }
    }
    return ONYX_OK;
}

onyx_status cpu_tfidf_prepare(const kernel_prep *p, void **state) {
    const graph_node *node = p->node;
    onyx_status st = ONYX_OK;
    tfidf *t = calloc(1, sizeof *t);
    if (!t) return onyx_oom("TfIdfVectorizer state");
    const char *mode = attr_string(node, "mode", "");
    if (strcmp(mode, "TF") == 0) t->mode = W_TF;
    else if (strcmp(mode, "IDF") == 0) t->mode = W_IDF;
    else if (strcmp(mode, "TFIDF") == 0) t->mode = W_TFIDF;
    else {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "mode is '%s', expected TF, IDF or TFIDF", mode);
        goto done;
    }
    t->min_gram = attr_int(node, "min_gram_length", 0);
    t->max_gram = attr_int(node, "max_gram_length", 0);
    t->max_skip = attr_int(node, "max_skip_count", 0);
    if (t->min_gram < 1 || t->max_gram < t->min_gram || t->max_skip < 0) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "min_gram_length %lld, max_gram_length %lld, "
                        "max_skip_count %lld: expected 1 <= min <= max and skips >= 0",
                        (long long)t->min_gram, (long long)t->max_gram, (long long)t->max_skip);
        goto done;
    }
    t->n_indexes = (int64_t)attr_ints(node, "ngram_indexes", &t->indexes);
    for (int64_t k = 0; k < t->n_indexes; k++) {
        if (t->indexes[k] < 0 || t->indexes[k] >= INT32_MAX) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "ngram_indexes[%lld] = %lld is out of range",
                            (long long)k, (long long)t->indexes[k]);
            goto done;
        }
        if (t->indexes[k] + 1 > t->out_size) t->out_size = t->indexes[k] + 1;
    }
    if (t->out_size == 0) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "ngram_indexes is empty");
        goto done;
    }
    size_t n_w = attr_floats(node, "weights", &t->weights);
    if (n_w == 0) t->weights = NULL;
    else if ((int64_t)n_w < t->out_size) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "weights has %zu entries, expected one per "
                        "output column (%lld)", n_w, (long long)t->out_size);
        goto done;
    }
    const graph_attr *ps = node_attr(node, "pool_strings");
    t->strings = ps && ps->type == ATTR_STRINGS && ps->n > 0;
    onyx_dtype dt = p->n_in > 0 && p->in_type[0] ? p->in_type[0]->dtype : ONYX_UNDEFINED;
    if (dt != ONYX_UNDEFINED && (dt == ONYX_STRING) != t->strings) {
        st = onyx_error(ONYX_ERR_SHAPE, "input 0 has type %s, but the pool is of %s",
                        onyx_dtype_name(dt), t->strings ? "strings" : "int64s");
        goto done;
    }
    st = build_trie(t, node);
done:
    if (st != ONYX_OK) {
        cpu_tfidf_release(t);
        return st;
    }
    *state = t;
    return ONYX_OK;
}

typedef struct tfidf_job {
    const tfidf *t;
    const tensor *x;
    int64_t cols;
    float *y;
} tfidf_job;

static int64_t lookup(const tfidf *t, const tensor *x, int64_t parent, int64_t i) {
    if (t->strings) return find_child(t, parent, 0, ((char *const *)x->data)[i]);
    int64_t v = x->dtype == ONYX_INT32 ? ((const int32_t *)x->data)[i]
                                       : ((const int64_t *)x->data)[i];
    return find_child(t, parent, v, NULL);
}

/* Counts one row's n-grams into y (float: the output's type; exact up to 2^24 per cell). */
static void count_row(const tfidf *t, const tensor *x, int64_t begin, int64_t cols, float *y) {
    int64_t start_size = t->min_gram;
    /* a skip distance of cols or more cannot reach a second item */
    int64_t max_dist = t->max_skip < cols ? t->max_skip + 1 : cols;
    for (int64_t dist = 1; dist <= max_dist; dist++) {
        for (int64_t s = 0; s < cols; s++) {
            /* no n-gram of the smallest counted size fits from here on */
            if ((uint64_t)(start_size - 1) > (uint64_t)(cols - s - 1) / (uint64_t)dist) break;
            int64_t at = 0, item = s;
            for (int64_t size = 1; t->nodes[at].children > 0 && size <= t->max_gram &&
                                   item < cols;
                 size++, item += dist) {
                int64_t child = lookup(t, x, at, begin + item);
                if (child < 0) break;
                if (size >= start_size && t->nodes[child].id != 0)
                    y[t->indexes[t->nodes[child].id - 1]] += 1.0f;
                at = child;
            }
        }
        /* unigrams do not depend on the skip distance: count them once */
        if (start_size == 1) {
            start_size = 2;
            if (start_size > t->max_gram) break;
        }
    }
}

static void rows_range(void *ctx, int64_t begin, int64_t end) {
    const tfidf_job *j = ctx;
    const tfidf *t = j->t;
    for (int64_t r = begin; r < end; r++) {
        float *y = j->y + r * t->out_size;
        memset(y, 0, sizeof(float) * (size_t)t->out_size);
        count_row(t, j->x, r * j->cols, j->cols, y);
        if (t->mode == W_IDF) {
            for (int64_t k = 0; k < t->out_size; k++)
                y[k] = y[k] > 0 ? (t->weights ? t->weights[k] : 1.0f) : 0.0f;
        } else if (t->mode == W_TFIDF && t->weights) {
            for (int64_t k = 0; k < t->out_size; k++) y[k] *= t->weights[k];
        }
    }
}

onyx_status cpu_tfidf_run(const kernel_call *c) {
    const tfidf *t = c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!t || !x || !y || y->dtype != ONYX_FLOAT)
        return onyx_error(ONYX_ERR_SHAPE, "expected an input and a float output");
    if ((x->dtype == ONYX_STRING) != t->strings ||
        (!t->strings && x->dtype != ONYX_INT32 && x->dtype != ONYX_INT64))
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has type %s, but the pool is of %s",
                          onyx_dtype_name(x->dtype), t->strings ? "strings" : "int64s");
    if (x->rank > 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected [C] or [B, C]", x->rank);
    int64_t rows = x->rank == 2 ? x->dims[0] : 1;
    int64_t cols = x->rank == 2 ? x->dims[1] : x->numel;
    if (y->numel != rows * t->out_size)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld x %lld",
                          (long long)y->numel, (long long)rows, (long long)t->out_size);
    tfidf_job j = {t, x, cols, y->data};
    parallel_for(rows, 1, rows_range, &j);
    return ONYX_OK;
}
