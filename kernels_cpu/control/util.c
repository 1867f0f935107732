/* Helpers the control-flow, sequence and optional CPU kernels share (see control_util.h). */
#include "kernels_cpu/control/util.h"

#include <string.h>

const char *cpu_ctl_kind_name(const onyx_value *v) {
    if (!v) return "none";
    switch (v->kind) {
    case ONYX_VALUE_TENSOR: return "tensor";
    case ONYX_VALUE_SEQUENCE: return "sequence";
    case ONYX_VALUE_OPTIONAL: return "optional";
    case ONYX_VALUE_MAP: return "map";
    default: return "none";
    }
}

onyx_status cpu_ctl_copy_blocks(tensor *dst, int64_t doff, int64_t dstride, const tensor *src,
                                int64_t soff, int64_t sstride, int64_t outer, int64_t inner) {
    if (dst->dtype != src->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "copy from %s into %s", onyx_dtype_name(src->dtype),
                          onyx_dtype_name(dst->dtype));
    if (outer <= 0 || inner <= 0) return ONYX_OK;
    onyx_dtype dt = dst->dtype;
    if (dt == ONYX_STRING) {
        char *const *s = src->data;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < inner; k++) {
                const char *str = s[soff + o * sstride + k];
                TRY(tensor_set_string(dst, doff + o * dstride + k, str ? str : "",
                                      str ? strlen(str) : 0));
            }
        return ONYX_OK;
    }
    unsigned bits = (unsigned)dtype_packed_bits(dt);
    if (bits) {
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < inner; k++)
                dtype_packed_set(dst->data, doff + o * dstride + k, bits,
                                 dtype_packed_get(src->data, soff + o * sstride + k, bits));
        return ONYX_OK;
    }
    size_t es = dtype_size(dt);
    const uint8_t *s = src->data;
    uint8_t *d = dst->data;
    if (dstride == inner && sstride == inner) {
        memcpy(d + (size_t)doff * es, s + (size_t)soff * es, (size_t)(outer * inner) * es);
        return ONYX_OK;
    }
    for (int64_t o = 0; o < outer; o++)
        memcpy(d + (size_t)(doff + o * dstride) * es, s + (size_t)(soff + o * sstride) * es,
               (size_t)inner * es);
    return ONYX_OK;
}

onyx_status cpu_ctl_read_index(const onyx_value *v, const char *what, int64_t *out) {
    if (!v || v->kind != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_SHAPE, "%s must be a tensor, got a %s", what,
                          cpu_ctl_kind_name(v));
    if (v->t.dtype != ONYX_INT64 && v->t.dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "%s has type %s, expected int32 or int64", what,
                          onyx_dtype_name(v->t.dtype));
    if (v->t.numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "%s has %lld elements, expected 1", what,
                          (long long)v->t.numel);
    *out = v->t.dtype == ONYX_INT64 ? *(const int64_t *)v->t.data : *(const int32_t *)v->t.data;
    return ONYX_OK;
}

onyx_status cpu_ctl_read_bool(const onyx_value *v, const char *what, bool *out) {
    if (!v || v->kind != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_SHAPE, "%s must be a tensor, got a %s", what,
                          cpu_ctl_kind_name(v));
    if (v->t.dtype != ONYX_BOOL)
        return onyx_error(ONYX_ERR_SHAPE, "%s has type %s, expected bool", what,
                          onyx_dtype_name(v->t.dtype));
    if (v->t.numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "%s has %lld elements, expected 1", what,
                          (long long)v->t.numel);
    *out = *(const uint8_t *)v->t.data != 0;
    return ONYX_OK;
}

int64_t cpu_ctl_outer(const tensor *t, int axis) {
    int64_t n = 1;
    for (int k = 0; k < axis; k++) n *= t->dims[k];
    return n;
}

int64_t cpu_ctl_inner(const tensor *t, int axis) {
    int64_t n = 1;
    for (int k = axis + 1; k < t->rank; k++) n *= t->dims[k];
    return n;
}

onyx_status cpu_ctl_slice(onyx_value *dst, const tensor *src, int axis, int64_t index) {
    int64_t dims[ONYX_MAX_RANK];
    int r = 0;
    for (int k = 0; k < src->rank; k++)
        if (k != axis) dims[r++] = src->dims[k];
    int64_t outer = cpu_ctl_outer(src, axis), inner = cpu_ctl_inner(src, axis);
    int bits = dtype_packed_bits(src->dtype);
    if (outer == 1 && (index * inner % 8) * bits % 8 == 0) { /* a view: starts on a byte */
        tensor view;
        memset(&view, 0, sizeof view);
        TRY(tensor_set_shape(&view, src->dtype, r, dims));
        size_t off;
        if (src->dtype == ONYX_STRING) off = (size_t)(index * inner) * sizeof(char *);
        else if (!dtype_storage_size(src->dtype, index * inner, &off))
            return onyx_error(ONYX_ERR_NO_MEMORY, "slice offset overflows");
        view.data = (uint8_t *)src->data + off;
        view.owns = false;
        value_borrow_tensor(dst, &view);
        return ONYX_OK;
    }
    if (!(dst->kind == ONYX_VALUE_TENSOR && dst->t.owns && dst->t.dtype == src->dtype &&
          shape_equal(dst->t.rank, dst->t.dims, r, dims)))
        TRY(value_alloc_tensor(dst, src->dtype, r, dims));
    return cpu_ctl_copy_blocks(&dst->t, 0, inner, src, index * inner, src->dims[axis] * inner,
                               outer, inner);
}
