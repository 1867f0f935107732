/* CPU kernel of com.microsoft.RotaryEmbedding: per (batch, position, head) the first `rot`
 * features are rotated by the cos/sin cache row of the token's position (halves, or interleaved
 * pairs), the rest copied. float16/bfloat16 compute in float. */
#include "core/parallel.h"
#include "kernels_cpu/contrib_nlp/cnlp_cpu.h"
#include "kernels_cpu/cpu_kernels.h"
#include "ops/contrib_nlp/contrib_nlp.h"

#define GRAIN 16384

typedef struct rope_job {
    cnlp_rope_dims d;
    bool interleaved;
    onyx_dtype t;
    const void *x;
    void *y;
    const float *cos, *sin; /* float copies when the caches are not float */
    const int64_t *pos;
    int64_t bs, hs, ss; /* strides of batch, head, position */
} rope_job;

static void rope_rows(void *ctx, int64_t r0, int64_t r1) {
    const rope_job *j = ctx;
    const cnlp_rope_dims *d = &j->d;
    const int64_t D = d->head, half = d->rot / 2;
    float buf[1024], out[1024];
    for (int64_t r = r0; r < r1; r++) {
        /* r enumerates (b, s, h) */
        int64_t h = r % d->heads, s = (r / d->heads) % d->seq, b = r / (d->heads * d->seq);
        int64_t p = d->pos_offset ? j->pos[0] + s : j->pos[b * d->seq + s];
        int64_t off = b * j->bs + h * j->hs + s * j->ss;
        const float *c = j->cos + p * half, *sn = j->sin + p * half;
        const float *x;
        float *y;
        if (j->t == ONYX_FLOAT) {
            x = (const float *)j->x + off;
            y = (float *)j->y + off;
        } else {
            cnlp_load(j->x, j->t, off, buf, D);
            x = buf;
            y = out;
        }
        cnlp_rotate(x, y, c, sn, d->rot, D, j->interleaved);
        if (j->t != ONYX_FLOAT) cnlp_store(j->y, j->t, off, out, D);
    }
}

static void type_of(type_info *t, const tensor *x) {
    type_init(t);
    type_set_tensor(t, x->dtype, x->rank, x->dims);
}

onyx_status cpu_cnlp_rotary(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *pos = kernel_input(c, 1), *cs = kernel_input(c, 2),
                 *sn = kernel_input(c, 3);
    tensor *y = kernel_output(c, 0);
    type_info tx, tp, tc, ts;
    type_of(&tx, x), type_of(&tp, pos), type_of(&tc, cs), type_of(&ts, sn);
    rope_job j = {.interleaved = attr_int(c->node, "interleaved", 0) != 0,
                  .t = x->dtype,
                  .x = x->data,
                  .y = y->data,
                  .pos = pos->data};
    TRY(cnlp_rope_dims_of(c->node, &tx, &tp, &tc, &ts, &j.d));
    const cnlp_rope_dims *d = &j.d;
    if (cs->dtype != x->dtype || sn->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "cos_cache and sin_cache must have the input's type");
    if (x->dtype != ONYX_FLOAT && d->head > 1024)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "float16/bfloat16 head size %lld is over 1024",
                          (long long)d->head);
    if (j.d.bnsh) {
        j.ss = d->head, j.hs = d->seq * d->head, j.bs = d->heads * j.hs;
    } else {
        j.hs = d->head, j.ss = d->heads * d->head, j.bs = d->seq * j.ss;
    }
    /* every position must have a cache row */
    int64_t np = d->pos_offset ? 1 : pos->numel;
    const int64_t *pv = pos->data;
    for (int64_t i = 0; i < np; i++) {
        int64_t lo = pv[i], hi = d->pos_offset ? pv[i] + d->seq - 1 : pv[i];
        if (d->seq > 0 && (lo < 0 || hi >= d->max_pos))
            return onyx_error(ONYX_ERR_RUNTIME,
                              "position %lld is outside the %lld rows of the "
                              "cos/sin caches",
                              (long long)(lo < 0 ? lo : hi), (long long)d->max_pos);
    }
    int64_t rows = d->batch * d->seq * d->heads, nc = d->max_pos * (d->rot / 2);
    if (rows == 0 || d->head == 0) return ONYX_OK;
    if (x->dtype == ONYX_FLOAT) {
        j.cos = cs->data, j.sin = sn->data;
    } else {
        float *buf;
        TRY(kernel_scratch(c, (size_t)(2 * nc + 16) * sizeof(float), (void **)&buf));
        cnlp_load(cs->data, cs->dtype, 0, buf, nc);
        cnlp_load(sn->data, sn->dtype, 0, buf + nc, nc);
        j.cos = buf, j.sin = buf + nc;
    }
    parallel_for(rows, cnlp_grain(d->head, GRAIN), rope_rows, &j);
    return ONYX_OK;
}
