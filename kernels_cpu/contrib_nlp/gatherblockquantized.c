/* CPU kernel of com.microsoft.GatherBlockQuantized: each gathered slice dequantized element by
 * element, (code - zero point) * scale (float codes: code * scale) in float, stored in the scales'
 * type. An index outside [-s, s) gives a slice of zeros, as onnxruntime does. */
#include "core/floatconv.h"
#include "core/parallel.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/cpu_kernels.h"
#include "ops/contrib_nlp/contrib_nlp.h"

typedef struct gbq_job {
    cnlp_gbq g;
    const void *data, *zp, *idx;
    const tensor *scales;
    bool idx64;
    void *y;
    int64_t outer, axis_len, n_idx, inner; /* data as [outer, axis_len, inner] */
    int64_t stride[ONYX_MAX_RANK], sstride[ONYX_MAX_RANK];
    int64_t zp_row_bytes; /* uint8 zero points: bytes per row of packed blocks */
} gbq_job;

static type_info type_of(const tensor *t) {
    type_info ti;
    memset(&ti, 0, sizeof ti);
    ti.kind = ONYX_VALUE_TENSOR, ti.dtype = t->dtype, ti.rank = t->rank;
    for (int i = 0; i < t->rank; i++) ti.dims[i] = t->dims[i];
    return ti;
}

static int32_t sext4(unsigned v) { return (int32_t)(v ^ 8u) - 8; }

/* Code i of data (a logical flat index) as an integer, or for float data as its value. */
static float code_at(const gbq_job *j, int64_t i) {
    switch (j->g.data_t) {
    case ONYX_INT4: return (float)sext4(dtype_packed_get(j->data, i, 4));
    case ONYX_UINT4: return (float)dtype_packed_get(j->data, i, 4);
    case ONYX_UINT8:
        return j->g.bits == 8 ? (float)((const uint8_t *)j->data)[i]
                              : (float)dtype_packed_get(j->data, i, (unsigned)j->g.bits);
    case ONYX_FLOAT4E2M1: return floatconv_decode(ONYX_FLOAT4E2M1, (uint8_t)dtype_packed_get(j->data, i, 4));
    default: return floatconv_decode(j->g.data_t, ((const uint8_t *)j->data)[i]);
    }
}

/* The zero point of block s (a flat index into scales). */
static float zp_at(const gbq_job *j, int64_t s) {
    const cnlp_gbq *g = &j->g;
    if (!j->zp) return g->data_t == ONYX_UINT8 ? (float)(1 << (g->bits - 1)) : 0.0f;
    switch (g->data_t) {
    case ONYX_INT4: return (float)sext4(dtype_packed_get(j->zp, s, 4));
    case ONYX_UINT4: return (float)dtype_packed_get(j->zp, s, 4);
    default:
        if (g->bits == 8) return (float)((const uint8_t *)j->zp)[s];
        /* uint8 packs the blocks of each row (quantize_axis is the last) */
        return (float)dtype_packed_get((const uint8_t *)j->zp + (s / g->n_blocks) * j->zp_row_bytes,
                                       s % g->n_blocks, (unsigned)g->bits);
    }
}

static void gbq_range(void *ctx, int64_t b, int64_t e) {
    const gbq_job *j = ctx;
    const cnlp_gbq *g = &j->g;
    const bool fp = !dtype_in(g->data_t, DT_BIT(ONYX_INT4) | DT_BIT(ONYX_UINT4) | DT_BIT(ONYX_UINT8));
    float row[256];
    for (int64_t slice = b; slice < e; slice++) {
        int64_t o = slice / j->n_idx, k = slice % j->n_idx;
        int64_t ix = j->idx64 ? ((const int64_t *)j->idx)[k] : ((const int32_t *)j->idx)[k];
        bool valid = ix >= -j->axis_len && ix < j->axis_len;
        if (ix < 0) ix += j->axis_len;
        int64_t base = (o * j->axis_len + ix) * j->inner;
        for (int64_t c0 = 0; c0 < j->inner; c0 += 256) {
            int64_t cnt = j->inner - c0 < 256 ? j->inner - c0 : 256;
            for (int64_t c = 0; c < cnt; c++) {
                if (!valid) {
                    row[c] = 0;
                    continue;
                }
                int64_t di = base + c0 + c, rest = di, si = 0;
                for (int a = 0; a < g->rank; a++) {
                    int64_t coord = rest / j->stride[a];
                    rest -= coord * j->stride[a];
                    if (a == g->quantize_axis) coord /= g->block;
                    else if (g->scale_bcast[a]) coord = 0;
                    si += coord * j->sstride[a];
                }
                float scale = (float)cnlp_get(j->scales, si);
                row[c] = fp ? code_at(j, di) * scale : (code_at(j, di) - zp_at(j, si)) * scale;
            }
            cnlp_store(j->y, g->scale_t, slice * j->inner + c0, row, cnt);
        }
    }
}

onyx_status cpu_cnlp_gather_block_quantized(const kernel_call *c) {
    const tensor *D = kernel_input(c, 0), *I = kernel_input(c, 1), *S = kernel_input(c, 2),
                 *Z = kernel_input(c, 3);
    tensor *Y = kernel_output(c, 0);
    type_info dt = type_of(D), st = type_of(S), zt;
    if (Z) zt = type_of(Z);
    gbq_job j;
    memset(&j, 0, sizeof j);
    TRY(cnlp_gbq_of(c->node, &dt, &st, Z ? &zt : NULL, &j.g));
    if (I->dtype != ONYX_INT32 && I->dtype != ONYX_INT64)
        return onyx_error(ONYX_ERR_SHAPE, "indices have type %s, expected int32 or int64",
                          onyx_dtype_name(I->dtype));
    const cnlp_gbq *g = &j.g;
    j.data = D->data, j.scales = S, j.zp = Z ? Z->data : NULL, j.idx = I->data;
    j.idx64 = I->dtype == ONYX_INT64, j.y = Y->data, j.n_idx = I->numel;
    j.outer = 1, j.inner = 1;
    for (int a = 0; a < g->gather_axis; a++) j.outer *= g->dims[a];
    for (int a = g->gather_axis + 1; a < g->rank; a++) j.inner *= g->dims[a];
    j.axis_len = g->dims[g->gather_axis];
    int64_t s = 1, ss = 1;
    for (int a = g->rank - 1; a >= 0; a--) {
        j.stride[a] = s, j.sstride[a] = ss;
        s *= g->dims[a], ss *= S->dims[a];
    }
    j.zp_row_bytes = (g->n_blocks * g->bits + 7) / 8;
    int64_t slices = j.outer * j.n_idx;
    if (slices > 0 && j.inner > 0) parallel_for(slices, cnlp_grain(j.inner, 16384), gbq_range, &j);
    return ONYX_OK;
}
