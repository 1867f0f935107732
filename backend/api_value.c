/* The public value API of include/onyx.h: creating, inspecting, cloning and freeing values
 * (the .pb readers live with the loader). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/value.h"

/* Checks the public shape arguments and shapes `t` (no data). */
static onyx_status shape_args(tensor *t, onyx_dtype dtype, size_t rank, const int64_t *dims) {
    if (!dtype_valid((int)dtype))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "element type %d is not a known dtype",
                          (int)dtype);
    if (rank > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_SHAPE, "tensor rank %zu is above the supported %d", rank,
                          ONYX_MAX_RANK);
    if (rank > 0 && !dims)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor of rank %zu given no dims", rank);
    return tensor_set_shape(t, dtype, (int)rank, dims);
}

static onyx_status check_bytes(const tensor *t, const void *data, size_t nbytes) {
    char sh[256];
    if (nbytes != t->nbytes)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "tensor(%s)%s: got %zu bytes of data, expected %zu",
                          onyx_dtype_name(t->dtype), shape_str(t->rank, t->dims, sh, sizeof sh),
                          nbytes, t->nbytes);
    if (nbytes > 0 && !data)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor data is NULL but %zu bytes expected",
                          nbytes);
    return ONYX_OK;
}

ONYX_API onyx_status onyx_value_new_tensor(onyx_dtype dtype, size_t rank, const int64_t *dims,
                                           const void *data, size_t nbytes, onyx_value **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_tensor: out is NULL");
    if (dtype == ONYX_STRING)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "new_tensor: string tensors are made with onyx_value_new_string_tensor");
    tensor t = {0};
    TRY(shape_args(&t, dtype, rank, dims));
    TRY(check_bytes(&t, data, nbytes));
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    onyx_status st = value_alloc_tensor(v, dtype, (int)rank, dims);
    if (st != ONYX_OK) {
        free(v);
        return st;
    }
    if (nbytes) memcpy(v->t.data, data, nbytes);
    *out = v;
    return ONYX_OK;
}

ONYX_API onyx_status onyx_value_wrap_tensor(onyx_dtype dtype, size_t rank, const int64_t *dims,
                                            void *data, size_t nbytes, onyx_value **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "wrap_tensor: out is NULL");
    tensor t = {0};
    TRY(shape_args(&t, dtype, rank, dims));
    TRY(check_bytes(&t, data, nbytes));
    if (dtype == ONYX_STRING) {
        /* Kernels read every string: a NULL among them would crash far from here. */
        char *const *s = data;
        for (int64_t i = 0; i < t.numel; i++)
            if (!s[i])
                return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                                  "wrap_tensor: string %" PRId64 " is NULL", i);
    }
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    t.data = data;
    t.owns = false;
    value_borrow_tensor(v, &t);
    *out = v;
    return ONYX_OK;
}

static const tensor *as_tensor(const onyx_value *v) {
    return (v && v->kind == ONYX_VALUE_TENSOR) ? &v->t : NULL;
}

ONYX_API onyx_status onyx_value_wrap_device_tensor(const char *device, onyx_dtype dtype,
                                                   size_t rank, const int64_t *dims, void *data,
                                                   size_t nbytes, onyx_value **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "wrap_device_tensor: out is NULL");
    device_kind kind;
    int index;
    TRY(backend_device_parse(device, &kind, &index));
    if (!backend_device_ops(kind, index))
        return onyx_error(ONYX_ERR_DEVICE, "wrap_device_tensor: device %s is not usable here",
                          device);
    if (dtype == ONYX_STRING)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "wrap_device_tensor: strings live on the CPU");
    tensor t = {0};
    TRY(shape_args(&t, dtype, rank, dims));
    TRY(check_bytes(&t, data, nbytes));
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    t.data = data;
    t.owns = false;
    t.device = kind;
    value_borrow_tensor(v, &t);
    *out = v;
    return ONYX_OK;
}

ONYX_API onyx_status onyx_value_copy_to_device(const onyx_value *value, const char *device,
                                               onyx_value **out) {
    const tensor *src = as_tensor(value);
    if (!src || !out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "copy_to_device: not a tensor");
    device_kind kind;
    int index;
    TRY(backend_device_parse(device, &kind, &index));
    if (!backend_device_ops(kind, index))
        return onyx_error(ONYX_ERR_DEVICE, "copy_to_device: device %s is not usable here", device);
    tensor t = {0};
    TRY(tensor_alloc_on(&t, kind, src->dtype, src->rank, src->dims));
    onyx_status st = tensor_copy_data(&t, src);
    onyx_value *v = st == ONYX_OK ? value_new() : NULL;
    if (st == ONYX_OK && !v) st = onyx_oom("value");
    if (st != ONYX_OK) {
        tensor_release(&t);
        return st;
    }
    v->kind = ONYX_VALUE_TENSOR;
    v->t = t;
    *out = v;
    return ONYX_OK;
}

ONYX_API const char *onyx_tensor_device(const onyx_value *value) {
    const tensor *t = as_tensor(value);
    backend_register_devices();
    return t ? device_name(t->device) : NULL;
}

ONYX_API onyx_status onyx_value_new_string_tensor(size_t rank, const int64_t *dims,
                                                  const char *const *strings, onyx_value **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_string_tensor: out is NULL");
    tensor t = {0};
    TRY(shape_args(&t, ONYX_STRING, rank, dims));
    if (t.numel > 0 && !strings)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "new_string_tensor: strings is NULL but %" PRId64 " expected", t.numel);
    for (int64_t i = 0; i < t.numel; i++)
        if (!strings[i])
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_string_tensor: string %" PRId64
                              " is NULL", i);
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    onyx_status st;
    CHECK(value_alloc_tensor(v, ONYX_STRING, (int)rank, dims));
    for (int64_t i = 0; i < t.numel; i++)
        CHECK(tensor_set_string(&v->t, i, strings[i], strlen(strings[i])));
    *out = v;
    return ONYX_OK;
done:
    value_clear(v);
    free(v);
    return st;
}

static const char *kind_name(onyx_value_kind k) {
    switch (k) {
    case ONYX_VALUE_TENSOR: return "tensor";
    case ONYX_VALUE_SEQUENCE: return "sequence";
    case ONYX_VALUE_OPTIONAL: return "optional";
    case ONYX_VALUE_MAP: return "map";
    default: return "value of no kind";
    }
}

/* Sequences and optionals hold tensors, sequences, optionals or maps. */
static onyx_status check_item(const char *fn, size_t i, const onyx_value *item) {
    if (item->kind == ONYX_VALUE_TENSOR || item->kind == ONYX_VALUE_SEQUENCE ||
        item->kind == ONYX_VALUE_OPTIONAL || item->kind == ONYX_VALUE_MAP)
        return ONYX_OK;
    return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: item %zu is a %s, expected a tensor, a "
                      "sequence, an optional or a map", fn, i, kind_name(item->kind));
}

ONYX_API onyx_status onyx_value_new_map(onyx_value *keys, onyx_value *values, onyx_value **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_map: out is NULL");
    onyx_value *v = value_new();
    if (!v) return onyx_oom("map");
    onyx_status st = value_make_map(v, keys, values);
    if (st != ONYX_OK) {
        free(v);
        return st;
    }
    *out = v;
    return ONYX_OK;
}

ONYX_API const onyx_value *onyx_map_keys(const onyx_value *value) {
    return (value && value->kind == ONYX_VALUE_MAP) ? value->map.keys : NULL;
}

ONYX_API const onyx_value *onyx_map_values(const onyx_value *value) {
    return (value && value->kind == ONYX_VALUE_MAP) ? value->map.values : NULL;
}

ONYX_API onyx_status onyx_value_new_sequence(onyx_dtype elem_dtype, size_t count,
                                             onyx_value *const *items, onyx_value **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_sequence: out is NULL");
    if (elem_dtype != ONYX_UNDEFINED && !dtype_valid((int)elem_dtype))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_sequence: element type %d is not a known dtype",
                          (int)elem_dtype);
    if (count > 0 && !items)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_sequence: items is NULL but count is %zu",
                          count);
    /* A sequence holds one type: kernels read it from the first item. */
    for (size_t i = 0; i < count; i++) {
        if (!items[i])
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_sequence: item %zu is NULL", i);
        TRY(check_item("new_sequence", i, items[i]));
        if (items[i]->kind != items[0]->kind)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                              "new_sequence: item %zu is a %s, expected a %s like item 0", i,
                              kind_name(items[i]->kind), kind_name(items[0]->kind));
        onyx_dtype want = elem_dtype != ONYX_UNDEFINED ? elem_dtype : items[0]->t.dtype;
        if (items[i]->kind == ONYX_VALUE_TENSOR && items[i]->t.dtype != want)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                              "new_sequence: item %zu is a tensor(%s), expected tensor(%s)", i,
                              onyx_dtype_name(items[i]->t.dtype), onyx_dtype_name(want));
    }
    onyx_status st;
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    type_info elem;
    type_init(&elem);
    if (elem_dtype != ONYX_UNDEFINED) type_set_tensor(&elem, elem_dtype, -1, NULL);
    CHECK(value_make_sequence(v, elem_dtype != ONYX_UNDEFINED ? &elem : NULL));
    if (count > 0) {
        /* Reserve all slots up front so that taking the items cannot fail half way. */
        CHECK(value_seq_reserve(v, count));
        for (size_t i = 0; i < count; i++) CHECK(value_seq_push(v, items[i]));
    }
    *out = v;
    return ONYX_OK;
done:
    value_clear(v);
    free(v);
    return st;
}

ONYX_API onyx_status onyx_value_new_optional(onyx_value *item, onyx_value **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "new_optional: out is NULL");
    if (item) TRY(check_item("new_optional", 0, item));
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    onyx_status st = value_make_optional(v, NULL);
    if (st != ONYX_OK) {
        free(v);
        return st;
    }
    v->opt = item;
    *out = v;
    return ONYX_OK;
}

ONYX_API void onyx_value_free(onyx_value *value) {
    if (!value) return;
    value_clear(value);
    free(value);
}

ONYX_API void onyx_values_free(onyx_value **values, size_t count) {
    if (!values) return;
    for (size_t i = 0; i < count; i++) onyx_value_free(values[i]);
    free(values);
}

ONYX_API onyx_value_kind onyx_value_kind_of(const onyx_value *value) {
    return value ? value->kind : ONYX_VALUE_NONE;
}


ONYX_API onyx_dtype onyx_tensor_dtype(const onyx_value *value) {
    const tensor *t = as_tensor(value);
    return t ? t->dtype : ONYX_UNDEFINED;
}

ONYX_API size_t onyx_tensor_rank(const onyx_value *value) {
    const tensor *t = as_tensor(value);
    return t ? (size_t)t->rank : 0;
}

ONYX_API const int64_t *onyx_tensor_dims(const onyx_value *value) {
    const tensor *t = as_tensor(value);
    return t ? t->dims : NULL;
}

ONYX_API int64_t onyx_tensor_numel(const onyx_value *value) {
    const tensor *t = as_tensor(value);
    return t ? t->numel : 0;
}

ONYX_API void *onyx_tensor_data(const onyx_value *value) {
    const tensor *t = as_tensor(value);
    return t ? t->data : NULL;
}

ONYX_API size_t onyx_tensor_nbytes(const onyx_value *value) {
    const tensor *t = as_tensor(value);
    return t ? t->nbytes : 0;
}

ONYX_API onyx_status onyx_tensor_get_info(const onyx_value *value, onyx_tensor_info *info) {
    const tensor *t = as_tensor(value);
    if (!info) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor_get_info: info is NULL");
    if (!t)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor_get_info: the value is %s",
                          value ? "no tensor" : "NULL");
    backend_register_devices();
    *info = (onyx_tensor_info){.dtype = t->dtype, .rank = (size_t)t->rank, .dims = t->dims,
                               .numel = t->numel, .data = t->data, .nbytes = t->nbytes,
                               .device = device_name(t->device)};
    return ONYX_OK;
}

ONYX_API size_t onyx_sequence_length(const onyx_value *value) {
    return (value && value->kind == ONYX_VALUE_SEQUENCE) ? value->seq.count : 0;
}

ONYX_API const onyx_value *onyx_sequence_at(const onyx_value *value, size_t index) {
    if (!value || value->kind != ONYX_VALUE_SEQUENCE || index >= value->seq.count) return NULL;
    return value->seq.items[index];
}

/* The innermost tensor dtype a type describes (through seq/optional nesting). */
static onyx_dtype innermost_dtype(const type_info *t) {
    while (t && t->kind != ONYX_VALUE_TENSOR) t = t->elem;
    return t ? t->dtype : ONYX_UNDEFINED;
}

ONYX_API onyx_dtype onyx_sequence_elem_dtype(const onyx_value *value) {
    if (!value || value->kind != ONYX_VALUE_SEQUENCE) return ONYX_UNDEFINED;
    onyx_dtype d = innermost_dtype(value->elem_type);
    if (d != ONYX_UNDEFINED || value->seq.count == 0) return d;
    /* Nothing recorded: the items say. */
    const onyx_value *item = value->seq.items[0];
    while (item && item->kind != ONYX_VALUE_TENSOR) {
        if (item->kind == ONYX_VALUE_OPTIONAL)
            item = item->opt;
        else if (item->kind == ONYX_VALUE_SEQUENCE && item->seq.count > 0)
            item = item->seq.items[0];
        else
            return item ? innermost_dtype(item->elem_type) : ONYX_UNDEFINED;
    }
    return item ? item->t.dtype : ONYX_UNDEFINED;
}

ONYX_API bool onyx_optional_has_value(const onyx_value *value) {
    return value && value->kind == ONYX_VALUE_OPTIONAL && value->opt != NULL;
}

ONYX_API const onyx_value *onyx_optional_value(const onyx_value *value) {
    return onyx_optional_has_value(value) ? value->opt : NULL;
}

ONYX_API onyx_status onyx_value_clone(const onyx_value *value, onyx_value **out) {
    if (!value || !out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "clone: NULL argument");
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    onyx_status st = value_copy(v, value);
    if (st != ONYX_OK) {
        free(v);
        return st;
    }
    *out = v;
    return ONYX_OK;
}

ONYX_API const char *onyx_version(void) { return "0.2.0"; }
