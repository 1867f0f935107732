/* CPU kernels of the small structural ops: Trilu (keep a triangle of each matrix), EyeLike,
 * OneHot and ReverseSequence. */
#include <inttypes.h>
#include <string.h>

#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"

onyx_status cpu_trilu_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *kt = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    bool upper = attr_int(c->node, "upper", 1) != 0;
    if (x->rank < 2) return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected >= 2", x->rank);
    int64_t k = kt && kt->numel > 0 ? tensor_get_i64(kt, 0) : 0;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    if (y->numel == 0) return ONYX_OK;
    /* past these bounds every row is all kept or all cleared: clamping avoids i + k overflow */
    int64_t bound = rows + cols + 1;
    k = k < -bound ? -bound : k > bound ? bound : k;
    size_t es = cpu_move_esize(x);
    cpu_move_begin(y);
    memcpy(y->data, x->data, (size_t)y->numel * es);
    /* zero bytes clear numbers; strings become NULL, which cpu_move_end turns into "" */
    int64_t mats = y->numel / (rows * cols);
    for (int64_t m = 0; m < mats; m++) {
        char *base = (char *)y->data + (size_t)(m * rows * cols) * es;
        for (int64_t i = 0; i < rows; i++) {
            char *row = base + (size_t)(i * cols) * es;
            int64_t edge = i + k; /* upper keeps j >= i + k, lower keeps j <= i + k */
            if (upper) {
                int64_t n = edge < 0 ? 0 : edge > cols ? cols : edge;
                memset(row, 0, (size_t)n * es);
            } else {
                int64_t from = edge + 1 < 0 ? 0 : edge + 1 > cols ? cols : edge + 1;
                memset(row + (size_t)from * es, 0, (size_t)(cols - from) * es);
            }
        }
    }
    return cpu_move_end(y);
}

onyx_status cpu_eyelike_run(const kernel_call *c) {
    tensor *y = kernel_output(c, 0);
    int64_t k = attr_int(c->node, "k", 0), rows = y->dims[0], cols = y->dims[1];
    size_t es = cpu_move_esize(y);
    unsigned char one[16];
    TRY(cpu_scalar_from_double(y->dtype, 1.0, one));
    memset(y->data, 0, y->nbytes);
    if (k >= cols || k <= -rows) return ONYX_OK; /* no diagonal element: also keeps i + k exact */
    for (int64_t i = 0; i < rows; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < cols) memcpy((char *)y->data + (size_t)(i * cols + j) * es, one, es);
    }
    return ONYX_OK;
}

onyx_status cpu_onehot_run(const kernel_call *c) {
    const tensor *idx = kernel_input(c, 0), *vals = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    if (vals->numel != 2 || vals->dtype != y->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "values has %" PRId64 " %s elements, expected 2 %s",
                          vals->numel, onyx_dtype_name(vals->dtype), onyx_dtype_name(y->dtype));
    int r = y->rank, axis;
    TRY(ops_axis(attr_int(c->node, "axis", -1), r, "axis", &axis));
    int64_t depth = y->dims[axis], inner = 1;
    for (int k = axis + 1; k < r; k++) inner *= y->dims[k];
    size_t es = cpu_move_esize(y);
    if (!es)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "OneHot of %s values", onyx_dtype_name(y->dtype));
    const char *off = vals->data, *on = off + es;
    cpu_move_begin(y);
    cpu_fill(y->data, off, es, y->numel);
    for (int64_t e = 0; e < idx->numel; e++) {
        int64_t v = tensor_get_i64(idx, e);
        if (v < 0) v += depth;
        if (v < 0 || v >= depth) continue; /* out of range: the row stays all off */
        int64_t o = e / inner, in = e % inner;
        memcpy((char *)y->data + (size_t)((o * depth + v) * inner + in) * es, on, es);
    }
    return cpu_move_end(y);
}

onyx_status cpu_reverse_sequence_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *lens = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int64_t ta = attr_int(c->node, "time_axis", 0), ba = attr_int(c->node, "batch_axis", 1);
    if (x->rank < 2 || !((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        return onyx_error(ONYX_ERR_SHAPE, "time_axis %lld and batch_axis %lld must be 0 and 1 of "
                          "an input of rank >= 2 (got rank %d)", (long long)ta, (long long)ba,
                          x->rank);
    int t_axis = (int)ta, b_axis = (int)ba;
    int64_t T = x->dims[t_axis], B = x->dims[b_axis], st[ONYX_MAX_RANK];
    if (lens->numel != B)
        return onyx_error(ONYX_ERR_SHAPE, "sequence_lens has %" PRId64 " values, expected %" PRId64,
                          lens->numel, B);
    cpu_strides(x->rank, x->dims, st);
    int64_t inner = x->rank > 2 ? st[1] : 1;
    size_t es = cpu_move_esize(x), bytes = (size_t)inner * es;
    for (int64_t b = 0; b < B; b++) {
        int64_t len = tensor_get_i64(lens, b);
        if (len < 0 || len > T)
            return onyx_error(
                ONYX_ERR_RUNTIME,
                "sequence_lens[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64 "]", b, len, T);
    }
    cpu_move_begin(y);
    for (int64_t b = 0; b < B; b++) {
        int64_t len = tensor_get_i64(lens, b);
        for (int64_t t = 0; t < T; t++) {
            int64_t from = t < len ? len - 1 - t : t;
            memcpy((char *)y->data + (size_t)(b * st[b_axis] + t * st[t_axis]) * es,
                   (const char *)x->data + (size_t)(b * st[b_axis] + from * st[t_axis]) * es,
                   bytes);
        }
    }
    return cpu_move_end(y);
}
