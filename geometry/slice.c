/* Slice's bounds along one axis and over a whole tensor (geometry/slice.h). */
#include "geometry/slice.h"

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

void geom_slice_axis(int64_t start, int64_t end, int64_t step, int64_t dim, int64_t *first,
                     int64_t *len) {
    int64_t s = start, e = end, n = 0;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
        s = clamp64(s, 0, dim);
        e = clamp64(e, 0, dim);
        n = e > s ? (e - s - 1) / step + 1 : 0;
    } else if (dim > 0) { /* an empty axis has no [0, dim - 1] to clamp into */
        s = clamp64(s, 0, dim - 1);
        e = clamp64(e, -1, dim - 1);
        /* unsigned: -step overflows for INT64_MIN */
        n = s > e ? (int64_t)((uint64_t)(s - e - 1) / (0 - (uint64_t)step)) + 1 : 0;
    }
    *first = n > 0 ? s : 0;
    *len = n;
}

bool geom_slice_known(const geom_slice *s) {
    for (int k = 0; k < s->rank; k++)
        if (s->in[k] < 0) return false;
    return true;
}

bool geom_slice_contiguous(const geom_slice *s, int64_t *offset) {
    if (!geom_slice_known(s)) return false;
    int64_t stride = 1, at = 0;
    bool cut = false; /* an inner axis is not kept whole: every outer one must keep one element */
    for (int k = s->rank - 1; k >= 0; k--) {
        int64_t len = s->len[k], dim = s->in[k];
        if (len <= 0 || (len > 1 && (s->step[k] != 1 || cut))) return false;
        at += s->start[k] * stride; /* start < dim: within the input's element count */
        if (len != dim) cut = true;
        if (stride > INT64_MAX / dim) return false;
        stride *= dim;
    }
    *offset = at;
    return true;
}
