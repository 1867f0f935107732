/* CPU kernel of NonMaxSuppression: for each (batch, class), candidates above score_threshold are
 * sorted by score (ties: lower box index first, NaN scores last) and taken greedily unless their
 * IoU with an already selected box of that class exceeds iou_threshold. IoU is computed in float
 * like the reference, so boundary cases decide the same way.
 *
 * Layout: each batch's box corners and areas are computed once into a struct of arrays; the
 * candidates of a (batch, class) are sorted once by a stable LSD radix sort on an order-preserving
 * key of the score; each candidate is then tested only against that class's selected boxes, kept
 * in their own struct of arrays and scanned in blocks of NMS_BLOCK with a branch-free test.
 * Selected boxes whose area is not positive (or NaN) can suppress nothing and are left out of that
 * list. All working memory is one kernel_scratch region, sized up front: a pre-pass counts the
 * candidates of every (batch, class), which bounds the selections. The output is sized here
 * (KF_DYNAMIC_OUTPUT). */
#include <stdint.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

#define NMS_BLOCK 8

static inline float min_f(float a, float b) { return a < b ? a : b; }
static inline float max_f(float a, float b) { return a > b ? a : b; }

/* Sort key: ascending key = descending score; -0 and +0 equal; every NaN the largest key. */
static inline uint32_t score_key(float f) {
    if (f != f) return UINT32_MAX;
    if (f == 0) f = 0; /* -0 -> +0 */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? u : u ^ 0x7FFFFFFFu;
}

/* Stable sort of (key, idx) by key ascending: LSD radix, 11-bit digits, passes whose digit is the
 * same for every key skipped. Result ends in key/idx (tk/ti are temporaries of n entries). */
static void radix_sort(uint32_t *key, uint32_t *idx, uint32_t *tk, uint32_t *ti, size_t n,
                       uint32_t *count /* 2048 */) {
    if (n < 2) return;
    if (n <= 32) { /* insertion sort, stable */
        for (size_t i = 1; i < n; i++) {
            uint32_t k = key[i], v = idx[i];
            size_t j = i;
            while (j > 0 && key[j - 1] > k) key[j] = key[j - 1], idx[j] = idx[j - 1], j--;
            key[j] = k, idx[j] = v;
        }
        return;
    }
    uint32_t *sk = key, *si = idx, *dk = tk, *di = ti;
    for (int shift = 0; shift < 32; shift += 11) {
        memset(count, 0, 2048 * sizeof *count);
        for (size_t i = 0; i < n; i++) count[(sk[i] >> shift) & 2047]++;
        if (count[(sk[0] >> shift) & 2047] == n) continue;
        uint32_t sum = 0;
        for (int d = 0; d < 2048; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t p = count[(sk[i] >> shift) & 2047]++;
            dk[p] = sk[i], di[p] = si[i];
        }
        uint32_t *t = sk;
        sk = dk, dk = t;
        t = si, si = di, di = t;
    }
    if (sk != key) {
        memcpy(key, sk, n * sizeof *key);
        memcpy(idx, si, n * sizeof *idx);
    }
}

/* Whether the candidate (y0, x0, y1, x1, area > 0) is suppressed by any of the n selected boxes
 * (struct of arrays, n a multiple of NMS_BLOCK, padding entries never suppress). Branch-free per
 * block; same arithmetic as the reference: intersection, union = area_a + area_b - inter, and
 * inter / union > iou. */
static bool suppressed(float y0, float x0, float y1, float x1, float area, const float *restrict sy0,
                       const float *restrict sx0, const float *restrict sy1,
                       const float *restrict sx1, const float *restrict sar, size_t n, float iou) {
    for (size_t j = 0; j < n; j += NMS_BLOCK) {
        int any = 0;
        for (int t = 0; t < NMS_BLOCK; t++) {
            float ix0 = max_f(x0, sx0[j + t]), ix1 = min_f(x1, sx1[j + t]);
            float iy0 = max_f(y0, sy0[j + t]), iy1 = min_f(y1, sy1[j + t]);
            float inter = (ix1 - ix0) * (iy1 - iy0);
            float uni = area + sar[j + t] - inter;
            any |= (ix1 > ix0) & (iy1 > iy0) & (inter > 0) & (uni > 0) & (inter / uni > iou);
        }
        if (any) return true;
    }
    return false;
}

static size_t align_up(size_t n) { return (n + 63) & ~(size_t)63; }

/* Optional scalar input: its one value, or `dflt` when absent or empty. */
static onyx_status opt_scalar(const kernel_call *c, int i, double dflt, double *out, bool *given) {
    const tensor *t = kernel_input(c, i);
    *out = dflt;
    if (given) *given = false;
    if (!t || t->numel == 0) return ONYX_OK;
    if (t->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has %lld elements, expected one", i,
                          (long long)t->numel);
    *out = t->dtype == ONYX_INT64 ? (double)((const int64_t *)t->data)[0] : tensor_get_f64(t, 0);
    if (given) *given = true;
    return ONYX_OK;
}

onyx_status cpu_nms(const kernel_call *c) {
    const tensor *boxes = kernel_input(c, 0), *scores = kernel_input(c, 1);
    if (boxes->dtype != ONYX_FLOAT || scores->dtype != ONYX_FLOAT)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "boxes and scores must be float tensors");
    if (boxes->rank != 3 || boxes->dims[2] != 4)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 (boxes): expected [batches, boxes, 4]");
    if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (scores): expected [%lld, classes, %lld]",
                          (long long)boxes->dims[0], (long long)boxes->dims[1]);
    const tensor *mt = kernel_input(c, 2);
    int64_t max_out = 0;
    if (mt && mt->numel) {
        if (mt->numel != 1 || mt->dtype != ONYX_INT64)
            return onyx_error(ONYX_ERR_SHAPE,
                              "input 2 (max_output_boxes_per_class): expected one int64");
        max_out = ((const int64_t *)mt->data)[0];
        if (max_out < 0) max_out = 0;
    }
    double iou_d, score_d;
    bool has_score;
    TRY(opt_scalar(c, 3, 0, &iou_d, NULL));
    TRY(opt_scalar(c, 4, 0, &score_d, &has_score));
    float iou = (float)iou_d, score_thr = (float)score_d;
    bool center = attr_int(c->node, "center_point_box", 0) != 0;
    int64_t nb = boxes->dims[0], ncls = scores->dims[1], nbox = boxes->dims[1];
    if (max_out > nbox) max_out = nbox;
    if (nbox > (int64_t)UINT32_MAX - NMS_BLOCK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "NonMaxSuppression: too many boxes (%lld)",
                          (long long)nbox);
    if (nb == 0 || ncls == 0 || nbox == 0) max_out = 0;

    /* Pre-pass: candidates per (batch, class), which bounds the selections. */
    int64_t nsets = max_out > 0 ? nb * ncls : 0;
    int64_t maxc = 0;
    uint32_t *ncand = NULL;
    size_t sz_ncand = align_up((size_t)nsets * sizeof(uint32_t));
    size_t n = (size_t)nbox, pad = (size_t)max_out + NMS_BLOCK;
    size_t sz_box = align_up(n * sizeof(float)) * 5;
    size_t sz_sort = align_up(n * sizeof(uint32_t)) * 4 + align_up(2048 * sizeof(uint32_t));
    size_t sz_sel_soa = align_up(pad * sizeof(float)) * 5;
    /* The selection list holds box indices (uint32) of every selection, in output order. Its size
     * is known only after the pre-pass; it is bounded by min(nsets * max_out, candidates). */
    size_t sel_cap = 0;
    if (nsets > 0) {
        uint64_t tot = 0;
        const float *sc = (const float *)scores->data;
        for (int64_t s = 0; s < nsets; s++) {
            const float *p = sc + s * nbox;
            int64_t k = 0;
            if (has_score) {
                for (int64_t i = 0; i < nbox; i++) k += p[i] > score_thr;
            } else {
                k = nbox;
            }
            if (k > maxc) maxc = k;
            tot += (uint64_t)(k < max_out ? k : max_out);
        }
        sel_cap = (size_t)tot;
    }
    size_t sz_sel = align_up((sel_cap ? sel_cap : 1) * sizeof(uint32_t));
    if (nsets == 0 || maxc == 0) { /* no candidate anywhere: nothing is selected */
        int64_t none[2] = {0, 3};
        return value_alloc_tensor(c->out[0], ONYX_INT64, 2, none);
    }
    void *mem = NULL;
    TRY(kernel_scratch(c, sz_ncand + sz_box + sz_sort + sz_sel_soa + sz_sel, &mem));
    char *m = mem;
    ncand = (uint32_t *)m, m += sz_ncand;
    float *by0 = (float *)m, *bx0 = by0 + align_up(n * sizeof(float)) / sizeof(float);
    float *by1 = bx0 + align_up(n * sizeof(float)) / sizeof(float);
    float *bx1 = by1 + align_up(n * sizeof(float)) / sizeof(float);
    float *bar = bx1 + align_up(n * sizeof(float)) / sizeof(float);
    m += sz_box;
    size_t stride_u = align_up(n * sizeof(uint32_t)) / sizeof(uint32_t);
    uint32_t *key = (uint32_t *)m, *idx = key + stride_u, *tk = idx + stride_u, *ti = tk + stride_u;
    uint32_t *count = ti + stride_u;
    m += sz_sort;
    size_t stride_p = align_up(pad * sizeof(float)) / sizeof(float);
    float *sy0 = (float *)m, *sx0 = sy0 + stride_p, *sy1 = sx0 + stride_p, *sx1 = sy1 + stride_p,
          *sar = sx1 + stride_p;
    m += sz_sel_soa;
    uint32_t *sel = (uint32_t *)m;

    size_t nsel = 0;
    for (int64_t b = 0; b < nb && mem; b++) {
        const float *bx = (const float *)boxes->data + b * nbox * 4;
        for (size_t i = 0; i < n; i++) {
            const float *p = bx + i * 4;
            float y0, x0, y1, x1;
            if (center) {
                float hw = p[2] / 2, hh = p[3] / 2;
                y0 = p[1] - hh, x0 = p[0] - hw, y1 = p[1] + hh, x1 = p[0] + hw;
            } else {
                /* A NaN coordinate gives a NaN or zero area either way: such boxes never
                 * suppress nor get suppressed, as with fminf/fmaxf. */
                y0 = min_f(p[0], p[2]), x0 = min_f(p[1], p[3]);
                y1 = max_f(p[0], p[2]), x1 = max_f(p[1], p[3]);
            }
            by0[i] = y0, bx0[i] = x0, by1[i] = y1, bx1[i] = x1;
            bar[i] = (x1 - x0) * (y1 - y0);
        }
        for (int64_t cl = 0; cl < ncls; cl++) {
            const float *sc = (const float *)scores->data + (b * ncls + cl) * nbox;
            size_t nc = 0;
            if (has_score) {
                for (size_t i = 0; i < n; i++)
                    if (sc[i] > score_thr) key[nc] = score_key(sc[i]), idx[nc++] = (uint32_t)i;
            } else {
                for (size_t i = 0; i < n; i++) key[i] = score_key(sc[i]), idx[i] = (uint32_t)i;
                nc = n;
            }
            radix_sort(key, idx, tk, ti, nc, count);
            size_t np = 0, ns = 0; /* selections of this class; those with positive area */
            for (size_t k = 0; k < nc && np < (size_t)max_out; k++) {
                uint32_t i = idx[k];
                float y0 = by0[i], x0 = bx0[i], y1 = by1[i], x1 = bx1[i], ar = bar[i];
                if (ar > 0) {
                    if (suppressed(y0, x0, y1, x1, ar, sy0, sx0, sy1, sx1, sar,
                                   (ns + NMS_BLOCK - 1) / NMS_BLOCK * NMS_BLOCK, iou))
                        continue;
                    if (ns % NMS_BLOCK == 0) /* new block: its padding is zero-size boxes, */
                        for (size_t t = ns; t < ns + NMS_BLOCK; t++) /* which suppress nothing */
                            sy0[t] = sx0[t] = sy1[t] = sx1[t] = sar[t] = 0;
                    sy0[ns] = y0, sx0[ns] = x0, sy1[ns] = y1, sx1[ns] = x1, sar[ns] = ar;
                    ns++;
                }
                sel[nsel++] = i;
                np++;
            }
            ncand[b * ncls + cl] = (uint32_t)np;
        }
    }
    int64_t dims[2] = {(int64_t)nsel, 3};
    TRY(value_alloc_tensor(c->out[0], ONYX_INT64, 2, dims));
    int64_t *out = (int64_t *)c->out[0]->t.data;
    size_t o = 0;
    for (int64_t s = 0; s < nsets && mem; s++)
        for (uint32_t k = 0; k < ncand[s]; k++, o++)
            out[o * 3] = s / ncls, out[o * 3 + 1] = s % ncls, out[o * 3 + 2] = sel[o];
    return ONYX_OK;
}
