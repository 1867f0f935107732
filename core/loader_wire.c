/* Guards in front of protobuf-c: an iterative walk of the wire format that bounds message
 * nesting (protobuf-c recurses without a limit), and whole-file reading. */
#include "core/loader.h"

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
