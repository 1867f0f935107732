/* The profiler behind core/profile.h: events are formatted as JSON when recorded and appended to
 * one buffer under a lock; flushing writes the buffer as a JSON array. */
#include "core/profile.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"

struct profiler {
    char *path;
    int64_t origin_ns; /* event times are microseconds since this */
    pthread_mutex_t lock;
    char *events;      /* comma-separated JSON objects */
    size_t len, cap;
};

onyx_status profiler_create(const char *path, profiler **out) {
    profiler *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path)) || pthread_mutex_init(&p->lock, NULL) != 0) {
        if (p) free(p->path);
        free(p);
        return onyx_oom("profiler");
    }
    p->origin_ns = exec_now_ns();
    /* the file is made now (an empty trace, as onnxruntime opens its own at session start), so
     * that a path that cannot be written fails prepare instead of losing the trace unseen when
     * the rep is freed */
    onyx_status st = profiler_flush(p, NULL);
    if (st != ONYX_OK) {
        profiler_free(p);
        return st;
    }
    *out = p;
    return ONYX_OK;
}

void profiler_free(profiler *p) {
    if (!p) return;
    if (p->len) profiler_flush(p, NULL);
    pthread_mutex_destroy(&p->lock);
    free(p->events);
    free(p->path);
    free(p);
}

/* Appends one formatted piece to a fixed line buffer; false once it no longer fits. */
typedef struct line {
    char buf[4096];
    size_t len;
    bool full;
} line;

static void put(line *l, const char *fmt, ...) {
    if (l->full) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->buf + l->len, sizeof l->buf - l->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof l->buf - l->len) l->full = true;
    else l->len += (size_t)n;
}

/* A string as it is (one that needs no escaping), and an integer: events are written with these
 * rather than vsnprintf, since one is recorded after every node, inside the run it times. With a
 * vsnprintf a piece (and one a character of names), MobileNetV2's 67 events took about 0.3 ms of
 * each 1.6 ms profiled run, which tools/bench/op_compare.py then reported as time spent between
 * the nodes. */
static void put_raw(line *l, const char *s) {
    size_t n = strlen(s);
    if (l->full || l->len + n >= sizeof l->buf) {
        l->full = true;
        return;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_int(line *l, int64_t v) {
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) digits[n++] = '-';
    if (l->full || l->len + (size_t)n >= sizeof l->buf) {
        l->full = true;
        return;
    }
    while (n) l->buf[l->len++] = digits[--n];
}

/* A JSON string body: quotes, backslashes and control characters escaped. */
static void put_escaped(line *l, const char *s) {
    for (; s && *s && !l->full; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            put(l, "\\%c", ch);
        } else if (ch < 0x20) {
            put(l, "\\u%04x", ch);
        } else if (l->len + 1 < sizeof l->buf) {
            l->buf[l->len++] = (char)ch;
        } else {
            l->full = true;
        }
    }
}

static void append(profiler *p, const line *l) {
    if (l->full) return; /* an event too large to describe is left out */
    pthread_mutex_lock(&p->lock);
    if (p->len + l->len + 3 > p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1 << 16;
        while (cap < p->len + l->len + 3) cap *= 2;
        char *grown = realloc(p->events, cap);
        if (!grown) {
            pthread_mutex_unlock(&p->lock);
            return;
        }
        p->events = grown;
        p->cap = cap;
    }
    if (p->len) {
        p->events[p->len++] = ',';
        p->events[p->len++] = '\n';
    }
    memcpy(p->events + p->len, l->buf, l->len);
    p->len += l->len;
    pthread_mutex_unlock(&p->lock);
}

static void put_shapes(line *l, const char *key, int n, onyx_value *const *v) {
    put_raw(l, ",\"");
    put_raw(l, key);
    put_raw(l, "\":[");
    bool first = true;
    for (int i = 0; i < n; i++) {
        if (!v[i] || v[i]->kind != ONYX_VALUE_TENSOR) continue;
        put_raw(l, first ? "{\"" : ",{\"");
        put_raw(l, onyx_dtype_name(v[i]->t.dtype));
        put_raw(l, "\":[");
        for (int d = 0; d < v[i]->t.rank; d++) {
            if (d) put_raw(l, ",");
            put_int(l, v[i]->t.dims[d]);
        }
        put_raw(l, "]}");
        first = false;
    }
    put_raw(l, "]");
}

static void put_head(line *l, profiler *p, const char *cat, int64_t start_ns, int64_t end_ns) {
    put_raw(l, "{\"cat\":\"");
    put_raw(l, cat);
    put_raw(l, "\",\"pid\":");
    put_int(l, getpid());
    put_raw(l, ",\"tid\":");
    put_int(l, gettid());
    put_raw(l, ",\"dur\":");
    put_int(l, (end_ns - start_ns) / 1000);
    put_raw(l, ",\"ts\":");
    put_int(l, (start_ns - p->origin_ns) / 1000);
    put_raw(l, ",\"ph\":\"X\"");
}

void profiler_node(profiler *p, const graph_node *node, const kernel *k, int n_in,
                   onyx_value *const *in, int n_out, onyx_value *const *out, int64_t start_ns,
                   int64_t end_ns, const char *tag) {
    line l = {.len = 0};
    put_head(&l, p, "Node", start_ns, end_ns);
    put_raw(&l, ",\"name\":\"");
    put_escaped(&l, *node->name ? node->name : node->op_type);
    put_raw(&l, "_kernel_time\",\"args\":{\"op_name\":\"");
    put_escaped(&l, node->op_type);
    put_raw(&l, "\",\"domain\":\"");
    put_escaped(&l, node->domain);
    put_raw(&l, "\",\"provider\":\"");
    put_raw(&l, device_name(k->device));
    put_raw(&l, "\",\"kernel\":\"");
    put_raw(&l, k->domain);
    put_raw(&l, *k->domain ? "." : "");
    put_raw(&l, k->op_type);
    put_raw(&l, "-");
    put_int(&l, k->since_min);
    put_raw(&l, "..");
    put_int(&l, k->since_max);
    put_raw(&l, "\"");
    if (tag) {
        put_raw(&l, ",\"run_tag\":\"");
        put_escaped(&l, tag);
        put_raw(&l, "\"");
    }
    put_shapes(&l, "input_type_shape", n_in, in);
    put_shapes(&l, "output_type_shape", n_out, out);
    put_raw(&l, "}}");
    append(p, &l);
}

void profiler_run(profiler *p, int64_t start_ns, int64_t end_ns, const char *tag) {
    line l = {.len = 0};
    put_head(&l, p, "Session", start_ns, end_ns);
    put_raw(&l, ",\"name\":\"model_run\",\"args\":{");
    if (tag) {
        put_raw(&l, "\"run_tag\":\"");
        put_escaped(&l, tag);
        put_raw(&l, "\"");
    }
    put_raw(&l, "}}");
    append(p, &l);
}

onyx_status profiler_flush(profiler *p, const char **path) {
    pthread_mutex_lock(&p->lock);
    onyx_status st = ONYX_OK;
    FILE *f = fopen(p->path, "w");
    if (!f) {
        st = onyx_error(ONYX_ERR_IO, "profile: cannot write '%s': %s", p->path, strerror(errno));
    } else {
        fputs("[\n", f);
        if (p->len) fwrite(p->events, 1, p->len, f);
        fputs("\n]\n", f);
        if (fclose(f) != 0) st = onyx_error(ONYX_ERR_IO, "profile: cannot write '%s'", p->path);
    }
    if (st == ONYX_OK) p->len = 0;
    pthread_mutex_unlock(&p->lock);
    if (st == ONYX_OK && path) *path = p->path;
    return st;
}
