/* DepthToSpace and SpaceToDepth as a view and a transpose (geometry/depth_space.h). */
#include "geometry/depth_space.h"

#include <string.h>

/* d * b, or -1 when d is unknown; false on overflow. */
static bool mul_dim(int64_t d, int64_t b, int64_t *out) {
    if (d < 0) {
        *out = -1;
        return true;
    }
    if (d > INT64_MAX / b) return false;
    *out = d * b;
    return true;
}

onyx_status geom_depth_space(bool to_space, bool crd, int64_t b, const int64_t *in,
                             int64_t *view, int64_t *perm, int64_t *out, geom_msg *msg) {
    if (b <= 0 || b > GEOM_BLOCKSIZE_MAX)
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "blocksize %lld is not in 1..%lld",
                         (long long)b, (long long)GEOM_BLOCKSIZE_MAX);
    int64_t N = in[0], C = in[1], H = in[2], W = in[3], bb = b * b, o[4];
    if (to_space) {
        if (C >= 0 && C % bb != 0)
            return geom_fail(msg, ONYX_ERR_SHAPE, "channels %lld are not a multiple of "
                             "blocksize^2 = %lld", (long long)C, (long long)bb);
        int64_t c = C < 0 ? -1 : C / bb;
        o[0] = N;
        o[1] = c;
        if (!mul_dim(H, b, &o[2]) || !mul_dim(W, b, &o[3]))
            return geom_fail(msg, ONYX_ERR_SHAPE, "output size overflows");
        /* the view is [N, by, bx, c, H, W] (DCR) or [N, c, by, bx, H, W] (CRD) */
        static const int64_t dcr[6] = {0, 3, 4, 1, 5, 2}, crdp[6] = {0, 1, 4, 2, 5, 3};
        int64_t vd[6] = {N, b, b, c, H, W}, vc[6] = {N, c, b, b, H, W};
        memcpy(view, crd ? vc : vd, sizeof vd);
        memcpy(perm, crd ? crdp : dcr, sizeof dcr);
        memcpy(out, o, sizeof o);
        return ONYX_OK;
    }
    if ((H >= 0 && H % b != 0) || (W >= 0 && W % b != 0))
        return geom_fail(msg, ONYX_ERR_SHAPE, "height %lld and width %lld must be multiples of "
                         "blocksize %lld", (long long)H, (long long)W, (long long)b);
    int64_t h = H < 0 ? -1 : H / b, w = W < 0 ? -1 : W / b;
    o[0] = N;
    if (!mul_dim(C, bb, &o[1])) return geom_fail(msg, ONYX_ERR_SHAPE, "output size overflows");
    o[2] = h;
    o[3] = w;
    /* the view is [N, C, h, by, w, bx]; DCR gathers channels as (by, bx, C), CRD as (C, by, bx) */
    static const int64_t s2d_dcr[6] = {0, 3, 5, 1, 2, 4}, s2d_crd[6] = {0, 1, 3, 5, 2, 4};
    int64_t v[6] = {N, C, h, b, w, b};
    memcpy(view, v, sizeof v);
    memcpy(perm, crd ? s2d_crd : s2d_dcr, sizeof s2d_dcr);
    memcpy(out, o, sizeof o);
    return ONYX_OK;
}

bool geom_blocks_known(const geom_blocks *b) {
    for (int k = 0; k < 4; k++)
        if (b->in[k] < 0) return false;
    return true;
}
