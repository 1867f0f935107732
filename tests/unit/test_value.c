/* Unit tests for core/value.c and the public value API: lifecycles (run under ASan they prove
 * nothing leaks or is freed twice), refusals of bad shapes and sizes, and type descriptions. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"

static void assert_error_mentions(const char *needle) {
    const char *msg = onyx_last_error();
    if (!strstr(msg, needle)) fail_msg("error message '%s' does not mention '%s'", msg, needle);
}

static void test_shape_numel(void **state) {
    (void)state;
    int64_t n = -5;
    assert_true(shape_numel(0, NULL, &n));
    assert_int_equal(n, 1);
    int64_t d1[] = {2, 3, 4};
    assert_true(shape_numel(3, d1, &n));
    assert_int_equal(n, 24);
    int64_t d2[] = {INT64_MAX, 1};
    assert_true(shape_numel(2, d2, &n));
    assert_int_equal(n, INT64_MAX);
    n = -5;
    int64_t d3[] = {INT64_MAX, 2};
    assert_false(shape_numel(2, d3, &n));
    int64_t d4[] = {(int64_t)1 << 32, (int64_t)1 << 31};
    assert_false(shape_numel(2, d4, &n));
    int64_t d5[] = {(int64_t)1 << 32, (int64_t)1 << 30};
    assert_true(shape_numel(2, d5, &n));
    assert_int_equal(n, (int64_t)1 << 62);
    int64_t d6[] = {3, -1};
    assert_false(shape_numel(2, d6, &n));
    int64_t d7[] = {INT64_MAX, INT64_MAX, 0};
    assert_true(shape_numel(3, d7, &n));
    assert_int_equal(n, 0);
    assert_false(shape_numel(-1, NULL, &n));

    char buf[64];
    assert_string_equal(shape_str(3, d1, buf, sizeof buf), "[2,3,4]");
    assert_string_equal(shape_str(0, NULL, buf, sizeof buf), "[]");
    assert_string_equal(shape_str(2, d6, buf, sizeof buf), "[3,?]");
    assert_string_equal(shape_str(3, d1, buf, 4), "[2,");
    assert_true(shape_equal(3, d1, 3, (int64_t[]){2, 3, 4}));
    assert_false(shape_equal(3, d1, 2, d1));
    assert_false(shape_equal(3, d1, 3, (int64_t[]){2, 3, 5}));
}

static void test_new_tensor(void **state) {
    (void)state;
    float src[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[] = {2, 3};
    onyx_value *v = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, dims, src, sizeof src, &v), ONYX_OK);
    assert_non_null(v);
    src[0] = 100; /* the value holds a copy */
    assert_int_equal(onyx_value_kind_of(v), ONYX_VALUE_TENSOR);
    assert_int_equal(onyx_tensor_dtype(v), ONYX_FLOAT);
    assert_int_equal(onyx_tensor_rank(v), 2);
    assert_int_equal(onyx_tensor_dims(v)[0], 2);
    assert_int_equal(onyx_tensor_dims(v)[1], 3);
    assert_int_equal(onyx_tensor_numel(v), 6);
    assert_int_equal(onyx_tensor_nbytes(v), 24);
    const float *d = onyx_tensor_data(v);
    assert_int_equal((uintptr_t)d % 64, 0);
    assert_true(d[0] == 1.0f && d[5] == 6.0f);

    /* the same in one call */
    onyx_tensor_info info;
    assert_int_equal(onyx_tensor_get_info(v, &info), ONYX_OK);
    assert_int_equal(info.dtype, ONYX_FLOAT);
    assert_int_equal(info.rank, 2);
    assert_ptr_equal(info.dims, onyx_tensor_dims(v));
    assert_int_equal(info.numel, 6);
    assert_ptr_equal(info.data, d);
    assert_int_equal(info.nbytes, 24);
    assert_string_equal(info.device, "CPU");
    assert_int_equal(onyx_tensor_get_info(v, NULL), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_tensor_get_info(NULL, &info), ONYX_ERR_INVALID_ARGUMENT);

    onyx_value *c = NULL;
    assert_int_equal(onyx_value_clone(v, &c), ONYX_OK);
    assert_ptr_not_equal(onyx_tensor_data(c), d);
    assert_memory_equal(onyx_tensor_data(c), d, 24);
    onyx_value_free(v);
    onyx_value_free(c);
    onyx_value_free(NULL);

    /* scalar and zero-size tensors */
    int64_t s = 7;
    assert_int_equal(onyx_value_new_tensor(ONYX_INT64, 0, NULL, &s, 8, &v), ONYX_OK);
    assert_int_equal(onyx_tensor_numel(v), 1);
    assert_int_equal(*(int64_t *)onyx_tensor_data(v), 7);
    onyx_value_free(v);
    int64_t zdims[] = {0, 3};
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, zdims, NULL, 0, &v), ONYX_OK);
    assert_int_equal(onyx_tensor_numel(v), 0);
    assert_int_equal(onyx_tensor_nbytes(v), 0);
    assert_int_equal(onyx_value_clone(v, &c), ONYX_OK);
    assert_int_equal(onyx_tensor_numel(c), 0);
    onyx_value_free(v);
    onyx_value_free(c);

    /* packed sub-byte types: 5 int4 elements take 3 bytes */
    uint8_t packed[3] = {0x21, 0xf3, 0x08};
    int64_t five = 5;
    assert_int_equal(onyx_value_new_tensor(ONYX_INT4, 1, &five, packed, 3, &v), ONYX_OK);
    assert_int_equal(onyx_tensor_nbytes(v), 3);
    assert_int_equal(tensor_get_i64(&v->t, 0), 1);
    assert_int_equal(tensor_get_i64(&v->t, 1), 2);
    assert_int_equal(tensor_get_i64(&v->t, 2), 3);
    assert_int_equal(tensor_get_i64(&v->t, 3), -1);
    assert_int_equal(tensor_get_i64(&v->t, 4), -8);
    onyx_value_free(v);
}

static void test_new_tensor_errors(void **state) {
    (void)state;
    float src[6] = {0};
    int64_t dims[] = {2, 3};
    onyx_value *v = (onyx_value *)(uintptr_t)0x1;
    onyx_value *const untouched = v;

    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, dims, src, 20, &v),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_error_mentions("got 20");
    assert_error_mentions("expected 24");
    assert_ptr_equal(v, untouched);
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, dims, NULL, 24, &v),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_value_new_tensor(ONYX_STRING, 2, dims, src, 48, &v),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_value_new_tensor((onyx_dtype)99, 2, dims, src, 24, &v),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_value_new_tensor(ONYX_UNDEFINED, 2, dims, src, 24, &v),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, NULL, src, 24, &v),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, dims, src, 24, NULL),
                     ONYX_ERR_INVALID_ARGUMENT);

    int64_t big_rank[ONYX_MAX_RANK + 1];
    for (int i = 0; i <= ONYX_MAX_RANK; i++) big_rank[i] = 1;
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, ONYX_MAX_RANK + 1, big_rank, src, 4, &v),
                     ONYX_ERR_SHAPE);
    assert_error_mentions("17");
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, ONYX_MAX_RANK, big_rank, src, 4, &v),
                     ONYX_OK);
    onyx_value_free(v);
    v = untouched;

    int64_t neg[] = {2, -3};
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, neg, src, 24, &v), ONYX_ERR_SHAPE);
    assert_error_mentions("[2,?]");
    int64_t huge[] = {(int64_t)1 << 32, (int64_t)1 << 32};
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 2, huge, src, 24, &v), ONYX_ERR_NO_MEMORY);
    int64_t bytes_overflow[] = {(int64_t)1 << 62};
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, bytes_overflow, src, 24, &v),
                     ONYX_ERR_NO_MEMORY);
    assert_ptr_equal(v, untouched);

    tensor t = {0};
    assert_int_equal(tensor_set_shape(&t, ONYX_FLOAT, -1, NULL), ONYX_ERR_SHAPE);
    assert_int_equal(tensor_alloc(&t, ONYX_FLOAT, ONYX_MAX_RANK + 1, big_rank), ONYX_ERR_SHAPE);
    assert_null(t.data);
}

static void test_wrap_tensor(void **state) {
    (void)state;
    int32_t buf[4] = {1, 2, 3, 4};
    int64_t dims[] = {4};
    onyx_value *v = NULL;
    assert_int_equal(onyx_value_wrap_tensor(ONYX_INT32, 1, dims, buf, sizeof buf, &v), ONYX_OK);
    assert_ptr_equal(onyx_tensor_data(v), buf);
    assert_false(v->t.owns);
    onyx_value *c = NULL;
    assert_int_equal(onyx_value_clone(v, &c), ONYX_OK);
    assert_true(c->t.owns);
    assert_ptr_not_equal(onyx_tensor_data(c), buf);
    onyx_value_free(v); /* must not free buf (ASan would catch a free of a stack address) */
    onyx_value_free(c);
    assert_int_equal(onyx_value_wrap_tensor(ONYX_INT32, 1, dims, buf, 8, &v),
                     ONYX_ERR_INVALID_ARGUMENT);
}

static void test_string_tensor(void **state) {
    (void)state;
    const char *strs[] = {"a", "", "hello"};
    int64_t dims[] = {3};
    onyx_value *v = NULL;
    assert_int_equal(onyx_value_new_string_tensor(1, dims, strs, &v), ONYX_OK);
    assert_int_equal(onyx_tensor_dtype(v), ONYX_STRING);
    char **data = onyx_tensor_data(v);
    assert_string_equal(data[0], "a");
    assert_string_equal(data[1], "");
    assert_string_equal(data[2], "hello");
    assert_ptr_not_equal(data[2], strs[2]);

    onyx_value *c = NULL;
    assert_int_equal(onyx_value_clone(v, &c), ONYX_OK);
    char **cd = onyx_tensor_data(c);
    assert_ptr_not_equal(cd[0], data[0]);
    assert_string_equal(cd[2], "hello");

    assert_int_equal(tensor_set_string(&c->t, 1, "xyz!", 3), ONYX_OK);
    assert_string_equal(cd[1], "xyz");
    assert_int_equal(tensor_set_string(&c->t, 3, "x", 1), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(tensor_copy_data(&c->t, &v->t), ONYX_OK);
    assert_string_equal(cd[1], "");
    assert_int_equal(tensor_copy_data(&c->t, &c->t), ONYX_OK); /* onto itself */
    assert_string_equal(cd[2], "hello");
    onyx_value_free(v);
    onyx_value_free(c);

    tensor t = {0};
    int64_t d2[] = {2, 2};
    assert_int_equal(tensor_alloc(&t, ONYX_STRING, 2, d2), ONYX_OK);
    for (int i = 0; i < 4; i++) assert_string_equal(((char **)t.data)[i], "");
    tensor_release(&t);
    assert_null(t.data);
    tensor_release(&t);

    int64_t zero = 0;
    assert_int_equal(onyx_value_new_string_tensor(1, &zero, NULL, &v), ONYX_OK);
    onyx_value_free(v);
    const char *bad[] = {"a", NULL, "c"};
    assert_int_equal(onyx_value_new_string_tensor(1, dims, bad, &v), ONYX_ERR_INVALID_ARGUMENT);
}

static onyx_value *make_float(int rank, const int64_t *dims) {
    onyx_value *v = value_new();
    assert_non_null(v);
    assert_int_equal(value_alloc_tensor(v, ONYX_FLOAT, rank, dims), ONYX_OK);
    return v;
}

static void test_sequence(void **state) {
    (void)state;
    int64_t a[] = {2, 3}, b[] = {2, 5};
    onyx_value *items[2] = {make_float(2, a), make_float(2, b)};
    onyx_value *seq = NULL;

    /* a mismatch is refused and the caller keeps its items */
    assert_int_equal(onyx_value_new_sequence(ONYX_INT64, 2, items, &seq),
                     ONYX_ERR_INVALID_ARGUMENT);
    assert_error_mentions("tensor(float)");
    assert_null(seq);

    assert_int_equal(onyx_value_new_sequence(ONYX_UNDEFINED, 2, items, &seq), ONYX_OK);
    assert_int_equal(onyx_value_kind_of(seq), ONYX_VALUE_SEQUENCE);
    assert_int_equal(onyx_sequence_length(seq), 2);
    assert_ptr_equal(onyx_sequence_at(seq, 1), items[1]);
    assert_null(onyx_sequence_at(seq, 2));
    assert_int_equal(onyx_sequence_elem_dtype(seq), ONYX_FLOAT);

    char buf[128];
    type_info t;
    assert_int_equal(type_of_value(&t, seq), ONYX_OK);
    assert_string_equal(type_str(&t, buf, sizeof buf), "seq(tensor(float)[2,?])");
    assert_true(type_accepts(&t, seq));
    type_release(&t);

    onyx_value *c = NULL;
    assert_int_equal(onyx_value_clone(seq, &c), ONYX_OK);
    assert_int_equal(onyx_sequence_length(c), 2);
    assert_ptr_not_equal(onyx_sequence_at(c, 0), items[0]);
    assert_int_equal(onyx_tensor_numel(onyx_sequence_at(c, 1)), 10);

    onyx_value *push = make_float(0, NULL);
    assert_int_equal(value_seq_push(c, push), ONYX_OK);
    for (int i = 0; i < 20; i++) assert_int_equal(value_seq_push(c, make_float(0, NULL)), ONYX_OK);
    assert_int_equal(onyx_sequence_length(c), 23);
    assert_int_equal(type_of_value(&t, c), ONYX_OK);
    assert_string_equal(type_str(&t, buf, sizeof buf), "seq(tensor(float))");
    type_release(&t);
    onyx_value *tensor_value = make_float(0, NULL);
    assert_int_equal(value_seq_push(tensor_value, push), ONYX_ERR_INVALID_ARGUMENT);
    onyx_value_free(tensor_value);

    onyx_value_free(seq);
    onyx_value_free(c);

    /* empty sequences remember their element type */
    assert_int_equal(onyx_value_new_sequence(ONYX_INT64, 0, NULL, &seq), ONYX_OK);
    assert_int_equal(onyx_sequence_length(seq), 0);
    assert_int_equal(onyx_sequence_elem_dtype(seq), ONYX_INT64);
    assert_int_equal(type_of_value(&t, seq), ONYX_OK);
    assert_string_equal(type_str(&t, buf, sizeof buf), "seq(tensor(int64))");
    type_release(&t);
    assert_int_equal(onyx_value_clone(seq, &c), ONYX_OK);
    assert_int_equal(onyx_sequence_elem_dtype(c), ONYX_INT64);
    onyx_value_free(seq);
    onyx_value_free(c);
}

static float item_value(const onyx_value *seq, size_t i) {
    return *(const float *)onyx_tensor_data(onyx_sequence_at(seq, i));
}

static onyx_value *scalar(float x) {
    onyx_value *v = make_float(0, NULL);
    *(float *)onyx_tensor_data(v) = x;
    return v;
}

/* Sequences derived by value_share share their items: appends at the end of the shared store are
 * O(1) and leave the other values as they were; any other change copies first. */
static void test_sequence_sharing(void **state) {
    (void)state;
    onyx_value *a = value_new();
    assert_int_equal(value_make_sequence(a, NULL), ONYX_OK);
    for (int i = 0; i < 3; i++) assert_int_equal(value_seq_push(a, scalar((float)i)), ONYX_OK);

    onyx_value *b = value_new(), *c = value_new();
    assert_int_equal(value_share(b, a), ONYX_OK);
    assert_ptr_equal(onyx_sequence_at(b, 0), onyx_sequence_at(a, 0));
    /* b is at the end of the store: it appends in place, a still sees 3 items */
    assert_int_equal(value_seq_push(b, scalar(3)), ONYX_OK);
    assert_ptr_equal(onyx_sequence_at(b, 0), onyx_sequence_at(a, 0));
    assert_int_equal(onyx_sequence_length(a), 3);
    assert_int_equal(onyx_sequence_length(b), 4);
    /* a is no longer at the end: its append copies, and b keeps its fourth item */
    assert_int_equal(value_share(c, a), ONYX_OK);
    assert_int_equal(value_seq_push(c, scalar(30)), ONYX_OK);
    assert_ptr_not_equal(onyx_sequence_at(c, 0), onyx_sequence_at(a, 0));
    assert_true(item_value(b, 3) == 3 && item_value(c, 3) == 30);
    for (int i = 0; i < 3; i++) assert_true(item_value(c, (size_t)i) == (float)i);

    /* erasing the last item shares; erasing or inserting in the middle copies */
    onyx_value *d = value_new();
    assert_int_equal(value_share(d, b), ONYX_OK);
    assert_int_equal(value_seq_erase(d, 3), ONYX_OK);
    assert_ptr_equal(onyx_sequence_at(d, 2), onyx_sequence_at(b, 2));
    assert_int_equal(value_seq_erase(d, 0), ONYX_OK);
    assert_int_equal(onyx_sequence_length(d), 2);
    assert_true(item_value(d, 0) == 1 && item_value(d, 1) == 2);
    assert_int_equal(value_seq_insert(d, 1, scalar(1.5f)), ONYX_OK);
    assert_int_equal(value_seq_insert(d, 0, scalar(0.5f)), ONYX_OK);
    assert_int_equal(value_seq_insert(d, 4, scalar(9)), ONYX_OK);
    const float want[] = {0.5f, 1, 1.5f, 2, 9};
    assert_int_equal(onyx_sequence_length(d), 5);
    for (size_t i = 0; i < 5; i++) assert_true(item_value(d, i) == want[i]);
    onyx_value *kept = scalar(0); /* a refused insert leaves the item to the caller */
    assert_int_equal(value_seq_insert(d, 6, kept), ONYX_ERR_INVALID_ARGUMENT);
    onyx_value_free(kept);
    assert_int_equal(value_seq_erase(d, 5), ONYX_ERR_INVALID_ARGUMENT);
    assert_int_equal(onyx_sequence_length(b), 4);
    for (int i = 0; i < 4; i++) assert_true(item_value(b, (size_t)i) == (float)i);

    /* handed out: nothing shared any more; a lone store keeps its items */
    const onyx_value *before = onyx_sequence_at(b, 0);
    assert_int_equal(value_unshare(b), ONYX_OK);
    assert_ptr_not_equal(onyx_sequence_at(b, 0), before);
    assert_int_equal(onyx_sequence_length(b), 4);
    before = onyx_sequence_at(d, 0);
    assert_int_equal(value_unshare(d), ONYX_OK);
    assert_ptr_equal(onyx_sequence_at(d, 0), before);

    /* a long chain of appends through shared values, as a Loop makes them */
    onyx_value *prev = value_new();
    assert_int_equal(value_make_sequence(prev, NULL), ONYX_OK);
    for (int i = 0; i < 5000; i++) {
        onyx_value *next = value_new();
        assert_int_equal(value_share(next, prev), ONYX_OK);
        assert_int_equal(value_seq_push(next, scalar((float)i)), ONYX_OK);
        onyx_value_free(prev);
        prev = next;
    }
    assert_int_equal(onyx_sequence_length(prev), 5000);
    for (int i = 0; i < 5000; i++) assert_true(item_value(prev, (size_t)i) == (float)i);
    onyx_value_free(prev);
    onyx_value_free(a);
    onyx_value_free(b);
    onyx_value_free(c);
    onyx_value_free(d);
}

static void test_optional(void **state) {
    (void)state;
    onyx_value *opt = NULL;
    assert_int_equal(onyx_value_new_optional(NULL, &opt), ONYX_OK);
    assert_int_equal(onyx_value_kind_of(opt), ONYX_VALUE_OPTIONAL);
    assert_false(onyx_optional_has_value(opt));
    assert_null(onyx_optional_value(opt));
    onyx_value_free(opt);

    int64_t d[] = {4};
    onyx_value *item = make_float(1, d);
    onyx_value *seq = NULL;
    assert_int_equal(onyx_value_new_sequence(ONYX_FLOAT, 1, &item, &seq), ONYX_OK);
    assert_int_equal(onyx_value_new_optional(seq, &opt), ONYX_OK);
    assert_true(onyx_optional_has_value(opt));
    assert_ptr_equal(onyx_optional_value(opt), seq);
    onyx_tensor_info info = {.rank = 99};
    assert_int_equal(onyx_tensor_get_info(opt, &info), ONYX_ERR_INVALID_ARGUMENT); /* no tensor */
    assert_int_equal(info.rank, 99);                                               /* untouched */

    char buf[128];
    type_info t;
    assert_int_equal(type_of_value(&t, opt), ONYX_OK);
    assert_string_equal(type_str(&t, buf, sizeof buf), "optional(seq(tensor(float)[4]))");
    type_release(&t);

    onyx_value *c = NULL;
    assert_int_equal(onyx_value_clone(opt, &c), ONYX_OK);
    assert_true(onyx_optional_has_value(c));
    assert_ptr_not_equal(onyx_optional_value(c), seq);
    assert_int_equal(onyx_sequence_length(onyx_optional_value(c)), 1);
    onyx_value_free(opt);
    onyx_value_free(c);

    /* an empty optional made internally keeps its element type through copies */
    type_info elem;
    type_init(&elem);
    elem.kind = ONYX_VALUE_SEQUENCE;
    elem.elem = malloc(sizeof *elem.elem);
    assert_non_null(elem.elem);
    type_set_tensor(elem.elem, ONYX_FLOAT, -1, NULL);
    onyx_value *v = value_new();
    assert_int_equal(value_make_optional(v, &elem), ONYX_OK);
    type_release(&elem);
    onyx_value *v2 = value_new();
    assert_int_equal(value_copy(v2, v), ONYX_OK);
    assert_int_equal(type_of_value(&t, v2), ONYX_OK);
    assert_string_equal(type_str(&t, buf, sizeof buf), "optional(seq(tensor(float)))");
    type_release(&t);
    /* remaking from the value's own element type must not read freed memory */
    assert_int_equal(value_make_sequence(v2, v2->elem_type), ONYX_OK);
    assert_int_equal(onyx_value_kind_of(v2), ONYX_VALUE_SEQUENCE);
    onyx_value_free(v);
    onyx_value_free(v2);
}

static void test_value_move_copy(void **state) {
    (void)state;
    int64_t d[] = {3};
    onyx_value *a = make_float(1, d), *b = make_float(0, NULL);
    ((float *)a->t.data)[2] = 5;
    value_move(b, a);
    assert_int_equal(onyx_value_kind_of(a), ONYX_VALUE_NONE);
    assert_int_equal(onyx_tensor_numel(b), 3);
    assert_true(((float *)b->t.data)[2] == 5);
    assert_int_equal(value_copy(a, b), ONYX_OK);
    assert_int_equal(value_copy(a, a), ONYX_OK);
    assert_true(((float *)a->t.data)[2] == 5);
    value_borrow_tensor(a, &b->t);
    assert_ptr_equal(a->t.data, b->t.data);
    assert_false(a->t.owns);
    value_clear(a);
    value_clear(a);
    assert_int_equal(onyx_value_kind_of(a), ONYX_VALUE_NONE);
    onyx_value_free(a);

    onyx_value **arr = malloc(2 * sizeof *arr);
    assert_non_null(arr);
    arr[0] = b;
    arr[1] = make_float(1, d);
    onyx_values_free(arr, 2);
    onyx_values_free(NULL, 0);
}

static void test_type_str(void **state) {
    (void)state;
    char buf[128];
    type_info t;
    type_init(&t);
    assert_string_equal(type_str(&t, buf, sizeof buf), "?");
    int64_t dims[] = {2, -1, 4};
    type_set_tensor(&t, ONYX_FLOAT, 3, dims);
    assert_string_equal(type_str(&t, buf, sizeof buf), "tensor(float)[2,?,4]");
    assert_false(type_is_static(&t));
    type_set_tensor(&t, ONYX_INT8, 0, NULL);
    assert_string_equal(type_str(&t, buf, sizeof buf), "tensor(int8)[]");
    assert_true(type_is_static(&t));
    type_set_tensor(&t, ONYX_INT8, 2, NULL);
    assert_string_equal(type_str(&t, buf, sizeof buf), "tensor(int8)[?,?]");
    type_set_tensor(&t, ONYX_UNDEFINED, -1, NULL);
    assert_string_equal(type_str(&t, buf, sizeof buf), "tensor(?)");

    type_info s;
    type_init(&s);
    s.kind = ONYX_VALUE_SEQUENCE;
    assert_string_equal(type_str(&s, buf, sizeof buf), "seq(?)");
    s.elem = malloc(sizeof *s.elem);
    assert_non_null(s.elem);
    type_set_tensor(s.elem, ONYX_INT64, -1, NULL);
    assert_string_equal(type_str(&s, buf, sizeof buf), "seq(tensor(int64))");

    type_info o;
    type_init(&o);
    o.kind = ONYX_VALUE_OPTIONAL;
    o.elem = malloc(sizeof *o.elem);
    assert_non_null(o.elem);
    assert_int_equal(type_copy(o.elem, &s), ONYX_OK);
    o.elem->elem->dtype = ONYX_FLOAT;
    assert_string_equal(type_str(&o, buf, sizeof buf), "optional(seq(tensor(float)))");
    assert_string_equal(type_str(&s, buf, sizeof buf), "seq(tensor(int64))"); /* deep copy */
    assert_string_equal(type_str(&o, buf, 10), "optional(");
    assert_string_equal(type_str(NULL, buf, sizeof buf), "?");
    type_release(&o);
    type_release(&s);
    assert_int_equal(s.kind, ONYX_VALUE_NONE);
    assert_null(s.elem);
}

static void test_type_accepts(void **state) {
    (void)state;
    int64_t d[] = {2, 5}, want[] = {2, -1}, other[] = {3, 5};
    onyx_value *v = make_float(2, d);
    type_info t;
    type_init(&t);
    assert_true(type_accepts(&t, v));
    type_set_tensor(&t, ONYX_FLOAT, 2, want);
    assert_true(type_accepts(&t, v));
    type_set_tensor(&t, ONYX_FLOAT, 2, other);
    assert_false(type_accepts(&t, v));
    type_set_tensor(&t, ONYX_INT32, -1, NULL);
    assert_false(type_accepts(&t, v));
    type_set_tensor(&t, ONYX_UNDEFINED, 1, NULL);
    assert_false(type_accepts(&t, v));
    type_set_tensor(&t, ONYX_FLOAT, -1, NULL);
    assert_true(type_accepts(&t, v));

    type_info s;
    type_init(&s);
    s.kind = ONYX_VALUE_SEQUENCE;
    assert_false(type_accepts(&s, v));
    assert_int_equal(type_of_value(&t, v), ONYX_OK);
    assert_true(type_is_static(&t));
    char buf[64];
    assert_string_equal(type_str(&t, buf, sizeof buf), "tensor(float)[2,5]");
    s.elem = malloc(sizeof *s.elem);
    assert_non_null(s.elem);
    type_set_tensor(s.elem, ONYX_INT64, -1, NULL);
    onyx_value *seq = NULL;
    assert_int_equal(onyx_value_new_sequence(ONYX_FLOAT, 1, &v, &seq), ONYX_OK);
    assert_false(type_accepts(&s, seq));
    s.elem->dtype = ONYX_FLOAT;
    assert_true(type_accepts(&s, seq));
    onyx_value_free(seq);
    type_release(&s);
}

static void test_element_reads(void **state) {
    (void)state;
    int64_t d[] = {4};
    tensor t = {0};
    assert_int_equal(tensor_alloc(&t, ONYX_FLOAT16, 1, d), ONYX_OK);
    uint16_t *h = t.data;
    h[0] = 0x3c00;
    h[1] = 0xc000;
    h[2] = 0x7bff;
    h[3] = 0x7e00;
    assert_true(tensor_get_f64(&t, 0) == 1.0);
    assert_true(tensor_get_f64(&t, 1) == -2.0);
    assert_int_equal(tensor_get_i64(&t, 2), 65504);
    assert_true(isnan(tensor_get_f64(&t, 3)));
    assert_int_equal(tensor_get_i64(&t, 3), 0);
    assert_true(tensor_get_f64(&t, 4) == 0.0); /* out of range reads 0 */
    tensor_release(&t);

    assert_int_equal(tensor_alloc(&t, ONYX_BFLOAT16, 1, d), ONYX_OK);
    h = t.data;
    h[0] = 0x3f80;
    h[1] = 0xc040;
    assert_true(tensor_get_f64(&t, 0) == 1.0);
    assert_int_equal(tensor_get_i64(&t, 1), -3);
    tensor_release(&t);

    assert_int_equal(tensor_alloc(&t, ONYX_BOOL, 1, d), ONYX_OK);
    ((uint8_t *)t.data)[1] = 1;
    assert_int_equal(tensor_get_i64(&t, 0), 0);
    assert_int_equal(tensor_get_i64(&t, 1), 1);
    assert_true(tensor_get_f64(&t, 1) == 1.0);
    tensor_release(&t);

    assert_int_equal(tensor_alloc(&t, ONYX_FLOAT, 1, d), ONYX_OK);
    float *f = t.data;
    f[0] = 1e30f;
    f[1] = -1e30f;
    f[2] = -2.7f;
    f[3] = 2.5f;
    assert_int_equal(tensor_get_i64(&t, 0), INT64_MAX);
    assert_int_equal(tensor_get_i64(&t, 1), INT64_MIN);
    assert_int_equal(tensor_get_i64(&t, 2), -2);
    assert_true(tensor_get_f64(&t, 3) == 2.5);
    tensor_release(&t);

    assert_int_equal(tensor_alloc(&t, ONYX_UINT64, 1, d), ONYX_OK);
    ((uint64_t *)t.data)[0] = UINT64_MAX;
    assert_int_equal(tensor_get_i64(&t, 0), -1);
    assert_true(tensor_get_f64(&t, 0) == 18446744073709551615.0);
    tensor_release(&t);

    int64_t out[4];
    size_t count = 99;
    assert_int_equal(tensor_alloc(&t, ONYX_INT32, 1, d), ONYX_OK);
    int32_t *i32 = t.data;
    i32[0] = -1;
    i32[3] = 7;
    assert_int_equal(tensor_to_i64s(&t, out, 4, &count), ONYX_OK);
    assert_int_equal(count, 4);
    assert_int_equal(out[0], -1);
    assert_int_equal(out[3], 7);
    assert_int_equal(tensor_to_i64s(&t, out, 3, &count), ONYX_ERR_SHAPE);
    assert_int_equal(count, 4);
    tensor c = {0};
    assert_int_equal(tensor_copy(&c, &t), ONYX_OK);
    assert_memory_equal(c.data, t.data, 16);
    tensor_release(&c);
    tensor_release(&t);
    int64_t d2[] = {2, 2};
    assert_int_equal(tensor_alloc(&t, ONYX_INT64, 2, d2), ONYX_OK);
    assert_int_equal(tensor_to_i64s(&t, out, 4, &count), ONYX_ERR_SHAPE);
    tensor_release(&t);
    assert_int_equal(tensor_alloc(&t, ONYX_FLOAT, 1, d), ONYX_OK);
    assert_int_equal(tensor_to_i64s(&t, out, 4, &count), ONYX_ERR_SHAPE);
    assert_int_equal(tensor_alloc(&c, ONYX_FLOAT, 2, d2), ONYX_OK);
    assert_int_equal(tensor_copy_data(&c, &t), ONYX_OK); /* same numel, other shape */
    tensor_release(&c);
    assert_int_equal(tensor_alloc(&c, ONYX_INT32, 1, d), ONYX_OK);
    assert_int_equal(tensor_copy_data(&c, &t), ONYX_ERR_SHAPE);
    tensor_release(&c);
    tensor_release(&t);
}

static void test_accessors_on_wrong_kind(void **state) {
    (void)state;
    onyx_value *opt = NULL;
    assert_int_equal(onyx_value_new_optional(NULL, &opt), ONYX_OK);
    assert_int_equal(onyx_tensor_dtype(opt), ONYX_UNDEFINED);
    assert_int_equal(onyx_tensor_rank(opt), 0);
    assert_null(onyx_tensor_data(opt));
    assert_null(onyx_tensor_dims(opt));
    assert_int_equal(onyx_tensor_numel(NULL), 0);
    assert_int_equal(onyx_sequence_length(opt), 0);
    assert_null(onyx_sequence_at(opt, 0));
    assert_int_equal(onyx_sequence_elem_dtype(opt), ONYX_UNDEFINED);
    assert_int_equal(onyx_value_kind_of(NULL), ONYX_VALUE_NONE);
    assert_false(onyx_optional_has_value(NULL));
    onyx_value *c = NULL;
    assert_int_equal(onyx_value_clone(NULL, &c), ONYX_ERR_INVALID_ARGUMENT);
    onyx_value_free(opt);
    assert_string_equal(onyx_version(), "0.2.0");
}

/* Maps: built from two 1-D tensors, cloned deeply, described, refused when malformed. */
static void test_map(void **state) {
    (void)state;
    const char *names[] = {"a", "b", "c"};
    float probs[] = {0.25f, 0.5f, 0.25f};
    int64_t three = 3, two = 2;
    onyx_value *keys = NULL, *values = NULL, *short_values = NULL, *map = NULL, *clone = NULL;
    assert_int_equal(onyx_value_new_string_tensor(1, &three, names, &keys), ONYX_OK);
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, &three, probs, sizeof probs, &values), ONYX_OK);
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, &two, probs, 2 * sizeof(float), &short_values),
                     ONYX_OK);
    /* Lengths differ: refused, and the caller keeps both tensors. */
    assert_int_equal(onyx_value_new_map(keys, short_values, &map), ONYX_ERR_INVALID_ARGUMENT);
    assert_error_mentions("one length");
    assert_null(map);
    /* Float keys are not a map key type. */
    assert_int_equal(onyx_value_new_map(values, keys, &map), ONYX_ERR_INVALID_ARGUMENT);
    onyx_value_free(short_values);
    assert_int_equal(onyx_value_new_map(keys, values, &map), ONYX_OK);
    assert_int_equal(onyx_value_kind_of(map), ONYX_VALUE_MAP);
    assert_ptr_equal(onyx_map_keys(map), keys);
    assert_int_equal(onyx_tensor_numel(onyx_map_values(map)), 3);
    assert_null(onyx_map_keys(keys));
    assert_int_equal(onyx_value_clone(map, &clone), ONYX_OK);
    assert_ptr_not_equal(onyx_map_keys(clone), keys);
    assert_string_equal(((char *const *)onyx_tensor_data(onyx_map_keys(clone)))[2], "c");
    assert_true(((const float *)onyx_tensor_data(onyx_map_values(clone)))[1] == 0.5f);
    type_info t;
    assert_int_equal(type_of_value(&t, clone), ONYX_OK);
    char buf[64];
    assert_string_equal(type_str(&t, buf, sizeof buf), "map(string,float)");
    assert_true(type_accepts(&t, map));
    t.dtype = ONYX_INT64;
    assert_false(type_accepts(&t, map));
    type_release(&t);
    /* A sequence of maps (ZipMap's output) holds and frees them. */
    onyx_value *seq = NULL;
    assert_int_equal(onyx_value_new_sequence(ONYX_UNDEFINED, 1, &clone, &seq), ONYX_OK);
    assert_int_equal(onyx_value_kind_of(onyx_sequence_at(seq, 0)), ONYX_VALUE_MAP);
    onyx_value_free(seq);
    onyx_value_free(map);
}

/* Large tensors (mapped, and kept for reuse when freed) come zeroed every time, a reused block
 * as a fresh one, and several alive at once never share storage. */
static void test_large_storage_reuse(void **state) {
    (void)state;
    int64_t dims[] = {3, 1 << 18}; /* 3 MiB of floats: past the mapping threshold */
    for (int round = 0; round < 3; round++) {
        tensor a, b;
        assert_int_equal(tensor_alloc(&a, ONYX_FLOAT, 2, dims), ONYX_OK);
        assert_int_equal(tensor_alloc(&b, ONYX_FLOAT, 2, dims), ONYX_OK);
        assert_ptr_not_equal(a.data, b.data);
        assert_int_equal((uintptr_t)a.data % 64, 0);
        const float *fa = a.data, *fb = b.data;
        for (int64_t i = 0; i < a.numel; i += 4099) {
            if (fa[i] != 0 || fb[i] != 0) fail_msg("round %d: element %lld not zeroed", round, (long long)i);
        }
        assert_true(fa[a.numel - 1] == 0 && fb[b.numel - 1] == 0);
        memset(a.data, 0x5a, a.nbytes); /* dirty both before they go back */
        memset(b.data, 0x5a, b.nbytes);
        tensor_release(&a);
        tensor_release(&b);
    }
}

/* onyx_values_export: words and copied bytes for a tensor, a sequence of a map (in the map rows
 * form), an optional and a string tensor (described, not copied); too little room counts the
 * sizes and writes nothing past. */
static void test_values_export(void **state) {
    (void)state;
    float f[3] = {1.5f, 2.5f, 3.5f};
    int64_t k[2] = {7, 9};
    float kv[2] = {0.25f, 0.75f};
    onyx_value *t = NULL, *keys = NULL, *vals = NULL, *map = NULL, *seq = NULL, *opt = NULL, *str = NULL;
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, (int64_t[]){3}, f, sizeof f, &t), ONYX_OK);
    assert_int_equal(onyx_value_new_tensor(ONYX_INT64, 1, (int64_t[]){2}, k, sizeof k, &keys), ONYX_OK);
    assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, (int64_t[]){2}, kv, sizeof kv, &vals), ONYX_OK);
    assert_int_equal(onyx_value_new_map(keys, vals, &map), ONYX_OK);
    assert_int_equal(onyx_value_new_sequence(ONYX_UNDEFINED, 1, (onyx_value *[]){map}, &seq), ONYX_OK);
    assert_int_equal(onyx_value_new_optional(NULL, &opt), ONYX_OK);
    assert_int_equal(onyx_value_new_string_tensor(1, (int64_t[]){1}, (const char *[]){"ab"}, &str), ONYX_OK);
    const onyx_value *values[] = {t, seq, opt, str};
    int64_t words[64];
    unsigned char bytes[256];
    size_t nw = 0, nb = 0;
    assert_int_equal(onyx_values_export(values, 4, words, 64, &nw, bytes, sizeof bytes, 1024, &nb), ONYX_OK);
    int64_t expect[] = {1, ONYX_FLOAT, 1, 3, 0, 12,                                  /* tensor */
                        ONYX_EXPORT_MAP_ROWS, 1, 1, ONYX_INT64, 1, 2, 16, 16,          /* seq(map): */
                        1, ONYX_FLOAT, 2, 1, 2, 32, 8,                                /* as rows */
                        3, 0,                                                           /* empty optional */
                        1, ONYX_STRING, 1, 1, -1, 8};                                   /* strings: not copied */
    assert_int_equal(nw, sizeof expect / sizeof *expect);
    assert_memory_equal(words, expect, sizeof expect);
    assert_int_equal(nb, 40);
    assert_memory_equal(bytes, f, sizeof f);
    assert_memory_equal(bytes + 16, k, sizeof k);
    assert_memory_equal(bytes + 32, kv, sizeof kv);
    /* too little room: the sizes, nothing written past the capacities */
    int64_t few[4] = {0};
    unsigned char little[8] = {0};
    assert_int_equal(onyx_values_export(values, 4, few, 3, &nw, little, 4, 1024, &nb), ONYX_OK);
    assert_int_equal(nw, sizeof expect / sizeof *expect);
    assert_int_equal(nb, 40);
    assert_int_equal(few[3], 0);
    assert_int_equal(little[4], 0);
    /* copy_limit: a tensor past it is described with offset -1 */
    assert_int_equal(onyx_values_export(values, 1, words, 64, &nw, bytes, sizeof bytes, 8, &nb), ONYX_OK);
    assert_int_equal(words[4], -1);
    assert_int_equal(nb, 0);
    assert_int_equal(onyx_values_export(values, 1, NULL, 0, &nw, NULL, 0, 8, NULL), ONYX_ERR_INVALID_ARGUMENT);
    onyx_value_free(t);
    onyx_value_free(seq);
    onyx_value_free(opt);
    onyx_value_free(str);
}

/* A sequence of maps with equal keys (ZipMap's rows) is described once: keys, then the values as a
 * [rows, n] matrix; maps whose keys differ keep the general form. */
static void test_values_export_map_rows(void **state) {
    (void)state;
    int64_t k[2] = {7, 9}, other[2] = {7, 8};
    float row0[2] = {0.25f, 0.75f}, row1[2] = {0.5f, 0.5f};
    onyx_value *maps[2] = {NULL, NULL}, *mixed[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        onyx_value *keys = NULL, *vals = NULL, *keys2 = NULL, *vals2 = NULL;
        assert_int_equal(onyx_value_new_tensor(ONYX_INT64, 1, (int64_t[]){2}, k, sizeof k, &keys), ONYX_OK);
        assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, (int64_t[]){2}, i ? row1 : row0, 8, &vals),
                         ONYX_OK);
        assert_int_equal(onyx_value_new_map(keys, vals, &maps[i]), ONYX_OK);
        assert_int_equal(onyx_value_new_tensor(ONYX_INT64, 1, (int64_t[]){2}, i ? other : k, 16, &keys2),
                         ONYX_OK);
        assert_int_equal(onyx_value_new_tensor(ONYX_FLOAT, 1, (int64_t[]){2}, row0, 8, &vals2), ONYX_OK);
        assert_int_equal(onyx_value_new_map(keys2, vals2, &mixed[i]), ONYX_OK);
    }
    onyx_value *rows = NULL, *general = NULL;
    assert_int_equal(onyx_value_new_sequence(ONYX_UNDEFINED, 2, maps, &rows), ONYX_OK);
    assert_int_equal(onyx_value_new_sequence(ONYX_UNDEFINED, 2, mixed, &general), ONYX_OK);
    int64_t words[64];
    unsigned char bytes[256];
    size_t nw = 0, nb = 0;
    /* copy_limit 4: the rows form is copied whatever the limit */
    assert_int_equal(onyx_values_export((const onyx_value *[]){rows}, 1, words, 64, &nw, bytes,
                                        sizeof bytes, 4, &nb), ONYX_OK);
    int64_t expect[] = {ONYX_EXPORT_MAP_ROWS, 2, 1, ONYX_INT64, 1, 2, 0, 16, 1, ONYX_FLOAT, 2, 2, 2, 16, 16};
    assert_int_equal(nw, sizeof expect / sizeof *expect);
    assert_memory_equal(words, expect, sizeof expect);
    assert_int_equal(nb, 32);
    assert_memory_equal(bytes, k, sizeof k);
    assert_memory_equal(bytes + 16, row0, sizeof row0);
    assert_memory_equal(bytes + 24, row1, sizeof row1);
    assert_int_equal(onyx_values_export((const onyx_value *[]){general}, 1, words, 64, &nw, bytes,
                                        sizeof bytes, 1024, &nb), ONYX_OK);
    assert_int_equal(words[0], ONYX_VALUE_SEQUENCE);
    assert_int_equal(words[2], ONYX_VALUE_MAP);
    assert_int_equal(nw, 2 + 2 * 13);
    /* the same rows made by value_make_map_rows (shared keys, values in one matrix): same words,
     * same bytes */
    tensor keys = {0};
    assert_int_equal(tensor_set_shape(&keys, ONYX_INT64, 1, (int64_t[]){2}), ONYX_OK);
    keys.data = k;
    onyx_value *block = value_new();
    void *data = NULL;
    assert_int_equal(value_make_map_rows(block, &keys, ONYX_FLOAT, 2, &data), ONYX_OK);
    memcpy(data, row0, sizeof row0);
    memcpy((char *)data + sizeof row0, row1, sizeof row1);
    memset(bytes, 0, sizeof bytes);
    assert_int_equal(onyx_values_export((const onyx_value *[]){block}, 1, words, 64, &nw, bytes,
                                        sizeof bytes, 4, &nb), ONYX_OK);
    assert_int_equal(nw, sizeof expect / sizeof *expect);
    assert_memory_equal(words, expect, sizeof expect);
    assert_memory_equal(bytes, k, sizeof k);
    assert_memory_equal(bytes + 16, row0, sizeof row0);
    assert_memory_equal(bytes + 24, row1, sizeof row1);
    onyx_value_free(block);
    onyx_value_free(rows);
    onyx_value_free(general);
}

/* value_make_map_rows (ZipMap's batch of maps in one block): every map has the keys and its row of
 * the values; a deep copy outlives the original; a sequence derived from it (shared store, then
 * erased and pushed to) frees what it holds once (ASan); string keys are copied; bad keys and value
 * types are refused by name. */
static void test_map_rows(void **state) {
    (void)state;
    int64_t labels[3] = {4, 5, 6};
    tensor keys = {0};
    assert_int_equal(tensor_set_shape(&keys, ONYX_INT64, 1, (int64_t[]){3}), ONYX_OK);
    keys.data = labels;
    onyx_value *seq = value_new(), *copy = value_new(), *derived = value_new();
    assert_non_null(seq);
    void *data = NULL;
    assert_int_equal(value_make_map_rows(seq, &keys, ONYX_FLOAT, 2, &data), ONYX_OK);
    float *values = data;
    for (int i = 0; i < 6; i++) assert_true(values[i] == 0.0f);
    for (int i = 0; i < 6; i++) values[i] = (float)i + 0.5f;
    labels[0] = 99; /* the maps hold a copy of the keys */
    assert_int_equal(onyx_sequence_length(seq), 2);
    for (size_t r = 0; r < 2; r++) {
        const onyx_value *m = onyx_sequence_at(seq, r);
        assert_int_equal(onyx_value_kind_of(m), ONYX_VALUE_MAP);
        const int64_t *k = m->map.keys->t.data;
        const float *v = m->map.values->t.data;
        assert_int_equal(m->map.values->t.dims[0], 3);
        assert_int_equal(k[0], 4);
        assert_int_equal(k[2], 6);
        assert_true(v[0] == (float)(3 * r) + 0.5f && v[2] == (float)(3 * r + 2) + 0.5f);
    }
    assert_int_equal(value_copy(copy, seq), ONYX_OK);
    assert_int_equal(value_share(derived, seq), ONYX_OK);
    onyx_value_free(seq);
    /* the derived sequence holds the block: erase its first map, append a map of its own */
    assert_int_equal(value_seq_erase(derived, 0), ONYX_OK);
    onyx_value *k2 = value_new(), *v2 = value_new(), *m2 = value_new();
    assert_int_equal(value_alloc_tensor(k2, ONYX_INT64, 1, (int64_t[]){1}), ONYX_OK);
    assert_int_equal(value_alloc_tensor(v2, ONYX_FLOAT, 1, (int64_t[]){1}), ONYX_OK);
    assert_int_equal(value_make_map(m2, k2, v2), ONYX_OK);
    assert_int_equal(value_seq_push(derived, m2), ONYX_OK);
    assert_int_equal(onyx_sequence_length(derived), 2);
    assert_true(((const float *)onyx_sequence_at(derived, 0)->map.values->t.data)[0] == 3.5f);
    onyx_value_free(derived);
    const onyx_value *last = onyx_sequence_at(copy, 1);
    assert_true(((const float *)last->map.values->t.data)[1] == 4.5f);
    assert_int_equal(((const int64_t *)last->map.keys->t.data)[0], 4);
    onyx_value_free(copy);

    /* string keys, and no rows */
    const char *names[2] = {"cat", "dog"};
    tensor skeys = {0};
    assert_int_equal(tensor_set_shape(&skeys, ONYX_STRING, 1, (int64_t[]){2}), ONYX_OK);
    skeys.data = (void *)names;
    seq = value_new();
    assert_int_equal(value_make_map_rows(seq, &skeys, ONYX_DOUBLE, 1, &data), ONYX_OK);
    const onyx_value *m = onyx_sequence_at(seq, 0);
    assert_string_equal(((char *const *)m->map.keys->t.data)[1], "dog");
    assert_ptr_not_equal(((char *const *)m->map.keys->t.data)[1], names[1]);
    assert_int_equal(m->map.values->t.dtype, ONYX_DOUBLE);
    assert_int_equal(value_make_map_rows(seq, &keys, ONYX_FLOAT, 0, &data), ONYX_OK);
    assert_int_equal(onyx_value_kind_of(seq), ONYX_VALUE_SEQUENCE);
    assert_int_equal(onyx_sequence_length(seq), 0);
    assert_null(data);

    /* refusals */
    float scores[3] = {0};
    tensor fkeys = {0};
    assert_int_equal(tensor_set_shape(&fkeys, ONYX_FLOAT, 1, (int64_t[]){3}), ONYX_OK);
    fkeys.data = scores;
    assert_int_equal(value_make_map_rows(seq, &fkeys, ONYX_FLOAT, 1, &data), ONYX_ERR_INVALID_ARGUMENT);
    assert_error_mentions("keys");
    assert_int_equal(value_make_map_rows(seq, &keys, ONYX_STRING, 1, &data), ONYX_ERR_INVALID_ARGUMENT);
    assert_error_mentions("string");
    onyx_value_free(seq);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_rows),
        cmocka_unit_test(test_large_storage_reuse),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_shape_numel),
        cmocka_unit_test(test_new_tensor),
        cmocka_unit_test(test_new_tensor_errors),
        cmocka_unit_test(test_wrap_tensor),
        cmocka_unit_test(test_string_tensor),
        cmocka_unit_test(test_sequence),
        cmocka_unit_test(test_optional),
        cmocka_unit_test(test_value_move_copy),
        cmocka_unit_test(test_type_str),
        cmocka_unit_test(test_type_accepts),
        cmocka_unit_test(test_element_reads),
        cmocka_unit_test(test_accessors_on_wrong_kind),
        cmocka_unit_test(test_sequence_sharing),
        cmocka_unit_test(test_values_export),
        cmocka_unit_test(test_values_export_map_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
