/* Execution-core benchmark (not a test): per model, what a steady run costs besides its kernels —
 * minor page faults, heap allocations, latency back to back and after idle periods — and what the
 * first run at a new input shape costs against steady runs at that shape.
 *   build/core_bench [-n RUNS] [--idle-samples K] [-t THREADS] [--shape NAME=1x128 ...] [MODEL...]
 * Uses only the public API (onyx.h). Input shapes come from <model>.json beside each model (written
 * by tools/zoo/export.py), else from the model's declared dims. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "onyx.h"

#define WARMUP 5      /* runs before anything is measured (the first one included) */
#define MAX_RANK 8
#define MAX_INPUTS 64
#define MAX_SHAPES 16 /* --shape options */

/* ---------------------------------------------------------------- allocation counting
 * malloc & co. and mmap are defined here, in the executable, and forward to glibc. The executable
 * comes first in symbol lookup, so these catch the calls of libonyx.a (linked in) and, being
 * exported (default visibility, against the build's -fvisibility=hidden), those of the shared
 * libraries too (oneDNN, OpenBLAS, libgomp, libstdc++'s operator new). glibc's malloc calls its
 * own internal mmap, so a large malloc counts once. Calls are counted only while `counting` is
 * set, around onyx_rep_run, from every thread. free is not interposed: it is not an allocation. */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_bool counting;
static atomic_ulong n_allocs, n_mmaps, n_bytes;

static void note_alloc(size_t bytes) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&n_bytes, bytes, memory_order_relaxed);
    }
}

#define INTERPOSED __attribute__((visibility("default")))

INTERPOSED void *malloc(size_t size) {
    note_alloc(size);
    return __libc_malloc(size);
}

INTERPOSED void *calloc(size_t count, size_t size) {
    note_alloc(count * size);
    return __libc_calloc(count, size);
}

INTERPOSED void *realloc(void *ptr, size_t size) {
    note_alloc(size);
    return __libc_realloc(ptr, size);
}

INTERPOSED void *memalign(size_t alignment, size_t size) {
    note_alloc(size);
    return __libc_memalign(alignment, size);
}

INTERPOSED void *aligned_alloc(size_t alignment, size_t size) {
    note_alloc(size);
    return __libc_memalign(alignment, size);
}

INTERPOSED int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1))) return EINVAL;
    note_alloc(size);
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
static _Atomic(mmap_fn) real_mmap;

/* Resolved on first use: a library constructor may map memory before main. dlsym does not mmap. */
static void *forward_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    mmap_fn f = atomic_load(&real_mmap);
    if (!f) {
        f = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
        if (!f) {
            errno = ENOSYS;
            return MAP_FAILED;
        }
        atomic_store(&real_mmap, f);
    }
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&n_mmaps, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&n_bytes, len, memory_order_relaxed);
    }
    return f(addr, len, prot, flags, fd, off);
}

INTERPOSED void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    return forward_mmap(addr, len, prot, flags, fd, off);
}

/* The same function under its large-file name (an alias in glibc on 64-bit targets). */
INTERPOSED void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off) {
    return forward_mmap(addr, len, prot, flags, fd, (off_t)off);
}

/* ---------------------------------------------------------------- small helpers */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *v, int n) {
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) return v[0];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

static int fail(const char *what, onyx_status st) {
    fprintf(stderr, "core_bench: %s: %s: %s\n", what, onyx_status_name(st), onyx_last_error());
    return 1;
}

static const char *format_dims(size_t rank, const int64_t *dims, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < rank && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "x" : "", (long long)dims[i]);
    if (rank == 0) snprintf(buf, cap, "scalar");
    return buf;
}

/* "1x128" -> dims; returns the rank, or -1 when malformed. */
static int parse_dims(const char *s, int64_t *dims) {
    int rank = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || v < 0 || rank == MAX_RANK) return -1;
        dims[rank++] = v;
        if (*end == 'x' || *end == 'X' || *end == ',') {
            if (!isdigit((unsigned char)end[1])) return -1; /* "1x" */
            end++;
        } else if (*end) {
            return -1;
        }
        s = end;
    }
    return rank > 0 ? rank : -1;
}

/* ---------------------------------------------------------------- inputs */

enum fill { FILL_UNIFORM, FILL_TOKENS, FILL_ONES, FILL_ZEROS };
static const char *const fill_names[] = {"uniform", "tokens", "ones", "zeros"};

typedef struct input {
    char name[256];
    onyx_dtype dtype;
    size_t rank;
    int64_t shape[MAX_RANK];  /* the benchmark shape */
    char dyn[MAX_RANK][32];   /* symbolic name of a dynamic axis, "" for a fixed one */
    enum fill fill;
    int64_t high;             /* tokens are drawn from [0, high) */
} input;

/* A fixed LCG (Knuth's MMIX constants), so that every run of the benchmark sees the same data. */
static uint64_t lcg_next(uint64_t *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 11; /* 53 good bits */
}

static uint16_t float_to_half(float f) {
    /* Inputs are in [-1, 1]: normal halfs or zero, truncated (exact rounding does not matter). */
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
    if (exp <= 0) return sign;
    if (exp >= 31) return (uint16_t)(sign | 0x7c00);
    return (uint16_t)(sign | (uint32_t)exp << 10 | ((x >> 13) & 0x3ff));
}

/* A tensor of `in` at `dims`, filled as in->fill says. Caller owns *out. */
static onyx_status make_tensor(const input *in, size_t index, const int64_t *dims,
                               onyx_value **out) {
    int64_t n = 1;
    for (size_t d = 0; d < in->rank; d++) n *= dims[d];
    size_t bits = onyx_dtype_bits(in->dtype);
    bool is_float = in->dtype == ONYX_FLOAT || in->dtype == ONYX_DOUBLE ||
                    in->dtype == ONYX_FLOAT16;
    bool is_int = in->dtype == ONYX_INT64 || in->dtype == ONYX_INT32 || in->dtype == ONYX_BOOL ||
                  in->dtype == ONYX_UINT8 || in->dtype == ONYX_INT8;
    if (!is_float && !is_int) {
        fprintf(stderr, "core_bench: input '%s': cannot fill dtype %s\n", in->name,
                onyx_dtype_name(in->dtype));
        return ONYX_ERR_UNSUPPORTED;
    }
    size_t nbytes = (size_t)n * bits / 8;
    unsigned char *buf = malloc(nbytes ? nbytes : 1);
    if (!buf) return ONYX_ERR_NO_MEMORY;
    uint64_t state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)index;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = lcg_next(&state);
        double u = (double)r / 9007199254740992.0; /* [0, 1) */
        double v;
        switch (in->fill) {
        case FILL_UNIFORM: v = is_float ? 2 * u - 1 : (double)(r % 2); break;
        case FILL_TOKENS: v = (double)(r % (uint64_t)(in->high > 0 ? in->high : 1)); break;
        case FILL_ONES: v = 1; break;
        default: v = 0; break;
        }
        switch (in->dtype) {
        case ONYX_FLOAT: ((float *)buf)[i] = (float)v; break;
        case ONYX_DOUBLE: ((double *)buf)[i] = v; break;
        case ONYX_FLOAT16: ((uint16_t *)buf)[i] = float_to_half((float)v); break;
        case ONYX_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
        case ONYX_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
        case ONYX_BOOL: buf[i] = v != 0; break;
        default: buf[i] = (unsigned char)(int)v; break; /* int8 / uint8 */
        }
    }
    onyx_status st = onyx_value_new_tensor(in->dtype, in->rank, dims, buf, nbytes, out);
    free(buf);
    return st;
}

/* ---------------------------------------------------------------- <model>.json
 * A reader for the fixed format tools/zoo/export.py writes, not a general JSON parser: it finds
 * the "inputs" array and, in each of its objects, the keys name, shape, dynamic, fill and high.
 * Strings have no escapes. */

typedef struct json_input {
    char name[256];
    size_t rank;
    int64_t shape[MAX_RANK];
    char dyn[MAX_RANK][32];
    enum fill fill;
    bool has_fill;
    int64_t high;
} json_input;

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && isspace((unsigned char)*p)) p++;
    return p;
}

/* The value after "key": inside [p, end), or NULL. */
static const char *json_key(const char *p, const char *end, const char *key) {
    size_t n = strlen(key);
    for (; p + n + 2 < end; p++) {
        if (p[0] != '"' || strncmp(p + 1, key, n) != 0 || p[n + 1] != '"') continue;
        const char *q = skip_ws(p + n + 2, end);
        if (q < end && *q == ':') return skip_ws(q + 1, end);
    }
    return NULL;
}

/* A string at p into buf; returns the position after it, or NULL. */
static const char *json_string(const char *p, const char *end, char *buf, size_t cap) {
    if (!p || p >= end || *p != '"') return NULL;
    const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
    if (!q || (size_t)(q - p - 1) >= cap) return NULL;
    memcpy(buf, p + 1, (size_t)(q - p - 1));
    buf[q - p - 1] = 0;
    return q + 1;
}

/* The end of the object or array that starts at p (one past its closing bracket), or NULL. */
static const char *json_close(const char *p, const char *end) {
    int depth = 0;
    bool in_string = false;
    for (; p < end; p++) {
        if (in_string) in_string = *p != '"';
        else if (*p == '"') in_string = true;
        else if (*p == '{' || *p == '[') depth++;
        else if ((*p == '}' || *p == ']') && --depth == 0) return p + 1;
    }
    return NULL;
}

static bool json_parse_input(const char *p, const char *end, json_input *in) {
    memset(in, 0, sizeof *in);
    if (!json_string(json_key(p, end, "name"), end, in->name, sizeof in->name)) return false;
    const char *s = json_key(p, end, "shape");
    if (!s || *s != '[') return false;
    const char *s_end = json_close(s, end);
    for (s++; s && s < s_end;) {
        s = skip_ws(s, s_end);
        if (*s == ']') break;
        char *num_end;
        long long v = strtoll(s, &num_end, 10);
        if (num_end == s || in->rank == MAX_RANK) return false;
        in->shape[in->rank++] = v;
        s = skip_ws(num_end, s_end);
        if (*s == ',') s++;
    }
    const char *d = json_key(p, end, "dynamic");
    if (d && *d == '{') {
        const char *d_end = json_close(d, end);
        char key[16], val[32];
        for (d = skip_ws(d + 1, d_end); d && d < d_end && *d == '"';) {
            d = json_string(d, d_end, key, sizeof key);
            d = d ? skip_ws(d, d_end) : NULL;
            if (!d || *d != ':') return false;
            d = json_string(skip_ws(d + 1, d_end), d_end, val, sizeof val);
            long axis = strtol(key, NULL, 10);
            if (!d || axis < 0 || (size_t)axis >= in->rank) return false;
            snprintf(in->dyn[axis], sizeof in->dyn[axis], "%s", val);
            d = skip_ws(d, d_end);
            if (*d == ',') d = skip_ws(d + 1, d_end);
        }
    }
    char fill[32];
    if (json_string(json_key(p, end, "fill"), end, fill, sizeof fill)) {
        for (int f = 0; f < 4; f++) {
            if (!strcmp(fill, fill_names[f])) {
                in->fill = (enum fill)f;
                in->has_fill = true;
            }
        }
        if (!in->has_fill) return false;
    }
    const char *h = json_key(p, end, "high");
    in->high = h ? strtoll(h, NULL, 10) : 1000;
    return true;
}

/* Reads the inputs of `path`; returns their count (0 when the file is absent), -1 on a format
 * error. */
static int json_read_inputs(const char *path, json_input *ins, int cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char *text = NULL;
    size_t len = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size > 0 && size < (1 << 24) && fseek(f, 0, SEEK_SET) == 0 &&
            (text = malloc((size_t)size + 1)))
            len = fread(text, 1, (size_t)size, f);
    }
    fclose(f);
    if (!text) return -1;
    const char *end = text + len, *p = json_key(text, end, "inputs");
    int n = 0;
    const char *arr_end = p && *p == '[' ? json_close(p, end) : NULL;
    if (!arr_end) n = -1;
    for (p = arr_end ? p + 1 : end; n >= 0 && p < arr_end; p++) {
        if (*p != '{') continue;
        const char *obj_end = json_close(p, arr_end);
        if (!obj_end || n == cap || !json_parse_input(p, obj_end, &ins[n])) {
            n = -1;
        } else {
            n++;
            p = obj_end - 1; /* the loop's p++ steps past the object */
        }
    }
    free(text);
    return n;
}

/* zoo/bert_base.dynamo.onnx -> zoo/bert_base.dynamo.json, then zoo/bert_base.json. */
static int find_json(const char *model_path, char *buf, size_t cap, json_input *ins, int max) {
    snprintf(buf, cap, "%s", model_path);
    char *dot = strrchr(buf, '.'), *slash = strrchr(buf, '/');
    while (dot && (!slash || dot > slash)) {
        *dot = 0;
        size_t len = strlen(buf);
        if (len + 6 > cap) break;
        memcpy(buf + len, ".json", 6);
        int n = json_read_inputs(buf, ins, max);
        if (n != 0) return n;
        buf[len] = 0;
        dot = strrchr(buf, '.');
    }
    buf[0] = 0;
    return 0;
}

/* ---------------------------------------------------------------- options */

typedef struct options {
    int runs, idle_samples, threads;
    const char *shape_name[MAX_SHAPES];
    int64_t shape_dims[MAX_SHAPES][MAX_RANK];
    int shape_rank[MAX_SHAPES];
    int shape_count;
} options;

/* ---------------------------------------------------------------- measuring runs */

typedef struct bench {
    const char *path;
    onyx_model *model;
    onyx_rep *rep;
    size_t n_in;
    input in[MAX_INPUTS];
    const char *names[MAX_INPUTS];
    onyx_value *values[MAX_INPUTS];
    size_t n_out;
} bench;

typedef struct sample {
    double ms;
    long faults;
    unsigned long allocs, mmaps, bytes;
} sample;

static void free_values(bench *b) {
    for (size_t i = 0; i < b->n_in; i++) {
        onyx_value_free(b->values[i]);
        b->values[i] = NULL;
    }
}

/* Inputs at the benchmark shapes, with every axis named `dim` set to `value` (dim NULL: none). */
static onyx_status make_values(bench *b, const char *dim, int64_t value) {
    free_values(b);
    for (size_t i = 0; i < b->n_in; i++) {
        int64_t dims[MAX_RANK];
        for (size_t d = 0; d < b->in[i].rank; d++)
            dims[d] = dim && !strcmp(b->in[i].dyn[d], dim) ? value : b->in[i].shape[d];
        onyx_status st = make_tensor(&b->in[i], i, dims, &b->values[i]);
        if (st != ONYX_OK) return st;
    }
    return ONYX_OK;
}

/* One run, measured: its latency, and the page faults and allocations made while it ran. The
 * outputs it hands back are freed outside the measured span (but were allocated inside it). */
static onyx_status run_once(bench *b, sample *s) {
    struct rusage r0, r1;
    size_t n_out = 0;
    onyx_value **outs = NULL;
    unsigned long a0 = atomic_load(&n_allocs), m0 = atomic_load(&n_mmaps),
                  y0 = atomic_load(&n_bytes);
    getrusage(RUSAGE_SELF, &r0);
    atomic_store(&counting, true);
    double t0 = now_ms();
    onyx_status st = onyx_rep_run(b->rep, b->n_in, b->names,
                                  (const onyx_value *const *)b->values, &n_out, &outs);
    double t1 = now_ms();
    atomic_store(&counting, false);
    getrusage(RUSAGE_SELF, &r1);
    if (s) {
        s->ms = t1 - t0;
        s->faults = r1.ru_minflt - r0.ru_minflt;
        s->allocs = atomic_load(&n_allocs) - a0;
        s->mmaps = atomic_load(&n_mmaps) - m0;
        s->bytes = atomic_load(&n_bytes) - y0;
    }
    if (st == ONYX_OK) {
        b->n_out = n_out;
        onyx_values_free(outs, n_out);
    }
    return st;
}

static onyx_status run_many(bench *b, sample *s, int n, long idle_ms) {
    for (int i = 0; i < n; i++) {
        if (idle_ms) sleep_ms(idle_ms);
        onyx_status st = run_once(b, &s[i]);
        if (st != ONYX_OK) return st;
    }
    return ONYX_OK;
}

static void print_row(const char *label, const sample *s, int n) {
    double ms[n > 0 ? n : 1], faults = 0, allocs = 0, mmaps = 0, bytes = 0, lo = s[0].ms;
    for (int i = 0; i < n; i++) {
        ms[i] = s[i].ms;
        lo = s[i].ms < lo ? s[i].ms : lo;
        faults += (double)s[i].faults;
        allocs += (double)s[i].allocs;
        mmaps += (double)s[i].mmaps;
        bytes += (double)s[i].bytes;
    }
    printf("  %-24s %5d %11.2f %10.2f %11.1f %11.1f %9.1f %11.3f\n", label, n, median_of(ms, n), lo,
           faults / n, allocs / n, mmaps / n, bytes / n / 1048576.0);
}

/* ---------------------------------------------------------------- per model */

/* Input descriptions from the model, the json beside it and --shape. */
static int describe_inputs(bench *b, const options *o) {
    static json_input js[MAX_INPUTS];
    char json_path[4096];
    int nj = find_json(b->path, json_path, sizeof json_path, js, MAX_INPUTS);
    if (nj < 0) {
        fprintf(stderr, "core_bench: %s: cannot read its inputs\n", json_path);
        return 1;
    }
    b->n_in = onyx_model_input_count(b->model);
    if (b->n_in > MAX_INPUTS) {
        fprintf(stderr, "core_bench: %s: %zu inputs, at most %d\n", b->path, b->n_in, MAX_INPUTS);
        return 1;
    }
    for (size_t i = 0; i < b->n_in; i++) {
        onyx_io_info info;
        onyx_status st = onyx_model_input(b->model, i, &info);
        if (st != ONYX_OK) return fail("model input", st);
        input *in = &b->in[i];
        memset(in, 0, sizeof *in);
        snprintf(in->name, sizeof in->name, "%s", info.name);
        b->names[i] = info.name;
        in->dtype = info.dtype;
        if (info.rank < 0 || info.rank > MAX_RANK) {
            fprintf(stderr, "core_bench: input '%s': unknown or too large rank\n", in->name);
            return 1;
        }
        in->rank = (size_t)info.rank;
        const json_input *j = NULL;
        for (int k = 0; k < nj; k++)
            if (!strcmp(js[k].name, in->name)) j = &js[k];
        if (j && j->rank != in->rank) {
            fprintf(stderr, "core_bench: %s: input '%s' has rank %zu, the model says %zu\n",
                    json_path, in->name, j->rank, in->rank);
            return 1;
        }
        /* Without a json: symbolic dims are dynamic; a sequence-like one is taken as 128, any
         * other as 1. Fills follow the usual transformer input names. */
        bool is_float = in->dtype == ONYX_FLOAT || in->dtype == ONYX_DOUBLE ||
                        in->dtype == ONYX_FLOAT16;
        in->fill = is_float ? FILL_UNIFORM
                   : strstr(in->name, "mask") ? FILL_ONES
                   : strstr(in->name, "type") ? FILL_ZEROS
                                              : FILL_TOKENS;
        in->high = 1000;
        for (size_t d = 0; d < in->rank; d++) {
            if (j) {
                in->shape[d] = j->shape[d];
                snprintf(in->dyn[d], sizeof in->dyn[d], "%s", j->dyn[d]);
            } else if (info.dims[d] >= 0) {
                in->shape[d] = info.dims[d];
            } else {
                const char *p = info.dim_params && info.dim_params[d] ? info.dim_params[d] : NULL;
                if (p) snprintf(in->dyn[d], sizeof in->dyn[d], "%s", p);
                else snprintf(in->dyn[d], sizeof in->dyn[d], "dim%zu", d);
                in->shape[d] = p && strstr(p, "seq") ? 128 : 1;
            }
        }
        if (j && j->has_fill) in->fill = j->fill;
        if (j) in->high = j->high;
        for (int k = 0; k < o->shape_count; k++) {
            if (strcmp(o->shape_name[k], in->name)) continue;
            if ((size_t)o->shape_rank[k] != in->rank) {
                fprintf(stderr, "core_bench: --shape %s: rank %d, the model's input has %zu\n",
                        in->name, o->shape_rank[k], in->rank);
                return 1;
            }
            memcpy(in->shape, o->shape_dims[k], in->rank * sizeof *in->shape);
        }
    }
    printf("  inputs (%s):", json_path[0] ? json_path : "declared dims, no json");
    for (size_t i = 0; i < b->n_in; i++) {
        char dims[256];
        printf("%s %s %s[%s] %s", i ? "," : "", b->in[i].name, onyx_dtype_name(b->in[i].dtype),
               format_dims(b->in[i].rank, b->in[i].shape, dims, sizeof dims),
               fill_names[b->in[i].fill]);
    }
    printf("\n");
    return 0;
}

/* The first run at new values of each dynamic dim against steady runs at that value. */
static int new_shapes(bench *b, const options *o) {
    const char *dims[MAX_INPUTS * MAX_RANK];
    int64_t base[MAX_INPUTS * MAX_RANK];
    int n_dims = 0;
    for (size_t i = 0; i < b->n_in; i++)
        for (size_t d = 0; d < b->in[i].rank; d++) {
            const char *name = b->in[i].dyn[d];
            bool seen = !name[0];
            for (int k = 0; k < n_dims && !seen; k++) seen = !strcmp(dims[k], name);
            if (!seen) base[n_dims] = b->in[i].shape[d], dims[n_dims++] = name;
        }
    if (n_dims == 0) {
        printf("  new shape: none (no dynamic axis)\n");
        return 0;
    }
    int steady = o->runs / 2 > 3 ? o->runs / 2 : 3;
    printf("  %-24s %11s %15s %12s %11s %11s\n", "new shape", "first ms", "steady ms (n)",
           "first/steady", "faults 1st", "allocs 1st");
    sample *s = calloc((size_t)steady, sizeof *s);
    if (!s) return 1;
    int rc = 0;
    for (int k = 0; k < n_dims && rc == 0; k++) {
        /* Small dims (batch) grow by one, long ones (sequence) shrink by quarters. */
        bool small = !strcmp(dims[k], "batch") || base[k] <= 4;
        for (int step = 1; step <= 3 && rc == 0; step++) {
            int64_t v = small ? base[k] + step : base[k] * (4 - step) / 4;
            if (v < 1) continue;
            char label[64];
            snprintf(label, sizeof label, "%s %lld", dims[k], (long long)v);
            sample first;
            onyx_status st = make_values(b, dims[k], v);
            if (st == ONYX_OK) st = run_once(b, &first);
            if (st == ONYX_OK) st = run_many(b, s, steady, 0);
            if (st != ONYX_OK) {
                char what[128];
                snprintf(what, sizeof what, "%s: run at %s", b->path, label);
                rc = fail(what, st);
                break;
            }
            double ms[steady];
            for (int i = 0; i < steady; i++) ms[i] = s[i].ms;
            double med = median_of(ms, steady);
            char steady_col[32];
            snprintf(steady_col, sizeof steady_col, "%.2f (%d)", med, steady);
            printf("  %-24s %11.2f %15s %12.2f %11ld %11lu\n", label, first.ms, steady_col,
                   first.ms / med, first.faults, first.allocs);
        }
    }
    free(s);
    return rc;
}

static int bench_model(const char *path, const options *o) {
    bench *b = calloc(1, sizeof *b);
    sample *s = calloc((size_t)(o->runs > o->idle_samples ? o->runs : o->idle_samples), sizeof *s);
    int rc = 0;
    if (!b || !s) {
        free(b);
        free(s);
        fprintf(stderr, "core_bench: out of memory\n");
        return 1;
    }
    b->path = path;
    printf("== %s (%d thread%s)\n", path, o->threads, o->threads == 1 ? "" : "s");
    onyx_status st = onyx_model_load_file(path, &b->model);
    if (st != ONYX_OK) {
        rc = fail(path, st);
        goto done;
    }
    if ((rc = describe_inputs(b, o)) != 0) goto done;
    if ((st = make_values(b, NULL, 0)) != ONYX_OK) {
        rc = fail("inputs", st);
        goto done;
    }
    /* Prepared with the benchmark inputs as examples, so their shapes are planned up front. */
    onyx_session_options *opts = NULL;
    st = onyx_session_options_create(&opts);
    if (st == ONYX_OK) st = onyx_session_options_set_threads(opts, o->threads);
    for (size_t i = 0; st == ONYX_OK && i < b->n_in; i++)
        st = onyx_session_options_add_example(opts, b->names[i], b->values[i]);
    double t0 = now_ms();
    if (st == ONYX_OK) st = onyx_prepare_session(b->model, opts, &b->rep);
    double prepare_ms = now_ms() - t0;
    onyx_session_options_free(opts);
    if (st != ONYX_OK) {
        rc = fail("prepare", st);
        goto done;
    }
    sample first;
    for (int i = 0; i < WARMUP && st == ONYX_OK; i++) st = run_once(b, i ? NULL : &first);
    if (st != ONYX_OK) {
        rc = fail("warm-up run", st);
        goto done;
    }
    printf("  prepare %.1f ms; first run %.2f ms, %ld faults, %lu allocations; %zu output%s\n",
           prepare_ms, first.ms, first.faults, first.allocs, b->n_out, b->n_out == 1 ? "" : "s");
    printf("  %-24s %5s %11s %10s %11s %11s %9s %11s\n", "runs (after warm-up)", "n",
           "median ms", "min ms", "faults/run", "allocs/run", "mmap/run", "MB alloc/run");
    struct {
        const char *label;
        int n;
        long idle_ms;
    } rows[] = {
        {"back to back", o->runs, 0},
        {"after 100 ms idle", o->idle_samples, 100},
        {"after 1 s idle", o->idle_samples, 1000},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (rows[r].n <= 0) continue;
        if ((st = run_many(b, s, rows[r].n, rows[r].idle_ms)) != ONYX_OK) {
            rc = fail(rows[r].label, st);
            goto done;
        }
        print_row(rows[r].label, s, rows[r].n);
    }
    printf("  (allocs/run includes the %zu output tensor%s handed back by each run)\n", b->n_out,
           b->n_out == 1 ? "" : "s");
    rc = new_shapes(b, o);
done:
    printf("\n");
    free_values(b);
    onyx_rep_free(b->rep);
    onyx_model_free(b->model);
    free(b);
    free(s);
    return rc;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f) {
    fprintf(f,
            "usage: core_bench [-n RUNS] [--idle-samples K] [-t THREADS] [--shape NAME=1x128 ...]\n"
            "                  [MODEL.onnx ...]   (default: zoo/bert_base.onnx zoo/resnet50.onnx)\n"
            "Per model: page faults, heap allocations (malloc & co., mmap) and latency of runs\n"
            "after %d warm-up runs, back to back and after 100 ms / 1 s idle; then the first run\n"
            "at new sizes of each dynamic axis against steady runs at that size.\n",
            WARMUP);
}

static int parse_int(const char *s, const char *what, int min, int *out) {
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < min || v > 1000000) {
        fprintf(stderr, "core_bench: %s wants an integer >= %d, got '%s'\n", what, min,
                s ? s : "");
        return 1;
    }
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    options o = {.runs = 20, .idle_samples = 8, .threads = 2};
    const char *models[256];
    int n_models = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--runs")) {
            rc = parse_int(i + 1 < argc ? argv[++i] : NULL, a, 1, &o.runs);
        } else if (!strcmp(a, "--idle-samples")) {
            rc = parse_int(i + 1 < argc ? argv[++i] : NULL, a, 0, &o.idle_samples);
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            rc = parse_int(i + 1 < argc ? argv[++i] : NULL, a, 0, &o.threads);
        } else if (!strcmp(a, "--shape")) {
            const char *spec = i + 1 < argc ? argv[++i] : "";
            const char *eq = strchr(spec, '=');
            int k = o.shape_count;
            if (!eq || eq == spec || k == MAX_SHAPES ||
                (o.shape_rank[k] = parse_dims(eq + 1, o.shape_dims[k])) < 0) {
                fprintf(stderr, "core_bench: --shape wants NAME=1x128, got '%s'\n", spec);
                return 1;
            }
            char *name = strndup(spec, (size_t)(eq - spec));
            if (!name) return 1;
            o.shape_name[o.shape_count++] = name;
        } else if (a[0] == '-') {
            fprintf(stderr, "core_bench: unknown option '%s'\n", a);
            usage(stderr);
            return 1;
        } else if (n_models < (int)(sizeof models / sizeof models[0])) {
            models[n_models++] = a;
        }
        if (rc) return 1;
    }
    if (n_models == 0) {
        models[n_models++] = "zoo/bert_base.onnx";
        models[n_models++] = "zoo/resnet50.onnx";
    }
    printf("core_bench: onyx %s, %d warm-up runs, %d runs, %d idle samples", onyx_version(),
           WARMUP, o.runs, o.idle_samples);
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    if (coretype) printf(", OPENBLAS_CORETYPE=%s", coretype);
    printf("\n\n");
    int failed = 0;
    for (int i = 0; i < n_models; i++) failed += bench_model(models[i], &o) != 0;
    for (int k = 0; k < o.shape_count; k++) free((void *)o.shape_name[k]);
    if (failed) fprintf(stderr, "core_bench: %d of %d models failed\n", failed, n_models);
    return failed ? 1 : 0;
}
