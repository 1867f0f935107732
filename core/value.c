/* Tensors, values and type descriptions: storage ownership, deep copies and the type checks the
 * executor and the public API share. */
#include "core/value.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/device_cache.h"
#include "core/floatconv.h"

#define ALIGNMENT 64

/* ------------------------------------------------------------------ text output */

/* A bounded string builder: appends stop at the end of the buffer, which stays NUL-terminated. */
typedef struct {
    char *buf;
    size_t cap, len;
} strbuf;

static void sb_printf(strbuf *sb, const char *fmt, ...) ONYX_PRINTF(2, 3);
static void sb_printf(strbuf *sb, const char *fmt, ...) {
    if (sb->cap == 0 || sb->len >= sb->cap - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sb->len += (size_t)n;
    if (sb->len > sb->cap - 1) sb->len = sb->cap - 1;
}

static void sb_shape(strbuf *sb, int rank, const int64_t *dims) {
    if (rank < 0) {
        sb_printf(sb, "?");
        return;
    }
    sb_printf(sb, "[");
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            sb_printf(sb, "%s?", i ? "," : "");
        else
            sb_printf(sb, "%s%" PRId64, i ? "," : "", dims[i]);
    }
    sb_printf(sb, "]");
}

/* ------------------------------------------------------------------ shapes */

bool shape_numel(int rank, const int64_t *dims, int64_t *out) {
    if (rank < 0) return false;
    int64_t n = 1;
    bool zero = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return false;
        if (dims[i] == 0) zero = true;
    }
    /* A zero dim makes the product 0 however large the other dims are. */
    if (zero) {
        *out = 0;
        return true;
    }
    for (int i = 0; i < rank; i++) {
        if (n > INT64_MAX / dims[i]) return false;
        n *= dims[i];
    }
    *out = n;
    return true;
}

bool shape_equal(int rank_a, const int64_t *a, int rank_b, const int64_t *b) {
    if (rank_a != rank_b) return false;
    for (int i = 0; i < rank_a; i++)
        if (a[i] != b[i]) return false;
    return true;
}

const char *shape_str(int rank, const int64_t *dims, char *buf, size_t cap) {
    strbuf sb = {buf, cap, 0};
    if (cap) buf[0] = '\0';
    sb_shape(&sb, rank, dims);
    return buf;
}

/* ------------------------------------------------------------------ tensors */

/* Tensor storage of at least this many bytes is mapped on its own, and kept for reuse when freed
 * (core/device_cache.c, the CPU's share): a model's outputs and dynamic intermediates come back
 * at the same sizes run after run, and a fresh mapping costs the system a fault and a zeroed page
 * for every page written, then an unmapping; clearing a kept block is cheaper. A fresh mapping
 * needs no clearing (the system hands out zeroed pages lazily, so its pages fault in the
 * kernel's own threads). Sanitizer builds keep every tensor on the heap, where AddressSanitizer
 * watches its bounds. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ONYX_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(ONYX_ASAN)
#define MMAP_MIN_BYTES SIZE_MAX
#else
#define MMAP_MIN_BYTES ((size_t)1 << 20)
#endif

/* In front of each mapped block: what munmap needs, and whether the pages are untouched. */
typedef struct map_header {
    size_t length;
    bool fresh;
} map_header;

_Static_assert(sizeof(map_header) <= ALIGNMENT, "the header fits the alignment");

static void *map_block(size_t bytes) {
    if (bytes > SIZE_MAX - ALIGNMENT) return NULL;
    size_t length = bytes + ALIGNMENT;
    char *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    /* Plain 4 KiB pages, not MADV_HUGEPAGE: a run that maps new blocks (a prompt of a new
     * length) spent 3-4x the kernel time faulting them in as 2 MiB pages (Llama-3.2-1B fp32, a
     * first 512-token prompt: 0.70-0.78 s of system time against 0.19 s, 5 % of the run's CPU),
     * and blocks kept for reuse (core/device_cache.c) fault nothing after their first run. */
    *(map_header *)p = (map_header){length, true};
    return p + ALIGNMENT;
}

static void unmap_block(void *p) {
    if (!p) return;
    char *base = (char *)p - ALIGNMENT;
    munmap(base, ((map_header *)base)->length);
}

static const device_ops host_blocks = {.kind = DEVICE_CPU, .alloc = map_block, .free = unmap_block};

static size_t storage_size(size_t nbytes) {
    size_t size = (nbytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    return size ? size : ALIGNMENT;
}

/* 64-byte aligned storage of at least `nbytes`; *zeroed says whether it is known to hold zeros.
 * Zero-size tensors still get a (one-line) allocation so that `data` of an owned tensor is never
 * NULL: kernels may pass it to memcpy. */
static void *storage_alloc(size_t nbytes, bool *zeroed) {
    *zeroed = false;
    if (nbytes > SIZE_MAX - (ALIGNMENT - 1)) return NULL;
    size_t size = storage_size(nbytes);
    if (size >= MMAP_MIN_BYTES) {
        char *p = device_cache_alloc(&host_blocks, size);
        if (!p) return NULL;
        map_header *h = (map_header *)(p - ALIGNMENT);
        *zeroed = h->fresh;
        h->fresh = false;
        return p;
    }
    return aligned_alloc(ALIGNMENT, size);
}

static void storage_free(void *p, size_t nbytes) {
    if (!p) return;
    size_t size = storage_size(nbytes);
    if (size >= MMAP_MIN_BYTES) device_cache_free(&host_blocks, p, size);
    else free(p);
}

static void free_strings(char **s, int64_t n) {
    if (!s) return;
    for (int64_t i = 0; i < n; i++) free(s[i]);
}

static char *dup_string(const char *s, size_t len) {
    char *d = malloc(len + 1);
    if (!d) return NULL;
    if (len) memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

onyx_status tensor_set_shape(tensor *t, onyx_dtype dtype, int rank, const int64_t *dims) {
    char sh[256];
    if (!dtype_valid((int)dtype))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor element type %d is not a known dtype",
                          (int)dtype);
    if (rank < 0 || rank > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_SHAPE, "tensor rank %d is out of range, expected 0..%d", rank,
                          ONYX_MAX_RANK);
    if (rank > 0 && !dims)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor of rank %d given no dims", rank);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0)
            return onyx_error(ONYX_ERR_SHAPE, "tensor shape %s has negative dim %d",
                              shape_str(rank, dims, sh, sizeof sh), i);
    int64_t numel;
    if (!shape_numel(rank, dims, &numel))
        return onyx_error(ONYX_ERR_NO_MEMORY, "tensor shape %s has more than %" PRId64 " elements",
                          shape_str(rank, dims, sh, sizeof sh), INT64_MAX);
    /* As numpy: an empty tensor's other dims must multiply within int64 too, since kernels take
     * partial products of dims (strides, outer and inner sizes) before they look at numel. */
    int64_t span = 1;
    for (int i = 0; i < rank && numel == 0; i++) {
        if (dims[i] == 0) continue;
        if (span > INT64_MAX / dims[i])
            return onyx_error(ONYX_ERR_NO_MEMORY, "tensor shape %s: its nonzero dims multiply "
                              "past %" PRId64, shape_str(rank, dims, sh, sizeof sh), INT64_MAX);
        span *= dims[i];
    }
    size_t nbytes;
    if (!dtype_storage_size(dtype, numel, &nbytes))
        return onyx_error(ONYX_ERR_NO_MEMORY, "tensor(%s)%s needs more than %zu bytes",
                          onyx_dtype_name(dtype), shape_str(rank, dims, sh, sizeof sh),
                          (size_t)SIZE_MAX);
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    for (int i = rank; i < ONYX_MAX_RANK; i++) t->dims[i] = 0;
    t->numel = numel;
    t->nbytes = nbytes;
    return ONYX_OK;
}

/* tensor_alloc, its bytes zeroed where `zero` (strings are made empty either way). */
static onyx_status alloc_tensor(tensor *t, onyx_dtype dtype, int rank, const int64_t *dims,
                                bool zero) {
    tensor n = {0};
    TRY(tensor_set_shape(&n, dtype, rank, dims));
    bool zeroed;
    n.data = storage_alloc(n.nbytes, &zeroed);
    if (!n.data) return onyx_oom("tensor storage");
    if (zero && !zeroed) memset(n.data, 0, n.nbytes);
#if defined(__SANITIZE_ADDRESS__) || defined(ONYX_ASAN)
    /* under the sanitizers a kernel that leaves part of its output unwritten reads as garbage,
     * not as the zeros a fresh block happens to hold */
    if (!zero) memset(n.data, 0xa5, n.nbytes);
#endif
    n.owns = true;
    if (dtype == ONYX_STRING) {
        char **s = n.data;
        for (int64_t i = 0; i < n.numel; i++) {
            s[i] = dup_string("", 0);
            if (!s[i]) {
                free_strings(s, i);
                storage_free(n.data, n.nbytes);
                return onyx_oom("string tensor element");
            }
        }
    }
    *t = n;
    return ONYX_OK;
}

onyx_status tensor_alloc(tensor *t, onyx_dtype dtype, int rank, const int64_t *dims) {
    return alloc_tensor(t, dtype, rank, dims, true);
}

void tensor_release(tensor *t) {
    if (!t) return;
    if (t->owns && t->device != DEVICE_CPU) {
        const device_ops *d = device_ops_of(t->device);
        if (d) device_cache_free(d, t->data, t->nbytes);
    } else if (t->owns) {
        if (t->dtype == ONYX_STRING) free_strings(t->data, t->numel);
        storage_free(t->data, t->nbytes);
    }
    memset(t, 0, sizeof *t);
}

onyx_status tensor_alloc_on(tensor *t, device_kind device, onyx_dtype dtype, int rank,
                            const int64_t *dims) {
    if (device == DEVICE_CPU) return tensor_alloc(t, dtype, rank, dims);
    const device_ops *d = device_ops_of(device);
    if (!d) return onyx_error(ONYX_ERR_DEVICE, "no %s device here", device_name(device));
    if (dtype == ONYX_STRING)
        return onyx_error(ONYX_ERR_DEVICE, "string tensors live on the CPU only");
    tensor n = {0};
    TRY(tensor_set_shape(&n, dtype, rank, dims));
    if (!(n.data = device_cache_alloc(d, n.nbytes)))
        return onyx_error(ONYX_ERR_NO_MEMORY, "%zu bytes of %s memory", n.nbytes,
                          device_name(device));
    n.owns = true;
    n.device = device;
    *t = n;
    return ONYX_OK;
}

onyx_status tensor_copy(tensor *dst, const tensor *src) {
    if (src->numel > 0 && !src->data)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "cannot copy a tensor(%s) that has no data",
                          onyx_dtype_name(src->dtype));
    tensor n = {0};
    if (src->device != DEVICE_CPU)
        TRY(tensor_alloc_on(&n, src->device, src->dtype, src->rank, src->dims));
    else
        TRY(tensor_alloc(&n, src->dtype, src->rank, src->dims));
    onyx_status st = tensor_copy_data(&n, src);
    if (st != ONYX_OK) {
        tensor_release(&n);
        return st;
    }
    *dst = n;
    return ONYX_OK;
}

onyx_status tensor_copy_data(tensor *dst, const tensor *src) {
    if (dst->dtype != src->dtype || dst->numel != src->numel)
        return onyx_error(ONYX_ERR_SHAPE,
                          "cannot copy %" PRId64 " %s elements into %" PRId64 " %s elements",
                          src->numel, onyx_dtype_name(src->dtype), dst->numel,
                          onyx_dtype_name(dst->dtype));
    if (src->numel == 0) return ONYX_OK;
    if (!src->data || !dst->data)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor copy: %s tensor has no data",
                          src->data ? "destination" : "source");
    if (src->device != DEVICE_CPU || dst->device != DEVICE_CPU) { /* numbers only off the CPU */
        /* the device side's operations do the copy (the CPU's are registered only once a
         * session uses it) */
        const device_ops *from = device_ops_of(src->device), *to = device_ops_of(dst->device);
        if ((src->device != DEVICE_CPU && !from) || (dst->device != DEVICE_CPU && !to) ||
            dst->dtype == ONYX_STRING)
            return onyx_error(ONYX_ERR_DEVICE, "tensor copy from %s to %s is not possible here",
                              device_name(src->device), device_name(dst->device));
        if (src->device == dst->device && src->device != DEVICE_CPU)
            return dst->data == src->data ? ONYX_OK : from->copy(NULL, dst->data, src->data, src->nbytes);
        if (dst->device == DEVICE_CPU) return from->to_host(NULL, dst->data, src->data, src->nbytes);
        if (src->device == DEVICE_CPU) return to->from_host(NULL, dst->data, src->data, src->nbytes);
        return onyx_error(ONYX_ERR_DEVICE, "tensor copy from %s to %s: copy through the CPU",
                          device_name(src->device), device_name(dst->device));
    }
    if (dst->dtype != ONYX_STRING) {
        if (dst->data != src->data) memmove(dst->data, src->data, src->nbytes);
        return ONYX_OK;
    }
    if (!dst->owns)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "tensor copy: destination string tensor does not own its strings");
    /* Duplicate everything before freeing anything so that a failure leaves dst intact and
     * copying a tensor onto itself works. */
    size_t n = (size_t)src->numel;
    char **fresh = malloc(n * sizeof *fresh);
    if (!fresh) return onyx_oom("string tensor copy");
    const char *const *from = src->data;
    for (size_t i = 0; i < n; i++) {
        const char *s = from[i] ? from[i] : "";
        fresh[i] = dup_string(s, strlen(s));
        if (!fresh[i]) {
            free_strings(fresh, (int64_t)i);
            free(fresh);
            return onyx_oom("string tensor element");
        }
    }
    char **to = dst->data;
    for (size_t i = 0; i < n; i++) {
        free(to[i]);
        to[i] = fresh[i];
    }
    free(fresh);
    return ONYX_OK;
}

onyx_status tensor_set_string(tensor *t, int64_t i, const char *s, size_t len) {
    if (t->dtype != ONYX_STRING || !t->owns || !t->data)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "set string: tensor is not an owned string tensor (dtype %s)",
                          onyx_dtype_name(t->dtype));
    if (i < 0 || i >= t->numel)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "set string: index %" PRId64 " out of range [0, %" PRId64 ")", i,
                          t->numel);
    if (len > 0 && !s) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "set string: NULL string");
    if (len == SIZE_MAX) return onyx_oom("string tensor element");
    char *d = dup_string(s, len);
    if (!d) return onyx_oom("string tensor element");
    char **strs = t->data;
    free(strs[i]);
    strs[i] = d;
    return ONYX_OK;
}

/* Reads element i of the numeric types that have a native C type as `T` via `CONV`. */
#define NATIVE_TYPES(X)                                                                            \
    X(ONYX_FLOAT, float)                                                                           \
    X(ONYX_DOUBLE, double)                                                                         \
    X(ONYX_INT8, int8_t)                                                                           \
    X(ONYX_INT16, int16_t)                                                                         \
    X(ONYX_INT32, int32_t)                                                                         \
    X(ONYX_INT64, int64_t)                                                                         \
    X(ONYX_UINT8, uint8_t)                                                                         \
    X(ONYX_UINT16, uint16_t)                                                                       \
    X(ONYX_UINT32, uint32_t)                                                                       \
    X(ONYX_UINT64, uint64_t)

/* Sub-byte element i as an integer (sign-extended for int4/int2); packed low bits first. */
static int64_t subbyte_int(const tensor *t, int64_t i) {
    int bits = dtype_packed_bits(t->dtype);
    unsigned v = dtype_packed_get(t->data, i, (unsigned)bits);
    bool is_signed = t->dtype == ONYX_INT4 || t->dtype == ONYX_INT2;
    if (is_signed && (v & (1u << (bits - 1)))) return (int64_t)v - ((int64_t)1 << bits);
    return (int64_t)v;
}

static const float fp4_values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

double tensor_get_f64(const tensor *t, int64_t i) {
    if (!t || !t->data || i < 0 || i >= t->numel) return 0.0;
    switch (t->dtype) {
#define GET(D, T)                                                                                  \
    case D: return (double)((const T *)t->data)[i];
        NATIVE_TYPES(GET)
#undef GET
    case ONYX_BOOL: return ((const uint8_t *)t->data)[i] ? 1.0 : 0.0;
    case ONYX_FLOAT16: return fp16_to_float(((const uint16_t *)t->data)[i]);
    case ONYX_BFLOAT16: return bf16_to_float(((const uint16_t *)t->data)[i]);
    case ONYX_INT4:
    case ONYX_UINT4:
    case ONYX_INT2:
    case ONYX_UINT2: return (double)subbyte_int(t, i);
    case ONYX_FLOAT4E2M1: {
        unsigned v = (unsigned)subbyte_int(t, i);
        double m = fp4_values[v & 7];
        return (v & 8) ? -m : m;
    }
    case ONYX_FLOAT6E2M3:
    case ONYX_FLOAT6E3M2: return floatconv_decode(t->dtype, (uint8_t)subbyte_int(t, i));
    default: return NAN;
    }
}

int64_t tensor_get_i64(const tensor *t, int64_t i) {
    if (!t || !t->data || i < 0 || i >= t->numel) return 0;
    switch (t->dtype) {
    case ONYX_INT8: return ((const int8_t *)t->data)[i];
    case ONYX_INT16: return ((const int16_t *)t->data)[i];
    case ONYX_INT32: return ((const int32_t *)t->data)[i];
    case ONYX_INT64: return ((const int64_t *)t->data)[i];
    case ONYX_UINT8: return ((const uint8_t *)t->data)[i];
    case ONYX_UINT16: return ((const uint16_t *)t->data)[i];
    case ONYX_UINT32: return ((const uint32_t *)t->data)[i];
    /* Wraps (as two's complement) beyond INT64_MAX, as an ONNX cast would. */
    case ONYX_UINT64: return (int64_t)((const uint64_t *)t->data)[i];
    case ONYX_BOOL: return ((const uint8_t *)t->data)[i] != 0;
    case ONYX_INT4:
    case ONYX_UINT4:
    case ONYX_INT2:
    case ONYX_UINT2: return subbyte_int(t, i);
    default: {
        /* Floats truncate toward zero; NaN and out-of-range values must not reach the cast,
         * which would be undefined. */
        double d = tensor_get_f64(t, i);
        if (isnan(d)) return 0;
        if (d >= 9223372036854775807.0) return INT64_MAX;
        if (d <= -9223372036854775808.0) return INT64_MIN;
        return (int64_t)d;
    }
    }
}

onyx_status tensor_to_i64s(const tensor *t, int64_t *out, size_t cap, size_t *count) {
    char sh[256];
    if (t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "expected an int64 or int32 tensor, got tensor(%s)",
                          onyx_dtype_name(t->dtype));
    if (t->rank > 1)
        return onyx_error(ONYX_ERR_SHAPE, "expected a 1-D tensor, got shape %s",
                          shape_str(t->rank, t->dims, sh, sizeof sh));
    if ((uint64_t)t->numel > cap)
        return onyx_error(ONYX_ERR_SHAPE, "tensor has %" PRId64 " elements, at most %zu allowed",
                          t->numel, cap);
    if (t->numel > 0 && !t->data)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "tensor has no data");
    for (int64_t i = 0; i < t->numel; i++) out[i] = tensor_get_i64(t, i);
    *count = (size_t)t->numel;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ types */

void type_init(type_info *t) {
    memset(t, 0, sizeof *t);
    t->kind = ONYX_VALUE_NONE;
    t->dtype = ONYX_UNDEFINED;
    t->rank = -1;
    t->elem = NULL;
}

void type_release(type_info *t) {
    if (!t) return;
    if (t->elem) {
        type_release(t->elem);
        free(t->elem);
    }
    type_init(t);
}

/* A heap copy of `src` (NULL src gives NULL with ONYX_OK). */
static onyx_status type_dup(type_info **out, const type_info *src) {
    *out = NULL;
    if (!src) return ONYX_OK;
    type_info *n = malloc(sizeof *n);
    if (!n) return onyx_oom("type description");
    onyx_status st = type_copy(n, src);
    if (st != ONYX_OK) {
        free(n);
        return st;
    }
    *out = n;
    return ONYX_OK;
}

onyx_status type_copy(type_info *dst, const type_info *src) {
    type_info n = *src;
    n.elem = NULL;
    TRY(type_dup(&n.elem, src->elem));
    *dst = n;
    return ONYX_OK;
}

void type_set_tensor(type_info *t, onyx_dtype dtype, int rank, const int64_t *dims) {
    /* t->elem is not released: t may be uninitialised here. Reusing a sequence type for a tensor
     * needs type_release first. */
    t->kind = ONYX_VALUE_TENSOR;
    t->dtype = dtype;
    t->rank = (rank < 0 || rank > ONYX_MAX_RANK) ? -1 : rank;
    t->elem = NULL;
    for (int i = 0; i < ONYX_MAX_RANK; i++)
        t->dims[i] = (i < t->rank) ? (dims ? dims[i] : -1) : 0;
}

/* Widens `acc` so that it also describes `b`: what differs becomes unknown. */
static void type_merge(type_info *acc, const type_info *b) {
    if (acc->kind != b->kind) {
        type_release(acc);
        return;
    }
    if (acc->dtype != b->dtype) acc->dtype = ONYX_UNDEFINED;
    if (acc->rank != b->rank) {
        acc->rank = -1;
    } else {
        for (int i = 0; i < acc->rank; i++)
            if (acc->dims[i] != b->dims[i]) acc->dims[i] = -1;
    }
    if (acc->elem && b->elem) {
        type_merge(acc->elem, b->elem);
    } else if (acc->elem) {
        type_release(acc->elem);
        free(acc->elem);
        acc->elem = NULL;
    }
}

/* Sets t->elem to the type of `item` (a heap copy that type_release frees, even on failure). */
static onyx_status elem_of_value(type_info *t, const onyx_value *item) {
    t->elem = malloc(sizeof *t->elem);
    if (!t->elem) return onyx_oom("type description");
    type_init(t->elem);
    return type_of_value(t->elem, item);
}

onyx_status type_of_value(type_info *out, const onyx_value *v) {
    type_info n;
    type_init(&n);
    onyx_status st = ONYX_OK;
    switch (v->kind) {
    case ONYX_VALUE_TENSOR: type_set_tensor(&n, v->t.dtype, v->t.rank, v->t.dims); break;
    case ONYX_VALUE_SEQUENCE:
        n.kind = ONYX_VALUE_SEQUENCE;
        if (v->seq.count == 0) {
            CHECK(type_dup(&n.elem, v->elem_type));
            break;
        }
        CHECK(elem_of_value(&n, v->seq.items[0]));
        for (size_t i = 1; i < v->seq.count; i++) {
            type_info item;
            CHECK(type_of_value(&item, v->seq.items[i]));
            type_merge(n.elem, &item);
            type_release(&item);
        }
        break;
    case ONYX_VALUE_OPTIONAL:
        n.kind = ONYX_VALUE_OPTIONAL;
        if (!v->opt) {
            CHECK(type_dup(&n.elem, v->elem_type));
            break;
        }
        CHECK(elem_of_value(&n, v->opt));
        break;
    case ONYX_VALUE_MAP:
        n.kind = ONYX_VALUE_MAP;
        n.dtype = v->map.keys->t.dtype;
        n.elem = malloc(sizeof *n.elem);
        if (!n.elem) {
            st = onyx_oom("type description");
            goto done;
        }
        type_init(n.elem);
        type_set_tensor(n.elem, v->map.values->t.dtype, 0, NULL);
        break;
    default: n.kind = v->kind; break;
    }
    *out = n;
    return ONYX_OK;
done:
    type_release(&n);
    return st;
}

onyx_status type_of_value_kinds(type_info *out, const onyx_value *v) {
    if (v->kind != ONYX_VALUE_SEQUENCE && v->kind != ONYX_VALUE_OPTIONAL) {
        TRY(type_of_value(out, v)); /* a tensor, or a map (its keys and values, both 1-D) */
        for (type_info *t = out; t; t = t->elem) t->rank = -1;
        return ONYX_OK;
    }
    const onyx_value *item = v->kind == ONYX_VALUE_SEQUENCE ? (v->seq.count ? v->seq.items[0] : NULL)
                                                             : v->opt;
    type_info n;
    type_init(&n);
    n.kind = v->kind;
    onyx_status st = ONYX_OK;
    if (!item) {
        CHECK(type_dup(&n.elem, v->elem_type));
        for (type_info *e = n.elem; e; e = e->elem) e->rank = -1;
    } else if (!(n.elem = malloc(sizeof *n.elem))) {
        st = onyx_oom("type description");
        goto done;
    } else {
        type_init(n.elem);
        CHECK(type_of_value_kinds(n.elem, item));
    }
    *out = n;
    return ONYX_OK;
done:
    type_release(&n);
    return st;
}

bool type_is_static(const type_info *t) {
    if (!t || t->kind != ONYX_VALUE_TENSOR || t->rank < 0) return false;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0) return false;
    return true;
}

/* True when the element types described by `a` and `b` (either may be NULL = unknown) could be
 * the same. */
bool types_compatible(const type_info *a, const type_info *b) {
    if (!a || !b || a->kind == ONYX_VALUE_NONE || b->kind == ONYX_VALUE_NONE) return true;
    if (a->kind != b->kind) return false;
    if (a->dtype != ONYX_UNDEFINED && b->dtype != ONYX_UNDEFINED && a->dtype != b->dtype)
        return false;
    if (a->kind == ONYX_VALUE_TENSOR && a->rank >= 0 && b->rank >= 0) {
        if (a->rank != b->rank) return false;
        for (int i = 0; i < a->rank; i++)
            if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) return false;
    }
    return types_compatible(a->elem, b->elem);
}

bool type_accepts(const type_info *t, const onyx_value *v) {
    if (!t || t->kind == ONYX_VALUE_NONE) return true;
    if (!v || v->kind != t->kind) return false;
    switch (v->kind) {
    case ONYX_VALUE_TENSOR:
        if (t->dtype != ONYX_UNDEFINED && t->dtype != v->t.dtype) return false;
        if (t->rank < 0) return true;
        if (t->rank != v->t.rank) return false;
        for (int i = 0; i < t->rank; i++)
            if (t->dims[i] >= 0 && t->dims[i] != v->t.dims[i]) return false;
        return true;
    case ONYX_VALUE_SEQUENCE:
        if (!t->elem) return true;
        if (v->seq.count == 0) return types_compatible(t->elem, v->elem_type);
        for (size_t i = 0; i < v->seq.count; i++)
            if (!type_accepts(t->elem, v->seq.items[i])) return false;
        return true;
    case ONYX_VALUE_OPTIONAL:
        if (!t->elem) return true;
        if (!v->opt) return types_compatible(t->elem, v->elem_type);
        return type_accepts(t->elem, v->opt);
    case ONYX_VALUE_MAP:
        if (t->dtype != ONYX_UNDEFINED && t->dtype != v->map.keys->t.dtype) return false;
        return !t->elem || t->elem->kind == ONYX_VALUE_NONE ||
               (t->elem->kind == ONYX_VALUE_TENSOR &&
                (t->elem->dtype == ONYX_UNDEFINED || t->elem->dtype == v->map.values->t.dtype));
    default: return true;
    }
}

static void sb_type(strbuf *sb, const type_info *t) {
    if (!t) {
        sb_printf(sb, "?");
        return;
    }
    switch (t->kind) {
    case ONYX_VALUE_TENSOR:
        sb_printf(sb, "tensor(%s)", t->dtype == ONYX_UNDEFINED ? "?" : onyx_dtype_name(t->dtype));
        if (t->rank >= 0) sb_shape(sb, t->rank, t->dims);
        break;
    case ONYX_VALUE_SEQUENCE:
        sb_printf(sb, "seq(");
        sb_type(sb, t->elem);
        sb_printf(sb, ")");
        break;
    case ONYX_VALUE_OPTIONAL:
        sb_printf(sb, "optional(");
        sb_type(sb, t->elem);
        sb_printf(sb, ")");
        break;
    case ONYX_VALUE_MAP:
        sb_printf(sb, "map(%s,", t->dtype == ONYX_UNDEFINED ? "?" : onyx_dtype_name(t->dtype));
        if (t->elem && t->elem->kind == ONYX_VALUE_TENSOR && t->elem->rank <= 0)
            sb_printf(sb, "%s", t->elem->dtype == ONYX_UNDEFINED ? "?" : onyx_dtype_name(t->elem->dtype));
        else
            sb_type(sb, t->elem);
        sb_printf(sb, ")");
        break;
    default: sb_printf(sb, "?"); break;
    }
}

const char *type_str(const type_info *t, char *buf, size_t cap) {
    strbuf sb = {buf, cap, 0};
    if (cap) buf[0] = '\0';
    sb_type(&sb, t);
    return buf;
}

/* ------------------------------------------------------------------ values */

onyx_value *value_new(void) {
    onyx_value *v = calloc(1, sizeof *v);
    if (v) v->kind = ONYX_VALUE_NONE;
    return v;
}

static void value_destroy(onyx_value *v) {
    if (!v) return;
    value_clear(v);
    free(v);
}

/* ---- sequence stores (core/value.h) */

struct seq_store {
    atomic_size_t refs; /* sequence values holding it */
    atomic_size_t len;  /* items set: each value sees a prefix of them */
    size_t cap;
    /* value_make_map_rows: one allocation holding items and their data (NULL: none). Items in it
     * own nothing (their tensors borrow it) and go with it, not one by one. */
    char *block;
    size_t block_size;
    onyx_value *items[];
};

static seq_store *store_new(size_t cap) {
    if (cap < 4) cap = 4;
    if (cap > (SIZE_MAX - sizeof(seq_store)) / sizeof(onyx_value *)) return NULL;
    seq_store *st = malloc(sizeof *st + cap * sizeof(onyx_value *));
    if (!st) return NULL;
    atomic_init(&st->refs, 1);
    atomic_init(&st->len, 0);
    st->cap = cap;
    st->block = NULL;
    st->block_size = 0;
    return st;
}

/* Frees an item of the store, unless it lives in the store's block (freed with the store). */
static void item_destroy(const seq_store *st, onyx_value *item) {
    uintptr_t at = (uintptr_t)item, block = (uintptr_t)st->block;
    if (!st->block || at < block || at >= block + st->block_size) value_destroy(item);
}

static void store_release(seq_store *st) {
    if (!st || atomic_fetch_sub_explicit(&st->refs, 1, memory_order_acq_rel) != 1) return;
    size_t len = atomic_load_explicit(&st->len, memory_order_relaxed);
    for (size_t i = 0; i < len; i++) item_destroy(st, st->items[i]);
    free(st->block);
    free(st);
}

static onyx_status copy_into(onyx_value *dst, const onyx_value *src);

/* Makes seq's items its own, in a store with room for `room` more: the store itself when no other
 * value holds it (dropping what other values appended and let go of), else a deep copy of the
 * items it sees. */
static onyx_status seq_own(onyx_value *seq, size_t room) {
    seq_store *st = seq->seq.store;
    size_t n = seq->seq.count;
    if (room > SIZE_MAX / 4 - n) return onyx_oom("sequence items");
    if (st && atomic_load_explicit(&st->refs, memory_order_acquire) == 1) {
        size_t len = atomic_load_explicit(&st->len, memory_order_relaxed);
        for (size_t i = n; i < len; i++) item_destroy(st, st->items[i]);
        atomic_store_explicit(&st->len, n, memory_order_relaxed);
        if (n + room <= st->cap) return ONYX_OK;
        size_t cap = st->cap * 2 > n + room ? st->cap * 2 : n + room;
        if (cap > (SIZE_MAX - sizeof(seq_store)) / sizeof(onyx_value *))
            return onyx_oom("sequence items");
        seq_store *grown = realloc(st, sizeof *st + cap * sizeof(onyx_value *));
        if (!grown) return onyx_oom("sequence items");
        grown->cap = cap;
        seq->seq.store = grown;
        seq->seq.items = grown->items;
        return ONYX_OK;
    }
    seq_store *own = store_new(n + room > 2 * n ? n + room : 2 * n);
    if (!own) return onyx_oom("sequence items");
    onyx_status status = ONYX_OK;
    size_t made = 0;
    while (made < n && status == ONYX_OK) {
        onyx_value *item = value_new();
        if (!item) {
            status = onyx_oom("sequence item");
            break;
        }
        own->items[made++] = item; /* counted first: a partial copy is freed with the store */
        status = copy_into(item, seq->seq.items[made - 1]);
    }
    atomic_store_explicit(&own->len, made, memory_order_relaxed);
    if (status != ONYX_OK) {
        store_release(own);
        return status;
    }
    store_release(st);
    seq->seq.store = own;
    seq->seq.items = own->items;
    return ONYX_OK;
}

void value_clear(onyx_value *v) {
    if (!v) return;
    switch (v->kind) {
    case ONYX_VALUE_TENSOR: tensor_release(&v->t); break;
    case ONYX_VALUE_SEQUENCE: store_release(v->seq.store); break;
    case ONYX_VALUE_OPTIONAL: value_destroy(v->opt); break;
    case ONYX_VALUE_MAP:
        value_destroy(v->map.keys);
        value_destroy(v->map.values);
        break;
    default: break;
    }
    if (v->elem_type) {
        type_release(v->elem_type);
        free(v->elem_type);
    }
    memset(v, 0, sizeof *v);
    v->kind = ONYX_VALUE_NONE;
}

onyx_status value_alloc_tensor(onyx_value *v, onyx_dtype dtype, int rank, const int64_t *dims) {
    value_clear(v);
    TRY(tensor_alloc(&v->t, dtype, rank, dims));
    v->kind = ONYX_VALUE_TENSOR;
    return ONYX_OK;
}

onyx_status value_alloc_output(onyx_value *v, onyx_dtype dtype, int rank, const int64_t *dims) {
    value_clear(v);
    TRY(alloc_tensor(&v->t, dtype, rank, dims, false));
    v->kind = ONYX_VALUE_TENSOR;
    return ONYX_OK;
}

void value_borrow_tensor(onyx_value *v, const tensor *src) {
    /* src may be v's own (borrowed) tensor: copy the description before clearing v. An owned
     * tensor of v itself would be freed by the clear, so callers never pass one. */
    tensor t = *src;
    value_clear(v);
    v->kind = ONYX_VALUE_TENSOR;
    v->t = t;
    v->t.owns = false;
}

/* Deep copy into a zeroed `dst`; on failure dst holds whatever was built (caller clears it). */
static onyx_status copy_into(onyx_value *dst, const onyx_value *src) {
    TRY(type_dup(&dst->elem_type, src->elem_type));
    switch (src->kind) {
    case ONYX_VALUE_TENSOR:
        TRY(tensor_copy(&dst->t, &src->t));
        dst->kind = ONYX_VALUE_TENSOR;
        return ONYX_OK;
    case ONYX_VALUE_SEQUENCE:
        dst->kind = ONYX_VALUE_SEQUENCE;
        if (src->seq.count == 0) return ONYX_OK;
        TRY(value_seq_reserve(dst, src->seq.count));
        for (size_t i = 0; i < src->seq.count; i++) {
            onyx_value *item = value_new();
            if (!item) return onyx_oom("sequence item");
            TRY(value_seq_push(dst, item)); /* reserved: cannot fail */
            TRY(copy_into(item, src->seq.items[i]));
        }
        return ONYX_OK;
    case ONYX_VALUE_OPTIONAL:
        dst->kind = ONYX_VALUE_OPTIONAL;
        if (!src->opt) return ONYX_OK;
        dst->opt = value_new();
        if (!dst->opt) return onyx_oom("optional element");
        return copy_into(dst->opt, src->opt);
    case ONYX_VALUE_MAP:
        dst->kind = ONYX_VALUE_MAP;
        dst->map.keys = value_new();
        dst->map.values = value_new();
        if (!dst->map.keys || !dst->map.values) return onyx_oom("map");
        TRY(copy_into(dst->map.keys, src->map.keys));
        return copy_into(dst->map.values, src->map.values);
    default: dst->kind = src->kind; return ONYX_OK;
    }
}

onyx_status value_copy(onyx_value *dst, const onyx_value *src) {
    if (dst == src) return ONYX_OK;
    onyx_value n = {0};
    onyx_status st = copy_into(&n, src);
    if (st != ONYX_OK) {
        value_clear(&n);
        return st;
    }
    value_clear(dst);
    *dst = n;
    return ONYX_OK;
}

onyx_status value_share(onyx_value *dst, const onyx_value *src) {
    if (src->kind != ONYX_VALUE_SEQUENCE || src->seq.count == 0) return value_copy(dst, src);
    if (dst == src) return ONYX_OK;
    onyx_value n = {0};
    TRY(type_dup(&n.elem_type, src->elem_type));
    n.kind = ONYX_VALUE_SEQUENCE;
    atomic_fetch_add_explicit(&src->seq.store->refs, 1, memory_order_relaxed);
    n.seq.store = src->seq.store;
    n.seq.items = src->seq.items;
    n.seq.count = src->seq.count;
    value_clear(dst);
    *dst = n;
    return ONYX_OK;
}

onyx_status value_unshare(onyx_value *v) {
    if (!v) return ONYX_OK;
    if (v->kind == ONYX_VALUE_OPTIONAL) return value_unshare(v->opt);
    if (v->kind != ONYX_VALUE_SEQUENCE || !v->seq.store) return ONYX_OK;
    TRY(seq_own(v, 0));
    for (size_t i = 0; i < v->seq.count; i++) TRY(value_unshare(v->seq.items[i]));
    return ONYX_OK;
}

void value_move(onyx_value *dst, onyx_value *src) {
    if (dst == src) return;
    value_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
    src->kind = ONYX_VALUE_NONE;
}

static onyx_status need_sequence(const char *what, const onyx_value *seq) {
    if (seq->kind != ONYX_VALUE_SEQUENCE)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: value is not a sequence (kind %d)", what,
                          (int)seq->kind);
    return ONYX_OK;
}

onyx_status value_seq_reserve(onyx_value *seq, size_t n) {
    TRY(need_sequence("reserve", seq));
    if (!seq->seq.store) {
        if (!(seq->seq.store = store_new(n))) return onyx_oom("sequence items");
        seq->seq.items = seq->seq.store->items;
        return ONYX_OK;
    }
    return seq_own(seq, n);
}

/* On failure the caller keeps `item` (nothing is taken). */
onyx_status value_seq_push(onyx_value *seq, onyx_value *item) {
    TRY(need_sequence("push", seq));
    if (!item) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "push: NULL item");
    seq_store *st = seq->seq.store;
    size_t n = seq->seq.count;
    /* At the end of a store's items, with room: claim the next slot in place, whoever else
     * shares the store (they see shorter prefixes). */
    if (st && n < st->cap &&
        atomic_compare_exchange_strong_explicit(&st->len, &n, n + 1, memory_order_acq_rel,
                                                memory_order_relaxed)) {
        st->items[n] = item;
        seq->seq.count = n + 1;
        return ONYX_OK;
    }
    TRY(value_seq_reserve(seq, 1));
    st = seq->seq.store;
    n = seq->seq.count;
    st->items[n] = item;
    atomic_store_explicit(&st->len, n + 1, memory_order_relaxed);
    seq->seq.count = n + 1;
    return ONYX_OK;
}

onyx_status value_seq_insert(onyx_value *seq, size_t pos, onyx_value *item) {
    TRY(need_sequence("insert", seq));
    size_t n = seq->seq.count;
    if (pos > n)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "insert: position %zu past the end (%zu)",
                          pos, n);
    if (pos == n) return value_seq_push(seq, item);
    /* in the middle the items move, so they must be this value's own: then the push cannot fail */
    TRY(seq_own(seq, 1));
    TRY(value_seq_push(seq, item));
    onyx_value **items = seq->seq.store->items;
    memmove(items + pos + 1, items + pos, (n - pos) * sizeof *items);
    items[pos] = item;
    return ONYX_OK;
}

onyx_status value_seq_erase(onyx_value *seq, size_t pos) {
    TRY(need_sequence("erase", seq));
    size_t n = seq->seq.count;
    if (pos >= n)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "erase: position %zu past the end (%zu)",
                          pos, n);
    if (pos + 1 < n) {
        TRY(seq_own(seq, 0));
        onyx_value **items = seq->seq.store->items;
        onyx_value *gone = items[pos];
        memmove(items + pos, items + pos + 1, (n - 1 - pos) * sizeof *items);
        items[n - 1] = gone; /* past the new end: freed with the store or the next change */
    }
    seq->seq.count = n - 1; /* the last item stays in the store, unseen */
    return ONYX_OK;
}

static onyx_status make_container(onyx_value *v, onyx_value_kind kind, const type_info *elem) {
    /* Copy first: `elem` may point at v's own elem_type. */
    type_info *et;
    TRY(type_dup(&et, elem));
    value_clear(v);
    v->kind = kind;
    v->elem_type = et;
    return ONYX_OK;
}

onyx_status value_make_sequence(onyx_value *v, const type_info *elem) {
    return make_container(v, ONYX_VALUE_SEQUENCE, elem);
}

onyx_status value_make_optional(onyx_value *v, const type_info *elem) {
    return make_container(v, ONYX_VALUE_OPTIONAL, elem);
}

onyx_status value_make_map(onyx_value *v, onyx_value *keys, onyx_value *values) {
    if (!keys || !values || keys->kind != ONYX_VALUE_TENSOR || values->kind != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "map: keys and values must be tensors");
    if (keys->t.rank != 1 || values->t.rank != 1 || keys->t.dims[0] != values->t.dims[0])
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "map: keys and values must be 1-D tensors of "
                          "one length (got %" PRId64 " keys and %" PRId64 " values)",
                          keys->t.numel, values->t.numel);
    if (keys->t.dtype != ONYX_INT64 && keys->t.dtype != ONYX_INT32 && keys->t.dtype != ONYX_STRING)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "map: keys of type %s (expected int64, int32 "
                          "or string)", onyx_dtype_name(keys->t.dtype));
    value_clear(v);
    v->kind = ONYX_VALUE_MAP;
    v->map.keys = keys;
    v->map.values = values;
    return ONYX_OK;
}

/* value_make_map_rows' block: the maps, their values tensors and the one keys tensor they share,
 * then the keys' data, then the values (a rows x n matrix). */
typedef struct map_rows_layout {
    size_t keys_at, values_at, size;
} map_rows_layout;

static size_t align_up(size_t n) { return (n + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT; }

static onyx_status map_rows_layout_of(const tensor *keys, size_t row_bytes, int64_t rows,
                                      map_rows_layout *out) {
    size_t n = (size_t)keys->numel, key_bytes = keys->nbytes;
    if (keys->dtype == ONYX_STRING)
        for (size_t k = 0; k < n; k++) {
            const char *s = ((char *const *)keys->data)[k];
            key_bytes += strlen(s ? s : "") + 1;
        }
    if ((uint64_t)rows > (SIZE_MAX / 4 - ALIGNMENT) / (2 * sizeof(onyx_value) + row_bytes) ||
        key_bytes > SIZE_MAX / 4)
        return onyx_oom("map rows");
    out->keys_at = align_up(((size_t)rows * 2 + 1) * sizeof(onyx_value));
    out->values_at = align_up(out->keys_at + key_bytes);
    out->size = align_up(out->values_at + (size_t)rows * row_bytes);
    return ONYX_OK;
}

onyx_status value_make_map_rows(onyx_value *v, const tensor *keys, onyx_dtype value_dtype,
                                int64_t rows, void **values) {
    size_t elem = value_dtype == ONYX_STRING ? 0 : dtype_size(value_dtype);
    if (keys->rank != 1 || keys->device != DEVICE_CPU || (keys->numel && !keys->data) ||
        (keys->dtype != ONYX_INT64 && keys->dtype != ONYX_INT32 && keys->dtype != ONYX_STRING))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "map rows: keys must be a 1-D host tensor of "
                          "int64, int32 or strings");
    if (!elem || rows < 0)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "map rows: %" PRId64 " rows of %s values",
                          rows, onyx_dtype_name(value_dtype));
    int64_t n = keys->numel;
    tensor row = {0};
    TRY(tensor_set_shape(&row, value_dtype, 1, &n));
    if (rows == 0) {
        TRY(value_make_sequence(v, NULL));
        *values = NULL;
        return ONYX_OK;
    }
    map_rows_layout at = {0};
    TRY(map_rows_layout_of(keys, row.nbytes, rows, &at));
    seq_store *st = store_new((size_t)rows);
    char *block = st ? aligned_alloc(ALIGNMENT, at.size) : NULL;
    if (!block) {
        free(st);
        return onyx_oom("map rows");
    }
    /* the values are assigned whole below; the keys and the values' data start zeroed */
    memset(block + at.keys_at, 0, at.size - at.keys_at);
    st->block = block;
    st->block_size = at.size;
    onyx_value *maps = (onyx_value *)block, *vals = maps + rows, *shared_keys = vals + rows;
    *shared_keys = (onyx_value){.kind = ONYX_VALUE_TENSOR, .t = *keys};
    shared_keys->t.owns = false;
    shared_keys->t.data = block + at.keys_at;
    if (keys->dtype == ONYX_STRING) { /* the pointers, then the strings they point at */
        char **to = shared_keys->t.data, *text = (char *)(to + n);
        for (int64_t k = 0; k < n; k++) {
            const char *s = ((char *const *)keys->data)[k];
            size_t len = strlen(s ? s : "") + 1;
            memcpy(text, s ? s : "", len);
            to[k] = text;
            text += len;
        }
    } else if (keys->nbytes) {
        memcpy(shared_keys->t.data, keys->data, keys->nbytes);
    }
    char *data = block + at.values_at;
    const onyx_value value_row = {.kind = ONYX_VALUE_TENSOR, .t = row},
                      map = {.kind = ONYX_VALUE_MAP, .map.keys = shared_keys};
    for (int64_t r = 0; r < rows; r++) {
        vals[r] = value_row;
        vals[r].t.data = data + (size_t)r * row.nbytes;
        maps[r] = map;
        maps[r].map.values = &vals[r];
        st->items[r] = &maps[r];
    }
    atomic_store_explicit(&st->len, (size_t)rows, memory_order_relaxed);
    value_clear(v);
    v->kind = ONYX_VALUE_SEQUENCE;
    v->seq.store = st;
    v->seq.items = st->items;
    v->seq.count = (size_t)rows;
    *values = data;
    return ONYX_OK;
}
