/* libFuzzer target: bytes -> onyx_model_load_buffer -> every io description -> free. The input
 * is a whole ModelProto (mutated as bytes and, half of the time, as a model: fuzz_mutate.h);
 * external data resolves inside a small fixed folder. */
#include "tests/fuzz/fuzz_mutate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fuzz_model_small(data, size, 0)) return -1;
    onyx_model *m = NULL;
    onyx_error_clear();
    onyx_status st = onyx_model_load_buffer(data, size, fuzz_ext_dir(), &m);
    fuzz_check_message(st);
    if (st != ONYX_OK) return 0;
    size_t n_in = onyx_model_input_count(m), n_out = onyx_model_output_count(m);
    onyx_io_info info;
    for (size_t i = 0; i <= n_in + n_out; i++) {
        bool input = i < n_in;
        size_t k = input ? i : i - n_in;
        if (i == n_in + n_out) k = n_out; /* one past the end: must be refused */
        onyx_error_clear();
        st = input ? onyx_model_input(m, k, &info) : onyx_model_output(m, k, &info);
        fuzz_check_message(st);
        if (i == n_in + n_out) {
            if (st == ONYX_OK) abort();
            break;
        }
        if (st != ONYX_OK) abort();
        size_t acc = strlen(info.name);
        for (int64_t d = 0; d < info.rank; d++)
            acc += (size_t)info.dims[d] + (info.dim_params[d] ? strlen(info.dim_params[d]) : 0);
        fuzz_sink ^= (uint8_t)acc;
    }
    fuzz_sink ^= (uint8_t)onyx_model_ir_version(m) ^ (uint8_t)onyx_model_opset(m, "") ^
                 (uint8_t)onyx_model_opset(m, "ai.onnx.ml");
    onyx_model_free(m);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
    if (seed & 1) {
        size_t n = mut_model(data, size, max_size, seed >> 1);
        if (n) return n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
