/* Axis permutations (geometry/perm.h). */
#include "geometry/perm.h"

onyx_status geom_transpose_perm(bool present, const int64_t *given, size_t n, int rank,
                                int64_t *perm, geom_msg *msg) {
    if (rank < 0 || rank > GEOM_MAX_RANK)
        return geom_fail(msg, ONYX_ERR_SHAPE, "rank %d, expected 0..%d", rank, GEOM_MAX_RANK);
    if (!present) {
        for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return ONYX_OK;
    }
    if (n != (size_t)rank)
        return geom_fail(msg, ONYX_ERR_SHAPE, "perm has %zu values, expected the input rank %d",
                         n, rank);
    bool seen[GEOM_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        if (given[i] < 0 || given[i] >= rank || seen[given[i]])
            return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "perm[%d] = %lld makes perm no "
                             "permutation of 0..%d", i, (long long)given[i], rank - 1);
        seen[given[i]] = true;
    }
    for (int i = 0; i < rank; i++) perm[i] = given[i];
    return ONYX_OK;
}

bool geom_perm_moves_channels(const int64_t *perm, int rank, bool to_last) {
    if (rank < 3 || perm[0] != 0) return false;
    for (int i = 1; i < rank; i++)
        if (perm[i] != (to_last ? (i == rank - 1 ? 1 : i + 1) : (i == 1 ? rank - 1 : i - 1)))
            return false;
    return true;
}
