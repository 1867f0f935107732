/* A patch embedding (ViT's: a Conv whose stride is its kernel, its output flattened and
 * transposed to [N, patches, M]) as one product of all patches, where the Conv has few input
 * channels to reduce over at a time:
 *   Transpose(Reshape(Conv(x, W, b), [N, M, P]), (0, 2, 1))
 *   -> Reshape(Gemm(Reshape(Transpose(Reshape(x, patches)), rows),
 *                   Reshape(W, [M, C*kh*kw]), b, transB), [N, P, M]) */
#include <stdlib.h>
#include <string.h>

#include "core/rules/rules.h"

/* Whether 2-D Conv node n takes non-overlapping patches: kernel == strides (not 1x1), no
 * padding, dilation 1, one group, constant W [M, C, kh, kw] (*w) and bias (if any). */
static bool patch_conv(const rewriter *r, const graph_node *n, const tensor **w) {
    const int64_t *k, *st, *pads, *dil;
    size_t nk = attr_ints(n, "kernel_shape", &k), ns = attr_ints(n, "strides", &st);
    size_t np = attr_ints(n, "pads", &pads), nd = attr_ints(n, "dilations", &dil);
    const char *auto_pad = attr_string(n, "auto_pad", "NOTSET");
    *w = n->n_inputs >= 2 ? rw_float_constant(r, n->inputs[1]) : NULL;
    if (!*w || (*w)->rank != 4 || attr_int(n, "group", 1) != 1 || ns != 2 ||
        (nk != 0 && nk != 2) || (nd != 0 && nd != 2) ||
        (strcmp(auto_pad, "NOTSET") && strcmp(auto_pad, "VALID")) ||
        (n->n_inputs > 2 && n->inputs[2] >= 0 && !rw_float_constant(r, n->inputs[2])))
        return false;
    for (int i = 0; i < 2; i++)
        if (st[i] != (*w)->dims[2 + i] || (nk && k[i] != st[i]) || (nd && dil[i] != 1))
            return false;
    for (size_t i = 0; i < np; i++)
        if (pads[i] != 0) return false;
    return st[0] > 1 || st[1] > 1;
}

onyx_status rule_patch_embedding(rewriter *r, const graph_node *conv) {
    const tensor *w;
    if (conv->n_outputs != 1 || !patch_conv(r, conv, &w)) return ONYX_OK;
    const graph_node *flat = rw_sole_reader(r, conv->outputs[0]);
    const graph_node *t = flat && rw_is_op(flat, "Reshape") && flat->inputs[0] == conv->outputs[0]
                              ? rw_sole_reader(r, flat->outputs[0])
                              : NULL;
    const int64_t *perm, *xd, *fd;
    if (!t || !rw_is_op(t, "Transpose") || attr_ints(t, "perm", &perm) != 3 || perm[0] != 0 ||
        perm[1] != 2 || perm[2] != 1)
        return ONYX_OK;
    /* x [N, C, H, W] with H and W multiples of the patch; flat [N, M, P] */
    int64_t m = w->dims[0], c = w->dims[1], kh = w->dims[2], kw = w->dims[3];
    if (rw_known_dims(r, conv->inputs[0], &xd) != 4 ||
        rw_known_dims(r, flat->outputs[0], &fd) != 3 || xd[1] != c || xd[2] < kh ||
        xd[3] < kw || xd[2] % kh || xd[3] % kw || fd[1] != m ||
        fd[2] != (xd[2] / kh) * (xd[3] / kw) || m < 1 || c < 1)
        return ONYX_OK;
    int64_t gh = xd[2] / kh, gw = xd[3] / kw, ck = c * kh * kw;
    const int64_t patches[] = {0, c, gh, kh, gw, kw}, rows[] = {-1, ck}, wm[] = {m, ck},
                  out[] = {-1, gh * gw, m};
    int like = t->outputs[0];
    int s_patches = rw_add_shape(r, like, patches, 6), s_rows = rw_add_shape(r, like, rows, 2);
    int s_w = rw_add_shape(r, like, wm, 2), s_out = rw_add_shape(r, like, out, 3);
    int v_grid = rw_add_value(r, like, "/patches", NULL);
    int v_moved = rw_add_value(r, like, "/moved", NULL);
    int v_rows = rw_add_value(r, like, "/rows", NULL), v_w = rw_add_value(r, like, "/weight", NULL);
    int v_prod = rw_add_value(r, like, "/product", NULL);
    int64_t *order = malloc(6 * sizeof *order);
    if (s_patches < 0 || s_rows < 0 || s_w < 0 || s_out < 0 || v_grid < 0 || v_moved < 0 ||
        v_rows < 0 || v_w < 0 || v_prod < 0 || !rw_keep(r, order))
        return onyx_oom("graph rewrite");
    const int64_t o6[] = {0, 2, 4, 1, 3, 5}; /* [N, gh, gw, C, kh, kw] */
    memcpy(order, o6, sizeof o6);
    graph_attr order_attr = {.name = "perm", .type = ATTR_INTS, .n = 6, .ints = order};
    graph_attr trans_b = {.name = "transB", .type = ATTR_INT, .i = 1};
    const graph_node *members[] = {conv, flat, t};
    int in_grid[] = {conv->inputs[0], s_patches}, in_rows[] = {v_moved, s_rows},
        in_w[] = {conv->inputs[1], s_w}, in_out[] = {v_prod, s_out};
    int in_gemm[] = {v_rows, v_w, conv->n_inputs > 2 ? conv->inputs[2] : -1};
    int n_gemm = in_gemm[2] >= 0 ? 3 : 2;
    const char *name = conv->name; /* the profile's name for all six */
    TRY(rw_place_at(r, conv, false, name, members, 1, "", "Reshape", 5, in_grid, 2, v_grid,
                    NULL, 0));
    if (!rw_replaced(r, conv)) return ONYX_OK;
    TRY(rw_place_at(r, conv, true, name, NULL, 0, "", "Transpose", 1, &v_grid, 1, v_moved,
                    &order_attr, 1));
    TRY(rw_place_at(r, flat, false, name, members + 1, 1, "", "Reshape", 5, in_rows, 2, v_rows,
                    NULL, 0));
    TRY(rw_place_at(r, flat, true, name, NULL, 0, "", "Reshape", 5, in_w, 2, v_w, NULL, 0));
    TRY(rw_place_at(r, t, false, name, members + 2, 1, "", "Gemm", 11, in_gemm, n_gemm, v_prod,
                    &trans_b, 1));
    return rw_place_at(r, t, true, name, NULL, 0, "", "Reshape", 5, in_out, 2, t->outputs[0],
                       NULL, 0);
}
