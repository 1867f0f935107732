/* TensorProto / SparseTensorProto / SequenceProto / OptionalProto -> tensors and values: every
 * dtype in every storage form, sizes checked against dims before anything is allocated, and
 * external data read only from regular files strictly beneath the model's folder. */
#include "core/tensor_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/loader_wire.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "raw_data is little-endian and is copied as is");

#define LABEL_CAP 160

static const char *tensor_label(const Onnx__TensorProto *tp, char *buf, size_t cap) {
    if (tp && tp->name && tp->name[0])
        snprintf(buf, cap, "tensor '%s'", tp->name);
    else
        snprintf(buf, cap, "unnamed tensor");
    return buf;
}

/* Validates the declared dims: the loader refuses what tensor_set_shape would call a shape
 * error, as a malformed model. */
static onyx_status check_dims(const char *label, size_t n_dims, const int64_t *dims,
                              int64_t *numel) {
    char sh[256];
    if (n_dims > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s has rank %zu; onyx supports at most %d",
                          label, n_dims, ONYX_MAX_RANK);
    for (size_t i = 0; i < n_dims; i++)
        if (dims[i] < 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has negative dim %" PRId64 " at axis %zu",
                              label, dims[i], i);
    if (!shape_numel((int)n_dims, dims, numel))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "%s has dims %s whose element count overflows int64", label,
                          shape_str((int)n_dims, dims, sh, sizeof sh));
    return ONYX_OK;
}

/* ------------------------------------------------------------------ storage */

static const char empty_string[1] = "";

/* A shaped tensor with zeroed storage from the pool (borrowed) or the heap (owned). Strings
 * start empty. */
static onyx_status alloc_storage(pool *p, tensor *t, onyx_dtype d, int rank, const int64_t *dims) {
    if (!p) return tensor_alloc(t, d, rank, dims);
    tensor n = {0};
    TRY(tensor_set_shape(&n, d, rank, dims));
    n.data = pool_alloc(p, n.nbytes ? n.nbytes : 1, 1);
    if (!n.data) return onyx_oom("tensor data");
    if (d == ONYX_STRING) {
        const char **s = n.data;
        for (int64_t i = 0; i < n.numel; i++) s[i] = empty_string; /* never freed: owns is false */
    }
    n.owns = false;
    *t = n;
    return ONYX_OK;
}

static onyx_status set_string(pool *p, tensor *t, int64_t i, const uint8_t *s, size_t len) {
    if (!p) return tensor_set_string(t, i, (const char *)s, len);
    char *copy = pool_strndup(p, (const char *)s, len);
    if (!copy) return onyx_oom("string element");
    ((char **)t->data)[i] = copy;
    return ONYX_OK;
}

/* Pool storage goes away with the pool; only heap storage is released here. */
static void drop_storage(pool *p, tensor *t) {
    if (!p) tensor_release(t);
}

/* ------------------------------------------------------------------ external data */

/* External tensors of at least this size, at offsets of this alignment, are mapped. */
enum { MAP_MIN_BYTES = 1 << 16, MAP_ALIGN = 64 };

typedef struct ext_ref {
    const char *location;
    uint64_t offset;
    bool has_length;
    uint64_t length;
} ext_ref;

static bool parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static onyx_status parse_external(const Onnx__TensorProto *tp, const char *label, ext_ref *r) {
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e || !e->key) continue;
        if (strcmp(e->key, "location") == 0) {
            r->location = e->value;
        } else if (strcmp(e->key, "offset") == 0) {
            if (!parse_u64(e->value, &r->offset))
                return onyx_error(ONYX_ERR_INVALID_MODEL,
                                  "%s: external data offset '%s' is not a non-negative integer",
                                  label, e->value ? e->value : "");
        } else if (strcmp(e->key, "length") == 0) {
            if (!parse_u64(e->value, &r->length))
                return onyx_error(ONYX_ERR_INVALID_MODEL,
                                  "%s: external data length '%s' is not a non-negative integer",
                                  label, e->value ? e->value : "");
            r->has_length = true;
        }
        /* "checksum" and unknown keys are informative only. */
    }
    if (!r->location || !r->location[0])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s: external data has no location", label);
    return ONYX_OK;
}

/* Opens `location` beneath `base_dir` one component at a time with O_NOFOLLOW, so that neither
 * '..', an absolute path nor a symbolic link anywhere on the way can lead outside the folder,
 * even if the tree changes meanwhile. The file must be a regular file with a single link (a hard
 * link could expose a file from elsewhere). */
static onyx_status open_external(const char *base_dir, const char *location, const char *label,
                                 int *out_fd, off_t *out_size) {
    onyx_status st = ONYX_OK;
    int dirfd = -1, fd = -1;
    char *path = NULL;
    if (!base_dir) {
        st = onyx_error(ONYX_ERR_IO,
                        "%s: external data '%s' cannot be read: the model was given without a "
                        "folder to read it from",
                        label, location);
        goto done;
    }
    if (location[0] == '/') {
        st = onyx_error(ONYX_ERR_INVALID_MODEL,
                        "%s: external data location '%s' is an absolute path; it must be relative "
                        "to the model's folder",
                        label, location);
        goto done;
    }
    /* Check every component before touching the file system. */
    int count = 0;
    for (const char *c = location; *c;) {
        const char *e = strchrnul(c, '/');
        size_t n = (size_t)(e - c);
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "%s: external data location '%s' contains '..'; it must stay inside "
                            "the model's folder",
                            label, location);
            goto done;
        }
        if (n > 0 && !(n == 1 && c[0] == '.')) count++;
        c = *e ? e + 1 : e;
    }
    if (count == 0) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "%s: external data location '%s' names no file",
                        label, location);
        goto done;
    }
    path = strdup(location);
    if (!path) {
        st = onyx_oom("external data path");
        goto done;
    }
    dirfd = open(base_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        st = onyx_error(ONYX_ERR_IO, "%s: cannot open the model folder '%s': %s", label, base_dir,
                        strerror(errno));
        goto done;
    }
    int seen = 0;
    for (char *save = NULL, *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0) continue;
        bool final = ++seen == count;
        struct stat sb;
        if (fstatat(dirfd, c, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            st = onyx_error(ONYX_ERR_IO, "%s: cannot find external data file '%s' in '%s': %s",
                            label, location, base_dir, strerror(errno));
            goto done;
        }
        if (S_ISLNK(sb.st_mode)) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "%s: external data location '%s' goes through a symbolic link ('%s'); "
                            "links are refused",
                            label, location, c);
            goto done;
        }
        if (!final) {
            if (!S_ISDIR(sb.st_mode)) {
                st = onyx_error(ONYX_ERR_IO, "%s: external data location '%s': '%s' is not a folder",
                                label, location, c);
                goto done;
            }
            int next = openat(dirfd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) {
                st = onyx_error(ONYX_ERR_IO, "%s: cannot open folder '%s' of external data '%s': %s",
                                label, c, location, strerror(errno));
                goto done;
            }
            close(dirfd);
            dirfd = next;
            continue;
        }
        if (!S_ISREG(sb.st_mode)) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "%s: external data location '%s' is not a regular file", label,
                            location);
            goto done;
        }
        /* O_NONBLOCK: should a FIFO be swapped in after the check, open must not hang. */
        fd = openat(dirfd, c, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            st = onyx_error(ONYX_ERR_IO, "%s: cannot open external data file '%s': %s", label,
                            location, strerror(errno));
            goto done;
        }
        if (fstat(fd, &sb) != 0) {
            st = onyx_error(ONYX_ERR_IO, "%s: cannot stat external data file '%s': %s", label,
                            location, strerror(errno));
            goto done;
        }
        if (!S_ISREG(sb.st_mode)) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "%s: external data location '%s' is not a regular file", label,
                            location);
            goto done;
        }
        if (sb.st_nlink != 1) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "%s: external data file '%s' has %ju hard links; files with more than "
                            "one link are refused",
                            label, location, (uintmax_t)sb.st_nlink);
            goto done;
        }
        *out_size = sb.st_size;
        *out_fd = fd;
        fd = -1;
        break;
    }
done:
    if (fd >= 0) close(fd);
    if (dirfd >= 0) close(dirfd);
    free(path);
    return st;
}

/* Opens and checks the external file before anything is allocated; *fd stays open for
 * read_external. */
static onyx_status prepare_external(const Onnx__TensorProto *tp, const char *base_dir,
                                    const char *label, size_t nbytes, int *fd, uint64_t *offset) {
    ext_ref r;
    TRY(parse_external(tp, label, &r));
    if (r.has_length && r.length != nbytes)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "%s: external data length %" PRIu64 " does not match the %zu bytes its "
                          "dims and type need",
                          label, r.length, nbytes);
    off_t size = 0;
    int f = -1;
    TRY(open_external(base_dir, r.location, label, &f, &size));
    uint64_t fsize = (uint64_t)size;
    if (r.offset > fsize || nbytes > fsize - r.offset) {
        close(f);
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "%s: external data needs bytes [%" PRIu64 ", %" PRIu64 ") of '%s', "
                          "which has only %" PRIu64 " bytes (offset/length past the end)",
                          label, r.offset, r.offset + (uint64_t)nbytes, r.location, fsize);
    }
    *fd = f;
    *offset = r.offset;
    return ONYX_OK;
}

static onyx_status read_external(int fd, uint64_t offset, void *dst, size_t n, const char *label) {
    uint8_t *d = dst;
    size_t got = 0;
    while (got < n) {
        size_t want = n - got;
        if (want > ((size_t)1 << 30)) want = (size_t)1 << 30;
        ssize_t r = pread(fd, d + got, want, (off_t)(offset + got));
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r <= 0)
            return onyx_error(ONYX_ERR_IO, "%s: cannot read external data: %s", label,
                              r < 0 ? strerror(errno) : "file ended early");
        got += (size_t)r;
    }
    return ONYX_OK;
}

/* ------------------------------------------------------------------ typed fields */

typedef enum data_field { F_FLOAT, F_DOUBLE, F_INT32, F_INT64, F_UINT64, F_STRING } data_field;

static const char *const field_names[] = {"float_data", "double_data", "int32_data",
                                          "int64_data", "uint64_data", "string_data"};

/* Which typed field carries dtype `d`, and how many entries it must have. */
static data_field typed_field(onyx_dtype d, int64_t numel, size_t nbytes, size_t *count) {
    size_t n = (size_t)numel; /* nbytes >= numel fits size_t */
    switch (d) {
    case ONYX_FLOAT: *count = n; return F_FLOAT;
    case ONYX_COMPLEX64: *count = 2 * n; return F_FLOAT;
    case ONYX_DOUBLE: *count = n; return F_DOUBLE;
    case ONYX_COMPLEX128: *count = 2 * n; return F_DOUBLE;
    case ONYX_INT64: *count = n; return F_INT64;
    case ONYX_UINT32:
    case ONYX_UINT64: *count = n; return F_UINT64;
    case ONYX_STRING: *count = n; return F_STRING;
    default:
        /* 2- and 4-bit types keep one packed byte per int32 entry; the 6-bit floats, whose
         * elements straddle bytes, one element per entry (onnx's make_tensor and to_array). */
        *count = dtype_per_byte(d) ? nbytes : n;
        return F_INT32;
    }
}

static size_t field_count(const Onnx__TensorProto *tp, data_field f) {
    switch (f) {
    case F_FLOAT: return tp->n_float_data;
    case F_DOUBLE: return tp->n_double_data;
    case F_INT32: return tp->n_int32_data;
    case F_INT64: return tp->n_int64_data;
    case F_UINT64: return tp->n_uint64_data;
    case F_STRING: return tp->n_string_data;
    }
    return 0;
}

static onyx_status fill_typed(const Onnx__TensorProto *tp, data_field f, size_t count, pool *p,
                              tensor *t) {
    if (count == 0) return ONYX_OK; /* the field's array may be NULL */
    switch (f) {
    case F_FLOAT: memcpy(t->data, tp->float_data, count * sizeof(float)); break;
    case F_DOUBLE: memcpy(t->data, tp->double_data, count * sizeof(double)); break;
    case F_INT64: memcpy(t->data, tp->int64_data, count * sizeof(int64_t)); break;
    case F_UINT64:
        if (t->dtype == ONYX_UINT64) {
            memcpy(t->data, tp->uint64_data, count * sizeof(uint64_t));
        } else {
            uint32_t *d = t->data;
            for (size_t i = 0; i < count; i++) d[i] = (uint32_t)tp->uint64_data[i];
        }
        break;
    case F_INT32: {
        /* Entries carry the element's bit pattern in their low bits. */
        size_t width = dtype_size(t->dtype);
        int bits = dtype_per_byte(t->dtype) ? 0 : dtype_packed_bits(t->dtype);
        if (width == 0) width = 1; /* packed sub-byte */
        if (bits) {
            /* one element per entry, its code in the low bits, packed as raw_data packs it */
            for (size_t i = 0; i < count; i++)
                dtype_packed_set(t->data, (int64_t)i, (unsigned)bits, (uint32_t)tp->int32_data[i]);
        } else if (width == 4) {
            memcpy(t->data, tp->int32_data, count * sizeof(int32_t));
        } else if (width == 2) {
            uint16_t *d = t->data;
            for (size_t i = 0; i < count; i++) d[i] = (uint16_t)(uint32_t)tp->int32_data[i];
        } else if (t->dtype == ONYX_BOOL) {
            uint8_t *d = t->data;
            for (size_t i = 0; i < count; i++) d[i] = tp->int32_data[i] != 0;
        } else {
            uint8_t *d = t->data;
            for (size_t i = 0; i < count; i++) d[i] = (uint8_t)(uint32_t)tp->int32_data[i];
        }
        break;
    }
    case F_STRING:
        for (size_t i = 0; i < count; i++)
            TRY(set_string(p, t, (int64_t)i, tp->string_data[i].data, tp->string_data[i].len));
        break;
    }
    return ONYX_OK;
}

/* ------------------------------------------------------------------ dense tensors */

onyx_status tensor_proto_decode(const Onnx__TensorProto *tp, const char *base_dir, pool *p,
                                tensor *out) {
    char label[LABEL_CAP], sh[256];
    onyx_status st = ONYX_OK;
    tensor t = {0};
    int fd = -1;
    if (!tp) return onyx_error(ONYX_ERR_INVALID_MODEL, "missing tensor");
    tensor_label(tp, label, sizeof label);
    if (tp->segment)
        return onyx_error(ONYX_ERR_UNSUPPORTED,
                          "%s is a segment of a larger tensor; segments are not supported", label);
    if (!tp->has_data_type || tp->data_type == ONYX_UNDEFINED)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has no data type", label);
    if (!dtype_valid(tp->data_type))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has unknown data type %d", label,
                          (int)tp->data_type);
    onyx_dtype d = (onyx_dtype)tp->data_type;
    int64_t numel;
    TRY(check_dims(label, tp->n_dims, tp->dims, &numel));
    int rank = (int)tp->n_dims;
    size_t nbytes;
    if (!dtype_storage_size(d, numel, &nbytes))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s: %s%s is too large to store", label,
                          onyx_dtype_name(d), shape_str(rank, tp->dims, sh, sizeof sh));

    /* Decide where the data comes from and check its size before allocating anything. */
    enum { SRC_EXTERNAL, SRC_RAW, SRC_TYPED } src;
    data_field field = F_FLOAT;
    size_t count = 0;
    uint64_t offset = 0;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (d == ONYX_STRING)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "%s: string tensors cannot be stored as external data", label);
        CHECK(prepare_external(tp, base_dir, label, nbytes, &fd, &offset));
        src = SRC_EXTERNAL;
    } else if (tp->has_raw_data) {
        if (d == ONYX_STRING)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "%s: string tensors must use string_data, not raw_data", label);
        if (tp->raw_data.len != nbytes)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "%s: raw_data has %zu bytes, expected %zu for %s%s", label,
                              tp->raw_data.len, nbytes, onyx_dtype_name(d),
                              shape_str(rank, tp->dims, sh, sizeof sh));
        src = SRC_RAW;
    } else {
        field = typed_field(d, numel, nbytes, &count);
        size_t have = field_count(tp, field);
        if (have != count) {
            if (have == 0)
                return onyx_error(ONYX_ERR_INVALID_MODEL,
                                  "%s (%s%s) has no data: expected %zu values in %s or raw_data",
                                  label, onyx_dtype_name(d),
                                  shape_str(rank, tp->dims, sh, sizeof sh), count,
                                  field_names[field]);
            return onyx_error(ONYX_ERR_INVALID_MODEL, "%s: %s has %zu values, expected %zu for %s%s",
                              label, field_names[field], have, count, onyx_dtype_name(d),
                              shape_str(rank, tp->dims, sh, sizeof sh));
        }
        src = SRC_TYPED;
    }

    /* a large external tensor at an aligned offset is mapped, not read: what is never touched
     * (the rows of an embedding no token gathers) costs no memory, as onnxruntime's mapping */
    bool mapped = false;
    if (src == SRC_EXTERNAL && p && d != ONYX_BOOL && offset % MAP_ALIGN == 0 &&
        nbytes >= MAP_MIN_BYTES) {
        CHECK(tensor_set_shape(&t, d, rank, tp->dims));
        t.owns = false;
        t.data = pool_map(p, fd, offset, nbytes);
        mapped = t.data != NULL;
    }
    if (!mapped) CHECK(alloc_storage(p, &t, d, rank, tp->dims));
    switch (src) {
    case SRC_EXTERNAL:
        if (!mapped) CHECK(read_external(fd, offset, t.data, nbytes, label));
        break;
    case SRC_RAW:
        if (nbytes) memcpy(t.data, tp->raw_data.data, nbytes);
        break;
    case SRC_TYPED: CHECK(fill_typed(tp, field, count, p, &t)); break;
    }
    if (d == ONYX_BOOL) {
        /* Kernels may rely on bools being exactly 0 or 1. */
        uint8_t *b = t.data;
        for (size_t i = 0; i < nbytes; i++) b[i] = b[i] != 0;
    }
    *out = t;
    t = (tensor){0};
done:
    if (fd >= 0) close(fd);
    drop_storage(p, &t);
    return st;
}

/* ------------------------------------------------------------------ sparse tensors */

static void copy_element(const tensor *src, int64_t i, tensor *dst, int64_t j) {
    unsigned bits = (unsigned)dtype_packed_bits(src->dtype);
    if (bits) {
        dtype_packed_set(dst->data, j, bits, dtype_packed_get(src->data, i, bits));
        return;
    }
    size_t w = dtype_size(src->dtype);
    memcpy((uint8_t *)dst->data + (size_t)j * w, (const uint8_t *)src->data + (size_t)i * w, w);
}

onyx_status tensor_proto_decode_sparse(const Onnx__SparseTensorProto *sp, const char *base_dir,
                                       pool *p, tensor *out) {
    char label[LABEL_CAP], sh[256];
    onyx_status st = ONYX_OK;
    tensor vals = {0}, idx = {0}, dense = {0};
    if (!sp) return onyx_error(ONYX_ERR_INVALID_MODEL, "missing sparse tensor");
    char inner[LABEL_CAP - 8];
    snprintf(label, sizeof label, "sparse %s", tensor_label(sp->values, inner, sizeof inner));
    if (!sp->values || !sp->indices)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has no %s", label,
                          sp->values ? "indices" : "values");
    int64_t numel;
    TRY(check_dims(label, sp->n_dims, sp->dims, &numel));
    int rank = (int)sp->n_dims;
    st = tensor_proto_decode(sp->values, base_dir, NULL, &vals);
    if (st != ONYX_OK) {
        onyx_error_prefix(st, "%s values", label);
        goto done;
    }
    st = tensor_proto_decode(sp->indices, base_dir, NULL, &idx);
    if (st != ONYX_OK) {
        onyx_error_prefix(st, "%s indices", label);
        goto done;
    }
    if (vals.rank != 1) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "%s: values must be 1-D [NNZ], got shape %s",
                        label, shape_str(vals.rank, vals.dims, sh, sizeof sh));
        goto done;
    }
    int64_t nnz = vals.dims[0];
    if (idx.dtype != ONYX_INT64 && idx.dtype != ONYX_INT32) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "%s: indices must be int64, got %s", label,
                        onyx_dtype_name(idx.dtype));
        goto done;
    }
    bool linear = idx.rank == 1 && idx.dims[0] == nnz;
    bool coords = idx.rank == 2 && idx.dims[0] == nnz && idx.dims[1] == rank;
    if (!linear && !coords) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL,
                        "%s: indices have shape %s, expected [%" PRId64 "] or [%" PRId64 ",%d]",
                        label, shape_str(idx.rank, idx.dims, sh, sizeof sh), nnz, nnz, rank);
        goto done;
    }
    CHECK(alloc_storage(p, &dense, vals.dtype, rank, sp->dims));
    int64_t prev = -1;
    for (int64_t k = 0; k < nnz; k++) {
        int64_t at = 0;
        if (linear) {
            at = tensor_get_i64(&idx, k);
            if (at < 0 || at >= numel) {
                st = onyx_error(ONYX_ERR_INVALID_MODEL,
                                "%s: index %" PRId64 " (entry %" PRId64 ") is outside [0, %" PRId64
                                ")",
                                label, at, k, numel);
                goto done;
            }
        } else {
            for (int j = 0; j < rank; j++) {
                int64_t c = tensor_get_i64(&idx, k * rank + j);
                if (c < 0 || c >= sp->dims[j]) {
                    st = onyx_error(ONYX_ERR_INVALID_MODEL,
                                    "%s: index %" PRId64 " on axis %d (entry %" PRId64
                                    ") is outside [0, %" PRId64 ")",
                                    label, c, j, k, sp->dims[j]);
                    goto done;
                }
                at = at * sp->dims[j] + c; /* < numel: cannot overflow */
            }
        }
        if (at <= prev) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "%s: indices are not strictly ascending at entry %" PRId64, label, k);
            goto done;
        }
        prev = at;
        if (vals.dtype == ONYX_STRING) {
            const char *s = ((char *const *)vals.data)[k];
            CHECK(set_string(p, &dense, at, (const uint8_t *)s, strlen(s)));
        } else {
            copy_element(&vals, k, &dense, at);
        }
    }
    *out = dense;
    dense = (tensor){0};
done:
    tensor_release(&vals);
    tensor_release(&idx);
    drop_storage(p, &dense);
    return st;
}

/* ------------------------------------------------------------------ sequences and optionals */

static void free_value(onyx_value *v) {
    value_clear(v);
    free(v);
}

/* A new heap value decoded from `proto`, whose message type `kind` and `sparse` name. */
static onyx_status decode_value(onyx_value_kind kind, bool sparse, const void *proto,
                                const char *base_dir, onyx_value **out) {
    onyx_value *v = value_new();
    if (!v) return onyx_oom("value");
    onyx_status st;
    switch (kind) {
    case ONYX_VALUE_TENSOR:
        st = sparse ? tensor_proto_decode_sparse(proto, base_dir, NULL, &v->t)
                    : tensor_proto_decode(proto, base_dir, NULL, &v->t);
        if (st == ONYX_OK) v->kind = ONYX_VALUE_TENSOR;
        break;
    case ONYX_VALUE_SEQUENCE: st = tensor_proto_sequence(proto, base_dir, v); break;
    default: st = tensor_proto_optional(proto, base_dir, v); break;
    }
    if (st != ONYX_OK) {
        free_value(v);
        return st;
    }
    *out = v;
    return ONYX_OK;
}

onyx_status tensor_proto_sequence(const Onnx__SequenceProto *sp, const char *base_dir,
                                  onyx_value *out) {
    onyx_status st = ONYX_OK;
    onyx_value *item = NULL;
    if (!sp) return onyx_error(ONYX_ERR_INVALID_MODEL, "missing sequence");
    int et = sp->has_elem_type ? sp->elem_type : ONNX__SEQUENCE_PROTO__DATA_TYPE__UNDEFINED;
    if (et == ONNX__SEQUENCE_PROTO__DATA_TYPE__UNDEFINED) {
        /* Older writers leave the kind out; the filled list says it. */
        if (sp->n_tensor_values) et = ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
        else if (sp->n_sparse_tensor_values) et = ONNX__SEQUENCE_PROTO__DATA_TYPE__SPARSE_TENSOR;
        else if (sp->n_sequence_values) et = ONNX__SEQUENCE_PROTO__DATA_TYPE__SEQUENCE;
        else if (sp->n_map_values) et = ONNX__SEQUENCE_PROTO__DATA_TYPE__MAP;
        else if (sp->n_optional_values) et = ONNX__SEQUENCE_PROTO__DATA_TYPE__OPTIONAL;
    }
    type_info elem;
    type_init(&elem);
    size_t count = 0;
    const void *const *protos = NULL;
    bool sparse = false;
    switch (et) {
    case ONNX__SEQUENCE_PROTO__DATA_TYPE__UNDEFINED: break;
    case ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR:
        elem.kind = ONYX_VALUE_TENSOR;
        count = sp->n_tensor_values;
        protos = (const void *const *)sp->tensor_values;
        if (count && sp->tensor_values[0] && dtype_valid(sp->tensor_values[0]->data_type))
            elem.dtype = (onyx_dtype)sp->tensor_values[0]->data_type;
        break;
    case ONNX__SEQUENCE_PROTO__DATA_TYPE__SPARSE_TENSOR:
        elem.kind = ONYX_VALUE_TENSOR;
        count = sp->n_sparse_tensor_values;
        protos = (const void *const *)sp->sparse_tensor_values;
        sparse = true;
        if (count && sp->sparse_tensor_values[0] && sp->sparse_tensor_values[0]->values &&
            dtype_valid(sp->sparse_tensor_values[0]->values->data_type))
            elem.dtype = (onyx_dtype)sp->sparse_tensor_values[0]->values->data_type;
        break;
    case ONNX__SEQUENCE_PROTO__DATA_TYPE__SEQUENCE:
        elem.kind = ONYX_VALUE_SEQUENCE;
        count = sp->n_sequence_values;
        protos = (const void *const *)sp->sequence_values;
        break;
    case ONNX__SEQUENCE_PROTO__DATA_TYPE__OPTIONAL:
        elem.kind = ONYX_VALUE_OPTIONAL;
        count = sp->n_optional_values;
        protos = (const void *const *)sp->optional_values;
        break;
    case ONNX__SEQUENCE_PROTO__DATA_TYPE__MAP:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "sequences of maps are not supported");
    default:
        return onyx_error(ONYX_ERR_INVALID_MODEL, "sequence has unknown element kind %d", et);
    }
    CHECK(value_make_sequence(out, elem.kind == ONYX_VALUE_NONE ? NULL : &elem));
    for (size_t i = 0; i < count; i++) {
        st = decode_value(elem.kind, sparse, protos[i], base_dir, &item);
        if (st != ONYX_OK) {
            onyx_error_prefix(st, "sequence item %zu", i);
            goto done;
        }
        /* kernels read a sequence's element type from its first item */
        onyx_dtype first = i > 0 ? out->seq.items[0]->t.dtype : item->t.dtype;
        if (item->kind == ONYX_VALUE_TENSOR && item->t.dtype != first) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL,
                            "sequence item %zu is a tensor(%s), expected tensor(%s) like item 0",
                            i, onyx_dtype_name(item->t.dtype), onyx_dtype_name(first));
            goto done;
        }
        CHECK(value_seq_push(out, item));
        item = NULL;
    }
done:
    if (item) free_value(item);
    if (st != ONYX_OK) value_clear(out);
    return st;
}

onyx_status tensor_proto_optional(const Onnx__OptionalProto *op, const char *base_dir,
                                  onyx_value *out) {
    onyx_status st = ONYX_OK;
    onyx_value *item = NULL;
    if (!op) return onyx_error(ONYX_ERR_INVALID_MODEL, "missing optional");
    type_info elem;
    type_init(&elem);
    int et = op->has_elem_type ? op->elem_type : ONNX__OPTIONAL_PROTO__DATA_TYPE__UNDEFINED;
    const void *proto = NULL;
    bool sparse = false;
    switch (et) {
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__UNDEFINED: break; /* an empty optional */
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__TENSOR:
        elem.kind = ONYX_VALUE_TENSOR;
        proto = op->tensor_value;
        break;
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__SPARSE_TENSOR:
        elem.kind = ONYX_VALUE_TENSOR;
        proto = op->sparse_tensor_value;
        sparse = true;
        break;
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__SEQUENCE:
        elem.kind = ONYX_VALUE_SEQUENCE;
        proto = op->sequence_value;
        break;
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__OPTIONAL:
        elem.kind = ONYX_VALUE_OPTIONAL;
        proto = op->optional_value;
        break;
    case ONNX__OPTIONAL_PROTO__DATA_TYPE__MAP:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "optionals of maps are not supported");
    default: return onyx_error(ONYX_ERR_INVALID_MODEL, "optional has unknown element kind %d", et);
    }
    if (proto) {
        st = decode_value(elem.kind, sparse, proto, base_dir, &item);
        if (st != ONYX_OK) return onyx_error_prefix(st, "optional element");
        if (item->kind == ONYX_VALUE_TENSOR) elem.dtype = item->t.dtype;
    }
    CHECK(value_make_optional(out, elem.kind == ONYX_VALUE_NONE ? NULL : &elem));
    out->opt = item;
    item = NULL;
done:
    if (item) free_value(item);
    return st;
}

/* ------------------------------------------------------------------ public entry points */

onyx_status onyx_value_from_pb(onyx_value_kind kind, const void *bytes, size_t size,
                               const char *base_dir, onyx_value **out) {
    onyx_status st = ONYX_OK;
    onyx_value *v = NULL;
    ProtobufCMessage *msg = NULL;
    const ProtobufCMessageDescriptor *desc;
    const char *what;
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_value_from_pb: out is NULL");
    switch (kind) {
    case ONYX_VALUE_TENSOR:
        desc = &onnx__tensor_proto__descriptor;
        what = "TensorProto";
        break;
    case ONYX_VALUE_SEQUENCE:
        desc = &onnx__sequence_proto__descriptor;
        what = "SequenceProto";
        break;
    case ONYX_VALUE_OPTIONAL:
        desc = &onnx__optional_proto__descriptor;
        what = "OptionalProto";
        break;
    case ONYX_VALUE_MAP: return onyx_error(ONYX_ERR_UNSUPPORTED, "map values are not supported");
    default:
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_value_from_pb: unknown value kind %d",
                          (int)kind);
    }
    CHECK(loader_check_wire(desc, bytes, size, what));
    msg = protobuf_c_message_unpack(desc, NULL, size, bytes);
    if (!msg) {
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "not a valid %s (truncated or corrupt)", what);
        goto done;
    }
    v = value_new();
    if (!v) {
        st = onyx_oom("value");
        goto done;
    }
    switch (kind) {
    case ONYX_VALUE_TENSOR:
        CHECK(tensor_proto_decode((const Onnx__TensorProto *)msg, base_dir, NULL, &v->t));
        v->kind = ONYX_VALUE_TENSOR;
        break;
    case ONYX_VALUE_SEQUENCE:
        CHECK(tensor_proto_sequence((const Onnx__SequenceProto *)msg, base_dir, v));
        break;
    default: CHECK(tensor_proto_optional((const Onnx__OptionalProto *)msg, base_dir, v)); break;
    }
    *out = v;
    v = NULL;
done:
    if (msg) protobuf_c_message_free_unpacked(msg, NULL);
    if (v) free_value(v);
    return st;
}

onyx_status onyx_value_load_pb(onyx_value_kind kind, const char *path, onyx_value **out) {
    void *bytes = NULL;
    char *dir = NULL;
    size_t size = 0;
    TRY(loader_read_file(path, &bytes, &size, &dir));
    onyx_status st = onyx_value_from_pb(kind, bytes, size, dir, out);
    if (st != ONYX_OK) onyx_error_prefix(st, "%s", path);
    free(bytes);
    free(dir);
    return st;
}
