/* Tensors, values (tensor / sequence / optional / map) and type descriptions, as the engine sees
 * them. */
#ifndef ONYX_CORE_VALUE_H
#define ONYX_CORE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/device.h"
#include "core/dtype.h"
#include "core/status.h"

/* Ranks beyond this are refused with a clear error by the loader and the API. */
#define ONYX_MAX_RANK 16

/* A dense tensor. For strings `data` is an array of `numel` NUL-terminated heap strings, always
 * owned by the tensor when `owns` is set. */
typedef struct tensor {
    onyx_dtype dtype;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    int64_t numel;
    void *data;
    size_t nbytes;
    bool owns; /* data (and each string) freed with the tensor; else arena or borrowed memory */
    device_kind device; /* where data lives; only the CPU's memory is readable by the host */
} tensor;

/* A (possibly partial) type: what inference knows about a value.
 * kind NONE = nothing known. For tensors, rank -1 = unknown rank, dims[i] -1 = unknown dim.
 * For sequences and optionals `elem` describes the element (owned; NULL if unknown). For maps
 * `dtype` is the key type and `elem` the value type (a 0-d tensor type). */
typedef struct type_info {
    onyx_value_kind kind;
    onyx_dtype dtype;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    struct type_info *elem;
} type_info;

/* The items of sequence values, shared by the values derived from one sequence (value_share takes
 * a reference, not the items), so that a Loop growing a sequence by SequenceInsert is linear, not
 * quadratic. Each value sees a prefix items[0..count) of the store, which never changes under it:
 * a value whose count is the store's length appends in place (claiming the slot atomically, so
 * values read by concurrent runs stay safe); any other change to a shared store copies first.
 * Items are owned by the store, and read only once in it. */
typedef struct seq_store seq_store;

struct onyx_value {
    onyx_value_kind kind;
    tensor t; /* kind == TENSOR */
    struct {
        onyx_value **items;  /* store->items: read items[0..count), never write them */
        size_t count;
        seq_store *store;    /* NULL while empty */
    } seq;                 /* kind == SEQUENCE: change only through value_seq_* */
    onyx_value *opt;       /* kind == OPTIONAL: the element, NULL when empty */
    struct {
        onyx_value *keys, *values; /* 1-D tensors of one length; keys int64 or string */
    } map;                 /* kind == MAP (ai.onnx.ml ZipMap, DictVectorizer, …) */
    type_info *elem_type;  /* SEQUENCE / OPTIONAL: element type, for empty ones (owned, may be NULL) */
};

/* ---- shapes */

/* Product of dims; false on a negative dim or overflow past INT64_MAX. */
bool shape_numel(int rank, const int64_t *dims, int64_t *out);
bool shape_equal(int rank_a, const int64_t *a, int rank_b, const int64_t *b);
/* "[2,3,4]" into buf; returns buf. */
const char *shape_str(int rank, const int64_t *dims, char *buf, size_t cap);

/* ---- tensors */

/* Sets dtype/shape/numel/nbytes (no data). Fails on bad rank, negative dims or overflow. */
onyx_status tensor_set_shape(tensor *t, onyx_dtype dtype, int rank, const int64_t *dims);
/* Sets the shape and allocates owned, zeroed storage (strings: empty strings). */
onyx_status tensor_alloc(tensor *t, onyx_dtype dtype, int rank, const int64_t *dims);
/* Frees owned storage and resets to an empty tensor. */
void tensor_release(tensor *t);
/* A tensor of this shape in `device`'s memory (not zeroed, except on the CPU: tensor_alloc). */
onyx_status tensor_alloc_on(tensor *t, device_kind device, onyx_dtype dtype, int rank,
                            const int64_t *dims);
/* Deep copy into `dst` (dst is overwritten; not released first). */
onyx_status tensor_copy(tensor *dst, const tensor *src);
/* Copies `src`'s elements into an already shaped `dst` of the same dtype and numel. */
onyx_status tensor_copy_data(tensor *dst, const tensor *src);
/* Replaces string element i of an owned string tensor with a copy of `s` (len bytes). */
onyx_status tensor_set_string(tensor *t, int64_t i, const char *s, size_t len);

/* Reads element i of a numeric/bool tensor as double or int64 (for small index/shape inputs). */
double tensor_get_f64(const tensor *t, int64_t i);
int64_t tensor_get_i64(const tensor *t, int64_t i);
/* Reads a 1-D (or scalar) int32/int64 tensor into out[cap]; fails if it is not one or too long. */
onyx_status tensor_to_i64s(const tensor *t, int64_t *out, size_t cap, size_t *count);

/* ---- values */

onyx_value *value_new(void);              /* kind NONE; NULL on OOM */
void value_clear(onyx_value *v);          /* releases contents, back to kind NONE */
/* Makes `v` an owned tensor with the given shape (contents zeroed). Clears v first. */
onyx_status value_alloc_tensor(onyx_value *v, onyx_dtype dtype, int rank, const int64_t *dims);
/* The same, its contents left as they are (strings: empty): a step's output, which its kernel
 * writes in full, as it does arena memory, which is never cleared between runs. */
onyx_status value_alloc_output(onyx_value *v, onyx_dtype dtype, int rank, const int64_t *dims);
/* Makes `v` a tensor that borrows `data` from `src` (no copy). Clears v first. */
void value_borrow_tensor(onyx_value *v, const tensor *src);
onyx_status value_copy(onyx_value *dst, const onyx_value *src);  /* deep; clears dst first */
/* As value_copy, but a sequence shares src's items (O(1)): for kernels that derive one sequence
 * from another (SequenceInsert, SequenceErase). Clears dst first. */
onyx_status value_share(onyx_value *dst, const onyx_value *src);
/* Makes every sequence in v (nested ones too) hold items of its own, copying those it shares: for
 * values handed to a caller, who may write into them. */
onyx_status value_unshare(onyx_value *v);
void value_move(onyx_value *dst, onyx_value *src);               /* dst takes src's contents */
/* Appends (takes ownership of `item`) to a sequence value: amortized O(1), also when the sequence
 * shares its items with others. On failure the caller keeps `item`. */
onyx_status value_seq_push(onyx_value *seq, onyx_value *item);
/* Inserts `item` (taken) before position pos (0..count; count appends), and removes the item at
 * pos (0..count-1). At the end both are O(1); elsewhere they copy the items when shared. */
onyx_status value_seq_insert(onyx_value *seq, size_t pos, onyx_value *item);
onyx_status value_seq_erase(onyx_value *seq, size_t pos);
/* Makes room for `n` more pushes that cannot fail (the items are the sequence's own after). */
onyx_status value_seq_reserve(onyx_value *seq, size_t n);
/* Makes `v` an empty sequence / empty optional with element type `elem` (copied; may be NULL). */
onyx_status value_make_sequence(onyx_value *v, const type_info *elem);
onyx_status value_make_optional(onyx_value *v, const type_info *elem);
/* Makes `v` a map taking ownership of `keys` and `values` (1-D tensors of one length; keys int64,
 * int32 or string). On failure the caller keeps them. */
onyx_status value_make_map(onyx_value *v, onyx_value *keys, onyx_value *values);
/* Makes `v` a sequence of `rows` maps (ZipMap's output), each with the keys of `keys` (a 1-D host
 * tensor of int64, int32 or strings, copied once: the maps share that copy) and as many values of
 * `value_dtype`, zeroed; *values is where they are, a rows x keys->numel matrix whose row r is map
 * r's values, for the caller to fill. The maps, their tensors and their data are one allocation
 * that the sequence's store owns: a batch of maps for the price of one (NULL when rows is 0).
 * Clears v first. */
onyx_status value_make_map_rows(onyx_value *v, const tensor *keys, onyx_dtype value_dtype,
                                int64_t rows, void **values);

/* ---- types */

void type_init(type_info *t);             /* unknown */
void type_release(type_info *t);
onyx_status type_copy(type_info *dst, const type_info *src);   /* deep; dst not released first */
void type_set_tensor(type_info *t, onyx_dtype dtype, int rank, const int64_t *dims); /* dims NULL: unknown */
/* The type a value has (shapes exact). */
onyx_status type_of_value(type_info *out, const onyx_value *v);
/* Kinds and element types only, no shapes (rank -1), each sequence's element type from its first
 * item: O(nesting depth), not O(items). What a plan's signature keeps of a non-tensor value. */
onyx_status type_of_value_kinds(type_info *out, const onyx_value *v);
/* True when the type is a tensor whose dims are all known. */
bool type_is_static(const type_info *t);
/* True when `v` fits `t` (unknown parts of t match anything). */
bool type_accepts(const type_info *t, const onyx_value *v);
/* True when types a and b can describe the same value: kinds and known dtypes agree, and known
 * dims agree where both ranks are known. */
bool types_compatible(const type_info *a, const type_info *b);
/* "tensor(float)[2,?,4]", "seq(tensor(int64))" into buf. */
const char *type_str(const type_info *t, char *buf, size_t cap);

#endif
