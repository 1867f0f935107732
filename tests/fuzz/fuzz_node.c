/* libFuzzer target: bytes -> onyx_run_node, the path of the Python backend's run_node. Input
 * layout: byte 0 = ai.onnx opset (0: the newest), bytes 1..7 = seed of the generator that makes
 * one tensor (dtype, rank 0..3, dims 1..3) per named input, the rest = a NodeProto. */
#include "tests/fuzz/fuzz_common.h"

#define FUZZ_HEADER 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < FUZZ_HEADER) return -1;
    const uint8_t *bytes = data + FUZZ_HEADER;
    size_t n = size - FUZZ_HEADER;
    fuzz_rng r = {0x9e3779b97f4a7c15ull};
    for (int i = 1; i < FUZZ_HEADER; i++) r.s = (r.s ^ data[i]) * 0x100000001b3ull;
    /* count the inputs the node names (the library parses the bytes again, on its own) */
    if (loader_check_wire(&onnx__node_proto__descriptor, bytes, n, "fuzz") != ONYX_OK) return 0;
    Onnx__NodeProto *np = onnx__node_proto__unpack(NULL, n, bytes);
    if (!np) return 0;
    size_t n_in = 0;
    for (size_t i = 0; i < np->n_input; i++) n_in += np->input[i] && np->input[i][0];
    bool graphs = false;
    for (size_t a = 0; a < np->n_attribute; a++)
        graphs |= np->attribute[a] && (np->attribute[a]->g || np->attribute[a]->n_graphs);
    onnx__node_proto__free_unpacked(np, NULL);
    if (n_in > 16 || graphs) return -1; /* subgraphs and initializers are fuzz_run's */

    onyx_value *in[16] = {0};
    for (size_t i = 0; i < n_in; i++) {
        onyx_dtype dt = any_dtype[rng_below(&r, 7)]; /* no strings */
        int rank = (int)rng_below(&r, 4);
        int64_t dims[3], numel = 1;
        for (int d = 0; d < rank; d++) numel *= dims[d] = 1 + (int64_t)rng_below(&r, 3);
        size_t nbytes;
        if (!dtype_storage_size(dt, numel, &nbytes)) abort();
        uint8_t buf[64 * 8];
        fuzz_fill(&r, dt, numel, buf, nbytes);
        if (onyx_value_new_tensor(dt, (size_t)rank, dims, buf, nbytes, &in[i]) != ONYX_OK) abort();
    }
    size_t n_out = 0;
    onyx_value **outs = NULL;
    onyx_error_clear();
    onyx_status st = onyx_run_node(bytes, n, data[0] % 29, "CPU", n_in,
                                   (const onyx_value *const *)in, 0, NULL, &n_out, &outs);
    fuzz_check_message(st);
    if (st == ONYX_OK) {
        for (size_t i = 0; i < n_out; i++) fuzz_touch(outs[i]);
        onyx_values_free(outs, n_out);
    }
    for (size_t i = 0; i < n_in; i++) onyx_value_free(in[i]);
    return 0;
}
