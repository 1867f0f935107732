/* Guards in front of protobuf-c: an iterative walk of the wire format that bounds message
 * nesting (protobuf-c recurses without a limit); the split of a model's bytes that lets each
 * initializer be unpacked on its own, its weights read in place; whole-file reading. */
#include "core/loader_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct wire_frame {
    const ProtobufCMessageDescriptor *desc;
    size_t end;
} wire_frame;

/* Reads a varint at *pos (< end). False when it runs past `end` or beyond 10 bytes. */
static bool read_varint(const uint8_t *b, size_t *pos, size_t end, uint64_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*pos >= end) return false;
        uint8_t c = b[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

onyx_status loader_check_wire(const ProtobufCMessageDescriptor *desc, const void *bytes,
                              size_t size, const char *what) {
    const uint8_t *b = bytes;
    wire_frame stack[LOADER_MAX_NESTING];
    int depth = 0;
    size_t pos = 0;
    stack[0].desc = desc;
    stack[0].end = size;
    if (size > 0 && !bytes)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: NULL bytes of size %zu", what, size);
    for (;;) {
        while (depth >= 0 && pos == stack[depth].end) depth--;
        if (depth < 0) return ONYX_OK;
        size_t end = stack[depth].end;
        uint64_t tag, len;
        if (!read_varint(b, &pos, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
            goto corrupt;
        switch (tag & 7) {
        case 0:
            if (!read_varint(b, &pos, end, &len)) goto corrupt;
            break;
        case 1:
            if (end - pos < 8) goto corrupt;
            pos += 8;
            break;
        case 5:
            if (end - pos < 4) goto corrupt;
            pos += 4;
            break;
        case 2: {
            if (!read_varint(b, &pos, end, &len) || len > end - pos) goto corrupt;
            const ProtobufCFieldDescriptor *f =
                stack[depth].desc
                    ? protobuf_c_message_descriptor_get_field(stack[depth].desc, (unsigned)(tag >> 3))
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (depth + 1 >= LOADER_MAX_NESTING)
                    return onyx_error(ONYX_ERR_INVALID_MODEL,
                                      "%s nests deeper than %d levels (at byte %zu)", what,
                                      LOADER_MAX_NESTING, pos);
                depth++;
                stack[depth].desc = f->descriptor;
                stack[depth].end = pos + (size_t)len;
            } else {
                pos += (size_t)len;
            }
            break;
        }
        default: goto corrupt; /* groups (3, 4) are not used by ONNX; 6, 7 do not exist */
        }
    }
corrupt:
    return onyx_error(ONYX_ERR_INVALID_MODEL,
                      "not a valid %s (truncated or corrupt at byte %zu of %zu)", what, pos, size);
}

/* ------------------------------------------------------------------ splitting */

/* The field at *pos (before end): its number, wire type and, for a length-delimited one, where
 * its payload starts and how long it is; *pos moves past it. False when malformed or a group. */
static bool next_field(const uint8_t *b, size_t *pos, size_t end, uint64_t *num, int *wire,
                       size_t *start, size_t *len) {
    uint64_t tag, v;
    if (!read_varint(b, pos, end, &tag)) return false;
    *num = tag >> 3;
    *wire = (int)(tag & 7);
    *start = *pos;
    *len = 0;
    switch (*wire) {
    case 0: return read_varint(b, pos, end, &v);
    case 1: if (end - *pos < 8) return false; *pos += 8; return true;
    case 5: if (end - *pos < 4) return false; *pos += 4; return true;
    case 2:
        if (!read_varint(b, pos, end, &v) || v > end - *pos) return false;
        *start = *pos;
        *len = (size_t)v;
        *pos += (size_t)v;
        return true;
    default: return false;
    }
}

static size_t put_varint(uint8_t *dst, uint64_t v) {
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        if (dst) dst[n] = c | (v ? 0x80 : 0);
        n++;
    } while (v);
    return n;
}

/* Copies bytes [from, to) of src to dst + *n (dst NULL: only counts). */
static void put(uint8_t *dst, size_t *n, const uint8_t *src, size_t from, size_t to) {
    if (dst) memcpy(dst + *n, src + from, to - from);
    *n += to - from;
}

enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5, TENSOR_RAW_DATA = 9 };

/* The fields of b[from, to) but the length-delimited ones numbered `skip`, copied to dst (NULL:
 * only counted); the skipped ones' payloads go to all[] (NULL: not kept) and the last of them to
 * *last (NULL: not kept), their count to *n_skipped. Returns the size copied, or SIZE_MAX when the
 * bytes are malformed. */
static size_t fields_except(const uint8_t *b, size_t from, size_t to, uint64_t skip, uint8_t *dst,
                            loader_slice *all, loader_slice *last, size_t *n_skipped) {
    size_t pos = from, start, len, n = 0;
    uint64_t num;
    int wire;
    *n_skipped = 0;
    while (pos < to) {
        size_t at = pos;
        if (!next_field(b, &pos, to, &num, &wire, &start, &len)) return SIZE_MAX;
        if (num != skip || wire != 2) {
            put(dst, &n, b, at, pos);
            continue;
        }
        loader_slice payload = {start, len};
        if (all) all[*n_skipped] = payload;
        if (last) *last = payload;
        ++*n_skipped;
    }
    return n;
}

onyx_status loader_split_model(const void *bytes, size_t size, loader_split *split) {
    const uint8_t *b = bytes;
    memset(split, 0, sizeof *split);
    loader_slice graph;
    size_t graphs, n_inits;
    size_t top = fields_except(b, 0, size, MODEL_GRAPH, NULL, NULL, &graph, &graphs);
    if (top == SIZE_MAX || graphs != 1) return ONYX_OK;
    size_t g_end = graph.offset + graph.size;
    size_t g_len = fields_except(b, graph.offset, g_end, GRAPH_INITIALIZER, NULL, NULL, NULL,
                                 &n_inits);
    if (g_len == SIZE_MAX || n_inits == 0) return ONYX_OK;
    /* the skeleton: the model's other fields, then the graph without its initializers */
    uint8_t head[2 * 10];
    size_t h = put_varint(head, (uint64_t)MODEL_GRAPH << 3 | 2);
    h += put_varint(head + h, g_len);
    split->skeleton_size = top + h + g_len;
    split->skeleton = malloc(split->skeleton_size);
    split->inits = malloc(n_inits * sizeof *split->inits);
    if (!split->skeleton || !split->inits) {
        loader_split_free(split);
        return onyx_oom("model skeleton");
    }
    uint8_t *dst = split->skeleton;
    fields_except(b, 0, size, MODEL_GRAPH, dst, NULL, NULL, &graphs);
    memcpy(dst + top, head, h);
    fields_except(b, graph.offset, g_end, GRAPH_INITIALIZER, dst + top + h, split->inits, NULL,
                  &split->n_inits);
    return ONYX_OK;
}

void loader_split_free(loader_split *split) {
    free(split->skeleton);
    free(split->inits);
    memset(split, 0, sizeof *split);
}

onyx_status loader_tensor_unpack(const void *bytes, loader_slice slice, Onnx__TensorProto **out) {
    const uint8_t *b = (const uint8_t *)bytes + slice.offset;
    loader_slice raw; /* the last raw_data, the one protobuf keeps */
    size_t n_raw, n = fields_except(b, 0, slice.size, TENSOR_RAW_DATA, NULL, NULL, &raw, &n_raw);
    Onnx__TensorProto *tp = NULL;
    if (n != SIZE_MAX) {
        uint8_t *small = malloc(n ? n : 1);
        if (!small) return onyx_oom("initializer");
        fields_except(b, 0, slice.size, TENSOR_RAW_DATA, small, NULL, NULL, &n_raw);
        tp = onnx__tensor_proto__unpack(NULL, n, small);
        free(small);
    }
    if (!tp)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "not a valid ONNX TensorProto (bytes %zu to %zu of the model)",
                          slice.offset, slice.offset + slice.size);
    if (n_raw > 0) {
        tp->has_raw_data = 1;
        tp->raw_data.len = raw.size;
        tp->raw_data.data = (uint8_t *)b + raw.offset; /* borrowed: loader_tensor_free drops it */
    }
    *out = tp;
    return ONYX_OK;
}

void loader_tensor_free(Onnx__TensorProto *tp) {
    if (!tp) return;
    tp->has_raw_data = 0;
    tp->raw_data.data = NULL;
    tp->raw_data.len = 0;
    onnx__tensor_proto__free_unpacked(tp, NULL);
}

onyx_status loader_read_file(const char *path, void **bytes, size_t *size, char **dir) {
    onyx_status st = ONYX_OK;
    int fd = -1;
    uint8_t *buf = NULL;
    char *folder = NULL;
    if (!path) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "file path is NULL");
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        st = onyx_error(ONYX_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
        goto done;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        st = onyx_error(ONYX_ERR_IO, "cannot stat '%s': %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = onyx_error(ONYX_ERR_IO, "'%s' is not a regular file", path);
        goto done;
    }
    if ((uint64_t)sb.st_size > SIZE_MAX - 1) {
        st = onyx_error(ONYX_ERR_NO_MEMORY, "'%s' is too large to read", path);
        goto done;
    }
    size_t n = (size_t)sb.st_size;
    buf = malloc(n ? n : 1);
    if (!buf) {
        st = onyx_oom("file contents");
        goto done;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            st = onyx_error(ONYX_ERR_IO, "cannot read '%s': %s", path,
                            r < 0 ? strerror(errno) : "file shrank while reading");
            goto done;
        }
        got += (size_t)r;
    }
    if (dir) {
        const char *slash = strrchr(path, '/');
        if (!slash)
            folder = strdup(".");
        else if (slash == path)
            folder = strdup("/");
        else
            folder = strndup(path, (size_t)(slash - path));
        if (!folder) {
            st = onyx_oom("file folder name");
            goto done;
        }
    }
    *bytes = buf;
    *size = n;
    if (dir) *dir = folder;
    buf = NULL;
    folder = NULL;
done:
    if (fd >= 0) close(fd);
    free(buf);
    free(folder);
    return st;
}
