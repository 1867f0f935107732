/* CPU kernel of NonMaxSuppression: for each (batch, class), candidates above score_threshold are
 * sorted by score (ties: lower box index first) and taken greedily unless their IoU with an
 * already selected box of that class exceeds iou_threshold. IoU is computed in float like the
 * reference, so boundary cases decide the same way. The output is sized here
 * (KF_DYNAMIC_OUTPUT), so work arrays are allocated per run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

typedef struct cand {
    float score;
    int64_t box;
} cand;

/* Decreasing score, then increasing index; NaN scores last. */
static int by_score(const void *pa, const void *pb) {
    const cand *a = pa, *b = pb;
    bool na = isnan(a->score), nb = isnan(b->score);
    if (na != nb) return na ? 1 : -1;
    if (!na && a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->box < b->box ? -1 : a->box > b->box;
}

/* Box corners as [ymin, xmin, ymax, xmax] from either input format. */
static void corners(const float *b, bool center, float *out) {
    if (center) {
        float hw = b[2] / 2, hh = b[3] / 2;
        out[0] = b[1] - hh, out[1] = b[0] - hw, out[2] = b[1] + hh, out[3] = b[0] + hw;
    } else {
        out[0] = fminf(b[0], b[2]), out[1] = fminf(b[1], b[3]);
        out[2] = fmaxf(b[0], b[2]), out[3] = fmaxf(b[1], b[3]);
    }
}

static bool suppress(const float *a, const float *b, float iou_threshold) {
    float ix0 = fmaxf(a[1], b[1]), ix1 = fminf(a[3], b[3]);
    if (ix1 <= ix0) return false;
    float iy0 = fmaxf(a[0], b[0]), iy1 = fminf(a[2], b[2]);
    if (iy1 <= iy0) return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    if (inter <= 0) return false;
    float area_a = (a[3] - a[1]) * (a[2] - a[0]);
    float area_b = (b[3] - b[1]) * (b[2] - b[0]);
    float uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter / uni > iou_threshold;
}

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
    onyx_status st = ONYX_OK;
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

    cand *cands = NULL;
    float *corner = NULL;
    int64_t *sel = NULL, *picked = NULL;
    int64_t nsel = 0, cap = 0;
    size_t n = (size_t)(nbox > 0 ? nbox : 1);
    cands = malloc(n * sizeof *cands);
    corner = malloc(n * 4 * sizeof *corner);
    picked = malloc(n * sizeof *picked);
    if (!cands || !corner || !picked) CHECK(onyx_oom("NonMaxSuppression work arrays"));
    for (int64_t b = 0; b < nb && max_out > 0; b++) {
        const float *bx = (const float *)boxes->data + b * nbox * 4;
        for (int64_t i = 0; i < nbox; i++) corners(bx + i * 4, center, corner + i * 4);
        for (int64_t cl = 0; cl < ncls; cl++) {
            const float *sc = (const float *)scores->data + (b * ncls + cl) * nbox;
            int64_t nc = 0;
            for (int64_t i = 0; i < nbox; i++)
                if (!has_score || sc[i] > score_thr) cands[nc++] = (cand){sc[i], i};
            qsort(cands, (size_t)nc, sizeof *cands, by_score);
            int64_t np = 0;
            for (int64_t k = 0; k < nc && np < max_out; k++) {
                const float *bk = corner + cands[k].box * 4;
                bool keep = true;
                for (int64_t j = 0; j < np && keep; j++)
                    keep = !suppress(bk, corner + picked[j] * 4, iou);
                if (!keep) continue;
                picked[np++] = cands[k].box;
                if (nsel == cap) {
                    int64_t ncap = cap ? cap * 2 : 64;
                    int64_t *grown = realloc(sel, (size_t)ncap * 3 * sizeof *sel);
                    if (!grown) CHECK(onyx_oom("NonMaxSuppression selection"));
                    sel = grown;
                    cap = ncap;
                }
                sel[nsel * 3] = b, sel[nsel * 3 + 1] = cl, sel[nsel * 3 + 2] = cands[k].box;
                nsel++;
            }
        }
    }
    int64_t dims[2] = {nsel, 3};
    CHECK(value_alloc_tensor(c->out[0], ONYX_INT64, 2, dims));
    if (nsel) memcpy(c->out[0]->t.data, sel, (size_t)nsel * 3 * sizeof *sel);
done:
    free(cands);
    free(corner);
    free(picked);
    free(sel);
    return st;
}
