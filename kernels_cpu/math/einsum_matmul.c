/* Einsum as a batched matrix product: two float or double operands where every label is in both
 * inputs and the output (a batch label), in one input and the output (rows of the first input,
 * columns of the second) or in both inputs only (summed) -- what attention written with
 * torch.einsum exports ("bhid,bhjd->bhij", MaxViT's "B G H I D, B G H J D -> B G H I J"). Each
 * operand is used in place where its labels already run [batch, rows, summed] (or [batch,
 * summed, rows]: BLAS transposes it), else copied into that order once; the result likewise.
 * The generic loop nest (einsum.c) takes every other equation and sums in double; these sum in
 * the operand type, as MatMul does. */
#include "kernels_cpu/math/einsum_matmul.h"

#include <string.h>

#include "core/exec_frame.h"
#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/move.h"

/* Products of at most this many multiply-adds run one per thread, the batches shared out, rather
 * than one after the other with BLAS threading each (as gemm.c's batched MatMul). */
#define SMALL_PRODUCT (256 * 256 * 256)

enum { GROUP_BATCH, GROUP_ROWS, GROUP_COLS, GROUP_SUM, GROUPS };

/* One operand (or the result) as the product reads it: its labels in the order it stores them. */
typedef struct operand {
    int rank;
    int lab[ONYX_MAX_RANK];
} operand;

typedef struct product_job {
    bool dbl, ta, tb;
    int64_t m, n, k;
    const void *a, *b;
    void *y;
} product_job;

static void product_batches(void *ctx, int64_t begin, int64_t end) {
    const product_job *j = ctx;
    int64_t lda = j->ta ? j->m : j->k, ldb = j->tb ? j->k : j->n;
    for (int64_t t = begin; t < end; t++) {
        if (j->dbl)
            cpu_dgemm(j->ta, j->tb, j->m, j->n, j->k, 1.0, (const double *)j->a + t * j->m * j->k,
                      lda, (const double *)j->b + t * j->k * j->n, ldb, 0.0,
                      (double *)j->y + t * j->m * j->n, j->n);
        else
            cpu_sgemm(j->ta, j->tb, j->m, j->n, j->k, 1.0f, (const float *)j->a + t * j->m * j->k,
                      lda, (const float *)j->b + t * j->k * j->n, ldb, 0.0f,
                      (float *)j->y + t * j->m * j->n, j->n);
    }
}

/* Whether `have` stores exactly the labels of the groups g0, g1, g2 in that order. */
static bool stored_as(const operand *have, const operand *groups, int g0, int g1, int g2) {
    int at = 0;
    const int order[3] = {g0, g1, g2};
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < groups[order[q]].rank; k++)
            if (at >= have->rank || have->lab[at++] != groups[order[q]].lab[k]) return false;
    return at == have->rank;
}

/* Copies (or scatters back, `into_tensor`) between a tensor of labels `t` and a dense buffer
 * whose labels run as the groups g0, g1, g2. */
static void regroup(const einsum_spec *sp, const operand *t, const operand *groups, int g0, int g1,
                    int g2, size_t esize, void *tensor_data, void *buffer, bool into_tensor) {
    int64_t dims[ONYX_MAX_RANK], tstride[ONYX_MAX_RANK], bstride[ONYX_MAX_RANK];
    int rank = 0;
    const int order[3] = {g0, g1, g2};
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < groups[order[q]].rank; k++)
            dims[rank++] = sp->dim[groups[order[q]].lab[k]];
    cpu_strides(rank, dims, bstride);
    int64_t s = 1;
    for (int k = t->rank - 1; k >= 0; k--) {
        for (int d = 0, at = 0; d < 3; d++)
            for (int q = 0; q < groups[order[d]].rank; q++, at++)
                if (groups[order[d]].lab[q] == t->lab[k]) tstride[at] = s;
        s *= sp->dim[t->lab[k]];
    }
    if (into_tensor)
        cpu_copy_strided(tensor_data, buffer, esize, rank, dims, tstride, bstride);
    else
        cpu_copy_strided(buffer, tensor_data, esize, rank, dims, bstride, tstride);
}

static int64_t group_size(const einsum_spec *sp, const operand *g) {
    int64_t n = 1;
    for (int k = 0; k < g->rank; k++) n *= sp->dim[g->lab[k]];
    return n;
}

onyx_status cpu_einsum_matmul(const kernel_call *c, const einsum_spec *sp, bool *done) {
    *done = false;
    tensor *y = kernel_output(c, 0);
    if (sp->n_in != 2 || (y->dtype != ONYX_FLOAT && y->dtype != ONYX_DOUBLE) || y->numel == 0)
        return ONYX_OK;
    const tensor *in[2] = {kernel_input(c, 0), kernel_input(c, 1)};
    operand x[2], out = {.rank = sp->out_len};
    bool has[3][EINSUM_MAX_LABELS] = {{false}};
    for (int i = 0; i < 2; i++) {
        x[i].rank = sp->in_len[i];
        for (int k = 0; k < x[i].rank; k++) {
            int l = sp->in_lab[i][k];
            /* a repeated label (a diagonal) or a broadcast dim is the loop nest's */
            if (has[i][l] || in[i]->dims[k] != sp->dim[l]) return ONYX_OK;
            has[i][l] = true;
            x[i].lab[k] = l;
        }
    }
    for (int k = 0; k < out.rank; k++) {
        out.lab[k] = sp->out_lab[k];
        has[2][out.lab[k]] = true;
    }
    /* groups in the output's order (batch, rows, columns), the summed labels in A's */
    operand groups[GROUPS] = {{0}};
    for (int k = 0; k < out.rank; k++) {
        int l = out.lab[k];
        int g = has[0][l] && has[1][l] ? GROUP_BATCH : has[0][l] ? GROUP_ROWS : GROUP_COLS;
        groups[g].lab[groups[g].rank++] = l;
    }
    for (int k = 0; k < x[0].rank; k++) {
        int l = x[0].lab[k];
        if (has[2][l]) continue;
        if (!has[1][l]) return ONYX_OK; /* summed within A alone */
        groups[GROUP_SUM].lab[groups[GROUP_SUM].rank++] = l;
    }
    for (int k = 0; k < x[1].rank; k++)
        if (!has[2][x[1].lab[k]] && !has[0][x[1].lab[k]]) return ONYX_OK; /* within B alone */
    int64_t nb = group_size(sp, &groups[GROUP_BATCH]), m = group_size(sp, &groups[GROUP_ROWS]);
    int64_t n = group_size(sp, &groups[GROUP_COLS]), k = group_size(sp, &groups[GROUP_SUM]);
    if (!cpu_blas_dims_ok(m, n, k)) return ONYX_OK;

    product_job j = {.dbl = y->dtype == ONYX_DOUBLE, .m = m, .n = n, .k = k,
                     .a = in[0]->data, .b = in[1]->data, .y = y->data};
    bool copy_a = false, copy_b = false, copy_y = !stored_as(&out, groups, GROUP_BATCH, GROUP_ROWS,
                                                             GROUP_COLS);
    if (!stored_as(&x[0], groups, GROUP_BATCH, GROUP_ROWS, GROUP_SUM)) {
        j.ta = stored_as(&x[0], groups, GROUP_BATCH, GROUP_SUM, GROUP_ROWS);
        copy_a = !j.ta;
    }
    if (!stored_as(&x[1], groups, GROUP_BATCH, GROUP_SUM, GROUP_COLS)) {
        j.tb = stored_as(&x[1], groups, GROUP_BATCH, GROUP_COLS, GROUP_SUM);
        copy_b = !j.tb;
    }
    size_t esize = j.dbl ? sizeof(double) : sizeof(float);
    int64_t na = copy_a ? nb * m * k : 0, nbb = copy_b ? nb * k * n : 0;
    int64_t ny = copy_y ? nb * m * n : 0;
    if (na + nbb + ny > 0) {
        char *buf;
        TRY(kernel_scratch(c, (size_t)(na + nbb + ny) * esize, (void **)&buf));
        if (copy_a) {
            regroup(sp, &x[0], groups, GROUP_BATCH, GROUP_ROWS, GROUP_SUM, esize,
                    (void *)in[0]->data, buf, false);
            j.a = buf;
        }
        if (copy_b) {
            regroup(sp, &x[1], groups, GROUP_BATCH, GROUP_SUM, GROUP_COLS, esize,
                    (void *)in[1]->data, buf + na * esize, false);
            j.b = buf + na * esize;
        }
        if (copy_y) j.y = buf + (na + nbb) * esize;
    }
    if (nb >= parallel_threads() && m * n * k <= SMALL_PRODUCT)
        parallel_for(nb, 1, product_batches, &j);
    else
        product_batches(&j, 0, nb);
    if (copy_y)
        regroup(sp, &out, groups, GROUP_BATCH, GROUP_ROWS, GROUP_COLS, esize, y->data, j.y, true);
    *done = true;
    return ONYX_OK;
}
