/* Strided views (core/strided_view.h): a dense tensor's view, and the Transposes, Reshapes and
 * single-index Gathers applied to a view without copying. */
#include "core/strided_view.h"

#include <string.h>

void view_dense(strided_view *v, int rank, const int64_t *dims) {
    int64_t s = 1;
    v->rank = rank;
    v->offset = 0;
    for (int i = rank - 1; i >= 0; i--) {
        v->dims[i] = dims[i];
        v->strides[i] = s;
        s *= dims[i];
    }
}

void view_transpose(const strided_view *v, const int64_t *perm, strided_view *out) {
    strided_view r = {.rank = v->rank, .offset = v->offset};
    for (int i = 0; i < v->rank; i++) {
        r.dims[i] = v->dims[perm[i]];
        r.strides[i] = v->strides[perm[i]];
    }
    *out = r;
}

void view_untranspose(const strided_view *v, const int64_t *perm, strided_view *out) {
    strided_view r = {.rank = v->rank, .offset = v->offset};
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
    strided_view r = {.rank = rank, .offset = v->offset};
    int64_t n_old = 1, n_new = 1;
    for (int i = 0; i < v->rank; i++) n_old *= v->dims[i];
    for (int i = 0; i < rank; i++) {
        r.dims[i] = dims[i];
        n_new *= dims[i];
    }
    if (n_old != n_new) return false;
    if (n_old == 0) { /* nothing is read: any strides do */
        int64_t offset = v->offset;
        view_dense(out, rank, dims);
        out->offset = offset;
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

/* The boundaries of a shape's dims as running products, dims of 1 left out; false for a dim of
 * 0 or more dims than fit. */
static bool boundaries(int rank, const int64_t *dims, int64_t *b, int *n) {
    int64_t at = 1;
    *n = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1) return false;
        if (dims[i] == 1) continue;
        if (*n == ONYX_MAX_RANK) return false;
        b[(*n)++] = at *= dims[i];
    }
    return true;
}

bool view_regroup(const strided_view *v, int rank_a, const int64_t *a, const int64_t *perm,
                  int rank_c, const int64_t *c, strided_view *out) {
    /* the common refinement of a transposed and c: the union of their boundaries, each factor a
     * run of one dim of a transposed (its owner) */
    int64_t at[ONYX_MAX_RANK], ba[ONYX_MAX_RANK], bc[ONYX_MAX_RANK], f[ONYX_MAX_RANK];
    int owner[ONYX_MAX_RANK], na, nc, nf = 0;
    for (int i = 0; i < rank_a; i++) at[i] = a[perm[i]];
    if (!boundaries(rank_a, at, ba, &na) || !boundaries(rank_c, c, bc, &nc) || na == 0 ||
        ba[na - 1] != (nc ? bc[nc - 1] : 1))
        return false;
    int64_t prev = 1;
    for (int i = 0, k = 0; i < na;) {
        int64_t next = k < nc && bc[k] < ba[i] ? bc[k++] : ba[i];
        if (next % prev || nf == ONYX_MAX_RANK) return false;
        f[nf] = next / prev;
        owner[nf++] = i;
        if (next == ba[i]) {
            if (k < nc && bc[k] == next) k++;
            i++;
        }
        prev = next;
    }
    /* a's dims, each split into the factors of its place in the transposed order (skipping
     * dims of 1), in a's order; then the factors' permutation */
    int place[ONYX_MAX_RANK], n_big = 0;
    for (int i = 0; i < rank_a; i++)
        if (at[i] != 1) place[i] = n_big++; /* transposed position i -> its index among dims > 1 */
    int64_t fine[ONYX_MAX_RANK], fine_perm[ONYX_MAX_RANK];
    int n_fine = 0;
    for (int d = 0; d < rank_a; d++) {
        int pos = -1;
        for (int i = 0; i < rank_a; i++)
            if (perm[i] == d) pos = i;
        if (pos < 0 || at[pos] == 1) continue;
        for (int j = 0; j < nf; j++)
            if (owner[j] == place[pos]) {
                fine_perm[j] = n_fine;
                fine[n_fine++] = f[j];
            }
    }
    strided_view r;
    if (!view_reshape(v, n_fine, fine, &r)) return false;
    view_transpose(&r, fine_perm, &r);
    return view_reshape(&r, rank_c, c, out);
}

void view_select(const strided_view *v, int axis, int64_t index, bool keep, strided_view *out) {
    strided_view r = *v;
    r.offset += index * v->strides[axis];
    if (keep) {
        r.dims[axis] = 1;
    } else {
        for (int i = axis; i + 1 < v->rank; i++) {
            r.dims[i] = v->dims[i + 1];
            r.strides[i] = v->strides[i + 1];
        }
        r.rank--;
    }
    *out = r;
}
