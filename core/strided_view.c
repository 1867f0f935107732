#include "core/strided_view.h"

#include <string.h>

void view_dense(strided_view *v, int rank, const int64_t *dims) {
    int64_t s = 1;
    v->rank = rank;
    for (int i = rank - 1; i >= 0; i--) {
        v->dims[i] = dims[i];
        v->strides[i] = s;
        s *= dims[i];
    }
}

void view_transpose(const strided_view *v, const int64_t *perm, strided_view *out) {
    strided_view r = {.rank = v->rank};
    for (int i = 0; i < v->rank; i++) {
        r.dims[i] = v->dims[perm[i]];
        r.strides[i] = v->strides[perm[i]];
    }
    *out = r;
}

void view_untranspose(const strided_view *v, const int64_t *perm, strided_view *out) {
    strided_view r = {.rank = v->rank};
    for (int i = 0; i < v->rank; i++) {
        r.dims[perm[i]] = v->dims[i];
        r.strides[perm[i]] = v->strides[i];
    }
    *out = r;
}

/* Walks both shapes from the innermost dim in chunks: a chunk of v is a run of dims each
 * contiguous with the next (unit dims join any run); the new dims must split every chunk
 * exactly, and inherit strides from the chunk's innermost stride. */
bool view_reshape(const strided_view *v, int rank, const int64_t *dims, strided_view *out) {
    strided_view r = {.rank = rank};
    int64_t n_old = 1, n_new = 1;
    for (int i = 0; i < v->rank; i++) n_old *= v->dims[i];
    for (int i = 0; i < rank; i++) {
        r.dims[i] = dims[i];
        n_new *= dims[i];
    }
    if (n_old != n_new) return false;
    if (n_old == 0) { /* nothing is read: any strides do */
        view_dense(out, rank, dims);
        return true;
    }
    int nd = rank - 1;
    int64_t base = v->rank > 0 ? v->strides[v->rank - 1] : 1, chunk = 1, placed = 1;
    for (int od = v->rank - 1; od >= 0; od--) {
        chunk *= v->dims[od];
        bool chunk_ends = od == 0 || (v->dims[od - 1] != 1 && v->strides[od - 1] != chunk * base);
        if (!chunk_ends) continue;
        while (nd >= 0 && (placed < chunk || r.dims[nd] == 1)) {
            r.strides[nd] = placed * base;
            placed *= r.dims[nd];
            nd--;
        }
        if (placed != chunk) return false;
        if (od > 0) {
            base = v->strides[od - 1];
            chunk = placed = 1;
        }
    }
    for (; nd >= 0; nd--) { /* leading unit dims */
        if (r.dims[nd] != 1) return false;
        r.strides[nd] = placed * base;
    }
    *out = r;
    return true;
}
