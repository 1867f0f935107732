/* The elementwise runner (dtype table + broadcasting, legacy opset<7 broadcast, variadic folding)
 * and the kernels that are only data selection or folding: Min, Max, Sum, Mean, Where, Expand. */
#include "kernels_cpu/elementwise/elementwise.h"

#include <math.h>
#include <string.h>

#include "ops/elementwise/infer_elementwise.h"

static onyx_status need_inputs(const kernel_call *c, int n_in, const tensor **in, tensor **out) {
    for (int i = 0; i < n_in; i++) {
        in[i] = kernel_input(c, i);
        if (!in[i]) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input %d is missing", i);
    }
    *out = kernel_output(c, 0);
    if (!*out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "output 0 is missing");
    return ONYX_OK;
}

static cpu_bcast_fn pick(const cpu_bcast_fn *table, const tensor *t, int key) {
    if ((unsigned)t->dtype >= ONYX_DTYPE_COUNT || !table[t->dtype]) {
        onyx_error(ONYX_ERR_UNSUPPORTED, "input %d has type %s, which this kernel does not take",
                   key, onyx_dtype_name(t->dtype));
        return NULL;
    }
    return table[t->dtype];
}

/* Plans the broadcast of in[0..n_in) to out, honouring the opset<7 `broadcast`/`axis` form. */
static onyx_status plan(const kernel_call *c, cpu_bcast_iter *it, const tensor *out, int n_in,
                        const tensor *const *in) {
    if (n_in == 2 && c->node->version < 7 && attr_int(c->node, "broadcast", 0) != 0) {
        const tensor *a = in[0], *b = in[1];
        const graph_attr *ax = node_attr(c->node, "axis");
        int64_t bd[ONYX_MAX_RANK];
        TRY(infer_ew_legacy_dims(a->rank, a->dims, b->rank, b->dims, ax ? ax->i : 0, ax != NULL,
                                 bd));
        int ranks[2] = {a->rank, a->rank};
        const int64_t *dims[2] = {a->dims, bd};
        size_t sizes[2] = {dtype_size(a->dtype), dtype_size(b->dtype)};
        return cpu_bcast_init(it, out->rank, out->dims, dtype_size(out->dtype), 2, ranks, dims,
                              sizes);
    }
    return cpu_bcast_init_tensors(it, out, n_in, in);
}

onyx_status cpu_ew_run(const kernel_call *c, const cpu_bcast_fn *table, int key, int n_in,
                       void *ctx) {
    const tensor *in[CPU_BCAST_MAX_OPS];
    tensor *out;
    TRY(need_inputs(c, n_in, in, &out));
    cpu_bcast_fn fn = pick(table, in[key], key);
    if (!fn) return ONYX_ERR_UNSUPPORTED;
    /* the inner loops read every operand as the key's type (Pow's table, keyed by input 1, is
     * indexed by both types instead) */
    for (int i = 1; key == 0 && i < n_in; i++)
        if (in[i]->dtype != in[0]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected %s like input 0", i,
                              onyx_dtype_name(in[i]->dtype), onyx_dtype_name(in[0]->dtype));
    cpu_bcast_iter it;
    TRY(plan(c, &it, out, n_in, in));
    const void *ptr[CPU_BCAST_MAX_OPS];
    for (int i = 0; i < n_in; i++) ptr[i] = in[i]->data;
    cpu_bcast_run(&it, out->data, ptr, fn, ctx, false);
    return ONYX_OK;
}

onyx_status cpu_ew_run_variadic(const kernel_call *c, const cpu_bcast_fn *table, void *ctx) {
    const tensor *in0;
    tensor *out;
    TRY(need_inputs(c, 1, &in0, &out));
    if (c->n_in == 1) return out->data == in0->data ? ONYX_OK : tensor_copy_data(out, in0);
    cpu_bcast_fn fn = pick(table, in0, 0);
    if (!fn) return ONYX_ERR_UNSUPPORTED;
    for (int k = 1; k < c->n_in; k++) {
        const tensor *in[2] = {k == 1 ? in0 : out, kernel_input(c, k)};
        if (!in[1]) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input %d is missing", k);
        if (in[1]->dtype != in0->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected %s", k,
                              onyx_dtype_name(in[1]->dtype), onyx_dtype_name(in0->dtype));
        cpu_bcast_iter it;
        TRY(cpu_bcast_init_tensors(&it, out, 2, in));
        const void *ptr[2] = {in[0]->data, in[1]->data};
        cpu_bcast_run(&it, out->data, ptr, fn, ctx, false);
    }
    return ONYX_OK;
}

/* ---- Min, Max, Sum, Mean */

/* numpy's minimum/maximum propagate NaN from either side */
#define FMIN(x, y) ((x) != (x) ? (x) : (x) < (y) ? (x) : (y))
#define FMAX(x, y) ((x) != (x) ? (x) : (x) > (y) ? (x) : (y))
EW_FOR_FLOAT(EW_BINARY_SAME, min, FMIN(x, y))
EW_FOR_INT(EW_BINARY_SAME, min, (x < y ? x : y))
EW_FOR_FLOAT(EW_BINARY_SAME, max, FMAX(x, y))
EW_FOR_INT(EW_BINARY_SAME, max, (x > y ? x : y))
EW_FOR_FLOAT(EW_BINARY_SAME, sum, x + y)
EW_FOR_FLOAT(EW_UNARY_SAME, mean_scale, x / (__typeof__(x))(*(const double *)ctx))

static const cpu_ew_table min_table = {EW_FOR_NUMERIC(EW_ENTRY, min)};
static const cpu_ew_table max_table = {EW_FOR_NUMERIC(EW_ENTRY, max)};
static const cpu_ew_table sum_table = {EW_FOR_FLOAT(EW_ENTRY, sum)};
static const cpu_ew_table mean_scale_table = {EW_FOR_FLOAT(EW_ENTRY, mean_scale)};

onyx_status cpu_min(const kernel_call *c) { return cpu_ew_run_variadic(c, min_table, NULL); }
onyx_status cpu_max(const kernel_call *c) { return cpu_ew_run_variadic(c, max_table, NULL); }
onyx_status cpu_sum(const kernel_call *c) { return cpu_ew_run_variadic(c, sum_table, NULL); }

onyx_status cpu_mean(const kernel_call *c) {
    TRY(cpu_ew_run_variadic(c, sum_table, NULL));
    tensor *out = kernel_output(c, 0);
    cpu_bcast_fn fn = pick(mean_scale_table, out, 0);
    if (!fn) return ONYX_ERR_UNSUPPORTED;
    double count = c->n_in;
    cpu_bcast_iter it;
    const tensor *in[1] = {out};
    TRY(cpu_bcast_init_tensors(&it, out, 1, in));
    const void *ptr[1] = {out->data};
    cpu_bcast_run(&it, out->data, ptr, fn, &count, false);
    return ONYX_OK;
}

/* ---- Where and Expand: pure element selection, so one loop per element size serves every type */

typedef struct {
    uint64_t lo, hi;
} ew_bytes16;

#define EW_FOR_SIZES(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t) X(16, ew_bytes16)

#define WHERE_LOOP(SZ, T)                                                                          \
    static void where_##SZ(void *ctx, int64_t n, char *const *p, const int64_t *s) {               \
        (void)ctx;                                                                                 \
        T *o = (T *)p[0];                                                                          \
        const uint8_t *cond = (const uint8_t *)p[1];                                               \
        const T *x = (const T *)p[2], *y = (const T *)p[3];                                        \
        if (s[1] == 1 && s[2] == 1 && s[3] == 1) {                                                 \
            CPU_SIMD for (int64_t i = 0; i < n; i++) o[i] = cond[i] ? x[i] : y[i];                 \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) o[i] = cond[i * s[1]] ? x[i * s[2]] : y[i * s[3]];     \
        }                                                                                          \
    }
EW_FOR_SIZES(WHERE_LOOP)

#define COPY_LOOP(SZ, T)                                                                           \
    static void copy_##SZ(void *ctx, int64_t n, char *const *p, const int64_t *s) {                \
        (void)ctx;                                                                                 \
        T *o = (T *)p[0];                                                                          \
        const T *x = (const T *)p[1];                                                              \
        if (s[1] == 0) {                                                                           \
            T v = x[0];                                                                            \
            CPU_SIMD for (int64_t i = 0; i < n; i++) o[i] = v;                                     \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) o[i] = x[i * s[1]];                                    \
        }                                                                                          \
    }
EW_FOR_SIZES(COPY_LOOP)

static cpu_bcast_fn by_size(size_t size, bool where) {
#define CASE(SZ, T)                                                                                \
    case SZ: return where ? where_##SZ : copy_##SZ;
    switch (size) {
        EW_FOR_SIZES(CASE)
    default: return NULL;
    }
#undef CASE
}

/* Strings are owned copies, so their loops set elements through the tensor (serially). */
typedef struct string_ctx {
    tensor *out;
    onyx_status st;
} string_ctx;

static void set_string(string_ctx *sc, char *const *dst, const char *s) {
    if (sc->st != ONYX_OK) return;
    int64_t i = dst - (char *const *)sc->out->data;
    sc->st = tensor_set_string(sc->out, i, s, strlen(s));
}

static void where_string(void *ctx, int64_t n, char *const *p, const int64_t *s) {
    char *const *o = (char *const *)p[0];
    const uint8_t *cond = (const uint8_t *)p[1];
    char *const *x = (char *const *)p[2], *const *y = (char *const *)p[3];
    for (int64_t i = 0; i < n; i++)
        set_string(ctx, o + i, cond[i * s[1]] ? x[i * s[2]] : y[i * s[3]]);
}

static void copy_string(void *ctx, int64_t n, char *const *p, const int64_t *s) {
    char *const *o = (char *const *)p[0];
    char *const *x = (char *const *)p[1];
    for (int64_t i = 0; i < n; i++) set_string(ctx, o + i, x[i * s[1]]);
}

/* Broadcasts inputs [first, first + n_in) into output 0, selecting with fn (or, for strings,
 * the string variant). */
static onyx_status select_run(const kernel_call *c, int n_in, bool where) {
    const tensor *in[CPU_BCAST_MAX_OPS];
    tensor *out;
    TRY(need_inputs(c, n_in, in, &out));
    const tensor *data = in[where ? 1 : 0];
    if (where && in[2]->dtype != data->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "inputs 1 and 2 have types %s and %s, expected one type",
                          onyx_dtype_name(data->dtype), onyx_dtype_name(in[2]->dtype));
    if (where && in[0]->dtype != ONYX_BOOL)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has type %s, expected bool",
                          onyx_dtype_name(in[0]->dtype));
    cpu_bcast_iter it;
    TRY(cpu_bcast_init_tensors(&it, out, n_in, in));
    const void *ptr[CPU_BCAST_MAX_OPS];
    for (int i = 0; i < n_in; i++) ptr[i] = in[i]->data;
    if (data->dtype == ONYX_STRING) {
        string_ctx sc = {out, ONYX_OK};
        cpu_bcast_run(&it, out->data, ptr, where ? where_string : copy_string, &sc, true);
        return sc.st;
    }
    cpu_bcast_fn fn = by_size(dtype_size(data->dtype), where);
    if (!fn)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input %d has type %s, which this kernel does "
                          "not take", where ? 1 : 0, onyx_dtype_name(data->dtype));
    cpu_bcast_run(&it, out->data, ptr, fn, NULL, false);
    return ONYX_OK;
}

onyx_status cpu_where(const kernel_call *c) { return select_run(c, 3, true); }

onyx_status cpu_expand(const kernel_call *c) { return select_run(c, 1, false); }
