/* Axis normalisation (geometry/axes.h). */
#include "geometry/axes.h"

#include <string.h>

static bool in_range(int64_t axis, int rank) {
    return axis >= -(int64_t)rank && axis < (int64_t)rank;
}

onyx_status geom_axis(int64_t axis, int rank, const char *what, int *out, geom_msg *msg) {
    if (!in_range(axis, rank))
        return geom_fail(msg, ONYX_ERR_SHAPE, "%s %lld is out of range for rank %d (expected "
                         "%d..%d)", what, (long long)axis, rank, -rank, rank - 1);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return ONYX_OK;
}

onyx_status geom_axes(const int64_t *axes, size_t n, int rank, const char *what, int *out,
                      geom_msg *msg) {
    bool seen[GEOM_MAX_RANK] = {false};
    if (rank < 0 || rank > GEOM_MAX_RANK)
        return geom_fail(msg, ONYX_ERR_SHAPE, "rank %d, expected 0..%d", rank, GEOM_MAX_RANK);
    if (n > (size_t)rank)
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "%s has %zu values, more than the rank %d",
                         what, n, rank);
    for (size_t i = 0; i < n; i++) {
        int64_t a = axes[i];
        if (!in_range(a, rank))
            return geom_fail(msg, ONYX_ERR_SHAPE, "%s[%zu] = %lld is out of range for rank %d "
                             "(expected %d..%d)", what, i, (long long)a, rank, -rank, rank - 1);
        int k = (int)(a < 0 ? a + rank : a);
        if (seen[k]) return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "%s repeats axis %d", what, k);
        seen[k] = true;
        out[i] = k;
    }
    return ONYX_OK;
}

onyx_status geom_reduce_axes(const int64_t *axes, size_t count, bool noop_when_empty, int rank,
                             bool *mask, geom_msg *msg) {
    for (size_t k = 0; k < count; k++)
        if (!in_range(axes[k], rank))
            return geom_fail(msg, ONYX_ERR_SHAPE, "axis %lld is out of range for rank %d "
                             "(expected %d..%d)", (long long)axes[k], rank, -rank, rank - 1);
    for (int i = 0; i < rank; i++) mask[i] = count == 0 && !noop_when_empty;
    for (size_t k = 0; k < count; k++) mask[axes[k] < 0 ? axes[k] + rank : axes[k]] = true;
    return ONYX_OK;
}

void geom_axis_set_one(int rank, int axis, geom_axis_set *out) {
    memset(out, 0, sizeof *out);
    out->rank = rank;
    out->axis = axis;
    out->mask[axis] = true;
}

void geom_axis_set_mask(int rank, const bool *mask, geom_axis_set *out) {
    memset(out, 0, sizeof *out);
    out->rank = rank;
    out->axis = -1;
    for (int i = 0; i < rank; i++) out->mask[i] = mask[i];
}
