/* Numpy matmul geometry (geometry/matmul.h). */
#include "geometry/matmul.h"

#include "geometry/broadcast.h"

/* The checks both entry points make: operands of rank >= 1 and inner dims that agree (an unknown
 * one agrees with anything). */
static onyx_status check_operands(int ra, const int64_t *a, int rb, const int64_t *b,
                                  geom_msg *msg) {
    if (ra < 1 || rb < 1)
        return geom_fail(msg, ONYX_ERR_SHAPE, "operand %c is a scalar, expected rank >= 1",
                         ra < 1 ? 'A' : 'B');
    if (ra > GEOM_MAX_RANK || rb > GEOM_MAX_RANK)
        return geom_fail(msg, ONYX_ERR_SHAPE, "operands of ranks %d and %d, expected at most %d",
                         ra, rb, GEOM_MAX_RANK);
    int64_t ka = a[ra - 1], kb = b[rb == 1 ? 0 : rb - 2];
    if (ka >= 0 && kb >= 0 && ka != kb) {
        char sa[160], sb[160];
        return geom_fail(msg, ONYX_ERR_SHAPE, "A %s and B %s: inner dims %lld and %lld differ",
                         geom_shape_str(ra, a, sa, sizeof sa), geom_shape_str(rb, b, sb, sizeof sb),
                         (long long)ka, (long long)kb);
    }
    return ONYX_OK;
}

/* Batch dim i of nb (right-aligned) of an operand with `batch` batch dims: 1 where it has none. */
static int64_t batch_dim(const int64_t *dims, int batch, int nb, int i) {
    int j = i - (nb - batch);
    return j >= 0 ? dims[j] : 1;
}

onyx_status geom_matmul_dims(int ra, const int64_t *a, int rb, const int64_t *b, int *rank,
                             int64_t *dims, geom_msg *msg) {
    onyx_status st = check_operands(ra, a, rb, b, msg);
    if (st != ONYX_OK) return st;
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0, nb = ba > bb ? ba : bb;
    int64_t out[GEOM_MAX_RANK];
    for (int i = 0; i < nb; i++) {
        int64_t da = batch_dim(a, ba, nb, i), db = batch_dim(b, bb, nb, i);
        if (!geom_broadcast_dim(da, db, &out[i]))
            return geom_fail(msg, ONYX_ERR_SHAPE, "batch dim %d: %lld and %lld do not broadcast",
                             i, (long long)da, (long long)db);
    }
    int r = nb;
    if (ra > 1) out[r++] = a[ra - 2];
    if (rb > 1) out[r++] = b[rb - 1];
    for (int i = 0; i < r; i++) dims[i] = out[i];
    *rank = r;
    return ONYX_OK;
}

onyx_status geom_matmul_plan(int ra, const int64_t *a, int rb, const int64_t *b, geom_matmul *s,
                             geom_msg *msg) {
    onyx_status st = check_operands(ra, a, rb, b, msg);
    if (st != ONYX_OK) return st;
    s->m = ra > 1 ? a[ra - 2] : 1;
    s->k = a[ra - 1];
    s->n = rb > 1 ? b[rb - 1] : 1;
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    s->nb = ba > bb ? ba : bb;
    int64_t sa = s->m * s->k, sb = s->k * s->n;
    s->nbatch = s->a_batches = s->b_batches = 1;
    for (int i = s->nb - 1; i >= 0; i--) {
        int64_t da = batch_dim(a, ba, s->nb, i), db = batch_dim(b, bb, s->nb, i);
        if (!geom_broadcast_dim(da, db, &s->bdim[i]))
            return geom_fail(msg, ONYX_ERR_SHAPE, "batch dim %d: %lld and %lld do not broadcast",
                             i, (long long)da, (long long)db);
        s->astr[i] = da == 1 ? 0 : sa;
        s->bstr[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        s->a_batches *= da;
        s->b_batches *= db;
        s->nbatch *= s->bdim[i];
    }
    return ONYX_OK;
}
