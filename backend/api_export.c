/* onyx_values_export (include/onyx.h): a run's outputs described in 64-bit words, and the data of
 * their small host tensors copied into one buffer, in a single call. A binding that pays for every
 * foreign call (Python's ctypes: about a microsecond each) reads all its outputs with this one
 * instead of several accessor calls per value; on small models that was most of a run's time.
 * Built on the public accessors only. */
#include <stdint.h>
#include <string.h>

#include "core/status.h"
#include "core/value.h"
#include "onyx.h"

enum { EXPORT_ALIGN = 8 };

typedef struct exporter {
    int64_t *words;
    size_t word_capacity, words_used;
    unsigned char *bytes;
    size_t byte_capacity, bytes_used, copy_limit;
} exporter;

/* Past the capacity only counts: the caller learns the sizes and calls again. */
static void put(exporter *e, int64_t word) {
    if (e->words_used < e->word_capacity) e->words[e->words_used] = word;
    e->words_used++;
}

/* The offset where `nbytes` more bytes go (aligned); counted even past the capacity. */
static int64_t reserve_bytes(exporter *e, size_t nbytes) {
    size_t at = (e->bytes_used + EXPORT_ALIGN - 1) / EXPORT_ALIGN * EXPORT_ALIGN;
    e->bytes_used = at + nbytes;
    return (int64_t)at;
}

/* Whether bytes reserved at `at` are in the buffer (and there are any to copy). */
static bool bytes_fit(const exporter *e, int64_t at, size_t nbytes) {
    return (size_t)at + nbytes <= e->byte_capacity && nbytes;
}

static void export_tensor(exporter *e, const onyx_value *v) {
    onyx_tensor_info info;
    if (onyx_tensor_get_info(v, &info) != ONYX_OK) { /* cannot happen for a tensor value */
        put(e, ONYX_VALUE_NONE);
        return;
    }
    put(e, ONYX_VALUE_TENSOR);
    put(e, info.dtype);
    put(e, (int64_t)info.rank);
    for (size_t i = 0; i < info.rank; i++) put(e, info.dims[i]);
    bool host = info.device && strcmp(info.device, "CPU") == 0;
    if (!host || info.dtype == ONYX_STRING || info.nbytes > e->copy_limit) {
        put(e, -1);
    } else {
        int64_t at = reserve_bytes(e, info.nbytes);
        if (bytes_fit(e, at, info.nbytes)) memcpy(e->bytes + at, info.data, info.nbytes);
        put(e, at);
    }
    put(e, (int64_t)info.nbytes);
}

/* A host tensor of one rank, fixed-width elements and data: what map rows are made of. */
static bool plain_tensor(const onyx_value *v, size_t rank, onyx_tensor_info *info) {
    if (onyx_tensor_get_info(v, info) != ONYX_OK || info->rank != rank || !info->device ||
        strcmp(info->device, "CPU") != 0)
        return false;
    size_t bits = onyx_dtype_bits(info->dtype);
    return info->dtype != ONYX_STRING && bits && bits % 8 == 0 && (info->data || !info->nbytes);
}

/* Whether a sequence is maps of equal keys and values of one dtype and length (ZipMap's rows):
 * then *keys is the first map's keys and *values its values, and *contiguous says whether the
 * maps' values lie one after the other in memory (one copy takes them all). Maps that share their
 * keys tensor (value_make_map_rows) skip comparing them. */
static bool map_rows(const onyx_value *seq, size_t n, onyx_tensor_info *keys,
                     onyx_tensor_info *values, bool *contiguous) {
    const onyx_value *first = n ? onyx_sequence_at(seq, 0) : NULL;
    const onyx_value *first_keys = first ? onyx_map_keys(first) : NULL;
    if (!first || onyx_value_kind_of(first) != ONYX_VALUE_MAP || !plain_tensor(first_keys, 1, keys) ||
        !plain_tensor(onyx_map_values(first), 1, values) || values->dims[0] != keys->dims[0])
        return false;
    *contiguous = true;
    for (size_t i = 1; i < n; i++) {
        const onyx_value *m = onyx_sequence_at(seq, i);
        onyx_tensor_info k, v;
        if (onyx_value_kind_of(m) != ONYX_VALUE_MAP ||
            !plain_tensor(onyx_map_values(m), 1, &v) || v.dtype != values->dtype ||
            v.nbytes != values->nbytes)
            return false;
        if (onyx_map_keys(m) != first_keys &&
            (!plain_tensor(onyx_map_keys(m), 1, &k) || k.dtype != keys->dtype ||
             k.nbytes != keys->nbytes || (k.nbytes && memcmp(k.data, keys->data, k.nbytes) != 0)))
            return false;
        *contiguous &= (uintptr_t)v.data == (uintptr_t)values->data + i * values->nbytes;
    }
    return true;
}

/* ONYX_EXPORT_MAP_ROWS: the keys once, every map's values as one row of a matrix. */
static void export_map_rows(exporter *e, const onyx_value *seq, size_t n,
                            const onyx_tensor_info *keys, const onyx_tensor_info *values,
                            bool contiguous) {
    put(e, ONYX_EXPORT_MAP_ROWS);
    put(e, (int64_t)n);
    put(e, ONYX_VALUE_TENSOR);
    put(e, keys->dtype);
    put(e, 1);
    put(e, keys->dims[0]);
    int64_t at = reserve_bytes(e, keys->nbytes);
    if (bytes_fit(e, at, keys->nbytes)) memcpy(e->bytes + at, keys->data, keys->nbytes);
    put(e, at);
    put(e, (int64_t)keys->nbytes);
    size_t row = values->nbytes, total = n * row;
    put(e, ONYX_VALUE_TENSOR);
    put(e, values->dtype);
    put(e, 2);
    put(e, (int64_t)n);
    put(e, values->dims[0]);
    at = reserve_bytes(e, total);
    if (bytes_fit(e, at, total) && contiguous) {
        memcpy(e->bytes + at, values->data, total);
    } else if (bytes_fit(e, at, total)) {
        for (size_t i = 0; i < n; i++) {
            onyx_tensor_info v;
            onyx_tensor_get_info(onyx_map_values(onyx_sequence_at(seq, i)), &v);
            memcpy(e->bytes + at + i * row, v.data, row);
        }
    }
    put(e, at);
    put(e, (int64_t)total);
}

static void export_value(exporter *e, const onyx_value *v) {
    switch (onyx_value_kind_of(v)) {
    case ONYX_VALUE_TENSOR:
        export_tensor(e, v);
        return;
    case ONYX_VALUE_SEQUENCE: {
        size_t n = onyx_sequence_length(v);
        onyx_tensor_info keys, values;
        bool contiguous;
        if (map_rows(v, n, &keys, &values, &contiguous)) {
            export_map_rows(e, v, n, &keys, &values, contiguous);
            return;
        }
        put(e, ONYX_VALUE_SEQUENCE);
        put(e, (int64_t)n);
        for (size_t i = 0; i < n; i++) export_value(e, onyx_sequence_at(v, i));
        return;
    }
    case ONYX_VALUE_OPTIONAL: {
        bool has = onyx_optional_has_value(v);
        put(e, ONYX_VALUE_OPTIONAL);
        put(e, has);
        if (has) export_value(e, onyx_optional_value(v));
        return;
    }
    case ONYX_VALUE_MAP:
        put(e, ONYX_VALUE_MAP);
        export_value(e, onyx_map_keys(v));
        export_value(e, onyx_map_values(v));
        return;
    default:
        put(e, ONYX_VALUE_NONE);
        return;
    }
}

static onyx_status values_export(const onyx_value *const *values, size_t count, int64_t *words,
                                 size_t word_capacity, size_t *words_used, void *bytes,
                                 size_t byte_capacity, size_t copy_limit, size_t *bytes_used);

ONYX_API onyx_status onyx_values_export(const onyx_value *const *values, size_t count,
                                        int64_t *words, size_t word_capacity, size_t *words_used,
                                        void *bytes, size_t byte_capacity, size_t copy_limit,
                                        size_t *bytes_used) {
    return values_export(values, count, words, word_capacity, words_used, bytes, byte_capacity,
                         copy_limit, bytes_used);
}

static onyx_status values_export(const onyx_value *const *values, size_t count, int64_t *words,
                                 size_t word_capacity, size_t *words_used, void *bytes,
                                 size_t byte_capacity, size_t copy_limit, size_t *bytes_used) {
    if ((count && !values) || (word_capacity && !words) || (byte_capacity && !bytes) ||
        !words_used || !bytes_used)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "values_export: NULL argument");
    exporter e = {.words = words, .word_capacity = word_capacity, .bytes = bytes,
                  .byte_capacity = byte_capacity, .copy_limit = copy_limit};
    for (size_t i = 0; i < count; i++) export_value(&e, values[i]);
    *words_used = e.words_used;
    *bytes_used = e.bytes_used;
    return ONYX_OK;
}

/* Every output whose data the description holds (tensors copied whole, and what holds only such). */
static bool copied_whole(const int64_t *words, size_t *at) {
    switch (words[(*at)++]) {
    case ONYX_VALUE_TENSOR: {
        int64_t rank = words[*at + 1];
        bool copied = words[*at + 2 + rank] >= 0;
        *at += 4 + (size_t)rank;
        return copied;
    }
    case ONYX_VALUE_SEQUENCE: {
        int64_t n = words[(*at)++];
        bool all = true;
        for (int64_t i = 0; i < n; i++) all &= copied_whole(words, at);
        return all;
    }
    case ONYX_VALUE_OPTIONAL:
        return words[(*at)++] ? copied_whole(words, at) : true;
    case ONYX_EXPORT_MAP_ROWS:
        (*at)++; /* the length; then keys and values as a map's */
        /* fall through */
    case ONYX_VALUE_MAP: {
        bool keys = copied_whole(words, at);
        return copied_whole(words, at) && keys;
    }
    default:
        return false;
    }
}

ONYX_API onyx_status onyx_rep_run_export(onyx_rep *rep, const onyx_run_options *options,
                                         size_t input_count, const char *const *input_names,
                                         const int64_t *inputs, onyx_export_room *room,
                                         size_t *output_count, onyx_value ***outputs) {
    if (!room || !output_count || !outputs || (input_count && (!inputs || !input_names)))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "rep_run_export: NULL argument");
    if (input_count > 64)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "rep_run_export: %zu inputs (at most 64)",
                          input_count);
    onyx_value *values[64] = {0};
    size_t made = 0;
    onyx_status st = ONYX_OK;
    for (; made < input_count; made++) { /* a break leaves `made` at the values made */
        int64_t dtype = inputs[0], rank = inputs[1];
        if (rank < 0 || rank > ONYX_MAX_RANK) {
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "rep_run_export: input %zu of rank %lld",
                            made, (long long)rank);
            break;
        }
        st = onyx_value_wrap_tensor((onyx_dtype)dtype, (size_t)rank, inputs + 2,
                                    (void *)(intptr_t)inputs[2 + rank], (size_t)inputs[3 + rank],
                                    &values[made]);
        if (st != ONYX_OK) break;
        inputs += 4 + rank;
    }
    if (st == ONYX_OK)
        st = onyx_rep_run_with_options(rep, options, input_count, input_names,
                                       (const onyx_value *const *)values, output_count, outputs);
    for (size_t i = 0; i < made; i++) onyx_value_free(values[i]); /* borrowed data: frees the shells */
    if (st != ONYX_OK) return st;
    st = values_export((const onyx_value *const *)*outputs, *output_count, room->words,
                       room->word_capacity, &room->words_used, room->bytes, room->byte_capacity,
                       room->copy_limit, &room->bytes_used);
    if (st != ONYX_OK || room->words_used > room->word_capacity ||
        room->bytes_used > room->byte_capacity)
        return st; /* the caller exports again with more room, and frees */
    size_t at = 0;
    bool all = true;
    for (size_t i = 0; i < *output_count; i++) all &= copied_whole(room->words, &at);
    if (all) {
        onyx_values_free(*outputs, *output_count);
        *outputs = NULL;
    }
    return st;
}
