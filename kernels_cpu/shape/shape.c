/* CPU kernels of the ops that only reinterpret or describe a tensor (Shape, Size, the
 * reshape-like ops, Identity) or create one from attributes and scalars (Constant,
 * ConstantOfShape, Range). */
#include <math.h>
#include <string.h>

#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/move.h"

onyx_status cpu_shape_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    int64_t *y = kernel_output(c, 0)->data;
    int s, e;
    ops_shape_range(c->node, x->rank, &s, &e);
    for (int k = s; k < e; k++) y[k - s] = x->dims[k];
    return ONYX_OK;
}

onyx_status cpu_size_run(const kernel_call *c) {
    *(int64_t *)kernel_output(c, 0)->data = kernel_input(c, 0)->numel;
    return ONYX_OK;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the same bytes under another shape; nothing to do when
 * the planner let the output share the input's buffer. */
onyx_status cpu_reshape_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (y->data != x->data) return tensor_copy_data(y, x); /* checks the counts itself */
    if (y->numel != x->numel || y->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "cannot view %lld %s elements as %lld %s elements",
                          (long long)x->numel, onyx_dtype_name(x->dtype), (long long)y->numel,
                          onyx_dtype_name(y->dtype));
    return ONYX_OK;
}

/* Tensors into a prepared output are copied (or aliased); sequences and optionals, which the
 * executor leaves for the kernel to build, are deep-copied whole. */
onyx_status cpu_identity_run(const kernel_call *c) {
    if (c->in[0]->kind != ONYX_VALUE_TENSOR || c->out[0]->kind != ONYX_VALUE_TENSOR)
        return value_copy(c->out[0], c->in[0]);
    return cpu_reshape_run(c);
}

onyx_status cpu_constant_run(const kernel_call *c) {
    const graph_node *n = c->node;
    tensor *y = kernel_output(c, 0);
    const graph_attr *a;
    if ((a = node_attr(n, "value")) || (a = node_attr(n, "sparse_value")))
        return tensor_copy_data(y, a->t);
    if ((a = node_attr(n, "value_float"))) {
        memcpy(y->data, &a->f, sizeof a->f);
    } else if ((a = node_attr(n, "value_floats"))) {
        if (a->n) memcpy(y->data, a->floats, a->n * sizeof *a->floats);
    } else if ((a = node_attr(n, "value_int"))) {
        memcpy(y->data, &a->i, sizeof a->i);
    } else if ((a = node_attr(n, "value_ints"))) {
        if (a->n) memcpy(y->data, a->ints, a->n * sizeof *a->ints);
    } else if ((a = node_attr(n, "value_string"))) {
        return tensor_set_string(y, 0, a->s, a->s_len);
    } else if ((a = node_attr(n, "value_strings"))) {
        for (size_t i = 0; i < a->n; i++)
            TRY(tensor_set_string(y, (int64_t)i, a->strings[i], strlen(a->strings[i])));
    } else {
        return onyx_error(ONYX_ERR_INVALID_MODEL, "no value attribute");
    }
    return ONYX_OK;
}

onyx_status cpu_constant_of_shape_run(const kernel_call *c) {
    tensor *y = kernel_output(c, 0);
    const tensor *v = attr_tensor(c->node, "value");
    if (!v) {
        memset(y->data, 0, y->nbytes);
        return ONYX_OK;
    }
    unsigned bits = (unsigned)dtype_packed_bits(y->dtype);
    if (bits) {
        /* sub-byte: 8 elements fill `bits` whole bytes; that pattern is repeated */
        uint8_t pattern[8] = {0};
        unsigned e = dtype_packed_get(v->data, 0, bits);
        for (int k = 0; k < 8; k++) dtype_packed_set(pattern, k, bits, e);
        uint8_t *d = y->data;
        for (size_t b = 0; b < y->nbytes; b++) d[b] = pattern[b % bits];
        return ONYX_OK;
    }
    cpu_fill(y->data, v->data, dtype_size(y->dtype), y->numel);
    return ONYX_OK;
}

onyx_status cpu_range_run(const kernel_call *c) {
    const tensor *s = kernel_input(c, 0), *d = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    int64_t n = y->numel;
    if (dtype_is_int(s->dtype)) {
        /* start + i*delta stays in [start, limit), but the products are formed unsigned */
        uint64_t s0 = (uint64_t)tensor_get_i64(s, 0), dl = (uint64_t)tensor_get_i64(d, 0);
        switch (y->dtype) {
#define CASE(D, T)                                                                                 \
    case D:                                                                                        \
        for (int64_t i = 0; i < n; i++) ((T *)y->data)[i] = (T)(int64_t)(s0 + (uint64_t)i * dl);   \
        break;
            CPU_FOR_SINTS(CASE)
#undef CASE
        default: return onyx_error(ONYX_ERR_UNSUPPORTED, "Range of %s", onyx_dtype_name(y->dtype));
        }
        return ONYX_OK;
    }
    double s0 = tensor_get_f64(s, 0), dl = tensor_get_f64(d, 0);
    switch (y->dtype) {
#define CASE(D, T, N)                                                                              \
    case D:                                                                                        \
        for (int64_t i = 0; i < n; i++) ((T *)y->data)[i] = cpu_##N##_st(s0 + (double)i * dl);     \
        break;
        CASE(ONYX_FLOAT, float, f32)
        CASE(ONYX_DOUBLE, double, f64)
        CASE(ONYX_FLOAT16, uint16_t, f16)
        CASE(ONYX_BFLOAT16, uint16_t, bf16)
#undef CASE
    default: return onyx_error(ONYX_ERR_UNSUPPORTED, "Range of %s", onyx_dtype_name(y->dtype));
    }
    return ONYX_OK;
}
