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
 * (KF_DYNAMIC_OUTPUT).
 *
 * Many candidates (a detector's thousands of anchors, often all classes in one call with
 * torchvision's per-class coordinate offsets): scanning every selected box makes the greedy pass
 * quadratic. A box suppresses only boxes it overlaps with positive area, so the selected boxes
 * are also kept in a uniform grid of cells about the size of an average candidate, and a
 * candidate is tested against the boxes listed in the cells it touches. Cell indices come from a
 * monotonic map of the coordinates, so two boxes that overlap always share a cell and the result
 * is the same as the full scan's. Boxes that touch too many cells, have infinite coordinates, or
 * find the grid's entries used up are tested or kept the slow way (the full scan, or a list
 * every candidate scans). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels_cpu/common/radix.h"
#include "kernels_cpu/cpu_kernels.h"

#define NMS_BLOCK 8

static inline float min_f(float a, float b) { return a < b ? a : b; }
static inline float max_f(float a, float b) { return a > b ? a : b; }

/* Whether selected box b suppresses candidate a (area > 0): the reference's arithmetic,
 * intersection, union = area_a + area_b - inter, and inter / union > iou, branch-free. */
static inline int suppresses(float y0, float x0, float y1, float x1, float area, float by0,
                             float bx0, float by1, float bx1, float barea, float iou) {
    float ix0 = max_f(x0, bx0), ix1 = min_f(x1, bx1);
    float iy0 = max_f(y0, by0), iy1 = min_f(y1, by1);
    float inter = (ix1 - ix0) * (iy1 - iy0);
    float uni = area + barea - inter;
    return (ix1 > ix0) & (iy1 > iy0) & (inter > 0) & (uni > 0) & (inter / uni > iou);
}

/* Whether the candidate is suppressed by any of the n selected boxes (struct of arrays, n a
 * multiple of NMS_BLOCK, padding entries never suppress). */
static bool suppressed(float y0, float x0, float y1, float x1, float area, const float *restrict sy0,
                       const float *restrict sx0, const float *restrict sy1,
                       const float *restrict sx1, const float *restrict sar, size_t n, float iou) {
    for (size_t j = 0; j < n; j += NMS_BLOCK) {
        int any = 0;
        for (int t = 0; t < NMS_BLOCK; t++)
            any |= suppresses(y0, x0, y1, x1, area, sy0[j + t], sx0[j + t], sy1[j + t],
                              sx1[j + t], sar[j + t], iou);
        if (any) return true;
    }
    return false;
}

/* A list of selected boxes as a struct of arrays, padded to blocks of NMS_BLOCK with zero-size
 * boxes (which suppress nothing). */
typedef struct box_list {
    float *y0, *x0, *y1, *x1, *ar;
    size_t n;
} box_list;

/* The list's five arrays of `stride` floats each, from mem on. */
static void list_place(box_list *l, char *mem, size_t stride) {
    l->y0 = (float *)mem, l->x0 = l->y0 + stride, l->y1 = l->x0 + stride, l->x1 = l->y1 + stride;
    l->ar = l->x1 + stride;
    l->n = 0;
}

static void list_add(box_list *l, float y0, float x0, float y1, float x1, float ar) {
    if (l->n % NMS_BLOCK == 0)
        for (size_t t = l->n; t < l->n + NMS_BLOCK; t++)
            l->y0[t] = l->x0[t] = l->y1[t] = l->x1[t] = l->ar[t] = 0;
    size_t k = l->n++;
    l->y0[k] = y0, l->x0[k] = x0, l->y1[k] = y1, l->x1[k] = x1, l->ar[k] = ar;
}

static bool list_suppresses(const box_list *l, float y0, float x0, float y1, float x1, float ar,
                            float iou) {
    return suppressed(y0, x0, y1, x1, ar, l->y0, l->x0, l->y1, l->x1, l->ar,
                      (l->n + NMS_BLOCK - 1) / NMS_BLOCK * NMS_BLOCK, iou);
}

/* Candidates per class from which the grid pays for itself. */
#define NMS_GRID_MIN 512
/* Cells a box may touch and still be listed in them; wider boxes go to the grid's wide list. */
#define NMS_GRID_COVER 16
/* The grid's memory: blocks per possible selection, cells per candidate, at most cells. */
#define NMS_GRID_BLOCKS 1
#define NMS_GRID_CELLS 8
#define NMS_GRID_MAX_CELLS ((size_t)1 << 22)

/* Up to NMS_BLOCK boxes of one cell, unused places zero-size boxes (which suppress nothing). */
typedef struct grid_block {
    float y0[NMS_BLOCK], x0[NMS_BLOCK], y1[NMS_BLOCK], x1[NMS_BLOCK], ar[NMS_BLOCK];
    int32_t n, next; /* boxes held; the cell's next (older, full) block, or -1 */
} grid_block;

typedef struct grid {
    double ox, oy, ix, iy; /* origin and cells per unit, in x and y */
    int64_t nx, ny;
    int32_t *head;         /* nx * ny cells: the block being filled, or -1 */
    grid_block *blk;
    size_t n_blk, cap_blk;
    box_list wide;         /* selected boxes not in the cells: every candidate scans them */
} grid;

static inline bool finite_f(float v) { return v - v == 0; }

/* The cell of coordinate v: monotonic in v (so boxes that overlap share a cell), clamped. */
static inline int64_t cell_of(double v, double origin, double per_unit, int64_t n) {
    double d = (v - origin) * per_unit;
    return d <= 0 ? 0 : d >= (double)(n - 1) ? n - 1 : (int64_t)d;
}

/* The cells a box touches; false when it cannot be placed (infinite coordinates, too wide). */
static bool grid_span(const grid *g, float y0, float x0, float y1, float x1, int64_t *c) {
    if (!finite_f(y0) || !finite_f(x0) || !finite_f(y1) || !finite_f(x1)) return false;
    c[0] = cell_of(x0, g->ox, g->ix, g->nx), c[1] = cell_of(x1, g->ox, g->ix, g->nx);
    c[2] = cell_of(y0, g->oy, g->iy, g->ny), c[3] = cell_of(y1, g->oy, g->iy, g->ny);
    return (c[1] - c[0] + 1) * (c[3] - c[2] + 1) <= NMS_GRID_COVER;
}

/* Sizes the grid over the candidates idx[0, nc) with positive area and finite corners: cells of
 * about their mean width and height, at most max_cells. False when no candidate can be placed. */
static bool grid_setup(grid *g, const uint32_t *idx, size_t nc, const float *by0,
                       const float *bx0, const float *by1, const float *bx1, const float *bar,
                       size_t max_cells) {
    double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0, w = 0, h = 0;
    size_t k = 0;
    for (size_t j = 0; j < nc; j++) {
        uint32_t i = idx[j];
        if (!(bar[i] > 0) || !finite_f(by0[i]) || !finite_f(bx0[i]) || !finite_f(by1[i]) ||
            !finite_f(bx1[i]))
            continue;
        if (k++ == 0) x_lo = bx0[i], x_hi = bx1[i], y_lo = by0[i], y_hi = by1[i];
        x_lo = bx0[i] < x_lo ? bx0[i] : x_lo, x_hi = bx1[i] > x_hi ? bx1[i] : x_hi;
        y_lo = by0[i] < y_lo ? by0[i] : y_lo, y_hi = by1[i] > y_hi ? by1[i] : y_hi;
        w += (double)bx1[i] - bx0[i], h += (double)by1[i] - by0[i];
    }
    if (k == 0) return false;
    w /= (double)k, h /= (double)k;
    double sx = x_hi - x_lo, sy = y_hi - y_lo;
    double nx = w > 0 && sx > 0 ? fmin(ceil(sx / w), (double)max_cells) : 1;
    double ny = h > 0 && sy > 0 ? fmin(ceil(sy / h), (double)max_cells) : 1;
    if (nx * ny > (double)max_cells) { /* coarser cells, the same aspect */
        double f = sqrt((double)max_cells / (nx * ny));
        nx = floor(nx * f), ny = floor(ny * f);
    }
    g->nx = nx < 1 ? 1 : (int64_t)nx, g->ny = ny < 1 ? 1 : (int64_t)ny;
    g->ox = x_lo, g->oy = y_lo;
    g->ix = sx > 0 ? (double)g->nx / sx : 0, g->iy = sy > 0 ? (double)g->ny / sy : 0;
    memset(g->head, 0xFF, sizeof(int32_t) * (size_t)(g->nx * g->ny));
    g->n_blk = 0;
    g->wide.n = 0;
    return true;
}

static bool grid_suppresses(const grid *g, const box_list *all, float y0, float x0, float y1,
                            float x1, float ar, float iou) {
    int64_t c[4];
    if (!grid_span(g, y0, x0, y1, x1, c)) return list_suppresses(all, y0, x0, y1, x1, ar, iou);
    for (int64_t cy = c[2]; cy <= c[3]; cy++)
        for (int64_t cx = c[0]; cx <= c[1]; cx++)
            for (int32_t e = g->head[cy * g->nx + cx]; e >= 0; e = g->blk[e].next) {
                const grid_block *b = &g->blk[e];
                if (suppressed(y0, x0, y1, x1, ar, b->y0, b->x0, b->y1, b->x1, b->ar, NMS_BLOCK,
                               iou))
                    return true;
            }
    return list_suppresses(&g->wide, y0, x0, y1, x1, ar, iou);
}

static void grid_insert(grid *g, float y0, float x0, float y1, float x1, float ar) {
    int64_t c[4];
    size_t fresh = 0; /* blocks to start: the box's cells without one being filled */
    bool placed = grid_span(g, y0, x0, y1, x1, c);
    for (int64_t cy = c[2]; placed && cy <= c[3]; cy++)
        for (int64_t cx = c[0]; cx <= c[1]; cx++) {
            int32_t h = g->head[cy * g->nx + cx];
            fresh += h < 0 || g->blk[h].n == NMS_BLOCK;
        }
    if (!placed || g->n_blk + fresh > g->cap_blk) {
        list_add(&g->wide, y0, x0, y1, x1, ar);
        return;
    }
    for (int64_t cy = c[2]; cy <= c[3]; cy++)
        for (int64_t cx = c[0]; cx <= c[1]; cx++) {
            int32_t *h = &g->head[cy * g->nx + cx];
            if (*h < 0 || g->blk[*h].n == NMS_BLOCK) {
                grid_block *b = &g->blk[g->n_blk];
                memset(b, 0, sizeof *b);
                b->next = *h;
                *h = (int32_t)g->n_blk++;
            }
            grid_block *b = &g->blk[*h];
            int k = b->n++;
            b->y0[k] = y0, b->x0[k] = x0, b->y1[k] = y1, b->x1[k] = x1, b->ar[k] = ar;
        }
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
    size_t sz_sort = align_up(n * sizeof(uint32_t)) * 4 + align_up(CPU_RADIX_COUNTS * sizeof(uint32_t));
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
    /* the grid, where a class may have enough candidates: cells, blocks, the wide list */
    bool use_grid = maxc >= NMS_GRID_MIN;
    size_t max_cells = (size_t)maxc * NMS_GRID_CELLS;
    if (max_cells > NMS_GRID_MAX_CELLS) max_cells = NMS_GRID_MAX_CELLS;
    size_t cap_blk = (size_t)(maxc < max_out ? maxc : max_out) * NMS_GRID_BLOCKS;
    if (cap_blk > INT32_MAX) cap_blk = INT32_MAX;
    size_t sz_cells = use_grid ? align_up(max_cells * sizeof(int32_t)) : 0;
    size_t sz_blk = use_grid ? align_up(cap_blk * sizeof(grid_block)) : 0;
    size_t sz_wide = use_grid ? sz_sel_soa : 0;
    void *mem = NULL;
    TRY(kernel_scratch(c, sz_ncand + sz_box + sz_sort + sz_sel_soa + sz_sel + sz_cells + sz_blk +
                              sz_wide,
                       &mem));
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
    box_list all;
    list_place(&all, m, stride_p);
    m += sz_sel_soa;
    uint32_t *sel = (uint32_t *)m;
    m += sz_sel;
    grid g = {.head = (int32_t *)m, .blk = (grid_block *)(m + sz_cells), .cap_blk = cap_blk};
    m += sz_cells + sz_blk;
    if (use_grid) list_place(&g.wide, m, stride_p);

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
                    if (sc[i] > score_thr) key[nc] = cpu_f32_order_key(sc[i], true, false), idx[nc++] = (uint32_t)i;
            } else {
                for (size_t i = 0; i < n; i++) key[i] = cpu_f32_order_key(sc[i], true, false), idx[i] = (uint32_t)i;
                nc = n;
            }
            cpu_radix_sort(key, idx, tk, ti, nc, count);
            bool gridded = use_grid && nc >= NMS_GRID_MIN &&
                           grid_setup(&g, idx, nc, by0, bx0, by1, bx1, bar,
                                      nc * NMS_GRID_CELLS < max_cells ? nc * NMS_GRID_CELLS
                                                                      : max_cells);
            size_t np = 0; /* selections of this class */
            all.n = 0;     /* those with positive area */
            for (size_t k = 0; k < nc && np < (size_t)max_out; k++) {
                uint32_t i = idx[k];
                float y0 = by0[i], x0 = bx0[i], y1 = by1[i], x1 = bx1[i], ar = bar[i];
                if (ar > 0) {
                    if (gridded ? grid_suppresses(&g, &all, y0, x0, y1, x1, ar, iou)
                                : list_suppresses(&all, y0, x0, y1, x1, ar, iou))
                        continue;
                    list_add(&all, y0, x0, y1, x1, ar);
                    if (gridded) grid_insert(&g, y0, x0, y1, x1, ar);
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
