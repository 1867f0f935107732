/* libFuzzer target: bytes -> load -> is_compatible -> prepare (1 thread) -> run -> free.
 * Input layout: byte 0 = flags, bytes 1..7 = seed of the generator that picks unknown dims and
 * input data, the rest = a ModelProto (external data as in fuzz_load). Inputs follow the declared
 * input types (unknown dims 1..3, at most FUZZ_MAX_INPUT_ELEMS elements per tensor); now and then
 * one input is given a wrong dtype, rank or kind on purpose, which must be refused with an error,
 * not crash. */
#include "tests/fuzz/fuzz_mutate.h"

#define FUZZ_HEADER 8
#define FUZZ_MAX_INPUT_ELEMS 4096

enum {
    F_EXAMPLES = 1u << 0, /* pass the inputs to prepare as examples */
    F_TWICE = 1u << 1,    /* run again with freshly drawn inputs (new dims: a new plan) */
    F_NAMES = 1u << 2,    /* bind inputs by name, in reverse order */
    F_BADDIM = 1u << 3,   /* unknown dims may be 0 */
    F_PERTURB = 3u << 4,  /* both bits: one input gets a wrong dtype, rank or kind */
};

/* A value of type `t`. Returns 0 to skip the model (map, huge declared dims), -1 on a library
 * failure that must not happen for valid arguments. */
static int make_value(fuzz_rng *r, unsigned flags, const type_info *t, int depth, onyx_value **out) {
    onyx_value_kind kind = t ? t->kind : ONYX_VALUE_NONE;
    if (depth > 4 || kind == ONYX_VALUE_MAP) return 0;
    if (kind == ONYX_VALUE_SEQUENCE) {
        onyx_value *items[2] = {NULL, NULL};
        unsigned n = rng_below(r, 3);
        /* items share one dtype: pick it here when the model leaves it open */
        type_info elem;
        type_init(&elem);
        if (t->elem) elem = *t->elem;
        if (elem.kind == ONYX_VALUE_NONE) elem.kind = ONYX_VALUE_TENSOR;
        if (elem.kind == ONYX_VALUE_TENSOR && elem.dtype == ONYX_UNDEFINED)
            elem.dtype = any_dtype[rng_below(r, sizeof any_dtype / sizeof any_dtype[0])];
        for (unsigned i = 0; i < n; i++) {
            int rc = make_value(r, flags, &elem, depth + 1, &items[i]);
            if (rc <= 0) {
                for (unsigned k = 0; k < i; k++) onyx_value_free(items[k]);
                return rc;
            }
        }
        onyx_dtype et = elem.kind == ONYX_VALUE_TENSOR ? elem.dtype : ONYX_UNDEFINED;
        if (onyx_value_new_sequence(et, n, items, out) != ONYX_OK) {
            for (unsigned k = 0; k < n; k++) onyx_value_free(items[k]);
            return -1;
        }
        return 1;
    }
    if (kind == ONYX_VALUE_OPTIONAL) {
        onyx_value *item = NULL;
        if (rng_below(r, 3)) {
            int rc = make_value(r, flags, t->elem, depth + 1, &item);
            if (rc <= 0) return rc;
        }
        if (onyx_value_new_optional(item, out) != ONYX_OK) {
            onyx_value_free(item);
            return -1;
        }
        return 1;
    }
    /* a tensor (also for an undeclared type) */
    onyx_dtype dt = kind == ONYX_VALUE_TENSOR && t->dtype != ONYX_UNDEFINED
                        ? t->dtype
                        : any_dtype[rng_below(r, sizeof any_dtype / sizeof any_dtype[0])];
    int rank = kind == ONYX_VALUE_TENSOR && t->rank >= 0 ? t->rank : (int)rng_below(r, 4);
    int64_t dims[ONYX_MAX_RANK], numel = 1;
    for (int i = 0; i < rank; i++) {
        int64_t d = kind == ONYX_VALUE_TENSOR && t->rank >= 0 ? t->dims[i] : -1;
        if (d > FUZZ_MAX_INPUT_ELEMS) return 0;
        if (d < 0) d = (flags & F_BADDIM) && rng_below(r, 8) == 0 ? 0 : 1 + (int64_t)rng_below(r, 3);
        dims[i] = d;
        numel *= d;
        if (numel > FUZZ_MAX_INPUT_ELEMS) return 0;
    }
    if (dt == ONYX_STRING) {
        const char *strs[FUZZ_MAX_INPUT_ELEMS];
        for (int64_t i = 0; i < numel; i++)
            strs[i] = string_pool[rng_below(r, sizeof string_pool / sizeof string_pool[0])];
        return onyx_value_new_string_tensor((size_t)rank, dims, strs, out) == ONYX_OK ? 1 : -1;
    }
    size_t nbytes;
    if (!dtype_storage_size(dt, numel, &nbytes)) return 0;
    uint8_t *buf = calloc(nbytes ? nbytes : 1, 1);
    if (!buf) return 0;
    fuzz_fill(r, dt, numel, buf, nbytes);
    onyx_status st = onyx_value_new_tensor(dt, (size_t)rank, dims, buf, nbytes, out);
    free(buf);
    return st == ONYX_OK ? 1 : -1;
}

/* The type to generate input i from: the declared one, or a deliberately wrong one. */
static void input_type(fuzz_rng *r, const type_info *decl, bool perturb, type_info *out,
                       type_info *spare) {
    *out = *decl; /* shallow: `elem` stays borrowed from the model */
    if (!perturb) return;
    if (decl->kind != ONYX_VALUE_TENSOR || rng_below(r, 4) == 0) {
        /* the wrong kind: a container's element itself, or a tensor wrapped in a sequence */
        if (decl->elem) {
            *out = *decl->elem;
        } else {
            *spare = *decl;
            out->kind = ONYX_VALUE_SEQUENCE;
            out->elem = spare;
        }
        return;
    }
    if (rng_below(r, 2)) {
        out->dtype = decl->dtype == ONYX_FLOAT ? ONYX_INT64 : ONYX_FLOAT;
    } else if (decl->rank >= 0 && decl->rank < ONYX_MAX_RANK) {
        out->dims[out->rank++] = 2;
    } else if (decl->rank > 0) {
        out->rank--;
    }
}

static void free_inputs(onyx_value **in, int n) {
    for (int i = 0; i < n; i++) onyx_value_free(in[i]);
    free(in);
}

/* Draws one value per graph input; 0 to skip the model. */
static int make_inputs(fuzz_rng *r, unsigned flags, const graph *g, onyx_value ***out) {
    onyx_value **in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    if (!in) return 0;
    int bad = (flags & F_PERTURB) == F_PERTURB && g->n_inputs ? (int)rng_below(r, (unsigned)g->n_inputs) : -1;
    for (int i = 0; i < g->n_inputs; i++) {
        type_info t, spare;
        input_type(r, &g->values[g->inputs[i]].type, i == bad, &t, &spare);
        int rc = make_value(r, flags, &t, 0, &in[i]);
        if (rc < 0) {
            fprintf(stderr, "making input %d failed: %s\n", i, onyx_last_error());
            abort();
        }
        if (rc == 0) {
            free_inputs(in, i);
            return 0;
        }
    }
    *out = in;
    return 1;
}

static void run_once(onyx_rep *rep, unsigned flags, const graph *g, onyx_value **in) {
    const char **names = NULL;
    const onyx_value **bound = (const onyx_value **)in;
    const onyx_value **reversed = NULL;
    if (flags & F_NAMES) {
        names = calloc((size_t)g->n_inputs + 1, sizeof *names);
        reversed = calloc((size_t)g->n_inputs + 1, sizeof *reversed);
        if (!names || !reversed) goto done;
        for (int i = 0; i < g->n_inputs; i++) {
            names[i] = g->values[g->inputs[g->n_inputs - 1 - i]].name;
            reversed[i] = in[g->n_inputs - 1 - i];
        }
        bound = reversed;
    }
    size_t n_out = 0;
    onyx_value **outs = NULL;
    onyx_error_clear();
    /* A model may ask for an endless Loop: the run options bound it, as a server's would (a clean
     * ONYX_ERR_TIMEOUT / ONYX_ERR_LIMIT, not a fuzzer timeout). */
    static onyx_run_options *limits;
    if (!limits && onyx_run_options_create(&limits) == ONYX_OK) {
        onyx_run_options_set_timeout(limits, 2.0);
        onyx_run_options_set_max_iterations(limits, 100000);
    }
    onyx_status st = onyx_rep_run_with_options(rep, limits, (size_t)g->n_inputs, names, bound,
                                               &n_out, &outs);
    fuzz_check_message(st);
    if (st == ONYX_OK) {
        if (n_out != onyx_rep_output_count(rep)) abort();
        for (size_t i = 0; i < n_out; i++) fuzz_touch(outs[i]);
        onyx_values_free(outs, n_out);
    }
done:
    free(names);
    free(reversed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < FUZZ_HEADER) return -1;
    const uint8_t *bytes = data + FUZZ_HEADER;
    size_t n = size - FUZZ_HEADER;
    if (!fuzz_model_small(bytes, n, 1)) return -1;
    unsigned flags = data[0];
    fuzz_rng r = {0x9e3779b97f4a7c15ull};
    for (int i = 1; i < FUZZ_HEADER; i++) r.s = (r.s ^ data[i]) * 0x100000001b3ull;

    onyx_model *m = NULL;
    onyx_rep *rep = NULL;
    onyx_value **in = NULL;
    onyx_error_clear();
    onyx_status st = onyx_model_load_buffer(bytes, n, fuzz_ext_dir(), &m);
    fuzz_check_message(st);
    if (st != ONYX_OK) return 0;
    onyx_error_clear();
    st = onyx_is_compatible(m, "CPU");
    fuzz_check_message(st);
    const graph *g = ((const model *)m)->main;
    if (st != ONYX_OK || !make_inputs(&r, flags, g, &in)) goto done;

    onyx_session_options *opts = NULL;
    if (onyx_session_options_create(&opts) != ONYX_OK) goto done;
    onyx_error_clear();
    st = onyx_session_options_set_threads(opts, 1);
    for (int i = 0; st == ONYX_OK && (flags & F_EXAMPLES) && i < g->n_inputs; i++)
        st = onyx_session_options_add_example(opts, NULL, in[i]);
    if (st == ONYX_OK) st = onyx_prepare_session(m, opts, &rep);
    onyx_session_options_free(opts);
    fuzz_check_message(st);
    if (st != ONYX_OK) goto done;
    /* The rep keeps what it needs: the model goes first, as a caller may do. */
    onyx_model_free(m);
    m = NULL;
    run_once(rep, flags, g, in);
    if (flags & F_TWICE) {
        free_inputs(in, g->n_inputs);
        in = NULL;
        if (make_inputs(&r, flags & ~F_PERTURB, g, &in)) run_once(rep, flags, g, in);
    }
done:
    if (in) free_inputs(in, g->n_inputs);
    onyx_rep_free(rep);
    onyx_model_free(m);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
    fuzz_rng r = {(uint64_t)seed << 1 | 1};
    if (size >= FUZZ_HEADER && max_size > FUZZ_HEADER && rng_below(&r, 2)) {
        if (rng_below(&r, 8) == 0) { /* flags and seed */
            data[rng_below(&r, FUZZ_HEADER)] ^= (uint8_t)(1u << rng_below(&r, 8));
            return size;
        }
        size_t n = mut_model(data + FUZZ_HEADER, size - FUZZ_HEADER, max_size - FUZZ_HEADER, seed);
        if (n) return FUZZ_HEADER + n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
