/* onyx: the command-line tool. `info` describes a model, `run` runs it once on given or generated
 * inputs and prints the outputs, `bench` measures its latency. Uses only the public API (model
 * metadata included). */
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
            "usage: onyx info MODEL [--placement [-d DEVICE] [--input NAME=FILE.pb ...]]\n"
            "       onyx run MODEL [--input NAME=FILE.pb ...] [-d DEVICE] [-t THREADS]\n"
            "       onyx bench MODEL [-n RUNS] [-w WARMUP] [--input NAME=FILE.pb ...] [-d DEVICE] "
            "[-t THREADS] [--device-io]\n"
            "       onyx profile MODEL [-n RUNS] [-w WARMUP] [--top K] [--trace FILE.json] "
            "[--input ...] [-d DEVICE] [-t THREADS]\n"
            "       (generate MODEL_DIR --prompt TEXT: the Python package's, python -m onyx generate)\n"
            "       onyx --version\n"
            "Inputs not given are generated: arange(n)/n for float types, zeros otherwise, with\n"
            "symbolic dims taken as 1. FILE.pb is a serialized TensorProto (SequenceProto or\n"
            "OptionalProto for such inputs), as in the ONNX test data. DEVICE: CPU (default), "
            "CUDA, CUDA:N,\n"
            "or a priority list (CUDA,CPU). THREADS: 0 (default) is all the CPUs this process may\n"
            "run on, and more than those is clamped to them (with a warning). -O none|basic|all\n"
            "sets the graph optimizations (default all); -v logs placement and planning to\n"
            "stderr; info --placement prints the device of each node; bench --device-io keeps\n"
            "inputs and outputs in the device's memory. `profile` runs the model with per-node\n"
            "timing, writes the Chrome trace (default onyx_profile.json) and prints the ops and\n"
            "nodes that took the most time.\n");
}

static int fail(const char *what, onyx_status st) {
    fprintf(stderr, "onyx: %s: %s: %s\n", what, onyx_status_name(st), onyx_last_error());
    return 1;
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

static int cmd_placement(int argc, char **argv);

static int cmd_info(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--placement")) return cmd_placement(argc, argv);
    if (argc != 1) {
        usage(stderr);
        return 1;
    }
    const char *path = argv[0];
    onyx_model_metadata *md = NULL;
    onyx_status st = onyx_model_metadata_read_file(path, &md);
    if (st != ONYX_OK) return fail("cannot read model", st);
    onyx_model *model = NULL;
    st = onyx_model_load_file(path, &model);
    if (st != ONYX_OK) {
        onyx_model_metadata_free(md);
        return fail("cannot load model", st);
    }
    FILE *f = fopen(path, "rb");
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (f) fclose(f);

    printf("model:    %s (%ld bytes)\n", path, size);
    printf("ir:       %" PRId64 "\n", onyx_model_metadata_ir_version(md));
    const char *producer = onyx_model_metadata_producer_name(md);
    const char *producer_version = onyx_model_metadata_producer_version(md);
    if (*producer || *producer_version)
        printf("producer: %s%s%s\n", producer, *producer && *producer_version ? " " : "",
               producer_version);
    if (*onyx_model_metadata_domain(md) || onyx_model_metadata_model_version(md))
        printf("domain:   %s (model version %" PRId64 ")\n", onyx_model_metadata_domain(md),
               onyx_model_metadata_model_version(md));
    if (*onyx_model_metadata_graph_name(md))
        printf("graph:    %s\n", onyx_model_metadata_graph_name(md));
    if (*onyx_model_metadata_doc_string(md))
        printf("doc:      %.200s\n", onyx_model_metadata_doc_string(md));
    printf("opsets:  ");
    size_t nops = onyx_model_metadata_opset_count(md);
    if (nops == 0) printf(" ai.onnx %" PRId64, onyx_model_opset(model, ""));
    for (size_t i = 0; i < nops; i++) {
        const char *domain = "";
        int64_t version = 0;
        onyx_model_metadata_opset(md, i, &domain, &version);
        printf(" %s %" PRId64 "%s", *domain ? domain : "ai.onnx", version, i + 1 < nops ? "," : "");
    }
    printf("\n");
    size_t nprops = onyx_model_metadata_prop_count(md);
    for (size_t i = 0; i < nprops; i++) {
        const char *key = "", *value = "";
        onyx_model_metadata_prop(md, i, &key, &value);
        printf("%s %s = %.200s\n", i ? "         " : "metadata:", key, value);
    }
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
    printf("nodes:    %zu (top-level graph), %zu initializers\n",
           onyx_model_metadata_node_count(md), onyx_model_metadata_initializer_count(md));
    printf("ops:     ");
    size_t kinds = onyx_model_metadata_op_count(md);
    for (size_t i = 0; i < kinds; i++) {
        const char *domain = "", *op = "";
        size_t count = 0;
        onyx_model_metadata_op(md, i, &domain, &op, &count);
        printf(" %s%s%s x%zu%s", domain, *domain ? "." : "", op, count, i + 1 < kinds ? "," : "");
    }
    printf("\n");
    st = onyx_is_compatible(model, "CPU");
    printf("cpu:      %s%s%s\n", st == ONYX_OK ? "supported" : "not supported",
           st == ONYX_OK ? "" : ": ", st == ONYX_OK ? "" : onyx_last_error());
    onyx_model_metadata_free(md);
    onyx_model_free(model);
    return 0;
}

/* ---------------------------------------------------------------- run and bench */

typedef struct run_args {
    const char *model_path;
    const char *device;
    int threads;
    int runs, warmup;
    onyx_optimization_level optimization;
    const char *trace;        /* profile: the trace file */
    bool verbose;             /* log lines to stderr */
    bool placement;           /* info --placement: print where each node runs */
    bool device_io;           /* bench --device-io: inputs and outputs stay in device memory */
    int top;                  /* profile: rows printed */
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
    onyx_run_options *run_options; /* NULL: the defaults */
} prepared;

static void prepared_free(prepared *p) {
    onyx_run_options_free(p->run_options);
    if (p->inputs) onyx_values_free(p->inputs, p->input_count);
    free(p->names);
    onyx_rep_free(p->rep);
    onyx_model_free(p->model);
    memset(p, 0, sizeof *p);
}

/* Counts past COUNT_MAX are refused: -n and -w keep a time per run, and no run count that large
 * ends. -t is clamped to the CPUs by the library instead (with a warning). */
#define COUNT_MAX 100000000

static int parse_count(const char *s, const char *what, int min, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < min || v > COUNT_MAX) {
        fprintf(stderr, "onyx: %s must be an integer from %d to %d, got '%s'\n", what, min,
                COUNT_MAX, s);
        return 1;
    }
    *out = (int)v;
    return 0;
}

static int parse_optimization(const char *s, onyx_optimization_level *out) {
    if (!strcmp(s, "none")) *out = ONYX_OPT_NONE;
    else if (!strcmp(s, "basic")) *out = ONYX_OPT_BASIC;
    else if (!strcmp(s, "all")) *out = ONYX_OPT_ALL;
    else {
        fprintf(stderr, "onyx: -O takes none, basic or all, got '%s'\n", s);
        return 1;
    }
    return 0;
}

/* `bench` also takes -n/-w; `profile` takes those and --top/--trace. */
static int parse_run_args(int argc, char **argv, bool bench, bool profile, run_args *a) {
    *a = (run_args){.device = "CPU", .threads = 0, .runs = 20, .warmup = 3,
                    .optimization = ONYX_OPT_ALL, .trace = "onyx_profile.json", .top = 15};
    bench |= profile;
    a->input_specs = calloc((size_t)argc + 1, sizeof *a->input_specs);
    if (!a->input_specs) return 1;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(s, "--input") || !strcmp(s, "-i") || !strcmp(s, "-d") ||
                     !strcmp(s, "--device") || !strcmp(s, "-t") || !strcmp(s, "--threads") ||
                     !strcmp(s, "-O") ||
                     (profile && (!strcmp(s, "--top") || !strcmp(s, "--trace"))) ||
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
        } else if (!strcmp(s, "-v") || !strcmp(s, "--verbose")) {
            a->verbose = true;
            continue;
        } else if (!strcmp(s, "--placement")) {
            a->placement = true;
            continue;
        } else if (bench && !strcmp(s, "--device-io")) {
            a->device_io = true;
            continue;
        } else if (!strcmp(s, "-O")) {
            if (parse_optimization(val, &a->optimization)) return 1;
        } else if (profile && !strcmp(s, "--top")) {
            if (parse_count(val, "--top", 1, &a->top)) return 1;
        } else if (profile && !strcmp(s, "--trace")) {
            a->trace = val;
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

static void log_to_stderr(void *user, onyx_log_level level, const char *message) {
    (void)user;
    static const char *const names[] = {"verbose", "info", "warning", "error", "fatal"};
    fprintf(stderr, "onyx [%s] %s\n", names[level], message);
}

/* Where each node runs, from the placement lines of the log ("placement: <node> on <DEVICE>"). */
typedef struct placement_counts {
    int per_device[8];
    const char *names[8];
} placement_counts;

static void print_placement(void *user, onyx_log_level level, const char *message) {
    if (level >= ONYX_LOG_WARNING) log_to_stderr(NULL, level, message);
    placement_counts *pc = user;
    const char *tag = "placement: ";
    if (strncmp(message, tag, strlen(tag)) != 0) return;
    const char *on = strrchr(message, ' ');
    if (!on || on - message < (ptrdiff_t)strlen(tag) + 3) return;
    printf("  %-8s %.*s\n", on + 1, (int)(on - 3 - message - strlen(tag)), message + strlen(tag));
    for (int d = 0; d < 8; d++) {
        if (!pc->names[d]) pc->names[d] = strdup(on + 1);
        if (pc->names[d] && !strcmp(pc->names[d], on + 1)) {
            pc->per_device[d]++;
            break;
        }
    }
}

/* Loads the model, makes its inputs (from --input files or generated) and prepares it. */
static int prepare_model(const run_args *a, prepared *p, bool announce, bool profile) {
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
    onyx_session_options *opts = NULL;
    st = onyx_session_options_create(&opts);
    if (st == ONYX_OK) st = onyx_session_options_set_devices(opts, a->device);
    if (st == ONYX_OK) st = onyx_session_options_set_threads(opts, a->threads);
    if (st == ONYX_OK) st = onyx_session_options_set_optimization(opts, a->optimization);
    if (st == ONYX_OK && profile) st = onyx_session_options_set_profiling(opts, a->trace);
    placement_counts pc = {0};
    if (st == ONYX_OK && a->placement) {
        printf("placement on %s (nodes folded into constants or fused into others not listed):\n",
               a->device);
        st = onyx_session_options_set_log(opts, ONYX_LOG_VERBOSE, print_placement, &pc);
    } else if (st == ONYX_OK) { /* warnings always: a clamped -t says so */
        st = onyx_session_options_set_log(opts, a->verbose ? ONYX_LOG_VERBOSE : ONYX_LOG_WARNING,
                                          log_to_stderr, NULL);
    }
    for (size_t i = 0; i < n && st == ONYX_OK; i++)
        st = onyx_session_options_add_example(opts, p->names[i], p->inputs[i]);
    if (st != ONYX_OK) {
        onyx_session_options_free(opts);
        return fail("options", st);
    }
    double t0 = tool_now_ms();
    st = onyx_prepare_session(p->model, opts, &p->rep);
    p->prepare_ms = tool_now_ms() - t0;
    onyx_session_options_free(opts);
    if (a->placement) {
        printf("nodes:");
        for (int d = 0; d < 8 && pc.names[d]; d++) {
            printf("%s %d on %s", d ? "," : "", pc.per_device[d], pc.names[d]);
            free((void *)pc.names[d]);
        }
        printf("\n");
    }
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
    onyx_status st = onyx_rep_run_with_options(p->rep, p->run_options, p->input_count, p->names,
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

/* onyx info MODEL --placement [-d DEVICES]: the model prepared on its generated inputs, with the
 * device of each node. */
static int cmd_placement(int argc, char **argv) {
    run_args a;
    prepared p = {0};
    int rc = parse_run_args(argc, argv, false, false, &a);
    if (rc == 0 && !a.placement) rc = 1;
    if (rc == 0) rc = prepare_model(&a, &p, false, false);
    prepared_free(&p);
    free(a.input_specs);
    return rc;
}

static int cmd_run(int argc, char **argv) {
    run_args a;
    prepared p = {0};
    size_t count = 0;
    onyx_value **outs = NULL;
    double ms = 0;
    int rc = parse_run_args(argc, argv, false, false, &a);
    if (rc == 0) rc = prepare_model(&a, &p, true, false);
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

/* bench --device-io: the inputs copied once into the first listed device's memory, and the
 * outputs made there left there, as a server keeping data on the GPU would run. */
static int inputs_to_device(const run_args *a, prepared *p) {
    char device[32];
    snprintf(device, sizeof device, "%.*s", (int)strcspn(a->device, ","), a->device);
    onyx_status st = onyx_run_options_create(&p->run_options);
    if (st == ONYX_OK) st = onyx_run_options_set_output_device(p->run_options, device);
    for (size_t i = 0; i < p->input_count && st == ONYX_OK; i++) {
        onyx_value *on_device = NULL;
        if (onyx_value_kind_of(p->inputs[i]) != ONYX_VALUE_TENSOR) continue;
        st = onyx_value_copy_to_device(p->inputs[i], device, &on_device);
        if (st != ONYX_OK) break;
        onyx_value_free(p->inputs[i]);
        p->inputs[i] = on_device;
    }
    return st == ONYX_OK ? 0 : fail("--device-io", st);
}

static int cmd_bench(int argc, char **argv) {
    run_args a;
    prepared p = {0};
    double *times = NULL;
    int rc = parse_run_args(argc, argv, true, false, &a);
    if (rc == 0) rc = prepare_model(&a, &p, false, false);
    if (rc == 0 && a.device_io) rc = inputs_to_device(&a, &p);
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
        printf("%s on %s%s, %s: prepare %s, first run %s\n", a.model_path, a.device,
               a.device_io ? " (inputs and outputs in device memory)" : "", threads,
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

/* ---- profile: run with per-node timing, then sum the trace's node events by op and by node */

typedef struct time_row {
    char key[160];
    double us;
    int count;
} time_row;

/* Adds `us` to the row named `key`, appending it when new (rows has room for cap). */
static void add_time(time_row *rows, int *n, int cap, const char *key, double us) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(rows[i].key, key)) {
            rows[i].us += us;
            rows[i].count++;
            return;
        }
    if (*n == cap) return;
    snprintf(rows[*n].key, sizeof rows[*n].key, "%s", key);
    rows[*n].us = us;
    rows[*n].count = 1;
    (*n)++;
}

static int cmp_rows(const void *a, const void *b) {
    double x = ((const time_row *)a)->us, y = ((const time_row *)b)->us;
    return (x < y) - (x > y);
}

/* The string value of "field":"..." in one event line of onyx's own trace, or "" when absent. */
static void json_field(const char *line, const char *field, char *out, size_t cap) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", field);
    const char *p = strstr(line, pat);
    size_t n = 0;
    if (p)
        for (p += strlen(pat); *p && *p != '"' && n + 1 < cap; p++) out[n++] = *p;
    out[n] = '\0';
}

static void print_rows(const char *title, time_row *rows, int n, int top, double total, int runs) {
    qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
    printf("\n%-40s %12s %8s %7s\n", title, "ms per run", "calls", "share");
    for (int i = 0; i < n && i < top; i++)
        printf("%-40.40s %12.3f %8d %6.1f%%\n", rows[i].key, rows[i].us / 1e3 / runs,
               rows[i].count / runs, total > 0 ? 100.0 * rows[i].us / total : 0.0);
}

static int summarize_trace(const char *path, int top, int runs) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "onyx: cannot read the trace %s\n", path);
        return 1;
    }
    enum { CAP = 4096 };
    time_row *ops = calloc(CAP, sizeof *ops), *nodes = calloc(CAP, sizeof *nodes);
    if (!ops || !nodes) {
        fclose(f);
        free(ops);
        free(nodes);
        fprintf(stderr, "onyx: out of memory\n");
        return 1;
    }
    int n_ops = 0, n_nodes = 0;
    double total = 0;
    char line[8192], op[128], name[160];
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"cat\":\"Node\"")) continue;
        const char *d = strstr(line, "\"dur\":");
        if (!d) continue;
        double us = strtod(d + 6, NULL);
        json_field(line, "op_name", op, sizeof op);
        json_field(line, "name", name, sizeof name);
        char *suffix = strstr(name, "_kernel_time");
        if (suffix) *suffix = '\0';
        char node[300];
        snprintf(node, sizeof node, "%s (%s)", name, op);
        add_time(ops, &n_ops, CAP, op, us);
        add_time(nodes, &n_nodes, CAP, node, us);
        total += us;
    }
    fclose(f);
    printf("%d runs profiled: %.3f ms per run in nodes; trace: %s\n", runs, total / 1e3 / runs,
           path);
    print_rows("op", ops, n_ops, top, total, runs);
    print_rows("node", nodes, n_nodes, top, total, runs);
    free(ops);
    free(nodes);
    return 0;
}

static int cmd_profile(int argc, char **argv) {
    run_args a;
    prepared p = {0};
    int rc = parse_run_args(argc, argv, false, true, &a);
    if (rc == 0) rc = prepare_model(&a, &p, false, true);
    for (int i = 0; rc == 0 && i < a.warmup + a.runs; i++) {
        size_t count = 0;
        onyx_value **outs = NULL;
        double ms;
        /* warm-up runs are profiled too; the trace is restarted once they are done */
        if (i == a.warmup) {
            onyx_status st = onyx_rep_end_profiling(p.rep, NULL);
            if (st != ONYX_OK) rc = fail("profile", st);
        }
        if (rc == 0) rc = run_once(&p, &count, &outs, &ms);
        if (rc == 0) onyx_values_free(outs, count);
    }
    const char *path = NULL;
    if (rc == 0) {
        onyx_status st = onyx_rep_end_profiling(p.rep, &path);
        if (st != ONYX_OK) rc = fail("profile", st);
    }
    if (rc == 0) rc = summarize_trace(path, a.top, a.runs);
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
    if (!strcmp(cmd, "profile")) return cmd_profile(argc - 2, argv + 2);
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
