/* onyx: the command-line tool. `info` describes a model, `run` runs it once on given or generated
 * inputs and prints the outputs, `bench` measures its latency. Uses only the public API, plus a
 * small protobuf reader for what info shows that the API does not expose (opsets, node counts). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common.h"
#include "onyx.h"

#define PRINT_VALUES 10 /* values shown per output by `run` */

static void usage(FILE *f) {
    fprintf(f,
            "usage: onyx info MODEL\n"
            "       onyx run MODEL [--input NAME=FILE.pb ...] [-d DEVICE] [-t THREADS]\n"
            "       onyx bench MODEL [-n RUNS] [-w WARMUP] [--input NAME=FILE.pb ...] [-d DEVICE] "
            "[-t THREADS]\n"
            "       onyx --version\n"
            "Inputs not given are generated: arange(n)/n for float types, zeros otherwise, with\n"
            "symbolic dims taken as 1. FILE.pb is a serialized TensorProto (SequenceProto or\n"
            "OptionalProto for such inputs), as in the ONNX test data. DEVICE: CPU (default), "
            "CUDA, CUDA:N.\n");
}

static int fail(const char *what, onyx_status st) {
    fprintf(stderr, "onyx: %s: %s: %s\n", what, onyx_status_name(st), onyx_last_error());
    return 1;
}

/* ---------------------------------------------------------------- protobuf wire reading */

typedef struct wire {
    const uint8_t *p, *end;
} wire;

static bool wire_varint(wire *w, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w->p >= w->end) return false;
        uint8_t b = *w->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Reads the next field: its number, and either its varint value or its bytes (length-delimited);
 * fixed-width fields are skipped over. False at the end or on malformed data. */
static bool wire_next(wire *w, uint32_t *field, uint64_t *varint, wire *bytes, bool *is_bytes) {
    uint64_t key, len;
    if (w->p >= w->end || !wire_varint(w, &key)) return false;
    *field = (uint32_t)(key >> 3);
    *is_bytes = false;
    switch (key & 7) {
    case 0: return wire_varint(w, varint);
    case 1:
        if (w->end - w->p < 8) return false;
        w->p += 8;
        return true;
    case 5:
        if (w->end - w->p < 4) return false;
        w->p += 4;
        return true;
    case 2:
        if (!wire_varint(w, &len) || len > (uint64_t)(w->end - w->p)) return false;
        bytes->p = w->p;
        bytes->end = w->p + len;
        w->p += len;
        *is_bytes = true;
        return true;
    default: return false;
    }
}

typedef struct op_count {
    char name[200];
    int count;
} op_count;

typedef struct model_facts {
    char producer[128];
    char graph_name[128];
    char opsets[16][96];
    int opset_count;
    int64_t nodes, initializers;
    op_count ops[256];
    int op_kinds;
    bool ok;
} model_facts;

static void copy_str(char *dst, size_t cap, wire s) {
    size_t n = (size_t)(s.end - s.p);
    if (n >= cap) n = cap - 1;
    memcpy(dst, s.p, n);
    dst[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)dst[i] < 0x20) dst[i] = '?';
}

static void count_node(model_facts *f, wire node) {
    char op[96] = "", domain[96] = "", name[200];
    uint32_t field;
    uint64_t v;
    wire b;
    bool is_bytes;
    while (wire_next(&node, &field, &v, &b, &is_bytes)) {
        if (!is_bytes) continue;
        if (field == 4) copy_str(op, sizeof op, b);
        else if (field == 7) copy_str(domain, sizeof domain, b);
    }
    if (*domain && strcmp(domain, "ai.onnx") != 0) snprintf(name, sizeof name, "%s.%s", domain, op);
    else snprintf(name, sizeof name, "%s", op);
    f->nodes++;
    for (int i = 0; i < f->op_kinds; i++)
        if (strcmp(f->ops[i].name, name) == 0) {
            f->ops[i].count++;
            return;
        }
    if (f->op_kinds < (int)(sizeof f->ops / sizeof f->ops[0])) {
        snprintf(f->ops[f->op_kinds].name, sizeof f->ops[0].name, "%s", name);
        f->ops[f->op_kinds++].count = 1;
    }
}

static void read_facts(const char *bytes, size_t size, model_facts *f) {
    wire w = {(const uint8_t *)bytes, (const uint8_t *)bytes + size}, b;
    uint32_t field;
    uint64_t v;
    bool is_bytes;
    memset(f, 0, sizeof *f);
    while (wire_next(&w, &field, &v, &b, &is_bytes)) {
        if (!is_bytes) continue;
        if (field == 2) copy_str(f->producer, sizeof f->producer, b);
        else if (field == 8 && f->opset_count < 16) {
            char domain[64] = "";
            uint64_t version = 0;
            wire o = b, ob;
            uint32_t of;
            bool ob_bytes;
            while (wire_next(&o, &of, &v, &ob, &ob_bytes)) {
                if (of == 1 && ob_bytes) copy_str(domain, sizeof domain, ob);
                else if (of == 2 && !ob_bytes) version = v;
            }
            snprintf(f->opsets[f->opset_count++], sizeof f->opsets[0], "%s %" PRIu64,
                     *domain ? domain : "ai.onnx", version);
        } else if (field == 7) {
            wire g = b, gb;
            uint32_t gf;
            bool g_bytes;
            while (wire_next(&g, &gf, &v, &gb, &g_bytes)) {
                if (!g_bytes) continue;
                if (gf == 1) count_node(f, gb);
                else if (gf == 2) copy_str(f->graph_name, sizeof f->graph_name, gb);
                else if (gf == 5) f->initializers++;
            }
            f->ok = true;
        }
    }
}

static int cmp_ops(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return y->count - x->count;
    return strcmp(x->name, y->name);
}

/* ---------------------------------------------------------------- info */

static void print_io(const onyx_io_info *info) {
    char dims[512];
    const char *kind = info->kind == ONYX_VALUE_NONE ? "tensor" : tool_kind_name(info->kind);
    bool tensor = info->kind == ONYX_VALUE_TENSOR || info->kind == ONYX_VALUE_NONE;
    printf("    %-24s %s%s%s%s\n", info->name ? info->name : "(unnamed)", tensor ? "" : kind,
           tensor ? "" : " of ", onyx_dtype_name(info->dtype),
           tool_format_dims(info->rank, info->dims, info->dim_params, dims, sizeof dims));
}

static int cmd_info(int argc, char **argv) {
    if (argc != 1) {
        usage(stderr);
        return 1;
    }
    const char *path = argv[0];
    char *bytes = NULL;
    size_t size = 0;
    int err = tool_read_file(path, &bytes, &size);
    if (err) {
        fprintf(stderr, "onyx: cannot read %s: %s\n", path, strerror(err));
        return 1;
    }
    onyx_model *model = NULL;
    onyx_status st = onyx_model_load_file(path, &model);
    if (st != ONYX_OK) {
        free(bytes);
        return fail("cannot load model", st);
    }
    model_facts *f = calloc(1, sizeof *f);
    if (!f) {
        fprintf(stderr, "onyx: out of memory\n");
        onyx_model_free(model);
        free(bytes);
        return 1;
    }
    read_facts(bytes, size, f);
    free(bytes);

    printf("model:    %s (%zu bytes)\n", path, size);
    printf("ir:       %" PRId64 "\n", onyx_model_ir_version(model));
    if (*f->producer) printf("producer: %s\n", f->producer);
    if (*f->graph_name) printf("graph:    %s\n", f->graph_name);
    printf("opsets:  ");
    if (f->opset_count == 0) printf(" ai.onnx %" PRId64, onyx_model_opset(model, ""));
    for (int i = 0; i < f->opset_count; i++)
        printf(" %s%s", f->opsets[i], i + 1 < f->opset_count ? "," : "");
    printf("\n");
    size_t nin = onyx_model_input_count(model), nout = onyx_model_output_count(model);
    printf("inputs:   %zu\n", nin);
    for (size_t i = 0; i < nin; i++) {
        onyx_io_info info;
        if (onyx_model_input(model, i, &info) == ONYX_OK) print_io(&info);
    }
    printf("outputs:  %zu\n", nout);
    for (size_t i = 0; i < nout; i++) {
        onyx_io_info info;
        if (onyx_model_output(model, i, &info) == ONYX_OK) print_io(&info);
    }
    if (f->ok) {
        printf("nodes:    %" PRId64 " (top-level graph), %" PRId64 " initializers\n", f->nodes,
               f->initializers);
        qsort(f->ops, (size_t)f->op_kinds, sizeof f->ops[0], cmp_ops);
        printf("ops:     ");
        for (int i = 0; i < f->op_kinds; i++)
            printf(" %s x%d%s", f->ops[i].name, f->ops[i].count, i + 1 < f->op_kinds ? "," : "");
        printf("\n");
    }
    st = onyx_is_compatible(model, "CPU");
    printf("cpu:      %s%s%s\n", st == ONYX_OK ? "supported" : "not supported",
           st == ONYX_OK ? "" : ": ", st == ONYX_OK ? "" : onyx_last_error());
    free(f);
    onyx_model_free(model);
    return 0;
}

/* ---------------------------------------------------------------- run and bench */

typedef struct run_args {
    const char *model_path;
    const char *device;
    int threads;
    int runs, warmup;
    const char **input_specs; /* NAME=FILE.pb */
    size_t input_spec_count;
} run_args;

typedef struct prepared {
    onyx_model *model;
    onyx_rep *rep;
    size_t input_count;
    const char **names;
    onyx_value **inputs;
    double prepare_ms;
} prepared;

static void prepared_free(prepared *p) {
    if (p->inputs) onyx_values_free(p->inputs, p->input_count);
    free(p->names);
    onyx_rep_free(p->rep);
    onyx_model_free(p->model);
    memset(p, 0, sizeof *p);
}

static int parse_count(const char *s, const char *what, int min, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < min || v > 100000000) {
        fprintf(stderr, "onyx: %s must be an integer >= %d, got '%s'\n", what, min, s);
        return 1;
    }
    *out = (int)v;
    return 0;
}

static int parse_run_args(int argc, char **argv, bool bench, run_args *a) {
    *a = (run_args){.device = "CPU", .threads = 0, .runs = 20, .warmup = 3};
    a->input_specs = calloc((size_t)argc + 1, sizeof *a->input_specs);
    if (!a->input_specs) return 1;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(s, "--input") || !strcmp(s, "-i") || !strcmp(s, "-d") ||
                     !strcmp(s, "--device") || !strcmp(s, "-t") || !strcmp(s, "--threads") ||
                     (bench && (!strcmp(s, "-n") || !strcmp(s, "-w") || !strcmp(s, "--runs") ||
                                !strcmp(s, "--warmup")));
        if (takes && !val) {
            fprintf(stderr, "onyx: %s needs a value\n", s);
            return 1;
        }
        if (!strcmp(s, "--input") || !strcmp(s, "-i")) a->input_specs[a->input_spec_count++] = val;
        else if (!strncmp(s, "--input=", 8)) {
            a->input_specs[a->input_spec_count++] = s + 8;
            continue;
        } else if (!strcmp(s, "-d") || !strcmp(s, "--device")) a->device = val;
        else if (!strcmp(s, "-t") || !strcmp(s, "--threads")) {
            if (parse_count(val, "-t", 0, &a->threads)) return 1;
        } else if (bench && (!strcmp(s, "-n") || !strcmp(s, "--runs"))) {
            if (parse_count(val, "-n", 1, &a->runs)) return 1;
        } else if (bench && (!strcmp(s, "-w") || !strcmp(s, "--warmup"))) {
            if (parse_count(val, "-w", 0, &a->warmup)) return 1;
        } else if (s[0] == '-' && s[1]) {
            fprintf(stderr, "onyx: unknown option %s\n", s);
            usage(stderr);
            return 1;
        } else if (!a->model_path) {
            a->model_path = s;
            continue;
        } else {
            fprintf(stderr, "onyx: unexpected argument '%s' (one MODEL only)\n", s);
            return 1;
        }
        i++; /* the option's value */
    }
    if (!a->model_path) {
        usage(stderr);
        return 1;
    }
    return 0;
}

/* A graph input's description, with "" for a missing name. */
static onyx_status input_info(const onyx_model *model, size_t i, onyx_io_info *info) {
    onyx_status st = onyx_model_input(model, i, info);
    if (st == ONYX_OK && !info->name) info->name = "";
    return st;
}

/* Loads the model, makes its inputs (from --input files or generated) and prepares it. */
static int prepare_model(const run_args *a, prepared *p, bool announce) {
    onyx_status st = onyx_model_load_file(a->model_path, &p->model);
    if (st != ONYX_OK) return fail("cannot load model", st);
    size_t n = onyx_model_input_count(p->model);
    p->names = calloc(n ? n : 1, sizeof *p->names);
    p->inputs = calloc(n ? n : 1, sizeof *p->inputs);
    if (!p->names || !p->inputs) {
        fprintf(stderr, "onyx: out of memory\n");
        return 1;
    }
    p->input_count = n;
    for (size_t k = 0; k < a->input_spec_count; k++) {
        const char *spec = a->input_specs[k], *eq = strchr(spec, '=');
        bool known = false;
        for (size_t i = 0; eq && i < n; i++) {
            onyx_io_info info;
            if (input_info(p->model, i, &info) == ONYX_OK &&
                strlen(info.name) == (size_t)(eq - spec) &&
                strncmp(info.name, spec, (size_t)(eq - spec)) == 0)
                known = true;
        }
        if (!eq || eq == spec || !eq[1]) {
            fprintf(stderr, "onyx: --input wants NAME=FILE.pb, got '%s'\n", spec);
            return 1;
        }
        if (!known) {
            fprintf(stderr,
                    "onyx: the model has no input '%.*s'; its inputs are:", (int)(eq - spec), spec);
            for (size_t i = 0; i < n; i++) {
                onyx_io_info info;
                if (input_info(p->model, i, &info) == ONYX_OK) fprintf(stderr, " %s", info.name);
            }
            fprintf(stderr, "%s\n", n ? "" : " (none)");
            return 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        onyx_io_info info;
        char dims[512], what[1024];
        st = input_info(p->model, i, &info);
        if (st != ONYX_OK) return fail("model input", st);
        p->names[i] = info.name;
        const char *file = NULL;
        size_t nl = strlen(info.name);
        for (size_t k = 0; k < a->input_spec_count; k++)
            if (strncmp(a->input_specs[k], info.name, nl) == 0 && a->input_specs[k][nl] == '=')
                file = a->input_specs[k] + nl + 1;
        if (file) {
            onyx_value_kind kind = info.kind == ONYX_VALUE_NONE ? ONYX_VALUE_TENSOR : info.kind;
            st = onyx_value_load_pb(kind, file, &p->inputs[i]);
            snprintf(what, sizeof what, "cannot read input '%s' from %s", info.name, file);
            if (st != ONYX_OK) return fail(what, st);
            if (announce) printf("input  %s: %s\n", info.name, file);
            continue;
        }
        if (info.kind != ONYX_VALUE_TENSOR && info.kind != ONYX_VALUE_NONE) {
            fprintf(stderr, "onyx: input '%s' is of kind %s; give it with --input %s=FILE.pb\n",
                    info.name, tool_kind_name(info.kind), info.name);
            return 1;
        }
        if (info.rank < 0 || info.dtype == ONYX_UNDEFINED) {
            fprintf(stderr,
                    "onyx: input '%s' has no declared %s; give it with --input %s=FILE.pb\n",
                    info.name, info.rank < 0 ? "shape" : "type", info.name);
            return 1;
        }
        st = tool_make_input(info.dtype, info.rank, info.dims, &p->inputs[i]);
        if (st != ONYX_OK) {
            fprintf(stderr, "onyx: cannot generate input '%s' (%s %s): %s; give it with --input\n",
                    info.name, onyx_dtype_name(info.dtype),
                    tool_format_dims(info.rank, info.dims, info.dim_params, dims, sizeof dims),
                    st == ONYX_ERR_NO_MEMORY ? "too large" : "unsupported type");
            return 1;
        }
        if (announce) {
            const onyx_value *v = p->inputs[i];
            bool floating = info.dtype == ONYX_FLOAT || info.dtype == ONYX_DOUBLE ||
                            info.dtype == ONYX_FLOAT16 || info.dtype == ONYX_BFLOAT16;
            printf("input  %s: %s%s generated (%s)\n", info.name, onyx_dtype_name(info.dtype),
                   tool_format_dims((int64_t)onyx_tensor_rank(v), onyx_tensor_dims(v), NULL, dims,
                                    sizeof dims),
                   floating ? "arange(n)/n" : "zeros");
        }
    }
    onyx_prepare_options opts;
    onyx_prepare_options_init(&opts);
    opts.device = a->device;
    opts.threads = a->threads;
    opts.example_count = n;
    opts.example_names = p->names;
    opts.examples = (const onyx_value *const *)p->inputs;
    double t0 = tool_now_ms();
    st = onyx_prepare(p->model, &opts, &p->rep);
    p->prepare_ms = tool_now_ms() - t0;
    if (st != ONYX_OK) return fail("prepare failed", st);
    return 0;
}

/* Milliseconds, or microseconds below one millisecond. */
static const char *fmt_ms(double ms, char buf[32]) {
    if (ms >= 1.0) snprintf(buf, 32, "%.3f ms", ms);
    else snprintf(buf, 32, "%.2f us", ms * 1e3);
    return buf;
}

static int run_once(prepared *p, size_t *count, onyx_value ***outs, double *ms) {
    double t0 = tool_now_ms();
    onyx_status st = onyx_rep_run(p->rep, p->input_count, p->names,
                                  (const onyx_value *const *)p->inputs, count, outs);
    *ms = tool_now_ms() - t0;
    if (st != ONYX_OK) return fail("run failed", st);
    return 0;
}

static void print_value(const char *name, const onyx_value *v, int indent) {
    char dims[512], elem[128];
    if (!v) {
        printf("%*s%s: (none)\n", indent, "", name);
        return;
    }
    switch (onyx_value_kind_of(v)) {
    case ONYX_VALUE_TENSOR: {
        onyx_dtype dt = onyx_tensor_dtype(v);
        int64_t n = onyx_tensor_numel(v);
        const void *data = onyx_tensor_data(v);
        printf("%*s%s: %s%s = [", indent, "", name, onyx_dtype_name(dt),
               tool_format_dims((int64_t)onyx_tensor_rank(v), onyx_tensor_dims(v), NULL, dims,
                                sizeof dims));
        for (int64_t i = 0; data && i < n && i < PRINT_VALUES; i++)
            printf("%s%s", i ? ", " : "", tool_format_elem(dt, data, i, elem, sizeof elem));
        printf("%s]", n > PRINT_VALUES ? ", ..." : "");
        if (n > PRINT_VALUES) printf(" (%" PRId64 " values)", n);
        printf("\n");
        break;
    }
    case ONYX_VALUE_SEQUENCE: {
        size_t len = onyx_sequence_length(v);
        printf("%*s%s: sequence of %zu (%s)\n", indent, "", name, len,
               onyx_dtype_name(onyx_sequence_elem_dtype(v)));
        for (size_t j = 0; j < len && j < PRINT_VALUES; j++) {
            char item[32];
            snprintf(item, sizeof item, "[%zu]", j);
            print_value(item, onyx_sequence_at(v, j), indent + 2);
        }
        if (len > PRINT_VALUES) printf("%*s...\n", indent + 2, "");
        break;
    }
    case ONYX_VALUE_OPTIONAL:
        if (!onyx_optional_has_value(v)) printf("%*s%s: optional (empty)\n", indent, "", name);
        else print_value(name, onyx_optional_value(v), indent);
        break;
    case ONYX_VALUE_MAP:
        printf("%*s%s: map\n", indent, "", name);
        print_value("keys", onyx_map_keys(v), indent + 2);
        print_value("values", onyx_map_values(v), indent + 2);
        break;
    default: printf("%*s%s: %s\n", indent, "", name, tool_kind_name(onyx_value_kind_of(v))); break;
    }
}

static int cmd_run(int argc, char **argv) {
    run_args a;
    prepared p = {0};
    size_t count = 0;
    onyx_value **outs = NULL;
    double ms = 0;
    int rc = parse_run_args(argc, argv, false, &a);
    if (rc == 0) rc = prepare_model(&a, &p, true);
    if (rc == 0) rc = run_once(&p, &count, &outs, &ms);
    if (rc == 0) {
        for (size_t i = 0; i < count; i++) {
            onyx_io_info info;
            const char *name =
                onyx_rep_output(p.rep, i, &info) == ONYX_OK && info.name ? info.name : "?";
            char label[512];
            snprintf(label, sizeof label, "output %s", name);
            print_value(label, outs[i], 0);
        }
        char b1[32], b2[32];
        printf("device %s, prepare %s, run %s\n", a.device, fmt_ms(p.prepare_ms, b1),
               fmt_ms(ms, b2));
    }
    if (outs) onyx_values_free(outs, count);
    prepared_free(&p);
    free(a.input_specs);
    return rc;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmd_bench(int argc, char **argv) {
    run_args a;
    prepared p = {0};
    double *times = NULL;
    int rc = parse_run_args(argc, argv, true, &a);
    if (rc == 0) rc = prepare_model(&a, &p, false);
    if (rc == 0 && !(times = calloc((size_t)a.runs, sizeof *times))) {
        fprintf(stderr, "onyx: out of memory\n");
        rc = 1;
    }
    double first = 0;
    for (int i = 0; rc == 0 && i < a.warmup + a.runs; i++) {
        size_t count = 0;
        onyx_value **outs = NULL;
        double ms;
        rc = run_once(&p, &count, &outs, &ms);
        if (rc == 0) onyx_values_free(outs, count);
        if (i == 0) first = ms;
        if (i >= a.warmup) times[i - a.warmup] = ms;
    }
    if (rc == 0) {
        double sum = 0;
        for (int i = 0; i < a.runs; i++) sum += times[i];
        qsort(times, (size_t)a.runs, sizeof *times, cmp_double);
        double median =
            a.runs % 2 ? times[a.runs / 2] : (times[a.runs / 2 - 1] + times[a.runs / 2]) / 2;
        char threads[32] = "all cores";
        if (a.threads)
            snprintf(threads, sizeof threads, "%d thread%s", a.threads, a.threads > 1 ? "s" : "");
        char b[5][32];
        printf("%s on %s, %s: prepare %s, first run %s\n", a.model_path, a.device, threads,
               fmt_ms(p.prepare_ms, b[0]), fmt_ms(first, b[1]));
        printf("%d runs (after %d warm-up): median %s, min %s, mean %s, max %s\n", a.runs, a.warmup,
               fmt_ms(median, b[0]), fmt_ms(times[0], b[1]), fmt_ms(sum / a.runs, b[2]),
               fmt_ms(times[a.runs - 1], b[3]));
    }
    free(times);
    prepared_free(&p);
    free(a.input_specs);
    return rc;
}

int main(int argc, char **argv) {
    /* Line-buffered, so that output and errors interleave in order when both go to a pipe. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("onyx %s\n", onyx_version());
        return 0;
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "onyx: unknown command '%s'\n", cmd);
    usage(stderr);
    return 1;
}
