/* The C API in one file: load a model, read its metadata, prepare it with session options, run it
 * once under run options and print the outputs. Build against an installed onyx:
 *     cc example.c $(pkg-config --cflags --libs onyx) -o example
 *     ./example tests/models/example.onnx
 * Inputs are filled with 0.1 * i (float) or zeros; symbolic dims are taken as 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <onyx.h>

static int fail(const char *what, onyx_status st) {
    fprintf(stderr, "%s: %s: %s\n", what, onyx_status_name(st), onyx_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "model.onnx";
    printf("onyx %s\n", onyx_version());

    /* Metadata, straight from the file (the graph and weights are not loaded). */
    onyx_model_metadata *md = NULL;
    onyx_status st = onyx_model_metadata_read_file(path, &md);
    if (st != ONYX_OK) return fail("metadata", st);
    printf("producer: %s, graph: %s, %zu nodes\n", onyx_model_metadata_producer_name(md),
           onyx_model_metadata_graph_name(md), onyx_model_metadata_node_count(md));
    onyx_model_metadata_free(md);

    onyx_model *model = NULL;
    st = onyx_model_load_file(path, &model);
    if (st != ONYX_OK) return fail("load", st);

    onyx_session_options *so = NULL;
    onyx_session_options_create(&so);           /* CPU, all cores, all optimizations */
    onyx_session_options_set_threads(so, 2);
    onyx_rep *rep = NULL;
    st = onyx_prepare_session(model, so, &rep);
    onyx_session_options_free(so);
    onyx_model_free(model);                     /* the rep keeps what it needs */
    if (st != ONYX_OK) return fail("prepare", st);

    /* One input per graph input, in order. */
    size_t n_in = onyx_rep_input_count(rep);
    onyx_value **inputs = calloc(n_in ? n_in : 1, sizeof *inputs);
    void **buffers = calloc(n_in ? n_in : 1, sizeof *buffers);
    int rc = 0;
    for (size_t i = 0; i < n_in && rc == 0; i++) {
        onyx_io_info info;
        onyx_rep_input(rep, i, &info);
        if (info.rank < 0 || (info.dtype != ONYX_FLOAT && info.dtype != ONYX_INT64)) {
            fprintf(stderr, "input '%s': only float and int64 tensors of known rank here\n",
                    info.name);
            rc = 1;
            break;
        }
        int64_t dims[16], n = 1;
        size_t rank = (size_t)info.rank < 16 ? (size_t)info.rank : 16;
        for (size_t d = 0; d < rank; d++) {
            dims[d] = info.dims[d] >= 0 ? info.dims[d] : 1;
            n *= dims[d];
        }
        size_t elem = info.dtype == ONYX_FLOAT ? sizeof(float) : sizeof(int64_t);
        buffers[i] = calloc((size_t)(n ? n : 1), elem);
        if (info.dtype == ONYX_FLOAT)
            for (int64_t k = 0; k < n; k++) ((float *)buffers[i])[k] = 0.1f * (float)k;
        st = onyx_value_wrap_tensor(info.dtype, rank, dims, buffers[i], (size_t)n * elem,
                                    &inputs[i]);
        if (st != ONYX_OK) rc = fail("input", st);
    }

    onyx_run_options *ro = NULL;                /* optional: NULL runs without limits */
    onyx_run_options_create(&ro);
    onyx_run_options_set_timeout(ro, 10.0);     /* ONYX_ERR_TIMEOUT past 10 s */
    size_t n_out = 0;
    onyx_value **out = NULL;
    if (rc == 0) {
        st = onyx_rep_run_with_options(rep, ro, n_in, NULL, (const onyx_value *const *)inputs,
                                       &n_out, &out);
        if (st != ONYX_OK) rc = fail("run", st);
    }
    for (size_t i = 0; rc == 0 && i < n_out; i++) {
        onyx_io_info info;
        onyx_rep_output(rep, i, &info);
        size_t rank = onyx_tensor_rank(out[i]);
        const int64_t *dims = onyx_tensor_dims(out[i]);
        printf("%s: %s[", info.name, onyx_dtype_name(onyx_tensor_dtype(out[i])));
        for (size_t d = 0; d < rank; d++) printf("%s%lld", d ? "," : "", (long long)dims[d]);
        printf("]");
        if (onyx_tensor_dtype(out[i]) == ONYX_FLOAT) {
            const float *v = onyx_tensor_data(out[i]);
            int64_t n = onyx_tensor_numel(out[i]);
            for (int64_t k = 0; k < n && k < 10; k++) printf(" %.6f", v[k]);
        }
        printf("\n");
    }
    onyx_values_free(out, n_out);
    onyx_run_options_free(ro);
    for (size_t i = 0; i < n_in; i++) {
        onyx_value_free(inputs[i]);
        free(buffers[i]);
    }
    free(inputs);
    free(buffers);
    onyx_rep_free(rep);
    return rc;
}
