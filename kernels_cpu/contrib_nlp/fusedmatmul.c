/* CPU kernel of com.microsoft.FusedMatMul: the batch-axis move (transBatchA/B) copies the operand
 * once into scratch; the last-axes transposes and alpha go to BLAS as flags and alpha, over numpy
 * batch broadcasting. float and double; float16/bfloat16 through float. */
#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/matmul_shape.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/cpu_kernels.h"

/* dst = X viewed as [d0, P, last] with the first two axes swapped ([P, d0, last]) */
static void move_batch(char *dst, const char *src, int64_t d0, int64_t p, int64_t last, size_t es) {
    size_t row = (size_t)last * es;
    for (int64_t i = 0; i < d0; i++)
        for (int64_t j = 0; j < p; j++)
            memcpy(dst + ((size_t)(j * d0 + i)) * row, src + ((size_t)(i * p + j)) * row, row);
}

/* The operand as the product sees it: dims after the batch move and the last-axes swap. */
static void op_view(const tensor *x, bool tbatch, bool t, tensor *v) {
    *v = *x;
    if (tbatch && x->rank >= 3) {
        for (int i = 0; i < x->rank - 2; i++) v->dims[i] = x->dims[i + 1];
        v->dims[x->rank - 2] = x->dims[0];
    }
    if (t && x->rank >= 2) {
        int64_t s = v->dims[x->rank - 1];
        v->dims[x->rank - 1] = v->dims[x->rank - 2];
        v->dims[x->rank - 2] = s;
    }
}

typedef struct fmm_job {
    bool dbl, ta, tb;
    double alpha;
    const void *a, *b;
    void *y;
    int64_t lda, ldb;
    cpu_mm_shape sh;
} fmm_job;

static void fmm_batches(void *ctx, int64_t t0, int64_t t1) {
    const fmm_job *j = ctx;
    for (int64_t t = t0; t < t1; t++) {
        int64_t ao, bo, yo = t * j->sh.m * j->sh.n;
        cpu_mm_batch_offsets(&j->sh, t, &ao, &bo);
        if (j->dbl)
            cpu_dgemm(j->ta, j->tb, j->sh.m, j->sh.n, j->sh.k, j->alpha, (const double *)j->a + ao,
                      j->lda, (const double *)j->b + bo, j->ldb, 0, (double *)j->y + yo, j->sh.n);
        else
            cpu_sgemm(j->ta, j->tb, j->sh.m, j->sh.n, j->sh.k, (float)j->alpha,
                      (const float *)j->a + ao, j->lda, (const float *)j->b + bo, j->ldb, 0,
                      (float *)j->y + yo, j->sh.n);
    }
}

onyx_status cpu_cnlp_fused_matmul(const kernel_call *c) {
    const tensor *A = kernel_input(c, 0), *B = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    const graph_node *n = c->node;
    if (A->dtype != B->dtype || !dtype_in(A->dtype, DT_FLOATS))
        return onyx_error(ONYX_ERR_SHAPE, "A and B must have one float type (got %s and %s)",
                          onyx_dtype_name(A->dtype), onyx_dtype_name(B->dtype));
    bool tba = attr_int(n, "transBatchA", 0) && A->rank >= 3,
         tbb = attr_int(n, "transBatchB", 0) && B->rank >= 3;
    bool ta = attr_int(n, "transA", 0) && A->rank >= 2,
         tb = attr_int(n, "transB", 0) && B->rank >= 2;
    tensor va, vb;
    op_view(A, tba, ta, &va);
    op_view(B, tbb, tb, &vb);
    fmm_job j = {
        .dbl = A->dtype == ONYX_DOUBLE, .ta = ta, .tb = tb, .alpha = attr_float(n, "alpha", 1.0f)};
    TRY(cpu_mm_shape_init(c->params, &va, &vb, Y, &j.sh));
    if (Y->numel == 0) return ONYX_OK;
    if (!cpu_blas_dims_ok(j.sh.m, j.sh.n, j.sh.k))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "matrix sizes exceed BLAS's int range");
    bool half = !j.dbl && A->dtype != ONYX_FLOAT;
    size_t es = j.dbl ? 8 : 4;
    const tensor *ts[2] = {A, B};
    bool moves[2] = {tba, tbb};
    size_t sizes[2], off[2], total = 0, stage = 0, yoff = 0;
    for (int i = 0; i < 2; i++) {
        sizes[i] = ((size_t)ts[i]->numel * es + 63) / 64 * 64;
        off[i] = total;
        if (moves[i] || half) total += sizes[i];
        if (moves[i] && half && sizes[i] > stage) stage = sizes[i];
    }
    if (half) {
        yoff = total;
        total += ((size_t)Y->numel * es + 63) / 64 * 64;
    }
    size_t stage_off = total;
    total += stage;
    char *buf = NULL;
    if (total) TRY(kernel_scratch(c, total, (void **)&buf));
    const void *ops[2] = {A->data, B->data};
    for (int i = 0; i < 2; i++) {
        const tensor *x = ts[i];
        if (!moves[i] && !half) continue;
        char *dst = buf + off[i];
        const void *src = x->data;
        if (half) {
            /* float first; a batch move then reads the float copy from the staging area */
            char *f = moves[i] ? buf + stage_off : dst;
            cnlp_load(src, x->dtype, 0, (float *)f, x->numel);
            src = f;
        }
        if (moves[i]) {
            int64_t p = 1;
            for (int k = 1; k < x->rank - 1; k++) p *= x->dims[k];
            move_batch(dst, src, x->dims[0], p, x->dims[x->rank - 1], es);
        }
        ops[i] = dst;
    }
    const void *a = ops[0], *b = ops[1];
    j.a = a, j.b = b;
    j.lda = ta ? j.sh.m : j.sh.k;
    j.ldb = tb ? j.sh.k : j.sh.n;
    j.y = half ? (void *)(buf + yoff) : Y->data;
    if (j.sh.k == 0) {
        memset(j.y, 0, (size_t)Y->numel * es);
    } else if (j.sh.nbatch >= parallel_threads() && j.sh.m * j.sh.n * j.sh.k <= (1 << 18)) {
        parallel_for(j.sh.nbatch, 1, fmm_batches, &j);
    } else {
        fmm_batches(&j, 0, j.sh.nbatch);
    }
    if (half) cnlp_store(Y->data, Y->dtype, 0, (const float *)j.y, Y->numel);
    return ONYX_OK;
}
