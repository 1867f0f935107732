/* libFuzzer target: bytes -> onyx_value_from_pb. The first byte picks the kind (tensor,
 * sequence, optional, and now and then a kind that must be refused); the rest is the protobuf. */
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const onyx_value_kind kinds[] = {ONYX_VALUE_TENSOR, ONYX_VALUE_SEQUENCE,
                                            ONYX_VALUE_OPTIONAL, ONYX_VALUE_TENSOR,
                                            ONYX_VALUE_SEQUENCE, ONYX_VALUE_OPTIONAL,
                                            ONYX_VALUE_MAP, ONYX_VALUE_NONE};
    onyx_value_kind kind = kinds[data[0] & 7];
    onyx_value *v = NULL;
    onyx_error_clear();
    onyx_status st = onyx_value_from_pb(kind, data + 1, size - 1, fuzz_ext_dir(), &v);
    fuzz_check_message(st);
    if (st != ONYX_OK) return 0;
    if (kind != ONYX_VALUE_TENSOR && kind != ONYX_VALUE_SEQUENCE && kind != ONYX_VALUE_OPTIONAL)
        abort();
    fuzz_touch(v);
    onyx_value *copy = NULL;
    onyx_error_clear();
    st = onyx_value_clone(v, &copy);
    fuzz_check_message(st);
    fuzz_touch(copy);
    onyx_value_free(copy);
    onyx_value_free(v);
    return 0;
}
