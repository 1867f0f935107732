/* CPU kernel of RotaryEmbedding: rotates the first rotary_embedding_dim features of every head
 * vector by the cos/sin of its position (halves or interleaved pairs), copying the rest; half
 * types compute in float. */
#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

typedef struct rope_ctx {
    const void *x, *cosv, *sinv;
    void *y;
    const int64_t *pos;           /* NULL: caches are [B, S, half] */
    int64_t batch, seq, heads, head, rdim;
    int64_t sb, ss, sh;           /* element strides of batch, position and head in x and y */
    bool interleaved;
} rope_ctx;

#define DEFINE_ROPE(N, T, LD, ST)                                                                  \
    static void N##_rope(void *vctx, int64_t r0, int64_t r1) {                                     \
        const rope_ctx *c = vctx;                                                                  \
        const int64_t half = c->rdim / 2;                                                          \
        for (int64_t r = r0; r < r1; r++) { /* r = (b * seq + s) * heads + h */                    \
            int64_t h = r % c->heads, bs = r / c->heads, b = bs / c->seq, s = bs % c->seq;         \
            int64_t crow = c->pos ? c->pos[bs] : bs;                                               \
            const T *cs = (const T *)c->cosv + crow * half;                                        \
            const T *sn = (const T *)c->sinv + crow * half;                                        \
            int64_t off = b * c->sb + s * c->ss + h * c->sh;                                       \
            const T *x = (const T *)c->x + off;                                                    \
            T *y = (T *)c->y + off;                                                                \
            /* pair j is (x[j], x[j + half]) or (x[2j], x[2j + 1]) */                              \
            int64_t step = c->interleaved ? 2 : 1, second = c->interleaved ? 1 : half;             \
            for (int64_t j = 0; j < half; j++) {                                                   \
                float co = LD(cs[j]), si = LD(sn[j]);                                              \
                float x1 = LD(x[j * step]), x2 = LD(x[j * step + second]);                         \
                y[j * step] = ST(co * x1 - si * x2);                                               \
                y[j * step + second] = ST(si * x1 + co * x2);                                      \
            }                                                                                      \
            for (int64_t j = c->rdim; j < c->head; j++) y[j] = x[j];                               \
        }                                                                                          \
    }

DEFINE_ROPE(f32, float, cpu_f32_ld, cpu_f32_st)
DEFINE_ROPE(f16, uint16_t, cpu_f16_ld, cpu_f16_st)
DEFINE_ROPE(bf16, uint16_t, cpu_bf16_ld, cpu_bf16_st)

onyx_status cpu_rotary_embedding(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *cosc = kernel_input(c, 1), *sinc = kernel_input(c, 2), *pos = kernel_input(c, 3);
    tensor *y = kernel_output(c, 0);
    const graph_node *n = c->node;
    if (!x || !cosc || !sinc) return onyx_error(ONYX_ERR_SHAPE, "inputs 0-2 must be tensors");
    if (x->rank != 3 && x->rank != 4)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected 3 or 4", x->rank);
    if (cosc->dtype != x->dtype || sinc->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "cos/sin caches have types %s/%s, expected %s",
                          onyx_dtype_name(cosc->dtype), onyx_dtype_name(sinc->dtype),
                          onyx_dtype_name(x->dtype));
    rope_ctx r = {.x = x->data, .cosv = cosc->data, .sinv = sinc->data, .y = y->data,
                  .interleaved = attr_int(n, "interleaved", 0) != 0, .batch = x->dims[0]};
    if (x->rank == 4) {
        r.heads = x->dims[1];
        r.seq = x->dims[2];
        r.head = x->dims[3];
        r.sb = r.heads * r.seq * r.head;
        r.sh = r.seq * r.head;
        r.ss = r.head;
    } else {
        r.heads = attr_int(n, "num_heads", 0);
        r.seq = x->dims[1];
        if (r.heads <= 0 || x->dims[2] % r.heads != 0)
            return onyx_error(ONYX_ERR_SHAPE, "hidden size %lld is not a multiple of num_heads "
                              "%lld", (long long)x->dims[2], (long long)r.heads);
        r.head = x->dims[2] / r.heads;
        r.sb = r.seq * x->dims[2];
        r.ss = x->dims[2];
        r.sh = r.head;
    }
    r.rdim = attr_int(n, "rotary_embedding_dim", 0);
    if (r.rdim == 0) r.rdim = r.head;
    if (r.rdim < 0 || r.rdim > r.head || r.rdim % 2 != 0)
        return onyx_error(ONYX_ERR_SHAPE, "rotary dim %lld must be even and at most the head "
                          "size %lld", (long long)r.rdim, (long long)r.head);
    int64_t half = r.rdim / 2, rows = 0;
    for (int i = 0; i < 2; i++) {
        const tensor *cs = i ? sinc : cosc;
        bool ok = pos ? cs->rank == 2 && cs->dims[1] == half
                      : cs->rank == 3 && cs->dims[0] == r.batch && cs->dims[1] == r.seq &&
                            cs->dims[2] == half;
        if (!ok)
            return onyx_error(ONYX_ERR_SHAPE, "%s must have shape %s with last dim %lld",
                              i ? "sin_cache" : "cos_cache",
                              pos ? "[max_position, half]" : "[batch, seq, half]", (long long)half);
    }
    if (cosc->dims[0] != sinc->dims[0])
        return onyx_error(ONYX_ERR_SHAPE, "cos_cache has %lld rows and sin_cache %lld",
                          (long long)cosc->dims[0], (long long)sinc->dims[0]);
    if (pos) {
        if (pos->dtype != ONYX_INT64 || pos->rank != 2 || pos->dims[0] != r.batch ||
            pos->dims[1] != r.seq)
            return onyx_error(ONYX_ERR_SHAPE, "position_ids must be int64 [%lld,%lld]",
                              (long long)r.batch, (long long)r.seq);
        r.pos = pos->data;
        rows = cosc->dims[0];
        for (int64_t i = 0; i < pos->numel; i++)
            if (r.pos[i] < 0 || r.pos[i] >= rows)
                return onyx_error(ONYX_ERR_RUNTIME, "position_ids[%lld] = %lld is outside the "
                                  "cache's %lld positions", (long long)i, (long long)r.pos[i],
                                  (long long)rows);
    }
    void (*fn)(void *, int64_t, int64_t);
    switch (x->dtype) {
    case ONYX_FLOAT: fn = f32_rope; break;
    case ONYX_FLOAT16: fn = f16_rope; break;
    case ONYX_BFLOAT16: fn = bf16_rope; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input has type %s, expected float, float16 or "
                          "bfloat16", onyx_dtype_name(x->dtype));
    }
    int64_t n_rows = r.batch * r.seq * r.heads;
    parallel_for(n_rows, 4096 / (r.head + 1) + 1, fn, &r);
    return ONYX_OK;
}
