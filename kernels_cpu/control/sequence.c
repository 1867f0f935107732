/* Sequence kernels: building, editing and reading sequences of tensors, and converting between
 * a tensor and a sequence of its parts (SplitToSequence, ConcatFromSequence). */
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/control/util.h"
#include "kernels_cpu/cpu_kernels.h"

static onyx_status need_seq(const kernel_call *c, int i, const onyx_value **out) {
    const onyx_value *v = i < c->n_in ? c->in[i] : NULL;
    if (!v || v->kind != ONYX_VALUE_SEQUENCE)
        return onyx_error(ONYX_ERR_SHAPE, "input %d must be a sequence, got a %s", i,
                          cpu_ctl_kind_name(v));
    *out = v;
    return ONYX_OK;
}

/* A tensor element type for a sequence's element type record (shape unknown). */
static void elem_of(type_info *t, onyx_dtype dt) {
    type_init(t);
    type_set_tensor(t, dt, -1, NULL);
}

/* The dtype a sequence's elements have: its first item's, or its recorded element type. */
static onyx_dtype seq_dtype(const onyx_value *seq) {
    if (seq->seq.count > 0 && seq->seq.items[0]->kind == ONYX_VALUE_TENSOR)
        return seq->seq.items[0]->t.dtype;
    if (seq->elem_type && seq->elem_type->kind == ONYX_VALUE_TENSOR) return seq->elem_type->dtype;
    return ONYX_UNDEFINED;
}

/* Fails unless the elements of `seq` may be tensors (sequences hold one type). */
static onyx_status need_tensor_seq(const onyx_value *seq) {
    onyx_value_kind k = seq->seq.count > 0 ? seq->seq.items[0]->kind
                        : seq->elem_type     ? seq->elem_type->kind
                                             : ONYX_VALUE_NONE;
    if (k != ONYX_VALUE_TENSOR && k != ONYX_VALUE_NONE)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 is a sequence of %s values, expected tensors",
                          k == ONYX_VALUE_SEQUENCE   ? "sequence"
                          : k == ONYX_VALUE_OPTIONAL ? "optional"
                                                     : "non-tensor");
    return ONYX_OK;
}

/* Reads an optional position input and normalizes it against [-n, n + extra - 1]. */
static onyx_status position(const kernel_call *c, int i, size_t n, int extra, size_t dflt,
                            size_t *out) {
    if (i >= c->n_in || !c->in[i]) {
        *out = dflt;
        return ONYX_OK;
    }
    int64_t p;
    TRY(cpu_ctl_read_index(c->in[i], "position", &p));
    int64_t len = (int64_t)n;
    if (p < -len || p > len - 1 + extra)
        return onyx_error(ONYX_ERR_RUNTIME, "position %lld is out of range for a sequence of "
                          "%lld elements (expected %lld..%lld)", (long long)p, (long long)len,
                          (long long)-len, (long long)(len - 1 + extra));
    *out = (size_t)(p < 0 ? p + len : p);
    return ONYX_OK;
}

/* Inserts a copy of `v` before position pos (the count: at the end). */
static onyx_status insert_copy(onyx_value *seq, size_t pos, const onyx_value *v) {
    onyx_value *item = value_new();
    if (!item) return onyx_oom("sequence element");
    onyx_status st = value_copy(item, v);
    if (st == ONYX_OK) st = value_seq_insert(seq, pos, item);
    if (st != ONYX_OK) {
        value_clear(item);
        free(item);
    }
    return st;
}

static onyx_status push_copy(onyx_value *seq, const onyx_value *v) {
    return insert_copy(seq, seq->seq.count, v);
}

onyx_status cpu_sequence_empty_run(const kernel_call *c) {
    int64_t dt = attr_int(c->node, "dtype", ONYX_FLOAT);
    if (dt != (int)dt || !dtype_valid((int)dt))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute dtype = %lld is not a tensor type",
                          (long long)dt);
    type_info elem;
    elem_of(&elem, (onyx_dtype)dt);
    return value_make_sequence(c->out[0], &elem);
}

onyx_status cpu_sequence_construct_run(const kernel_call *c) {
    const tensor *first = kernel_input(c, 0);
    for (int i = 0; i < c->n_in; i++) {
        const tensor *t = kernel_input(c, i);
        if (!t)
            return onyx_error(ONYX_ERR_SHAPE, "input %d must be a tensor, got a %s", i,
                              cpu_ctl_kind_name(c->in[i]));
        if (t->dtype != first->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected %s like input 0", i,
                              onyx_dtype_name(t->dtype), onyx_dtype_name(first->dtype));
    }
    type_info elem;
    elem_of(&elem, first->dtype);
    TRY(value_make_sequence(c->out[0], &elem));
    for (int i = 0; i < c->n_in; i++) TRY(push_copy(c->out[0], c->in[i]));
    return ONYX_OK;
}

onyx_status cpu_sequence_insert_run(const kernel_call *c) {
    const onyx_value *seq;
    TRY(need_seq(c, 0, &seq));
    const tensor *t = kernel_input(c, 1);
    if (!t)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 must be a tensor, got a %s",
                          cpu_ctl_kind_name(c->n_in > 1 ? c->in[1] : NULL));
    TRY(need_tensor_seq(seq));
    onyx_dtype dt = seq_dtype(seq);
    if (dt != ONYX_UNDEFINED && dt != t->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "tensor has type %s, expected %s like the sequence",
                          onyx_dtype_name(t->dtype), onyx_dtype_name(dt));
    size_t n = seq->seq.count, pos;
    TRY(position(c, 2, n, 1, n, &pos));
    /* a Loop may grow a sequence without bound: the run's cap on sequence lengths applies */
    TRY(kernel_check_run(c, (int64_t)n + 1));
    /* the output shares the input's items: appending to it is O(1), not a copy of them all */
    onyx_value *out = c->out[0];
    TRY(value_share(out, seq));
    return insert_copy(out, pos, c->in[1]);
}

onyx_status cpu_sequence_erase_run(const kernel_call *c) {
    const onyx_value *seq;
    TRY(need_seq(c, 0, &seq));
    size_t n = seq->seq.count, pos;
    if (n == 0) return onyx_error(ONYX_ERR_RUNTIME, "cannot erase from an empty sequence");
    TRY(position(c, 1, n, 0, n - 1, &pos));
    onyx_value *out = c->out[0];
    type_info elem;
    elem_of(&elem, seq_dtype(seq));
    TRY(value_share(out, seq));
    if (!out->elem_type) { /* the element type stays known once the sequence is empty */
        if (!(out->elem_type = malloc(sizeof *out->elem_type))) return onyx_oom("element type");
        *out->elem_type = elem; /* a tensor type: nothing of it is on the heap */
    }
    return value_seq_erase(out, pos);
}

onyx_status cpu_sequence_at_run(const kernel_call *c) {
    const onyx_value *seq;
    TRY(need_seq(c, 0, &seq));
    size_t n = seq->seq.count, pos;
    if (c->n_in < 2 || !c->in[1]) return onyx_error(ONYX_ERR_INVALID_MODEL, "position is missing");
    TRY(position(c, 1, n, 0, 0, &pos));
    return value_copy(c->out[0], seq->seq.items[pos]);
}

onyx_status cpu_sequence_length_run(const kernel_call *c) {
    const onyx_value *seq;
    TRY(need_seq(c, 0, &seq));
    TRY(value_alloc_tensor(c->out[0], ONYX_INT64, 0, NULL));
    *(int64_t *)c->out[0]->t.data = (int64_t)seq->seq.count;
    return ONYX_OK;
}

/* Appends to `out` the part of x with `len` entries from `start` along `axis`; `squeeze` drops
 * the axis (len is then 1). An empty x may have a huge axis: each part first asks whether the
 * run may go on (deadline, termination, cap on sequence lengths). */
static onyx_status push_part(const kernel_call *c, onyx_value *out, const tensor *x, int axis,
                             int64_t start, int64_t len, bool squeeze) {
    TRY(kernel_check_run(c, (int64_t)out->seq.count + 1));
    int64_t dims[ONYX_MAX_RANK];
    int r = 0;
    for (int k = 0; k < x->rank; k++) {
        if (k != axis) dims[r++] = x->dims[k];
        else if (!squeeze) dims[r++] = len;
    }
    onyx_value *item = value_new();
    if (!item) return onyx_oom("sequence element");
    int64_t inner = cpu_ctl_inner(x, axis);
    onyx_status st = value_alloc_tensor(item, x->dtype, r, dims);
    if (st == ONYX_OK)
        st = cpu_ctl_copy_blocks(&item->t, 0, len * inner, x, start * inner, x->dims[axis] * inner,
                                 cpu_ctl_outer(x, axis), len * inner);
    if (st == ONYX_OK) st = value_seq_push(out, item);
    if (st != ONYX_OK) {
        value_clear(item);
        free(item);
    }
    return st;
}

onyx_status cpu_split_to_sequence_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    if (!x)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 must be a tensor, got a %s",
                          cpu_ctl_kind_name(c->in[0]));
    int64_t axis = attr_int(c->node, "axis", 0);
    if (axis < -(int64_t)x->rank || axis >= x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "axis %lld is out of range for rank %d",
                          (long long)axis, x->rank);
    int ax = (int)(axis < 0 ? axis + x->rank : axis);
    int64_t dim = x->dims[ax];
    bool keepdims = attr_int(c->node, "keepdims", 1) != 0;
    const tensor *split = c->n_in > 1 ? kernel_input(c, 1) : NULL;
    if (c->n_in > 1 && c->in[1] && !split)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (split) must be a tensor");
    if (split && split->dtype != ONYX_INT32 && split->dtype != ONYX_INT64)
        return onyx_error(ONYX_ERR_SHAPE, "split has type %s, expected int32 or int64",
                          onyx_dtype_name(split->dtype));
    if (split && split->rank > 1)
        return onyx_error(ONYX_ERR_SHAPE, "split has rank %d, expected 0 or 1", split->rank);
    type_info elem;
    elem_of(&elem, x->dtype);
    onyx_value *out = c->out[0];
    TRY(value_make_sequence(out, &elem));
    if (!split) {
        for (int64_t i = 0; i < dim; i++) TRY(push_part(c, out, x, ax, i, 1, !keepdims));
        return ONYX_OK;
    }
    if (split->rank == 0) {
        int64_t size = tensor_get_i64(split, 0);
        if (size <= 0)
            return onyx_error(ONYX_ERR_RUNTIME, "split is %lld, expected a positive size",
                              (long long)size);
        /* steps by the part's own length so that i never passes dim (no overflow near 2^63) */
        for (int64_t i = 0, len; i < dim; i += len) {
            len = dim - i < size ? dim - i : size;
            TRY(push_part(c, out, x, ax, i, len, false));
        }
        return ONYX_OK;
    }
    int64_t sum = 0;
    for (int64_t k = 0; k < split->numel; k++) {
        int64_t v = tensor_get_i64(split, k);
        if (v < 0 || v > dim - sum)
            return onyx_error(ONYX_ERR_RUNTIME, "split[%lld] = %lld: sizes must be >= 0 and sum "
                              "to %lld (the axis length)", (long long)k, (long long)v,
                              (long long)dim);
        sum += v;
    }
    if (sum != dim)
        return onyx_error(ONYX_ERR_RUNTIME, "split sizes sum to %lld, expected %lld (the axis "
                          "length)", (long long)sum, (long long)dim);
    int64_t start = 0;
    for (int64_t k = 0; k < split->numel; k++) {
        int64_t v = tensor_get_i64(split, k);
        TRY(push_part(c, out, x, ax, start, v, false));
        start += v;
    }
    return ONYX_OK;
}

onyx_status cpu_concat_from_sequence_run(const kernel_call *c) {
    const onyx_value *seq;
    TRY(need_seq(c, 0, &seq));
    size_t n = seq->seq.count;
    if (n == 0) return onyx_error(ONYX_ERR_RUNTIME, "cannot concatenate an empty sequence");
    bool new_axis = attr_int(c->node, "new_axis", 0) != 0;
    const tensor *first = NULL;
    for (size_t i = 0; i < n; i++) {
        const onyx_value *v = seq->seq.items[i];
        if (v->kind != ONYX_VALUE_TENSOR)
            return onyx_error(ONYX_ERR_SHAPE, "element %zu is a %s, expected a tensor", i,
                              cpu_ctl_kind_name(v));
        if (!first) first = &v->t;
    }
    int r = first->rank, out_rank = r + (new_axis ? 1 : 0);
    if (out_rank > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_SHAPE, "elements have rank %d, too high to stack", r);
    int64_t axis = attr_int(c->node, "axis", 0);
    if (axis < -(int64_t)out_rank || axis >= out_rank)
        return onyx_error(ONYX_ERR_SHAPE, "axis %lld is out of range for rank %d (expected "
                          "%d..%d)", (long long)axis, out_rank, -out_rank, out_rank - 1);
    int ax = (int)(axis < 0 ? axis + out_rank : axis);
    /* every element must match the first except along a concatenation axis */
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const tensor *t = &seq->seq.items[i]->t;
        bool same = t->dtype == first->dtype && t->rank == r;
        for (int k = 0; same && k < r; k++)
            same = t->dims[k] == first->dims[k] || (!new_axis && k == ax);
        if (!same) {
            char a[128], b[128];
            return onyx_error(ONYX_ERR_SHAPE, "element %zu is %s %s, which does not %s element 0 "
                              "(%s %s) along axis %d", i, onyx_dtype_name(t->dtype),
                              shape_str(t->rank, t->dims, a, sizeof a),
                              new_axis ? "stack with" : "concatenate with",
                              onyx_dtype_name(first->dtype),
                              shape_str(r, first->dims, b, sizeof b), ax);
        }
        int64_t len = new_axis ? 1 : t->dims[ax];
        /* zero-size elements can carry huge dims along the axis */
        if (len > INT64_MAX - total)
            return onyx_error(ONYX_ERR_SHAPE, "the elements' lengths along axis %d add up to more "
                              "than %lld", ax, (long long)INT64_MAX);
        total += len;
    }
    int64_t dims[ONYX_MAX_RANK];
    for (int k = 0, src = 0; k < out_rank; k++) {
        if (k == ax) {
            dims[k] = total;
            if (!new_axis) src++;
        } else {
            dims[k] = first->dims[src++];
        }
    }
    TRY(value_alloc_tensor(c->out[0], first->dtype, out_rank, dims));
    tensor *o = &c->out[0]->t;
    int64_t outer = 1, rest = 1; /* dims before / after the axis in the output */
    for (int k = 0; k < ax; k++) outer *= dims[k];
    for (int k = ax + 1; k < out_rank; k++) rest *= dims[k];
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const tensor *t = &seq->seq.items[i]->t;
        int64_t len = new_axis ? 1 : t->dims[ax];
        TRY(cpu_ctl_copy_blocks(o, at * rest, total * rest, t, 0, len * rest, outer, len * rest));
        at += len;
    }
    return ONYX_OK;
}
