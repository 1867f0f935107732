/* CPU kernels of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over scores viewed as
 * [N, C, D] and labels [N, D]. Labels are checked first (each in [0, C) or ignore_index); then
 * chunks of positions run in parallel, each keeping its own loss and weight sums so that the
 * reduction needs no allocation and stays deterministic. Accumulation is in double. */
#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/norm/common.h"

#define MAX_CHUNKS 64
#define GRAIN_POS 2048

typedef struct loss_plan {
    const tensor *x, *w;
    const int64_t *lab64;
    const int32_t *lab32;
    tensor *out, *logp;
    int64_t n, ch, d, positions, nchunks;
    bool sce, none, has_ii;
    int64_t ii;
    double lsum[MAX_CHUNKS], wsum[MAX_CHUNKS];
} loss_plan;

static inline int64_t label_at(const loss_plan *p, int64_t i) {
    return p->lab64 ? p->lab64[i] : (int64_t)p->lab32[i];
}

static void loss_chunk(void *ctx, int64_t b, int64_t e) {
    loss_plan *p = ctx;
    const tensor *x = p->x;
    for (int64_t chunk = b; chunk < e; chunk++) {
        int64_t from = p->positions * chunk / p->nchunks;
        int64_t to = p->positions * (chunk + 1) / p->nchunks;
        double ls = 0, ws = 0;
        for (int64_t pos = from; pos < to; pos++) {
            int64_t i = pos / p->d, k = pos % p->d;
            int64_t base = i * p->ch * p->d + k; /* x[i, c, k] = base + c * d */
            int64_t lab = label_at(p, pos);
            bool ignored = p->has_ii && lab == p->ii;
            double lse = 0;
            if (p->sce) {
                double mx = -INFINITY, s = 0;
                for (int64_t c = 0; c < p->ch; c++) {
                    double v = norm_get(x, base + c * p->d);
                    if (v > mx) mx = v;
                }
                for (int64_t c = 0; c < p->ch; c++) s += exp(norm_get(x, base + c * p->d) - mx);
                lse = mx + log(s);
                if (p->logp)
                    for (int64_t c = 0; c < p->ch; c++)
                        norm_set(p->logp, base + c * p->d, norm_get(x, base + c * p->d) - lse);
            }
            double loss = 0, w = 0;
            if (!ignored) {
                w = p->w ? norm_get(p->w, lab) : 1;
                loss = -(norm_get(x, base + lab * p->d) - lse) * w;
            }
            if (p->none) norm_set(p->out, pos, loss);
            ls += loss;
            ws += w;
        }
        p->lsum[chunk] = ls;
        p->wsum[chunk] = ws;
    }
}

static onyx_status loss_run(const kernel_call *c, bool sce) {
    const tensor *x = kernel_input(c, 0), *lab = kernel_input(c, 1), *w = kernel_input(c, 2);
    tensor *out = kernel_output(c, 0);
    if (norm_float_index(x->dtype) < 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a float type",
                          onyx_dtype_name(x->dtype));
    if (x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2 (N x C x ...)",
                          x->rank);
    if (!lab || (lab->dtype != ONYX_INT64 && lab->dtype != ONYX_INT32))
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (labels): expected an int32 or int64 tensor");
    bool shape_ok = lab->rank == x->rank - 1;
    for (int d = 0; shape_ok && d < lab->rank; d++)
        shape_ok = lab->dims[d] == x->dims[d == 0 ? 0 : d + 1];
    if (!shape_ok) {
        char a[160], b[160];
        return onyx_error(ONYX_ERR_SHAPE,
                          "input 1 (labels) has shape %s, expected scores %s "
                          "without the class axis",
                          shape_str(lab->rank, lab->dims, a, sizeof a),
                          shape_str(x->rank, x->dims, b, sizeof b));
    }
    if (w && (w->dtype != x->dtype || w->numel != x->dims[1]))
        return onyx_error(ONYX_ERR_SHAPE, "input 2 (weights): expected %lld values of type %s",
                          (long long)x->dims[1], onyx_dtype_name(x->dtype));
    const char *red = attr_string(c->node, "reduction", "mean");
    loss_plan p = {.x = x,
                   .w = w,
                   .out = out,
                   .logp = sce ? kernel_output(c, 1) : NULL,
                   .n = x->dims[0],
                   .ch = x->dims[1],
                   .d = 1,
                   .sce = sce,
                   .none = strcmp(red, "none") == 0,
                   .has_ii = node_attr(c->node, "ignore_index") != NULL,
                   .ii = attr_int(c->node, "ignore_index", 0)};
    if (!p.none && strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "attribute reduction is '%s', expected 'none', 'sum' or 'mean'", red);
    for (int d = 2; d < x->rank; d++) p.d *= x->dims[d];
    p.positions = lab->numel;
    if (lab->dtype == ONYX_INT64)
        p.lab64 = lab->data;
    else
        p.lab32 = lab->data;
    if (p.none ? out->numel != p.positions : out->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "output 0 has %lld elements, expected %lld",
                          (long long)out->numel, (long long)(p.none ? p.positions : 1));
    if (p.logp && p.logp->numel != x->numel)
        return onyx_error(ONYX_ERR_SHAPE, "output 1 has %lld elements, expected %lld",
                          (long long)p.logp->numel, (long long)x->numel);
    for (int64_t i = 0; i < p.positions; i++) {
        int64_t l = label_at(&p, i);
        if ((l < 0 || l >= p.ch) && !(p.has_ii && l == p.ii))
            return onyx_error(ONYX_ERR_RUNTIME,
                              "label %lld at position %lld is out of range "
                              "(expected 0..%lld%s)",
                              (long long)l, (long long)i, (long long)p.ch - 1,
                              p.has_ii ? " or ignore_index" : "");
    }
    p.nchunks = (p.positions + GRAIN_POS - 1) / GRAIN_POS;
    if (p.nchunks > MAX_CHUNKS) p.nchunks = MAX_CHUNKS;
    if (p.nchunks < 1) p.nchunks = 1;
    parallel_for(p.nchunks, 1, loss_chunk, &p);
    if (p.none) return ONYX_OK;
    double ls = 0, ws = 0;
    for (int64_t k = 0; k < p.nchunks; k++) ls += p.lsum[k], ws += p.wsum[k];
    norm_set(out, 0, red[0] == 's' ? ls : ls / ws);
    return ONYX_OK;
}

onyx_status cpu_nllloss(const kernel_call *c) { return loss_run(c, false); }
onyx_status cpu_sceloss(const kernel_call *c) { return loss_run(c, true); }
