/* CPU kernels of the ai.onnx.ml tree ensembles: TreeEnsemble (v5), TreeEnsembleRegressor and
 * TreeEnsembleClassifier (v1-v5). Prepare compiles either attribute layout into one flat forest
 * (nodes with child links, leaves with (target, weight) lists), checking every index and refusing
 * cycles; run walks each tree per row, rows in parallel. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/ml/common.h"

enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER, M_LEAF };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct tnode {
    double split;
    int64_t feature;
    int32_t next[2];          /* [false, true]: a node index, or ~leaf when negative */
    int32_t set_begin, set_end; /* MEMBER: its values in forest.sets */
    uint8_t mode;
    uint8_t missing_true;
} tnode;

/* A <= node as float rows read it (find_leaf_leq): the split rounded down to a float, which
 * answers x <= split alike for every float x that is not NaN. */
typedef struct leq_node {
    float split;
    int32_t feature;
    int32_t next[2];
} leq_node;

/* A leaf's one output as the classifier adds it: its weight already a float. */
typedef struct leaf_score {
    int32_t target;
    float weight;
} leaf_score;

typedef struct forest {
    tnode *nodes;
    leq_node *leq;            /* every reachable node a <= test: the nodes in that form, else NULL */
    int32_t n_nodes;
    int32_t *roots;           /* node index or ~leaf, per tree */
    int32_t n_trees;
    int32_t *leaf_begin;      /* leaf i's outputs: [leaf_begin[i], leaf_begin[i + 1]) */
    int32_t n_leaves;
    int64_t *out_target;
    double *out_weight;
    double *sets;
    int64_t n_targets;        /* score columns the outputs index */
    int agg;
    ml_post post;
    double *base;             /* n_base values, or NULL; the aggregate adds n_targets of them */
    int64_t n_base;
    bool legacy_nan;          /* older ops: a NaN feature follows missing_true whatever the mode */
    int64_t max_feature;
    /* classifier */
    bool binary;              /* every output names one class */
    leaf_score *single;       /* every leaf has one output (LightGBM's, XGBoost's): those, else NULL */
} forest;

static void forest_free(forest *f) {
    if (!f) return;
    free(f->nodes);
    free(f->leq);
    free(f->roots);
    free(f->leaf_begin);
    free(f->out_target);
    free(f->out_weight);
    free(f->sets);
    free(f->base);
    free(f->single);
    free(f);
}

void cpu_tree_release(void *state) { forest_free(state); }

static onyx_status bad(const char *fmt, const char *what, int64_t a, int64_t b) {
    return onyx_error(ONYX_ERR_INVALID_MODEL, fmt, what, a, b);
}

/* A float list attribute, or its *_as_tensor twin, as doubles (NULL/0 when neither is set). */
static onyx_status read_reals(const graph_node *n, const char *name, double **out, int64_t *count) {
    char tname[96];
    snprintf(tname, sizeof tname, "%s_as_tensor", name);
    const tensor *t = attr_tensor(n, tname);
    const float *f;
    size_t nf = attr_floats(n, name, &f);
    *out = NULL;
    *count = t ? t->numel : (int64_t)nf;
    if (*count == 0) return ONYX_OK;
    *out = malloc((size_t)*count * sizeof **out);
    if (!*out) return onyx_oom(name);
    for (int64_t i = 0; i < *count; i++) (*out)[i] = t ? tensor_get_f64(t, i) : f[i];
    return ONYX_OK;
}

/* The largest float not above s (NaN for NaN): for a float x, x <= s exactly when x <= it. */
static float float_at_most(double s) {
    float f = (float)s;
    return (double)f > s ? nextafterf(f, -INFINITY) : f;
}

static onyx_status compile_leq(forest *f) {
    f->leq = malloc(((size_t)f->n_nodes + 1) * sizeof *f->leq);
    if (!f->leq) return onyx_oom("tree nodes");
    for (int32_t i = 0; i < f->n_nodes; i++) {
        const tnode *nd = &f->nodes[i];
        f->leq[i] = (leq_node){float_at_most(nd->split), (int32_t)nd->feature, {nd->next[0], nd->next[1]}};
    }
    return ONYX_OK;
}

/* Visits every node reachable from the roots once, in pre-order with the true branch first, giving
 * each MEMBER node its values (the order onnx's reference reads membership_values in), and refuses
 * a node reached twice (a cycle or a shared subtree). When all are <= tests, compiles f->leq. */
static onyx_status walk_trees(forest *f, const double *members, int64_t n_members) {
    onyx_status st = ONYX_OK;
    bool all_leq = true;
    uint8_t *seen = calloc((size_t)f->n_nodes + 1, 1);
    int32_t *stack = malloc(((size_t)f->n_nodes + 1) * sizeof *stack);
    int64_t member_at = 0, n_sets = 0;
    if (!seen || !stack) {
        st = onyx_oom("tree walk");
        goto done;
    }
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t sp = 0;
        if (f->roots[t] >= 0) stack[sp++] = f->roots[t];
        while (sp > 0) {
            int32_t i = stack[--sp];
            if (seen[i]) {
                st = onyx_error(ONYX_ERR_INVALID_MODEL, "tree %d reaches node %d twice (a cycle or a "
                                "shared subtree)", (int)t, (int)i);
                goto done;
            }
            seen[i] = 1;
            tnode *nd = &f->nodes[i];
            all_leq &= nd->mode == M_LEQ && nd->feature <= INT32_MAX;
            if (nd->mode == M_MEMBER) {
                nd->set_begin = (int32_t)member_at;
                while (member_at < n_members && !isnan(members[member_at])) member_at++;
                nd->set_end = (int32_t)member_at;
                if (member_at >= n_members) {
                    st = onyx_error(ONYX_ERR_INVALID_MODEL, "membership_values ends before the set of "
                                    "node %d (each set ends with a NaN)", (int)i);
                    goto done;
                }
                member_at++;
                n_sets++;
            }
            /* false pushed first so that the true branch is visited first */
            for (int b = 0; b < 2; b++)
                if (nd->next[b] >= 0) {
                    if (sp > f->n_nodes) {
                        st = onyx_error(ONYX_ERR_INVALID_MODEL, "tree %d is not a tree", (int)t);
                        goto done;
                    }
                    stack[sp++] = nd->next[b];
                }
        }
    }
    (void)n_sets;
    if (all_leq) st = compile_leq(f);
done:
    free(seen);
    free(stack);
    return st;
}

/* ---- TreeEnsemble (v5) layout */

static onyx_status compile_v5(const graph_node *n, forest *f) {
    const int64_t *feat, *tnode_ids, *fnode_ids, *tleaf, *fleaf, *missing, *roots, *leaf_targets;
    size_t nn = attr_ints(n, "nodes_featureids", &feat);
    size_t nt = attr_ints(n, "nodes_truenodeids", &tnode_ids);
    size_t nf = attr_ints(n, "nodes_falsenodeids", &fnode_ids);
    size_t ntl = attr_ints(n, "nodes_trueleafs", &tleaf);
    size_t nfl = attr_ints(n, "nodes_falseleafs", &fleaf);
    size_t nm = attr_ints(n, "nodes_missing_value_tracks_true", &missing);
    size_t nr = attr_ints(n, "tree_roots", &roots);
    size_t nl = attr_ints(n, "leaf_targetids", &leaf_targets);
    const tensor *splits = attr_tensor(n, "nodes_splits"), *modes = attr_tensor(n, "nodes_modes");
    const tensor *weights = attr_tensor(n, "leaf_weights"), *members = attr_tensor(n, "membership_values");
    if (!splits || !modes || !weights)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "nodes_splits, nodes_modes and leaf_weights are required");
    if (nt != nn || nf != nn || ntl != nn || nfl != nn || (int64_t)nn != splits->numel ||
        (int64_t)nn != modes->numel || (nm && nm != nn))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "the nodes_* attributes differ in length (%zu feature "
                          "ids)", nn);
    if ((int64_t)nl != weights->numel)
        return bad("%s: %lld target ids but %lld weights", "leaf_targetids", (int64_t)nl, weights->numel);
    if (nn > INT32_MAX / 2 || nl > INT32_MAX / 2 || nr == 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%zu nodes, %zu leaves, %zu trees", nn, nl, nr);
    f->n_nodes = (int32_t)nn;
    f->n_leaves = (int32_t)nl;
    f->n_trees = (int32_t)nr;
    f->n_targets = attr_int(n, "n_targets", 1);
    f->agg = (int)attr_int(n, "aggregate_function", AGG_SUM);
    int64_t post = attr_int(n, "post_transform", 0);
    if (f->agg < AGG_AVERAGE || f->agg > AGG_MAX || post < 0 || post > 4)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "aggregate_function %d / post_transform %lld out of range",
                          f->agg, (long long)post);
    f->post = (ml_post)post;
    f->nodes = calloc(nn ? nn : 1, sizeof *f->nodes);
    f->roots = malloc(nr * sizeof *f->roots);
    f->leaf_begin = malloc((nl + 1) * sizeof *f->leaf_begin);
    f->out_target = malloc((nl ? nl : 1) * sizeof *f->out_target);
    f->out_weight = malloc((nl ? nl : 1) * sizeof *f->out_weight);
    if (!f->nodes || !f->roots || !f->leaf_begin || !f->out_target || !f->out_weight)
        return onyx_oom("tree ensemble");
    for (size_t i = 0; i <= nl; i++) f->leaf_begin[i] = (int32_t)i;
    for (size_t i = 0; i < nl; i++) {
        if (leaf_targets[i] < 0 || leaf_targets[i] >= f->n_targets)
            return bad("%s[%lld] = %lld is not a target index", "leaf_targetids", (int64_t)i, leaf_targets[i]);
        f->out_target[i] = leaf_targets[i];
        f->out_weight[i] = tensor_get_f64(weights, (int64_t)i);
    }
    for (size_t i = 0; i < nn; i++) {
        tnode *nd = &f->nodes[i];
        int64_t mode = tensor_get_i64(modes, (int64_t)i);
        if (mode < M_LEQ || mode > M_MEMBER)
            return bad("%s[%lld] = %lld is not a node mode", "nodes_modes", (int64_t)i, mode);
        if (feat[i] < 0) return bad("%s[%lld] = %lld is negative", "nodes_featureids", (int64_t)i, feat[i]);
        nd->mode = (uint8_t)mode;
        nd->feature = feat[i];
        nd->split = tensor_get_f64(splits, (int64_t)i);
        nd->missing_true = nm && missing[i] != 0;
        if (feat[i] > f->max_feature) f->max_feature = feat[i];
        const int64_t ids[2] = {fnode_ids[i], tnode_ids[i]}, leafs[2] = {fleaf[i], tleaf[i]};
        for (int b = 0; b < 2; b++) {
            int64_t limit = leafs[b] ? (int64_t)nl : (int64_t)nn;
            if (ids[b] < 0 || ids[b] >= limit)
                return bad("%s of node %lld is %lld: out of range", b ? "true branch" : "false branch",
                           (int64_t)i, ids[b]);
            nd->next[b] = leafs[b] ? ~(int32_t)ids[b] : (int32_t)ids[b];
        }
    }
    for (size_t t = 0; t < nr; t++) {
        int64_t r = roots[t];
        if (r < 0 || r >= (int64_t)nn) return bad("%s[%lld] = %lld is not a node", "tree_roots", (int64_t)t, r);
        /* A tree that is one leaf: a root whose both branches name the same leaf. */
        bool leaf = tleaf[r] && fleaf[r] && tnode_ids[r] == fnode_ids[r];
        f->roots[t] = leaf ? ~(int32_t)tnode_ids[r] : (int32_t)r;
    }
    int64_t n_members = members ? members->numel : 0;
    double *m = NULL;
    if (n_members) {
        m = malloc((size_t)n_members * sizeof *m);
        if (!m) return onyx_oom("membership values");
        for (int64_t i = 0; i < n_members; i++) m[i] = tensor_get_f64(members, i);
    }
    f->sets = m;
    return walk_trees(f, m, n_members);
}

/* ---- TreeEnsembleRegressor / TreeEnsembleClassifier layout: nodes named by (tree id, node id),
 * outputs attached to leaves by (tree id, node id) too. */

typedef struct node_key {
    int64_t tree, node;
    int32_t index;
} node_key;

static int cmp_node_key(const void *a, const void *b) {
    const node_key *x = a, *y = b;
    if (x->tree != y->tree) return x->tree < y->tree ? -1 : 1;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int32_t find_node(const node_key *keys, int32_t n, int64_t tree, int64_t node) {
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (keys[mid].tree < tree || (keys[mid].tree == tree && keys[mid].node < node)) lo = mid + 1;
        else hi = mid;
    }
    return (lo < n && keys[lo].tree == tree && keys[lo].node == node) ? keys[lo].index : -1;
}

static onyx_status parse_mode(const char *s, uint8_t *out) {
    static const char *const names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT",
                                        "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER", "LEAF"};
    for (int i = 0; i < 8; i++)
        if (i != M_MEMBER && !strcmp(s, names[i])) {
            *out = (uint8_t)i;
            return ONYX_OK;
        }
    return onyx_error(ONYX_ERR_INVALID_MODEL, "node mode '%s' is not BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, "
                      "BRANCH_GT, BRANCH_EQ, BRANCH_NEQ or LEAF", s);
}

/* prefix: "target" or "class". n_targets: score columns. */
static onyx_status compile_legacy(const graph_node *n, const char *prefix, int64_t n_targets, forest *f) {
    onyx_status st = ONYX_OK;
    node_key *keys = NULL;
    int32_t *leaf_of = NULL, *fill = NULL;
    double *values = NULL, *weights = NULL;
    const int64_t *tree_ids, *node_ids, *feat, *tids, *fids, *missing, *o_tree, *o_node, *o_id;
    size_t nn = attr_ints(n, "nodes_treeids", &tree_ids);
    size_t nnid = attr_ints(n, "nodes_nodeids", &node_ids);
    size_t nfeat = attr_ints(n, "nodes_featureids", &feat);
    size_t nt = attr_ints(n, "nodes_truenodeids", &tids);
    size_t nf = attr_ints(n, "nodes_falsenodeids", &fids);
    size_t nm = attr_ints(n, "nodes_missing_value_tracks_true", &missing);
    const graph_attr *modes = node_attr(n, "nodes_modes");
    char name[64];
    snprintf(name, sizeof name, "%s_treeids", prefix);
    size_t no = attr_ints(n, name, &o_tree);
    snprintf(name, sizeof name, "%s_nodeids", prefix);
    size_t no_n = attr_ints(n, name, &o_node);
    snprintf(name, sizeof name, "%s_ids", prefix);
    size_t no_i = attr_ints(n, name, &o_id);
    int64_t n_values, n_weights, n_base;
    CHECK(read_reals(n, "nodes_values", &values, &n_values));
    snprintf(name, sizeof name, "%s_weights", prefix);
    CHECK(read_reals(n, name, &weights, &n_weights));
    CHECK(read_reals(n, "base_values", &f->base, &n_base));
    if (nn == 0 || nnid != nn || nfeat != nn || nt != nn || nf != nn || !modes || modes->n != nn ||
        (nm && nm != nn) || (n_values && n_values != (int64_t)nn)) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "the nodes_* attributes differ in length or are missing "
                        "(%zu tree ids)", nn);
        goto done;
    }
    if (no_n != no || no_i != no || n_weights != (int64_t)no) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "the %s_* attributes differ in length", prefix);
        goto done;
    }
    /* One base value for two classes: skl2onnx's binary GradientBoostingClassifier and onnxmltools'
     * binary XGBClassifier write that; the classifier applies it (onnxruntime's binary rules). */
    f->n_base = n_base;
    if (n_base && n_base != n_targets && !(n_base == 1 && n_targets == 2 && !strcmp(prefix, "class"))) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "%lld base values for %lld scores", (long long)n_base,
                        (long long)n_targets);
        goto done;
    }
    if (nn > INT32_MAX / 2 || no > INT32_MAX / 2) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "too many nodes (%zu)", nn);
        goto done;
    }
    f->legacy_nan = true;
    f->n_targets = n_targets;
    f->n_nodes = (int32_t)nn;
    keys = malloc(nn * sizeof *keys);
    leaf_of = malloc(nn * sizeof *leaf_of);
    f->nodes = calloc(nn, sizeof *f->nodes);
    if (!keys || !leaf_of || !f->nodes) {
        st = onyx_oom("tree ensemble");
        goto done;
    }
    for (size_t i = 0; i < nn; i++) keys[i] = (node_key){tree_ids[i], node_ids[i], (int32_t)i};
    qsort(keys, nn, sizeof *keys, cmp_node_key);
    for (size_t i = 1; i < nn; i++)
        if (keys[i].tree == keys[i - 1].tree && keys[i].node == keys[i - 1].node) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "node %lld of tree %lld is defined twice",
                            (long long)keys[i].node, (long long)keys[i].tree);
            goto done;
        }
    /* leaves numbered in node order; trees in increasing tree id, rooted at their first node */
    for (size_t i = 0; i < nn; i++) {
        CHECK(parse_mode(modes->strings[i], &f->nodes[i].mode));
        leaf_of[i] = f->nodes[i].mode == M_LEAF ? f->n_leaves++ : -1;
    }
    f->n_trees = 1;
    for (size_t i = 1; i < nn; i++) f->n_trees += keys[i].tree != keys[i - 1].tree;
    f->roots = malloc((size_t)f->n_trees * sizeof *f->roots);
    if (!f->roots) {
        st = onyx_oom("tree roots");
        goto done;
    }
    for (int32_t t = 0, i = 0; i < (int32_t)nn; t++) {
        int32_t root = keys[i].index;
        int64_t tree = keys[i].tree;
        for (; i < (int32_t)nn && keys[i].tree == tree; i++)
            if (keys[i].index < root) root = keys[i].index;
        f->roots[t] = leaf_of[root] >= 0 ? ~leaf_of[root] : root;
    }
    for (size_t i = 0; i < nn; i++) {
        tnode *nd = &f->nodes[i];
        if (nd->mode == M_LEAF) continue;
        if (feat[i] < 0) {
            st = bad("%s[%lld] = %lld is negative", "nodes_featureids", (int64_t)i, feat[i]);
            goto done;
        }
        nd->feature = feat[i];
        nd->split = n_values ? values[i] : 0;
        nd->missing_true = nm && missing[i] != 0;
        if (feat[i] > f->max_feature) f->max_feature = feat[i];
        const int64_t ids[2] = {fids[i], tids[i]};
        for (int b = 0; b < 2; b++) {
            int32_t j = find_node(keys, (int32_t)nn, tree_ids[i], ids[b]);
            if (j < 0) {
                st = onyx_error(ONYX_ERR_INVALID_MODEL, "node %lld of tree %lld: its %s branch names node "
                                "%lld, which that tree does not have", (long long)node_ids[i],
                                (long long)tree_ids[i], b ? "true" : "false", (long long)ids[b]);
                goto done;
            }
            nd->next[b] = leaf_of[j] >= 0 ? ~leaf_of[j] : j;
        }
    }
    /* outputs grouped by leaf (counting sort, stable) */
    f->leaf_begin = calloc((size_t)f->n_leaves + 1, sizeof *f->leaf_begin);
    fill = calloc((size_t)f->n_leaves + 1, sizeof *fill);
    f->out_target = malloc((no ? no : 1) * sizeof *f->out_target);
    f->out_weight = malloc((no ? no : 1) * sizeof *f->out_weight);
    if (!f->leaf_begin || !fill || !f->out_target || !f->out_weight) {
        st = onyx_oom("tree outputs");
        goto done;
    }
    for (size_t k = 0; k < no; k++) {
        int32_t j = find_node(keys, (int32_t)nn, o_tree[k], o_node[k]);
        if (j < 0 || leaf_of[j] < 0) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "%s %zu is attached to node %lld of tree %lld, which is "
                            "not a leaf", prefix, k, (long long)o_node[k], (long long)o_tree[k]);
            goto done;
        }
        if (o_id[k] < 0 || o_id[k] >= n_targets) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "%s_ids[%zu] = %lld is not below %lld", prefix, k,
                            (long long)o_id[k], (long long)n_targets);
            goto done;
        }
        f->leaf_begin[leaf_of[j] + 1]++;
    }
    for (int32_t l = 0; l < f->n_leaves; l++) f->leaf_begin[l + 1] += f->leaf_begin[l];
    memcpy(fill, f->leaf_begin, ((size_t)f->n_leaves + 1) * sizeof *fill);
    f->binary = true;
    for (size_t k = 0; k < no; k++) {
        int32_t l = leaf_of[find_node(keys, (int32_t)nn, o_tree[k], o_node[k])];
        f->out_target[fill[l]] = o_id[k];
        f->out_weight[fill[l]++] = weights[k];
        if (o_id[k] != o_id[0]) f->binary = false;
    }
    CHECK(walk_trees(f, NULL, 0));
done:
    free(keys);
    free(leaf_of);
    free(fill);
    free(values);
    free(weights);
    return st;
}

/* ---- evaluation */

static inline bool goes_true(const forest *f, const tnode *nd, double x) {
    if (isnan(x) && (f->legacy_nan || nd->missing_true)) return nd->missing_true;
    switch (nd->mode) {
    case M_LEQ: return x <= nd->split;
    case M_LT: return x < nd->split;
    case M_GTE: return x >= nd->split;
    case M_GT: return x > nd->split;
    case M_EQ: return x == nd->split;
    case M_NEQ: return x != nd->split;
    default:
        for (int32_t k = nd->set_begin; k < nd->set_end; k++)
            if (f->sets[k] == x) return true;
        return false;
    }
}

/* Row `row` of X when find_leaf_leq may walk it: the forest has only <= tests (scikit-learn's and
 * LightGBM's), X is float and the row has no NaN (whose branch missing_true decides); else NULL. */
static inline const float *leq_row(const forest *f, const tensor *x, int64_t row, int64_t cols) {
    if (!f->leq || x->dtype != ONYX_FLOAT) return NULL;
    const float *r = (const float *)x->data + row * cols;
    for (int64_t j = 0; j < cols; j++)
        if (isnan(r[j])) return NULL;
    return r;
}

/* The leaf that a leq_row reaches from a root: goes_true's answer in one float comparison. */
static inline int32_t find_leaf_leq(const leq_node *nodes, const float *row, int32_t i) {
    while (i >= 0) {
        const leq_node *nd = &nodes[i];
        i = nd->next[row[nd->feature] <= nd->split];
    }
    return ~i;
}

/* The leaf that one row reaches from a root; fast: its leq_row, or NULL. */
static inline int32_t find_leaf(const forest *f, const tensor *x, const float *fast, int64_t row,
                                int64_t cols, int32_t i) {
    if (fast) return find_leaf_leq(f->leq, fast, i);
    while (i >= 0) {
        const tnode *nd = &f->nodes[i];
        i = nd->next[goes_true(f, nd, ml_x_at(x, row * cols + nd->feature))];
    }
    return ~i;
}

/* Aggregates every tree's leaf outputs for one row into acc[n_targets] (type T). */
#define DEFINE_AGGREGATE(NAME, T, TMAX)                                                            \
    static void NAME(const forest *f, const tensor *x, int64_t row, int64_t cols, T *acc) {        \
        for (int64_t k = 0; k < f->n_targets; k++)                                                 \
            acc[k] = f->agg == AGG_MIN ? (T)(TMAX) : f->agg == AGG_MAX ? (T)-(TMAX) : (T)0;        \
        const float *fast = leq_row(f, x, row, cols);                                              \
        for (int32_t t = 0; t < f->n_trees; t++) {                                                 \
            int32_t leaf = find_leaf(f, x, fast, row, cols, f->roots[t]);                          \
            for (int32_t o = f->leaf_begin[leaf]; o < f->leaf_begin[leaf + 1]; o++) {              \
                T w = (T)f->out_weight[o], *a = &acc[f->out_target[o]];                            \
                if (f->agg == AGG_MIN) *a = w < *a ? w : *a;                                       \
                else if (f->agg == AGG_MAX) *a = w > *a ? w : *a;                                  \
                else *a += w;                                                                      \
            }                                                                                      \
        }                                                                                          \
        if (f->agg == AGG_AVERAGE)                                                                 \
            for (int64_t k = 0; k < f->n_targets; k++) acc[k] /= (T)f->n_trees;                    \
        if (f->base)                                                                               \
            for (int64_t k = 0; k < f->n_targets; k++) acc[k] += (T)f->base[k];                    \
    }
DEFINE_AGGREGATE(aggregate_f32, float, FLT_MAX)
DEFINE_AGGREGATE(aggregate_f64, double, DBL_MAX)

static onyx_status check_features(const forest *f, const tensor *x, int64_t *rows, int64_t *cols) {
    *cols = x->rank ? x->dims[x->rank - 1] : 1;
    *rows = *cols ? x->numel / *cols : 0;
    if (f->max_feature >= *cols)
        return onyx_error(ONYX_ERR_SHAPE, "the trees read feature %" PRId64 " but X has %" PRId64
                          " columns", f->max_feature, *cols);
    return ONYX_OK;
}

typedef struct tree_job {
    const forest *f;
    const tensor *x;
    void *y;
    int64_t cols;
} tree_job;

static void regress_f32(void *ctx, int64_t begin, int64_t end) {
    const tree_job *j = ctx;
    for (int64_t r = begin; r < end; r++) {
        float *acc = (float *)j->y + r * j->f->n_targets;
        aggregate_f32(j->f, j->x, r, j->cols, acc);
        ml_post_row(j->f->post, acc, j->f->n_targets);
    }
}

static void regress_f64(void *ctx, int64_t begin, int64_t end) {
    const tree_job *j = ctx;
    for (int64_t r = begin; r < end; r++) {
        double *acc = (double *)j->y + r * j->f->n_targets;
        aggregate_f64(j->f, j->x, r, j->cols, acc);
        ml_post_row_f64(j->f->post, acc, j->f->n_targets);
    }
}

/* Tree walks per parallel chunk. A worker that spins after a run (core/parallel.h) takes a chunk
 * within a few microseconds, and TBB has the caller run a chunk no worker has taken, so a late
 * worker costs little: a chunk needs only to outweigh the hand-over. */
enum { CHUNK_WALKS = 1024 };

/* Rows per parallel chunk: CHUNK_WALKS walks, at least one row. */
static int64_t grain(const forest *f) { return 1 + CHUNK_WALKS / (f->n_trees + 1); }

onyx_status cpu_tree_ensemble_prepare(const kernel_prep *p, void **state) {
    forest *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("tree ensemble");
    onyx_status st = compile_v5(p->node, f);
    if (st != ONYX_OK) {
        forest_free(f);
        return st;
    }
    *state = f;
    return ONYX_OK;
}

onyx_status cpu_tree_ensemble_run(const kernel_call *c) {
    const forest *f = c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    int64_t rows, cols;
    TRY(check_features(f, x, &rows, &cols));
    tree_job j = {f, x, y->data, cols};
    if (x->dtype == ONYX_DOUBLE) parallel_for(rows, grain(f), regress_f64, &j);
    else if (x->dtype == ONYX_FLOAT) parallel_for(rows, grain(f), regress_f32, &j);
    else if (x->dtype != ONYX_FLOAT16)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input of type %s, expected float, double or "
                          "float16", onyx_dtype_name(x->dtype));
    else {
        /* float16: one row of scores at a time, in the run's scratch */
        void *mem;
        TRY(kernel_scratch(c, ((size_t)f->n_targets + 1) * sizeof(float), &mem));
        float *row = mem;
        for (int64_t r = 0; r < rows; r++) {
            aggregate_f32(f, x, r, cols, row);
            ml_post_row(f->post, row, f->n_targets);
            for (int64_t k = 0; k < f->n_targets; k++)
                ((uint16_t *)y->data)[r * f->n_targets + k] = cpu_float_to_fp16(row[k]);
        }
    }
    return ONYX_OK;
}

onyx_status cpu_tree_regressor_prepare(const kernel_prep *p, void **state) {
    forest *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("tree ensemble");
    onyx_status st = compile_legacy(p->node, "target", attr_int(p->node, "n_targets", 1), f);
    if (st == ONYX_OK) {
        const char *agg = attr_string(p->node, "aggregate_function", "SUM");
        static const char *const aggs[] = {"AVERAGE", "SUM", "MIN", "MAX"};
        f->agg = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(agg, aggs[i])) f->agg = i;
        if (f->agg < 0)
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "aggregate_function '%s' is not AVERAGE, SUM, MIN or MAX",
                            agg);
    }
    if (st == ONYX_OK) st = ml_parse_post(attr_string(p->node, "post_transform", "NONE"), &f->post);
    if (st != ONYX_OK) {
        forest_free(f);
        return st;
    }
    *state = f;
    return ONYX_OK;
}

onyx_status cpu_tree_regressor_run(const kernel_call *c) {
    const forest *f = c->state;
    const tensor *x = kernel_input(c, 0);
    int64_t rows, cols;
    TRY(check_features(f, x, &rows, &cols));
    tree_job j = {f, x, kernel_output(c, 0)->data, cols};
    parallel_for(rows, grain(f), regress_f32, &j);
    return ONYX_OK;
}

/* ---- classifier: scores per class, onnxruntime's binary rules, labels */

typedef struct classifier_state {
    forest *f;
    int64_t n_labels;
    bool string_labels;
    const int64_t *int_labels;  /* the node's classlabels_int64s (lives as long as the rep) */
    double *base;               /* base_values (n_base of them), applied by the rules below */
    int64_t n_base;
    bool all_positive;          /* no leaf weight is negative */
} classifier_state;

void cpu_tree_classifier_release(void *state) {
    classifier_state *s = state;
    if (!s) return;
    forest_free(s->f);
    free(s->base);
    free(s);
}

/* f->single when every leaf has exactly one output (a class index that fits an int32). */
static onyx_status compile_single(forest *f) {
    if (f->n_targets > INT32_MAX) return ONYX_OK;
    for (int32_t l = 0; l < f->n_leaves; l++)
        if (f->leaf_begin[l + 1] - f->leaf_begin[l] != 1) return ONYX_OK;
    f->single = malloc(((size_t)f->n_leaves + 1) * sizeof *f->single);
    if (!f->single) return onyx_oom("tree leaves");
    for (int32_t l = 0; l < f->n_leaves; l++) {
        int32_t o = f->leaf_begin[l];
        f->single[l] = (leaf_score){(int32_t)f->out_target[o], (float)f->out_weight[o]};
    }
    return ONYX_OK;
}

onyx_status cpu_tree_classifier_prepare(const kernel_prep *p, void **state) {
    classifier_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("tree classifier");
    onyx_status st = ONYX_OK;
    const graph_attr *strings = node_attr(p->node, "classlabels_strings");
    s->string_labels = strings && strings->n;
    s->n_labels = s->string_labels ? (int64_t)strings->n
                                   : (int64_t)attr_ints(p->node, "classlabels_int64s", &s->int_labels);
    s->f = calloc(1, sizeof *s->f);
    if (!s->f) {
        st = onyx_oom("tree classifier");
        goto done;
    }
    CHECK(compile_legacy(p->node, "class", s->n_labels, s->f));
    s->f->agg = AGG_SUM;
    CHECK(ml_parse_post(attr_string(p->node, "post_transform", "NONE"), &s->f->post));
    /* the base values are the classifier's: the aggregate must not add them */
    s->base = s->f->base;
    s->n_base = s->f->n_base;
    s->f->base = NULL;
    s->all_positive = true;
    for (int32_t o = 0; o < s->f->leaf_begin[s->f->n_leaves]; o++)
        if (s->f->out_weight[o] < 0) s->all_positive = false;
    CHECK(compile_single(s->f));
    *state = s;
    return ONYX_OK;
done:
    cpu_tree_classifier_release(s);
    return st;
}

/* Sums each class's leaf weights over the trees for one row into z, and marks in has the classes
 * that some reached leaf names: onnxruntime's binary rules and argmax depend on it. */
static inline void add_leaf(const forest *f, int32_t leaf, float *z, uint8_t *has) {
    if (f->single) { /* the same float added as below, without the loop */
        leaf_score one = f->single[leaf];
        z[one.target] += one.weight;
        has[one.target] = 1;
        return;
    }
    for (int32_t o = f->leaf_begin[leaf]; o < f->leaf_begin[leaf + 1]; o++) {
        z[f->out_target[o]] += (float)f->out_weight[o];
        has[f->out_target[o]] = 1;
    }
}

static void class_sums(const forest *f, const tensor *x, int64_t row, int64_t cols, float *z, uint8_t *has) {
    for (int64_t k = 0; k < f->n_targets; k++) z[k] = 0, has[k] = 0;
    const float *fast = leq_row(f, x, row, cols);
    for (int32_t t = 0; t < f->n_trees; t++) add_leaf(f, find_leaf(f, x, fast, row, cols, f->roots[t]), z, has);
}

enum { WALK_ROWS = 4 };

/* One step of find_leaf_leq; a leaf (negative) stays where it is. */
static inline int32_t leq_step(const leq_node *nodes, const float *row, int32_t i) {
    if (i < 0) return i;
    const leq_node *nd = &nodes[i];
    return nd->next[row[nd->feature] <= nd->split];
}

/* The leaves that WALK_ROWS leq_rows reach from a root, walked together: a walk is a chain of
 * dependent loads, and several chains at once keep the core busy. The walks go on until all four
 * are at leaves (the AND of the indices is negative). */
static inline void find_leaves_leq(const leq_node *nodes, const float *const *rows, int32_t root,
                                   int32_t *leaves) {
    int32_t a = root, b = root, c = root, d = root;
    while ((a & b & c & d) >= 0) {
        a = leq_step(nodes, rows[0], a);
        b = leq_step(nodes, rows[1], b);
        c = leq_step(nodes, rows[2], c);
        d = leq_step(nodes, rows[3], d);
    }
    leaves[0] = ~a, leaves[1] = ~b, leaves[2] = ~c, leaves[3] = ~d;
}

/* class_sums of rows [begin, end) into their score rows (width apart) and has rows (n_targets
 * apart): WALK_ROWS rows at a time where all of them take the fast walk, else one by one. Each
 * row's sums add the trees in the same order either way. */
static void class_sums_rows(const forest *f, const tensor *x, int64_t begin, int64_t end, int64_t cols,
                            float *z, int64_t width, uint8_t *has) {
    int64_t n = f->n_targets;
    for (int64_t r = begin; r < end;) {
        const float *fast[WALK_ROWS];
        int m = 0;
        while (m < WALK_ROWS && r + m < end && (fast[m] = leq_row(f, x, r + m, cols))) m++;
        if (m < WALK_ROWS) {
            class_sums(f, x, r, cols, z + r * width, has + r * n);
            r++;
            continue;
        }
        for (int k = 0; k < WALK_ROWS; k++)
            for (int64_t c = 0; c < n; c++) z[(r + k) * width + c] = 0, has[(r + k) * n + c] = 0;
        for (int32_t t = 0; t < f->n_trees; t++) {
            int32_t leaves[WALK_ROWS];
            find_leaves_leq(f->leq, fast, f->roots[t], leaves);
            for (int k = 0; k < WALK_ROWS; k++) add_leaf(f, leaves[k], z + (r + k) * width, has + (r + k) * n);
        }
        r += WALK_ROWS;
    }
}

static int64_t argmax(const float *z, const uint8_t *among, int64_t n) {
    int64_t best = -1;
    for (int64_t k = 0; k < n; k++)
        if ((!among || among[k]) && (best < 0 || z[k] > z[best])) best = k;
    return best < 0 ? 0 : best;
}

static float post1(ml_post post, float v) {
    ml_post_row(post, &v, 1);
    return v;
}

/* Two classes, as onnxruntime's TreeEnsembleClassifier does it. Both columns are written when the
 * second class has a score (some leaf names it, or base values set it), else the first class's
 * score v alone stands for both: [1 - v, v] when every leaf names one class with weights >= 0,
 * [-v, v] otherwise (LOGISTIC: [logistic(-v), logistic(v)]). Where onnxruntime writes the first
 * column only (PROBIT, or one base value with mixed class ids), the second is its negation here.
 * The label: when every leaf names one class, the second one if its raw score passes 0.5 (weights
 * >= 0: a probability) or 0 (a margin), as onnxruntime decides, except under LOGISTIC, where the
 * label follows the probability (raw score > 0): onnxruntime's 0.5 there mislabels LightGBM's
 * binary models (test_converters.py). With mixed class ids, the argmax of the written scores
 * (onnxruntime answers the literal labels 1 or 0 there, whatever classlabels_int64s says). */
static int64_t binary_row(const classifier_state *s, float *z, uint8_t *has) {
    const forest *f = s->f;
    bool one = f->binary;
    if (s->n_base == 2) {
        if (has[1]) {
            /* onnxruntime uses base_values[1] alone here */
            z[1] = (float)s->base[1] + z[0];
            z[0] = -z[1];
        } else {
            z[1] += (float)s->base[1];
            z[0] += (float)s->base[0];
        }
    } else if (s->n_base == 1) {
        z[0] += (float)s->base[0];
    }
    bool both = s->n_base == 2 || has[1];
    float pos = both && has[1] ? z[1] : has[0] ? z[0] : 0;
    float v0 = has[0] ? z[0] : 0, v1 = has[1] ? z[1] : 0;
    if (both) {
        z[0] = v0, z[1] = v1;
        ml_post_row(f->post, z, 2);
    } else if (f->post == ML_POST_PROBIT || (!one && s->n_base == 1)) {
        z[0] = f->post == ML_POST_PROBIT ? post1(ML_POST_PROBIT, v0) : v0;
        z[1] = -z[0];
    } else if (f->post == ML_POST_LOGISTIC) {
        z[0] = post1(ML_POST_LOGISTIC, -v0), z[1] = post1(ML_POST_LOGISTIC, v0);
    } else if (one && s->all_positive) {
        z[0] = 1 - v0, z[1] = v0;
    } else {
        z[0] = -v0, z[1] = v0;
    }
    if (one) return pos > (s->all_positive && f->post != ML_POST_LOGISTIC ? 0.5f : 0.0f);
    return argmax(z, NULL, 2);
}

typedef struct classify_job {
    const classifier_state *s;
    const tensor *x;
    tensor *labels, *scores;
    int64_t cols, width;
    uint8_t *has;               /* rows x n_labels */
    int64_t *best;              /* rows: the label's index */
    const graph_node *node;
    int64_t rows;
} classify_job;

static void classify(void *ctx, int64_t begin, int64_t end) {
    const classify_job *j = ctx;
    const classifier_state *s = j->s;
    const forest *f = s->f;
    int64_t n = s->n_labels;
    class_sums_rows(f, j->x, begin, end, j->cols, j->scores->data, j->width, j->has);
    for (int64_t r = begin; r < end; r++) {
        float *z = (float *)j->scores->data + r * j->width;
        uint8_t *has = j->has + r * n;
        int64_t best;
        if (n == 2) {
            best = binary_row(s, z, has);
        } else if (n == 1) {
            /* One label: two columns, the complement first (as onnx's reference) */
            z[0] += s->n_base ? (float)s->base[0] : 0;
            z[1] = z[0];
            z[0] = (f->post == ML_POST_NONE || f->post == ML_POST_PROBIT) ? 1 - z[1] : -z[1];
            ml_post_row(f->post, z, 2);
            best = argmax(z, NULL, 2);
        } else {
            /* base values give their classes a score; the argmax is taken among the classes with
             * one (onnxruntime) */
            for (int64_t k = 0; k < s->n_base; k++) z[k] += (float)s->base[k], has[k] = 1;
            best = argmax(z, has, n);
            ml_post_row(f->post, z, n);
        }
        j->best[r] = best;
        if (s->string_labels) continue; /* strings are written after the parallel part */
        const int64_t *labels = s->int_labels;
        ((int64_t *)j->labels->data)[r] = n == 1 ? (best == 1 ? labels[0] : 0) : labels[best];
    }
}

/* classify over groups [begin, end) of WALK_ROWS rows: a parallel chunk never splits a group, so
 * each of its rows is walked with three others (but in the batch's last, short group). */
static void classify_groups(void *ctx, int64_t begin, int64_t end) {
    const classify_job *j = ctx;
    classify(ctx, begin * WALK_ROWS, end * WALK_ROWS < j->rows ? end * WALK_ROWS : j->rows);
}

/* The rows' labels as strings (serial: strings allocate). */
static onyx_status string_labels(const classify_job *j, int64_t rows) {
    const graph_attr *names = node_attr(j->node, "classlabels_strings");
    for (int64_t r = 0; r < rows; r++) {
        int64_t best = j->best[r];
        const char *label = j->s->n_labels == 1 ? (best == 1 ? names->strings[0] : "") : names->strings[best];
        TRY(tensor_set_string(j->labels, r, label, strlen(label)));
    }
    return ONYX_OK;
}

onyx_status cpu_tree_classifier_run(const kernel_call *c) {
    const classifier_state *s = c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *labels = kernel_output(c, 0), *scores = kernel_output(c, 1);
    int64_t rows, cols;
    TRY(check_features(s->f, x, &rows, &cols));
    int64_t width = s->n_labels == 1 ? 2 : s->n_labels;
    void *mem;
    TRY(kernel_scratch(c, (size_t)rows * (sizeof(int64_t) + (size_t)s->n_labels) + 1, &mem));
    /* Z is optional: without it the scores go to a buffer of the same shape. */
    tensor tmp = {0};
    if (!scores) {
        int64_t dims[2] = {rows, width};
        TRY(tensor_alloc(&tmp, ONYX_FLOAT, 2, dims));
        scores = &tmp;
    }
    classify_job j = {s, x, labels, scores, cols, width, (uint8_t *)mem + (size_t)rows * sizeof(int64_t),
                      (int64_t *)mem, c->node, rows};
    parallel_for((rows + WALK_ROWS - 1) / WALK_ROWS, (grain(s->f) + WALK_ROWS - 1) / WALK_ROWS,
                 classify_groups, &j);
    onyx_status st = s->string_labels ? string_labels(&j, rows) : ONYX_OK;
    tensor_release(&tmp);
    return st;
}
