/* Unit tests for core/tensor_proto.c: every dtype in its typed field and in raw_data, packed
 * sub-byte types, size checks, sparse densifying, external data (and every way it may try to
 * leave its folder), and onnx-data values read through the public API. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/tensor_proto.h"

static void assert_error_mentions(const char *needle) {
    const char *msg = onyx_last_error();
    if (!strstr(msg, needle)) fail_msg("error message '%s' does not mention '%s'", msg, needle);
}

static Onnx__TensorProto make_tensor(onyx_dtype d, size_t rank, int64_t *dims) {
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    tp.name = "t";
    tp.has_data_type = 1;
    tp.data_type = (int32_t)d;
    tp.n_dims = rank;
    tp.dims = dims;
    return tp;
}

static onyx_status decode(const Onnx__TensorProto *tp, tensor *t) {
    memset(t, 0, sizeof *t);
    return tensor_proto_decode(tp, NULL, NULL, t);
}

/* ------------------------------------------------------------------ typed fields */

static void test_float_double_int64(void **state) {
    (void)state;
    tensor t;
    int64_t dims[] = {2, 2};
    float f[] = {1.5f, -2.0f, 3.25f, 0.0f};
    Onnx__TensorProto tp = make_tensor(ONYX_FLOAT, 2, dims);
    tp.n_float_data = 4;
    tp.float_data = f;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(t.dtype, ONYX_FLOAT);
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.numel, 4);
    assert_true(t.owns);
    assert_memory_equal(t.data, f, sizeof f);
    tensor_release(&t);

    double dd[] = {1e300, -2.5};
    int64_t d1[] = {2};
    tp = make_tensor(ONYX_DOUBLE, 1, d1);
    tp.n_double_data = 2;
    tp.double_data = dd;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_memory_equal(t.data, dd, sizeof dd);
    tensor_release(&t);

    int64_t ii[] = {INT64_MIN, 7};
    tp = make_tensor(ONYX_INT64, 1, d1);
    tp.n_int64_data = 2;
    tp.int64_data = ii;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_memory_equal(t.data, ii, sizeof ii);
    tensor_release(&t);

    /* complex64: two floats per element */
    tp = make_tensor(ONYX_COMPLEX64, 1, d1);
    tp.n_float_data = 4;
    tp.float_data = f;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(t.nbytes, 16);
    assert_memory_equal(t.data, f, sizeof f);
    tensor_release(&t);

    int64_t d0[] = {1};
    tp = make_tensor(ONYX_COMPLEX128, 1, d0);
    tp.n_double_data = 2;
    tp.double_data = dd;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_memory_equal(t.data, dd, sizeof dd);
    tensor_release(&t);

    /* uint32 and uint64 come from uint64_data */
    uint64_t uu[] = {0xffffffffull, UINT64_MAX};
    tp = make_tensor(ONYX_UINT64, 1, d1);
    tp.n_uint64_data = 2;
    tp.uint64_data = uu;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_memory_equal(t.data, uu, sizeof uu);
    tensor_release(&t);
    tp.data_type = ONYX_UINT32;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(((uint32_t *)t.data)[0], 0xffffffffu);
    assert_int_equal(t.nbytes, 8);
    tensor_release(&t);
}

static void test_int32_field_narrow_types(void **state) {
    (void)state;
    tensor t;
    int64_t d3[] = {3};
    Onnx__TensorProto tp = make_tensor(ONYX_INT8, 1, d3);
    int32_t v8[] = {-128, 127, -1};
    tp.n_int32_data = 3;
    tp.int32_data = v8;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    const int8_t e8[] = {-128, 127, -1};
    assert_memory_equal(t.data, e8, 3);
    tensor_release(&t);

    tp.data_type = ONYX_UINT8;
    int32_t u8[] = {0, 255, 17};
    tp.int32_data = u8;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(((uint8_t *)t.data)[1], 255);
    tensor_release(&t);

    tp.data_type = ONYX_INT16;
    int32_t v16[] = {-32768, 32767, -2};
    tp.int32_data = v16;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    const int16_t e16[] = {-32768, 32767, -2};
    assert_memory_equal(t.data, e16, sizeof e16);
    tensor_release(&t);

    tp.data_type = ONYX_UINT16;
    int32_t u16[] = {65535, 0, 1};
    tp.int32_data = u16;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(((uint16_t *)t.data)[0], 65535);
    tensor_release(&t);

    tp.data_type = ONYX_INT32;
    int32_t v32[] = {INT32_MIN, 0, INT32_MAX};
    tp.int32_data = v32;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_memory_equal(t.data, v32, sizeof v32);
    tensor_release(&t);

    /* bool: anything non-zero is true, stored as 1 */
    tp.data_type = ONYX_BOOL;
    int32_t vb[] = {0, 1, 5};
    tp.int32_data = vb;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    const uint8_t eb[] = {0, 1, 1};
    assert_memory_equal(t.data, eb, 3);
    tensor_release(&t);

    /* float16 / bfloat16 bit patterns */
    int64_t d2[] = {2};
    tp = make_tensor(ONYX_FLOAT16, 1, d2);
    int32_t h[] = {0x3c00, 0xc000}; /* 1.0, -2.0 */
    tp.n_int32_data = 2;
    tp.int32_data = h;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_true(fp16_to_float(((uint16_t *)t.data)[0]) == 1.0f);
    assert_true(fp16_to_float(((uint16_t *)t.data)[1]) == -2.0f);
    tensor_release(&t);
    tp.data_type = ONYX_BFLOAT16;
    int32_t bf[] = {0x3f80, 0x4000}; /* 1.0, 2.0 */
    tp.int32_data = bf;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_true(bf16_to_float(((uint16_t *)t.data)[1]) == 2.0f);
    tensor_release(&t);

    /* the float8 family: one byte each */
    const onyx_dtype f8[] = {ONYX_FLOAT8E4M3FN, ONYX_FLOAT8E4M3FNUZ, ONYX_FLOAT8E5M2,
                             ONYX_FLOAT8E5M2FNUZ, ONYX_FLOAT8E8M0};
    int32_t bits[] = {0x38, 0xff};
    for (size_t k = 0; k < sizeof f8 / sizeof f8[0]; k++) {
        tp.data_type = (int32_t)f8[k];
        tp.int32_data = bits;
        assert_int_equal(decode(&tp, &t), ONYX_OK);
        assert_int_equal(t.nbytes, 2);
        assert_int_equal(((uint8_t *)t.data)[0], 0x38);
        assert_int_equal(((uint8_t *)t.data)[1], 0xff);
        tensor_release(&t);
    }
}

static void test_packed_subbyte(void **state) {
    (void)state;
    tensor t;
    /* int4 [1, -2, 3]: onnx packs two per int32 entry, low nibble first: 0xE1, 0x03 */
    int64_t d3[] = {3};
    Onnx__TensorProto tp = make_tensor(ONYX_INT4, 1, d3);
    int32_t p4[] = {0xE1, 0x03};
    tp.n_int32_data = 2;
    tp.int32_data = p4;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(t.nbytes, 2);
    assert_int_equal(t.numel, 3);
    assert_int_equal(tensor_get_i64(&t, 0), 1);
    assert_int_equal(tensor_get_i64(&t, 1), -2);
    assert_int_equal(tensor_get_i64(&t, 2), 3);
    tensor_release(&t);

    tp.data_type = ONYX_UINT4;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(tensor_get_i64(&t, 1), 14);
    tensor_release(&t);

    /* float4e2m1 [1.0, -2.0, 0.5] = codes 2, 0xC, 1 */
    tp.data_type = ONYX_FLOAT4E2M1;
    int32_t f4[] = {0xC2, 0x01};
    tp.int32_data = f4;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_true(tensor_get_f64(&t, 0) == 1.0);
    assert_true(tensor_get_f64(&t, 1) == -2.0);
    assert_true(tensor_get_f64(&t, 2) == 0.5);
    tensor_release(&t);

    /* int2 [1, -2, 0, 1, -1]: four per byte -> 0b01001001 = 73, then 0b11 = 3 */
    int64_t d5[] = {5};
    tp = make_tensor(ONYX_INT2, 1, d5);
    int32_t p2[] = {73, 3};
    tp.n_int32_data = 2;
    tp.int32_data = p2;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(t.nbytes, 2);
    const int64_t e2[] = {1, -2, 0, 1, -1};
    for (int i = 0; i < 5; i++) assert_int_equal(tensor_get_i64(&t, i), e2[i]);
    tensor_release(&t);
    tp.data_type = ONYX_UINT2;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(tensor_get_i64(&t, 1), 2);
    assert_int_equal(tensor_get_i64(&t, 4), 3);
    tensor_release(&t);

    /* one entry per element would be the wrong count for a packed type */
    int32_t unpacked[] = {1, 2, 3, 0, 1};
    tp.int32_data = unpacked;
    tp.n_int32_data = 5;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("int32_data has 5 values, expected 2");

    /* raw_data of a packed type */
    uint8_t raw[] = {0xE1, 0x03};
    tp = make_tensor(ONYX_INT4, 1, d3);
    tp.has_raw_data = 1;
    tp.raw_data.len = 2;
    tp.raw_data.data = raw;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(tensor_get_i64(&t, 1), -2);
    tensor_release(&t);

    /* float6: raw_data is the 6-bit stream (onnx's _pack_6bit: codes 1, 2, 3, 4, 63, 0, 42 ->
     * 81 30 10 3f a0 02), int32_data one element per entry, only its low 6 bits counting */
    int64_t d7[] = {7};
    uint8_t raw6[] = {0x81, 0x30, 0x10, 0x3f, 0xa0, 0x02};
    tp = make_tensor(ONYX_FLOAT6E2M3, 1, d7);
    tp.has_raw_data = 1;
    tp.raw_data.len = sizeof raw6;
    tp.raw_data.data = raw6;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(t.nbytes, 6);
    const double e6[] = {0.125, 0.25, 0.375, 0.5, -7.5, 0.0, -1.25};
    for (int i = 0; i < 7; i++) assert_true(tensor_get_f64(&t, i) == e6[i]);
    tensor_release(&t);
    tp.raw_data.len = 5;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("raw_data has 5 bytes, expected 6");
    tp = make_tensor(ONYX_FLOAT6E2M3, 1, d7);
    int32_t i6[] = {1, 2, 3, 4, 63, 0x100, 42 | 0x40};
    tp.n_int32_data = 7;
    tp.int32_data = i6;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_memory_equal(t.data, raw6, sizeof raw6);
    tensor_release(&t);
    tp.data_type = ONYX_FLOAT6E3M2; /* codes 63 and 42: -28 and -0.75 */
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_true(tensor_get_f64(&t, 4) == -28.0 && tensor_get_f64(&t, 6) == -0.75);
    tensor_release(&t);
    tp.n_int32_data = 6; /* packed bytes would be the wrong count */
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("int32_data has 6 values, expected 7");
}

static void test_strings(void **state) {
    (void)state;
    tensor t;
    int64_t d3[] = {3};
    Onnx__TensorProto tp = make_tensor(ONYX_STRING, 1, d3);
    ProtobufCBinaryData s[] = {{5, (uint8_t *)"hello"}, {0, NULL}, {3, (uint8_t *)"x\0y"}};
    tp.n_string_data = 3;
    tp.string_data = s;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    char **str = t.data;
    assert_string_equal(str[0], "hello");
    assert_string_equal(str[1], "");
    assert_string_equal(str[2], "x");
    tensor_release(&t);

    /* into a pool: the storage is borrowed and goes away with the pool */
    pool p;
    pool_init(&p);
    memset(&t, 0, sizeof t);
    assert_int_equal(tensor_proto_decode(&tp, NULL, &p, &t), ONYX_OK);
    assert_false(t.owns);
    assert_string_equal(((char **)t.data)[0], "hello");
    pool_destroy(&p);

    tp.n_string_data = 2;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("string_data has 2 values, expected 3");

    uint8_t raw[4] = {0};
    tp.has_raw_data = 1;
    tp.raw_data.len = 4;
    tp.raw_data.data = raw;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("string_data, not raw_data");
}

static void test_raw_data(void **state) {
    (void)state;
    tensor t;
    int64_t dims[] = {2, 3};
    float f[6] = {1, 2, 3, 4, 5, 6};
    Onnx__TensorProto tp = make_tensor(ONYX_FLOAT, 2, dims);
    tp.has_raw_data = 1;
    tp.raw_data.len = sizeof f;
    tp.raw_data.data = (uint8_t *)f;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_memory_equal(t.data, f, sizeof f);
    tensor_release(&t);

    tp.raw_data.len = 10;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("raw_data has 10 bytes, expected 24");
    assert_error_mentions("tensor 't'");

    /* bool raw bytes are normalized to 0/1 */
    uint8_t b[] = {0, 2, 255};
    int64_t d3[] = {3};
    tp = make_tensor(ONYX_BOOL, 1, d3);
    tp.has_raw_data = 1;
    tp.raw_data.len = 3;
    tp.raw_data.data = b;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    const uint8_t eb[] = {0, 1, 1};
    assert_memory_equal(t.data, eb, 3);
    tensor_release(&t);

    /* a scalar and an empty tensor */
    tp = make_tensor(ONYX_INT64, 0, NULL);
    int64_t one = 42;
    tp.has_raw_data = 1;
    tp.raw_data.len = 8;
    tp.raw_data.data = (uint8_t *)&one;
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(t.rank, 0);
    assert_int_equal(*(int64_t *)t.data, 42);
    tensor_release(&t);
    int64_t dz[] = {0, 5};
    tp = make_tensor(ONYX_FLOAT, 2, dz);
    assert_int_equal(decode(&tp, &t), ONYX_OK);
    assert_int_equal(t.numel, 0);
    tensor_release(&t);
}

static void test_bad_tensors(void **state) {
    (void)state;
    tensor t;
    int64_t neg[] = {2, -3};
    Onnx__TensorProto tp = make_tensor(ONYX_FLOAT, 2, neg);
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("negative dim -3 at axis 1");

    int64_t big[] = {(int64_t)1 << 40, (int64_t)1 << 40};
    tp = make_tensor(ONYX_FLOAT, 2, big);
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("overflows");

    /* a huge but representable shape with little data is refused before allocating */
    int64_t huge[] = {(int64_t)1 << 40};
    float f[2] = {0};
    tp = make_tensor(ONYX_FLOAT, 1, huge);
    tp.n_float_data = 2;
    tp.float_data = f;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("float_data has 2 values");

    int64_t d2[] = {2};
    tp = make_tensor(ONYX_FLOAT, 1, d2);
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("has no data");

    tp.data_type = 99;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("unknown data type 99");
    tp.has_data_type = 0;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("no data type");

    int64_t r17[17];
    for (int i = 0; i < 17; i++) r17[i] = 1;
    tp = make_tensor(ONYX_FLOAT, 17, r17);
    assert_int_equal(decode(&tp, &t), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("rank 17");

    Onnx__TensorProto__Segment seg = ONNX__TENSOR_PROTO__SEGMENT__INIT;
    tp = make_tensor(ONYX_FLOAT, 1, d2);
    tp.segment = &seg;
    assert_int_equal(decode(&tp, &t), ONYX_ERR_UNSUPPORTED);
    assert_error_mentions("segment");
}

/* ------------------------------------------------------------------ sparse */

static void test_sparse(void **state) {
    (void)state;
    tensor t;
    int64_t nnz[] = {3};
    float vals[] = {1, 2, 3};
    Onnx__TensorProto v = make_tensor(ONYX_FLOAT, 1, nnz);
    v.name = "sp";
    v.n_float_data = 3;
    v.float_data = vals;
    int64_t lin[] = {0, 4, 11};
    Onnx__TensorProto ix = make_tensor(ONYX_INT64, 1, nnz);
    ix.n_int64_data = 3;
    ix.int64_data = lin;
    int64_t dense[] = {3, 4};
    Onnx__SparseTensorProto sp = ONNX__SPARSE_TENSOR_PROTO__INIT;
    sp.values = &v;
    sp.indices = &ix;
    sp.n_dims = 2;
    sp.dims = dense;
    memset(&t, 0, sizeof t);
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_OK);
    assert_int_equal(t.numel, 12);
    float want[12] = {1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3};
    assert_memory_equal(t.data, want, sizeof want);
    tensor_release(&t);

    /* [NNZ, rank] coordinates */
    int64_t coords[] = {0, 0, 1, 0, 2, 3};
    int64_t cd[] = {3, 2};
    Onnx__TensorProto ix2 = make_tensor(ONYX_INT64, 2, cd);
    ix2.n_int64_data = 6;
    ix2.int64_data = coords;
    sp.indices = &ix2;
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_OK);
    assert_memory_equal(t.data, want, sizeof want);
    tensor_release(&t);

    coords[5] = 4; /* column 4 of a 4-wide tensor */
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("outside [0, 4)");
    coords[5] = 3;

    sp.indices = &ix;
    lin[2] = 12;
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("outside [0, 12)");
    lin[2] = 4;
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("not strictly ascending");
    lin[2] = 11;

    int64_t wrong[] = {2};
    ix.dims = wrong;
    ix.n_int64_data = 2;
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("indices have shape");
    ix.n_int64_data = 1;
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("sparse tensor 'sp' indices: tensor 't': int64_data has 1 values");

    sp.indices = NULL;
    assert_int_equal(tensor_proto_decode_sparse(&sp, NULL, NULL, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("no indices");
}

/* ------------------------------------------------------------------ external data */

static char tmpdir[64];

static void write_file(const char *rel, const void *data, size_t n) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void path_of(char *buf, size_t cap, const char *rel) {
    snprintf(buf, cap, "%s/%s", tmpdir, rel);
}

static int setup_dir(void **state) {
    (void)state;
    strcpy(tmpdir, "/tmp/onyx_tp_XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    float data[4] = {9, 1, 2, 3}; /* the tensor is bytes [4, 16) */
    write_file("w.bin", data, sizeof data);
    char p[256], q[256];
    path_of(p, sizeof p, "sub");
    mkdir(p, 0700);
    write_file("sub/w.bin", data, sizeof data);
    path_of(p, sizeof p, "w.bin");
    path_of(q, sizeof q, "link.bin");
    if (symlink(p, q) != 0) return -1;
    path_of(p, sizeof p, "sub");
    path_of(q, sizeof q, "linkdir");
    if (symlink(p, q) != 0) return -1;
    write_file("orig.bin", data, sizeof data);
    path_of(p, sizeof p, "orig.bin");
    path_of(q, sizeof q, "hard.bin");
    if (link(p, q) != 0) return -1;
    return 0;
}

static int teardown_dir(void **state) {
    (void)state;
    const char *files[] = {"w.bin", "sub/w.bin", "link.bin", "linkdir", "orig.bin", "hard.bin"};
    char p[256];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        path_of(p, sizeof p, files[i]);
        unlink(p);
    }
    path_of(p, sizeof p, "sub");
    rmdir(p);
    rmdir(tmpdir);
    return 0;
}

static onyx_status load_external(const char *location, const char *offset, const char *length,
                                 const char *base, tensor *t) {
    int64_t d3[] = {3};
    Onnx__TensorProto tp = make_tensor(ONYX_FLOAT, 1, d3);
    Onnx__StringStringEntryProto e[3] = {ONNX__STRING_STRING_ENTRY_PROTO__INIT,
                                         ONNX__STRING_STRING_ENTRY_PROTO__INIT,
                                         ONNX__STRING_STRING_ENTRY_PROTO__INIT};
    Onnx__StringStringEntryProto *ep[3];
    size_t n = 0;
    e[n].key = "location";
    e[n].value = (char *)location;
    ep[n] = &e[n];
    n++;
    if (offset) {
        e[n].key = "offset";
        e[n].value = (char *)offset;
        ep[n] = &e[n];
        n++;
    }
    if (length) {
        e[n].key = "length";
        e[n].value = (char *)length;
        ep[n] = &e[n];
        n++;
    }
    tp.n_external_data = n;
    tp.external_data = ep;
    tp.has_data_location = 1;
    tp.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    memset(t, 0, sizeof *t);
    return tensor_proto_decode(&tp, base, NULL, t);
}

static void test_external_ok(void **state) {
    (void)state;
    tensor t;
    const float want[3] = {1, 2, 3};
    assert_int_equal(load_external("w.bin", "4", "12", tmpdir, &t), ONYX_OK);
    assert_memory_equal(t.data, want, sizeof want);
    tensor_release(&t);
    assert_int_equal(load_external("./sub//w.bin", "4", NULL, tmpdir, &t), ONYX_OK);
    assert_memory_equal(t.data, want, sizeof want);
    tensor_release(&t);
}

static void test_external_refused(void **state) {
    (void)state;
    tensor t;
    assert_int_equal(load_external("/etc/passwd", NULL, NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("absolute path");
    assert_int_equal(load_external("../w.bin", NULL, NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("contains '..'");
    assert_int_equal(load_external("sub/../../x", NULL, NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("contains '..'");
    assert_int_equal(load_external("link.bin", "4", NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("symbolic link");
    assert_int_equal(load_external("linkdir/w.bin", "4", NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("symbolic link");
    assert_int_equal(load_external("hard.bin", "4", NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("hard links");
    assert_int_equal(load_external("w.bin", "8", NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("past the end");
    assert_int_equal(load_external("w.bin", "99999999999", NULL, tmpdir, &t),
                     ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("past the end");
    assert_int_equal(load_external("w.bin", "4", "8", tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("length 8 does not match");
    assert_int_equal(load_external("w.bin", "-4", NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("offset '-4'");
    assert_int_equal(load_external("sub", NULL, NULL, tmpdir, &t), ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("not a regular file");
    assert_int_equal(load_external("missing.bin", NULL, NULL, tmpdir, &t), ONYX_ERR_IO);
    assert_error_mentions("missing.bin");
    assert_int_equal(load_external("w.bin", "4", NULL, NULL, &t), ONYX_ERR_IO);
    assert_error_mentions("without a folder");
}

/* ------------------------------------------------------------------ onnx-data values */

static void *pack(const ProtobufCMessage *m, size_t *n) {
    *n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    protobuf_c_message_pack(m, b);
    return b;
}

static void test_values_from_pb(void **state) {
    (void)state;
    int64_t d2[] = {2};
    int64_t x[] = {5, 6};
    Onnx__TensorProto a = make_tensor(ONYX_INT64, 1, d2);
    a.n_int64_data = 2;
    a.int64_data = x;
    Onnx__TensorProto *items[] = {&a, &a};
    Onnx__SequenceProto seq = ONNX__SEQUENCE_PROTO__INIT;
    seq.has_elem_type = 1;
    seq.elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
    seq.n_tensor_values = 2;
    seq.tensor_values = items;
    size_t n;
    void *b = pack(&seq.base, &n);
    onyx_value *v = NULL;
    assert_int_equal(onyx_value_from_pb(ONYX_VALUE_SEQUENCE, b, n, NULL, &v), ONYX_OK);
    assert_int_equal(onyx_value_kind_of(v), ONYX_VALUE_SEQUENCE);
    assert_int_equal(onyx_sequence_length(v), 2);
    assert_int_equal(onyx_sequence_elem_dtype(v), ONYX_INT64);
    const int64_t *got = onyx_tensor_data(onyx_sequence_at(v, 1));
    assert_int_equal(got[1], 6);
    onyx_value_free(v);
    free(b);

    /* an optional holding that sequence, and an empty one */
    Onnx__OptionalProto opt = ONNX__OPTIONAL_PROTO__INIT;
    opt.has_elem_type = 1;
    opt.elem_type = ONNX__OPTIONAL_PROTO__DATA_TYPE__SEQUENCE;
    opt.sequence_value = &seq;
    b = pack(&opt.base, &n);
    assert_int_equal(onyx_value_from_pb(ONYX_VALUE_OPTIONAL, b, n, NULL, &v), ONYX_OK);
    assert_true(onyx_optional_has_value(v));
    assert_int_equal(onyx_sequence_length(onyx_optional_value(v)), 2);
    onyx_value_free(v);
    free(b);
    Onnx__OptionalProto empty = ONNX__OPTIONAL_PROTO__INIT;
    b = pack(&empty.base, &n);
    assert_int_equal(onyx_value_from_pb(ONYX_VALUE_OPTIONAL, b, n, NULL, &v), ONYX_OK);
    assert_false(onyx_optional_has_value(v));
    onyx_value_free(v);
    free(b);

    /* a tensor, then corrupt bytes */
    b = pack(&a.base, &n);
    assert_int_equal(onyx_value_from_pb(ONYX_VALUE_TENSOR, b, n, NULL, &v), ONYX_OK);
    assert_int_equal(onyx_tensor_numel(v), 2);
    onyx_value_free(v);
    v = NULL;
    assert_int_equal(onyx_value_from_pb(ONYX_VALUE_TENSOR, b, n - 1, NULL, &v),
                     ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("truncated or corrupt");
    assert_null(v);
    free(b);

    /* a bad element makes the whole sequence fail, leaking nothing */
    x[0] = 1;
    a.n_int64_data = 1;
    b = pack(&seq.base, &n);
    assert_int_equal(onyx_value_from_pb(ONYX_VALUE_SEQUENCE, b, n, NULL, &v),
                     ONYX_ERR_INVALID_MODEL);
    assert_error_mentions("int64_data has 1 values");
    free(b);

    assert_int_equal(onyx_value_load_pb(ONYX_VALUE_TENSOR, "/nonexistent/x.pb", &v), ONYX_ERR_IO);
    assert_error_mentions("/nonexistent/x.pb");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_double_int64),
        cmocka_unit_test(test_int32_field_narrow_types),
        cmocka_unit_test(test_packed_subbyte),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_raw_data),
        cmocka_unit_test(test_bad_tensors),
        cmocka_unit_test(test_sparse),
        cmocka_unit_test_setup_teardown(test_external_ok, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_external_refused, setup_dir, teardown_dir),
        cmocka_unit_test(test_values_from_pb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
