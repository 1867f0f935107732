/* CPU kernel of ai.onyx GatherNBits (ops/contrib_nlp/gathernbits.c): rows of a MatMulNBits weight
 * dequantized, read from the form the product that shares the weight keeps it in
 * (kernels_cpu/contrib_nlp/nbits_form.h): B as stored with its block tables, or the int8 repack,
 * whose codes are the only copy of B once the model's is handed back. Either way a row is
 * (code - zero point) * scale in float, the values GatherBlockQuantized gives from the file's
 * codes. An index outside [-N, N) gives a row of zeros, as GatherBlockQuantized's does. */
#include <stdlib.h>

#include "core/parallel.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/contrib_nlp/nbits_form.h"
#include "kernels_cpu/cpu_kernels.h"

onyx_status cpu_onyx_gather_nbits_prepare(const kernel_prep *p, void **state) {
    cnlp_nbits q;
    TRY(cnlp_nbits_of(p->node, &q));
    nbits_form *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("GatherNBits state");
    onyx_status st = nbits_form_prepare(p, &q, attr_int(p->node, "accuracy_level", 0), 0, 2, 3, f);
    if (st == ONYX_OK && !f->w && !f->pack)
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "GatherNBits reads constant B, scales and zero "
                                              "points only");
    if (st != ONYX_OK) {
        free(f);
        return st;
    }
    *state = f;
    return ONYX_OK;
}

void cpu_onyx_gather_nbits_release(void *state) { free(state); }

typedef struct rows_job {
    const nbits_form *f;
    const void *idx;
    bool idx64;
    int64_t n, k;
    float *y; /* [indices, k] */
} rows_job;

static void gather_rows(void *ctx, int64_t b, int64_t e) {
    const rows_job *j = ctx;
    for (int64_t i = b; i < e; i++) {
        int64_t ix = j->idx64 ? ((const int64_t *)j->idx)[i] : ((const int32_t *)j->idx)[i];
        float *row = j->y + i * j->k;
        if (ix < -j->n || ix >= j->n) {
            memset(row, 0, (size_t)j->k * sizeof(float));
            continue;
        }
        if (ix < 0) ix += j->n;
        if (j->f->pack) nbi8_dequant_column(j->f->pack, ix, row);
        else nb_dequant_column(j->f->w, ix, row);
    }
}

onyx_status cpu_onyx_gather_nbits(const kernel_call *c) {
    const nbits_form *f = c->state;
    const tensor *I = kernel_input(c, 1);
    tensor *Y = kernel_output(c, 0);
    if (I->dtype != ONYX_INT32 && I->dtype != ONYX_INT64)
        return onyx_error(ONYX_ERR_SHAPE, "indices have type %s, expected int32 or int64",
                          onyx_dtype_name(I->dtype));
    const int64_t k = f->pack ? f->pack->k : f->w->k, n = f->pack ? f->pack->n : f->w->n;
    float *y = Y->data;
    if (Y->dtype != ONYX_FLOAT) /* rows made in float, then stored in the scales' type */
        TRY(kernel_scratch(c, (size_t)Y->numel * sizeof(float) + 64, (void **)&y));
    rows_job j = {f, I->data, I->dtype == ONYX_INT64, n, k, y};
    if (I->numel > 0 && k > 0) parallel_for(I->numel, cnlp_grain(k, 16384), gather_rows, &j);
    if (Y->dtype != ONYX_FLOAT) cnlp_store(Y->data, Y->dtype, 0, y, Y->numel);
    return ONYX_OK;
}
