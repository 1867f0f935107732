/* Schema of com.microsoft.GatherBlockQuantized: a Gather over a constant table quantized block-wise
 * along one axis (int4/uint4, 2/4/8-bit codes packed in uint8, or float8/float4 codes), dequantized
 * with per-block scales and zero points into the scales' type. The geometry checks here are the
 * kernel's too (cnlp_gbq_of). */
#include <string.h>

#include "ops/contrib_nlp/contrib_nlp.h"

#define GBQ_FP_DATA                                                                                \
    (DT_BIT(ONYX_FLOAT8E4M3FN) | DT_BIT(ONYX_FLOAT8E4M3FNUZ) | DT_BIT(ONYX_FLOAT8E5M2) |          \
     DT_BIT(ONYX_FLOAT8E5M2FNUZ) | DT_BIT(ONYX_FLOAT4E2M1))
#define GBQ_DATA (DT_BIT(ONYX_INT4) | DT_BIT(ONYX_UINT4) | DT_BIT(ONYX_UINT8) | GBQ_FP_DATA)

static int norm_axis(int64_t a, int rank) { return (int)(a < 0 ? a + rank : a); }

onyx_status cnlp_gbq_of(const graph_node *n, const type_info *data, const type_info *scales,
                        const type_info *zp, cnlp_gbq *g) {
    memset(g, 0, sizeof *g);
    g->data_t = data->dtype, g->scale_t = scales->dtype, g->rank = data->rank;
    g->bits = attr_int(n, "bits", 4);
    g->block = attr_int(n, "block_size", 128);
    g->has_zp = zp != NULL;
    const bool fp = dtype_in(data->dtype, GBQ_FP_DATA), u8 = data->dtype == ONYX_UINT8;
    if (!dtype_in(data->dtype, GBQ_DATA))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "data of type %s is not supported (int4, uint4, "
                          "uint8, float8 or float4e2m1)", onyx_dtype_name(data->dtype));
    if (u8 && g->bits != 2 && g->bits != 4 && g->bits != 8)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "bits=%lld with uint8 data is not supported (2, 4 "
                          "or 8)", (long long)g->bits);
    if (!u8 && !fp && g->bits != 4)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "bits=%lld with %s data is not supported (4)",
                          (long long)g->bits, onyx_dtype_name(data->dtype));
    if (fp) g->bits = data->dtype == ONYX_FLOAT4E2M1 ? 4 : 8;
    bool pow2 = g->block >= 16 && (g->block & (g->block - 1)) == 0;
    if (!pow2 && !(fp && g->block == 0))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "block_size %lld is not a power of 2 >= 16%s",
                          (long long)g->block, fp ? " (or 0)" : "");
    if (fp && zp)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "zero_points must not be given with %s data",
                          onyx_dtype_name(data->dtype));
    if (zp && zp->dtype != data->dtype)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "zero_points have type %s, expected data's %s",
                          onyx_dtype_name(zp->dtype), onyx_dtype_name(data->dtype));
    if (data->rank < 0) return ONYX_OK;
    const int r = data->rank;
    if (r < 1) return onyx_error(ONYX_ERR_SHAPE, "data is a scalar, expected rank >= 1");
    int64_t ga = attr_int(n, "gather_axis", 0), qa = attr_int(n, "quantize_axis", 1);
    if (ga < -r || ga >= r || qa < -r || qa >= r)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "gather_axis %lld or quantize_axis %lld is out "
                          "of range for data of rank %d", (long long)ga, (long long)qa, r);
    g->gather_axis = norm_axis(ga, r), g->quantize_axis = norm_axis(qa, r);
    if (u8 && (g->gather_axis != 0 || g->quantize_axis != r - 1 || r < 2))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "with uint8 data, gather_axis must be 0 and "
                          "quantize_axis the last of at least 2 axes (got %d and %d of rank %d)",
                          g->gather_axis, g->quantize_axis, r);
    for (int i = 0; i < r; i++) g->dims[i] = data->dims[i];
    if (u8 && g->dims[r - 1] >= 0) g->dims[r - 1] *= 8 / g->bits;
    int64_t qdim = g->dims[g->quantize_axis];
    if (g->block == 0) g->block = qdim > 1 ? qdim : 1;
    g->n_blocks = qdim < 0 || g->block <= 0 ? -1 : (qdim + g->block - 1) / g->block;
    char b1[160], b2[160];
    if (scales->rank >= 0) {
        if (scales->rank != r)
            return onyx_error(ONYX_ERR_SHAPE, "scales have rank %d, expected data's %d",
                              scales->rank, r);
        for (int i = 0; i < r; i++) {
            int64_t want = i == g->quantize_axis ? g->n_blocks : g->dims[i];
            int64_t got = scales->dims[i];
            if (cnlp_agree(got, want)) continue;
            if (fp && i != g->quantize_axis && got == 1) {
                g->scale_bcast[i] = true;
                continue;
            }
            return onyx_error(ONYX_ERR_SHAPE, "scales have shape %s, data %s (logical) with "
                              "blocks of %lld along axis %d",
                              shape_str(scales->rank, scales->dims, b1, sizeof b1),
                              shape_str(r, g->dims, b2, sizeof b2), (long long)g->block,
                              g->quantize_axis);
        }
    }
    if (zp && zp->rank >= 0 && scales->rank >= 0) {
        bool ok = zp->rank == r;
        for (int i = 0; ok && i < r; i++) {
            int64_t want = scales->dims[i];
            if (u8 && i == g->quantize_axis && want >= 0) want = (want * g->bits + 7) / 8;
            ok = cnlp_agree(zp->dims[i], want);
        }
        if (!ok)
            return onyx_error(ONYX_ERR_SHAPE, "zero_points have shape %s, expected scales' %s%s",
                              shape_str(zp->rank, zp->dims, b1, sizeof b1),
                              shape_str(scales->rank, scales->dims, b2, sizeof b2),
                              u8 && g->bits < 8 ? " with the blocks packed in bytes" : "");
    }
    return ONYX_OK;
}

static onyx_status gbq_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, GBQ_DATA));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    TRY(infer_dtype_in(c, 2, CNLP_T));
    cnlp_gbq g;
    TRY(cnlp_gbq_of(c->node, c->in[0], c->in[2], cnlp_has(c, 3) ? c->in[3] : NULL, &g));
    const type_info *idx = c->in[1];
    if (g.rank < 0 || idx->rank < 0) {
        type_set_tensor(&c->out[0], g.scale_t, -1, NULL);
        return ONYX_OK;
    }
    int r = g.rank - 1 + idx->rank;
    if (r > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output rank %d exceeds %d", r, ONYX_MAX_RANK);
    int64_t d[ONYX_MAX_RANK];
    int k = 0;
    for (int i = 0; i < g.gather_axis; i++) d[k++] = g.dims[i];
    for (int i = 0; i < idx->rank; i++) d[k++] = idx->dims[i];
    for (int i = g.gather_axis + 1; i < g.rank; i++) d[k++] = g.dims[i];
    type_set_tensor(&c->out[0], g.scale_t, r, d);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"bits", ATTR_INT},
                                  {"block_size", ATTR_INT},
                                  {"gather_axis", ATTR_INT},
                                  {"quantize_axis", ATTR_INT},
                                  {NULL, 0}};

const op_schema op_MsGatherBlockQuantized[] = {
    {CNLP_MS, "GatherBlockQuantized", 1, 3, 4, 1, 1, attrs, gbq_infer, 0},
    OP_END,
};
