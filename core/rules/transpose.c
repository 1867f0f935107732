/* Transposes around row-wise products, moved where one product takes the data as it is:
 *   a Transpose that keeps the last axis, into a projection whose result only selects q, k and v
 *   (torch's nn.MultiheadAttention: the sequence-first input, one packed projection, Gathers of
 *   one index through Reshapes and Transposes):
 *                          MatMul(Transpose(x), W) [+ b] -> Transpose(MatMul(x, W) [+ b])
 *                          (the attention fusion then reads q, k and v through the Transpose
 *                          too, core/fuse.c: no copy of x or of the projection)
 *   rows transposed after a row-wise product (the same module's output: the heads' [B, H, S, D]
 *   to [S, B, H, D], [S*B, E] rows for the out-projection, [S, B, E], then [B, S, E]):
 *                          Transpose(Reshape(Gemm(Reshape(Transpose(x, p)))), q)
 *                          -> MatMul(Reshape(Transpose(x, p'), [rows, K]), B^T) [+ C]
 *                          (p' is p with its row dims permuted by q; a Gemm of alpha other
 *                          than 1, or a MatMul, keeps its 2-D form with a Reshape after; the
 *                          attention fusion writes through Transpose(x, p') as it did through
 *                          the other, and a residual Add may follow the product as it comes) */
#include <stdlib.h>
#include <string.h>

#include "core/rules/rules.h"

/* Whether every reader of v (and v is no graph output) relabels it (Reshape, Squeeze, Unsqueeze,
 * Flatten, Identity) or transposes it into values read so in turn, gathers one constant index
 * of it or takes its Shape: what attention's q, k and v take from a packed projection. */
static bool selects_only(const rewriter *r, int v, int depth) {
    static const char *const moves[] = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity",
                                        "Transpose"};
    if (depth > 12 || r->uses[v] < 1) return false;
    const int *readers;
    int count = rw_readers(r, v, &readers);
    for (int k = 0; k < count; k++) {
        const graph_node *nd = &r->g->nodes[readers[k]];
        if (r->gone[readers[k]] || nd->n_outputs != 1 || nd->inputs[0] != v) return false;
        if (rw_is_op(nd, "Shape")) continue; /* the exporter's dims, folded once shapes are known */
        if (rw_is_op(nd, "Gather")) {
            const tensor *index = nd->n_inputs == 2 ? rw_constant(r, nd->inputs[1]) : NULL;
            if (!index || index->numel != 1) return false;
            continue;
        }
        bool move = false;
        for (size_t m = 0; m < sizeof moves / sizeof moves[0]; m++) move |= rw_is_op(nd, moves[m]);
        if (!move || !selects_only(r, nd->outputs[0], depth + 1)) return false;
    }
    return count == r->uses[v]; /* a graph output counts more */
}

/* Whether every reader of v other than `node` takes its Shape (an exporter's dims, folded once
 * shapes are known), and v is no graph output; *shapes: there are such readers. */
static bool read_for_shape(const rewriter *r, int v, const graph_node *node, bool *shapes) {
    int slots = 0;
    *shapes = false;
    const int *readers;
    int count = rw_readers(r, v, &readers);
    for (int k = 0; k < count; k++) {
        const graph_node *nd = &r->g->nodes[readers[k]];
        for (int i = 0; i < nd->n_inputs; i++) {
            if (nd->inputs[i] != v) continue;
            slots++;
            if (nd == node) continue;
            if (r->gone[readers[k]] || !rw_is_op(nd, "Shape")) return false;
            *shapes = true;
        }
    }
    return slots == r->uses[v];
}

onyx_status rule_sink_transpose(rewriter *r, const graph_node *t) {
    const int64_t *perm;
    size_t rank = attr_ints(t, "perm", &perm);
    if (t->n_inputs != 1 || t->n_outputs != 1 || rank < 3 || (size_t)perm[rank - 1] != rank - 1)
        return ONYX_OK;
    /* t's first reader that is a MatMul of it */
    const graph_node *mm = NULL;
    const int *readers;
    int count = rw_readers(r, t->outputs[0], &readers);
    for (int k = 0; k < count && !mm; k++) {
        const graph_node *nd = &r->g->nodes[readers[k]];
        if (!r->gone[readers[k]] && rw_is_op(nd, "MatMul") && nd->inputs[0] == t->outputs[0])
            mm = nd;
    }
    bool keep_t;
    const tensor *w = mm && mm->inputs[1] != t->outputs[0] &&
                              read_for_shape(r, t->outputs[0], mm, &keep_t)
                          ? rw_float_constant(r, mm->inputs[1])
                          : NULL;
    if (!w || w->rank != 2) return ONYX_OK;
    const graph_node *add = rw_sole_reader(r, mm->outputs[0]), *last = mm;
    int bias = rw_other_input(rw_is_op(add, "Add") ? add : NULL, mm->outputs[0]);
    const tensor *b = rw_float_constant(r, bias);
    if (b) {
        if ((size_t)b->rank > rank) return ONYX_OK; /* it would add dims before the Transpose's */
        for (int i = 0; i + 1 < b->rank; i++)
            if (b->dims[i] != 1) return ONYX_OK;
        last = add;
    }
    if (!selects_only(r, last->outputs[0], 0)) return ONYX_OK;
    /* MatMul(x, W) -> t's value (a new one where t stays); [Add -> the product's value];
     * Transpose -> last's value, placed right after the last */
    int x = t->inputs[0], product[2] = {x, mm->inputs[1]};
    int moved = keep_t ? rw_add_value(r, t->outputs[0], "/sunk", NULL) : t->outputs[0];
    if (moved < 0) return onyx_oom("graph rewrite");
    const graph_node *only_mm[] = {mm}, *only_add[] = {add};
    TRY(rw_place(r, mm, only_mm, 1, "MatMul", mm->version, product, 2, moved, NULL, 0));
    if (!rw_replaced(r, mm)) return ONYX_OK;
    if (!keep_t) {
        r->gone[rw_index(r, t)] = true;
        r->retyped[moved] = true;
    }
    if (b) {
        int sum[2] = {add->inputs[0], add->inputs[1]};
        sum[add->inputs[0] == bias ? 1 : 0] = moved;
        TRY(rw_place(r, add, only_add, 1, "Add", add->version, sum, 2, mm->outputs[0], NULL, 0));
        moved = mm->outputs[0];
        r->retyped[moved] = true;
    }
    return rw_place_at(r, last, true, t->name, NULL, 0, "", "Transpose", t->version, &moved, 1,
                       last->outputs[0], t->attrs, t->n_attrs);
}

/* Gemm(a, B [, C]) or MatMul(a, B) of a constant matrix B, without transposing a, and a C (if
 * any) constant per column: each row of the result depends on that row of a alone. */
static bool row_wise_product(const rewriter *r, const graph_node *n) {
    if (rw_is_op(n, "MatMul")) {
        const tensor *b = rw_float_constant(r, n->inputs[1]);
        return b && b->rank == 2;
    }
    if (!rw_is_op(n, "Gemm") || attr_int(n, "transA", 0) || !rw_float_constant(r, n->inputs[1]))
        return false;
    if (n->n_inputs < 3 || n->inputs[2] < 0) return true;
    const tensor *c = rw_float_constant(r, n->inputs[2]);
    return c && (c->rank <= 1 || (c->rank == 2 && c->dims[0] == 1));
}

/* The rest of rows_before_product for a Gemm of alpha 1 (and beta 1): the rows as they come,
 * [rows (the output's leading dims), K], times B (transposed where transB), plus C: the product
 * then makes the output itself, so a device epilogue can take the Add of a residual after it
 * (the out-projection's). r1 becomes that Reshape; shape holds the output's dims. */
static onyx_status rows_as_matmul(rewriter *r, const graph_node *r1, const graph_node *gemm,
                                  const graph_node *r2, const graph_node *t2,
                                  const int64_t *shape, int a, int64_t k) {
    int64_t rows[ONYX_MAX_RANK];
    memcpy(rows, shape, (size_t)a * sizeof *rows);
    rows[a] = k;
    bool trans_b = attr_int(gemm, "transB", 0) != 0;
    bool has_c = gemm->n_inputs > 2 && gemm->inputs[2] >= 0;
    int s_rows = rw_add_shape(r, r1->outputs[0], rows, a + 1);
    int wt = trans_b ? rw_add_value(r, gemm->inputs[1], "/transposed", NULL) : gemm->inputs[1];
    if (s_rows < 0 || wt < 0) return onyx_oom("graph rewrite");
    const graph_node *only_r1[] = {r1}, *only_gemm[] = {gemm}, *tail[] = {r2, t2};
    int in_rows[] = {r1->inputs[0], s_rows}, w = gemm->inputs[1];
    int product = has_c ? gemm->outputs[0] : t2->outputs[0];
    int in_mm[] = {r1->outputs[0], wt}, in_add[] = {gemm->outputs[0], has_c ? gemm->inputs[2] : -1};
    static const int64_t swap[] = {1, 0};
    graph_attr swap_attr = {.name = "perm", .type = ATTR_INTS, .n = 2, .ints = swap};
    TRY(rw_place(r, r1, only_r1, 1, "Reshape", 5, in_rows, 2, r1->outputs[0], NULL, 0));
    r->retyped[r1->outputs[0]] = true;
    if (trans_b) TRY(rw_place(r, gemm, only_gemm, 1, "Transpose", 1, &w, 1, wt, &swap_attr, 1));
    TRY(rw_place_at(r, gemm, trans_b, gemm->name, only_gemm, 1, "", "MatMul", 1, in_mm, 2,
                    product, NULL, 0));
    if (!has_c) {
        r->gone[rw_index(r, r2)] = r->gone[rw_index(r, t2)] = true;
        return ONYX_OK;
    }
    r->retyped[product] = true;
    return rw_place_at(r, t2, false, gemm->name, tail, 2, "", "Add", 7, in_add, 2,
                       t2->outputs[0], NULL, 0);
}

/* Tried at the Transpose t2 after the product. */
onyx_status rule_rows_before_product(rewriter *r, const graph_node *t2) {
    const int64_t *q, *p;
    size_t nq = attr_ints(t2, "perm", &q);
    if (t2->n_inputs != 1 || t2->n_outputs != 1 || nq < 2 || nq > ONYX_MAX_RANK ||
        (size_t)q[nq - 1] != nq - 1)
        return ONYX_OK;
    int a = (int)nq - 1; /* row dims, which q permutes */
    bool seen[ONYX_MAX_RANK] = {false};
    for (int i = 0; i < a; i++) {
        if (q[i] < 0 || q[i] >= a || seen[q[i]]) return ONYX_OK;
        seen[q[i]] = true;
    }
    const graph_node *r2 = rw_producer(r, t2->inputs[0]);
    const graph_node *prod = r2 && rw_is_op(r2, "Reshape") && r2->n_inputs == 2 &&
                                     r->uses[t2->inputs[0]] == 1
                                 ? rw_producer(r, r2->inputs[0])
                                 : NULL;
    if (!prod || r->uses[r2->inputs[0]] != 1 || !row_wise_product(r, prod)) return ONYX_OK;
    const graph_node *r1 = rw_producer(r, prod->inputs[0]);
    const graph_node *t1 = r1 && rw_is_op(r1, "Reshape") && r->uses[prod->inputs[0]] == 1
                               ? rw_producer(r, r1->inputs[0])
                               : NULL;
    size_t np = t1 && rw_is_op(t1, "Transpose") && r->uses[r1->inputs[0]] == 1
                    ? attr_ints(t1, "perm", &p)
                    : 0;
    if (np < (size_t)a + 1 || np > ONYX_MAX_RANK || t1->n_outputs != 1) return ONYX_OK;
    /* Transpose(x, p)'s leading a dims are the rows: the product's M and the dims of r2 */
    const int64_t *d1, *m, *d2;
    if (rw_static_dims(r, t1->outputs[0], &d1) != (int)np ||
        rw_static_dims(r, r1->outputs[0], &m) != 2 ||
        rw_static_dims(r, r2->outputs[0], &d2) != a + 1)
        return ONYX_OK;
    int64_t rows = 1;
    for (int i = 0; i < a; i++) {
        if (d1[i] != d2[i] || d1[i] < 1) return ONYX_OK; /* a 0 in a shape copies a dim */
        rows *= d1[i];
    }
    if (d2[a] < 1) return ONYX_OK;
    if (rows != m[0]) return ONYX_OK;
    int64_t *perm = malloc(np * sizeof *perm), shape[ONYX_MAX_RANK];
    if (!rw_keep(r, perm)) return onyx_oom("graph rewrite");
    for (size_t i = 0; i < np; i++) perm[i] = (int)i < a ? p[q[i]] : p[i];
    for (int i = 0; i <= a; i++) shape[i] = d2[q[i]];
    graph_attr perm_attr = {.name = "perm", .type = ATTR_INTS, .n = np, .ints = perm};
    const graph_node *only_t1[] = {t1}, *tail[] = {r2, t2};
    int x = t1->inputs[0];
    TRY(rw_place(r, t1, only_t1, 1, "Transpose", t1->version, &x, 1, t1->outputs[0], &perm_attr,
                 1));
    r->retyped[t1->outputs[0]] = true;
    if (rw_is_op(prod, "Gemm") && attr_float(prod, "alpha", 1.0f) == 1.0f &&
        (prod->n_inputs < 3 || prod->inputs[2] < 0 || attr_float(prod, "beta", 1.0f) == 1.0f))
        return rows_as_matmul(r, r1, prod, r2, t2, shape, a, m[1]);
    int c = rw_add_shape(r, t2->outputs[0], shape, a + 1), reshape[2] = {r2->inputs[0], c};
    if (c < 0) return onyx_oom("graph rewrite");
    return rw_place(r, t2, tail, 2, "Reshape", r2->version, reshape, 2, t2->outputs[0], NULL, 0);
}
