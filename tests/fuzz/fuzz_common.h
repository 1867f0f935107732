/* Shared by the libFuzzer targets: a folder with small external-data files, a guard that keeps
 * declared tensor sizes small (so that fuzzing finds bugs, not legitimately huge models), a tiny
 * PRNG driven by the fuzz bytes, and a walk that touches every byte of a result. */
#ifndef ONYX_FUZZ_COMMON_H
#define ONYX_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/loader.h"
#include "core/loader_wire.h"
#include "core/value.h"

/* Declared elements a single TensorProto / SparseTensorProto may have, and all of them together. */
#define FUZZ_MAX_TENSOR_ELEMS (1 << 16)
#define FUZZ_MAX_TOTAL_ELEMS (1 << 20)

/* A folder holding a few small files that fuzzed external_data entries may name ("data.bin",
 * "sub/w.bin"). Created once per process; never removed (it is tiny and shared by runs). */
static inline const char *fuzz_ext_dir(void) {
    static char dir[128];
    if (dir[0]) return dir;
    snprintf(dir, sizeof dir, "/tmp/onyx-fuzz-ext-%u", (unsigned)getuid());
    char path[256];
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/sub", dir);
    mkdir(path, 0700);
    static const char *const files[] = {"data.bin", "sub/w.bin"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        FILE *fp = fopen(path, "wb");
        if (!fp) continue;
        for (int i = 0; i < 256; i++) fputc(i, fp);
        fclose(fp);
    }
    return dir;
}

/* ---- size guard over the protobuf */

typedef struct fuzz_budget {
    int64_t total;
    int ok;
    int runs; /* the model will run: refuse unbounded loops too */
} fuzz_budget;

static inline void budget_dims(fuzz_budget *b, size_t n, const int64_t *dims) {
    int64_t numel = 1;
    for (size_t i = 0; i < n && b->ok; i++) {
        if (dims[i] < 0) return; /* the library refuses it anyway */
        if (dims[i] > FUZZ_MAX_TENSOR_ELEMS) { b->ok = 0; return; }
        numel *= dims[i];
        if (numel > FUZZ_MAX_TENSOR_ELEMS) b->ok = 0;
    }
    b->total += numel;
    if (b->total > FUZZ_MAX_TOTAL_ELEMS) b->ok = 0;
}

static inline void budget_tensor(fuzz_budget *b, const Onnx__TensorProto *t) {
    if (t) budget_dims(b, t->n_dims, t->dims);
}

static inline void budget_sparse(fuzz_budget *b, const Onnx__SparseTensorProto *s) {
    if (!s) return;
    budget_dims(b, s->n_dims, s->dims);
    budget_tensor(b, s->values);
    budget_tensor(b, s->indices);
}

/* A Loop without a trip count, or with a large constant one, may run for ever by the model's
 * own semantics (cond never turns false): that is the model's doing, not a hang to report. */
static inline bool loop_is_bounded(const Onnx__GraphProto *g, const Onnx__NodeProto *np) {
    if (!np->op_type || strcmp(np->op_type, "Loop") != 0) return true;
    if (np->n_input < 1 || !np->input[0] || !np->input[0][0]) return false;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (!t || !t->name || strcmp(t->name, np->input[0]) != 0) continue;
        int64_t m = 0;
        if (t->n_int64_data) m = t->int64_data[0];
        else if (t->raw_data.len >= sizeof m) memcpy(&m, t->raw_data.data, sizeof m);
        return m <= 1000;
    }
    return true;
}

static inline void budget_graph(fuzz_budget *b, const Onnx__GraphProto *g) {
    if (!g) return;
    for (size_t i = 0; i < g->n_initializer; i++) budget_tensor(b, g->initializer[i]);
    for (size_t i = 0; i < g->n_sparse_initializer; i++) budget_sparse(b, g->sparse_initializer[i]);
    for (size_t n = 0; n < g->n_node && b->ok; n++) {
        const Onnx__NodeProto *np = g->node[n];
        if (np && b->runs && !loop_is_bounded(g, np)) b->ok = 0;
        for (size_t a = 0; np && a < np->n_attribute && b->ok; a++) {
            const Onnx__AttributeProto *ap = np->attribute[a];
            if (!ap) continue;
            budget_tensor(b, ap->t);
            budget_sparse(b, ap->sparse_tensor);
            budget_graph(b, ap->g);
            for (size_t k = 0; k < ap->n_tensors; k++) budget_tensor(b, ap->tensors[k]);
            for (size_t k = 0; k < ap->n_sparse_tensors; k++) budget_sparse(b, ap->sparse_tensors[k]);
            for (size_t k = 0; k < ap->n_graphs; k++) budget_graph(b, ap->graphs[k]);
        }
    }
}

/* False when the model declares tensors above the fuzzing budget or, when it `runs`, has an
 * unbounded Loop (unparseable bytes pass: the library is to report them). The wire check runs
 * first: protobuf-c would recurse without bound on deeply nested bytes. */
static inline int fuzz_model_small(const uint8_t *data, size_t size, int runs) {
    if (loader_check_wire(&onnx__model_proto__descriptor, data, size, "fuzz") != ONYX_OK) return 1;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, data);
    if (!mp) return 1;
    fuzz_budget b = {0, 1, runs};
    budget_graph(&b, mp->graph);
    onnx__model_proto__free_unpacked(mp, NULL);
    return b.ok;
}

/* ---- PRNG (xorshift64*) seeded from fuzz bytes */

typedef struct fuzz_rng {
    uint64_t s;
} fuzz_rng;

static inline uint64_t rng_next(fuzz_rng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

static inline unsigned rng_below(fuzz_rng *r, unsigned n) { return n ? (unsigned)(rng_next(r) % n) : 0; }

/* ---- input data: values that make kernels take their edge cases */

static const float float_pool[] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 3.0f, -2.5f, 1e-3f, 100.0f,
                                   1e30f, -1e30f, 0.0f / 0.0f, 1.0f / 0.0f, -1.0f / 0.0f, -0.0f, 7.0f};
static const int64_t int_pool[] = {0, 1, 2, -1, 3, 0, 1, -2, 4, 5, 127, -128, 255,
                                   INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 65535};
static const char *const string_pool[] = {"", "a", "hello", "ab", "A", "z\xc3\xa9", "0", "abc"};

static inline void fuzz_fill(fuzz_rng *r, onyx_dtype dt, int64_t numel, uint8_t *buf, size_t nbytes) {
    for (int64_t i = 0; i < numel; i++) {
        float f = float_pool[rng_below(r, sizeof float_pool / sizeof float_pool[0])];
        /* mostly small, index-like integers; extremes now and then */
        int64_t v = int_pool[rng_below(r, rng_below(r, 4) ? 10 : sizeof int_pool / sizeof int_pool[0])];
        switch (dt) {
        case ONYX_FLOAT: ((float *)buf)[i] = f; break;
        case ONYX_DOUBLE: ((double *)buf)[i] = f; break;
        case ONYX_COMPLEX64: ((float *)buf)[2 * i] = f; ((float *)buf)[2 * i + 1] = -f; break;
        case ONYX_COMPLEX128: ((double *)buf)[2 * i] = f; ((double *)buf)[2 * i + 1] = 1; break;
        case ONYX_FLOAT16: ((uint16_t *)buf)[i] = float_to_fp16(f); break;
        case ONYX_BFLOAT16: ((uint16_t *)buf)[i] = float_to_bf16(f); break;
        case ONYX_INT8: case ONYX_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
        case ONYX_INT16: case ONYX_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
        case ONYX_INT32: case ONYX_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
        case ONYX_INT64: case ONYX_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
        case ONYX_BOOL: buf[i] = (uint8_t)rng_below(r, 2); break;
        default: i = numel; break; /* float8, sub-byte: random bytes below */
        }
    }
    if (!dtype_in(dt, DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_COMPLEX64) |
                          DT_BIT(ONYX_COMPLEX128)))
        for (size_t i = 0; i < nbytes; i++) buf[i] = (uint8_t)rng_next(r);
}

static const onyx_dtype any_dtype[] = {ONYX_FLOAT, ONYX_INT64, ONYX_INT32, ONYX_BOOL,
                                       ONYX_DOUBLE, ONYX_UINT8, ONYX_FLOAT16, ONYX_STRING};

/* ---- touching results: reads every byte (and string) so that ASan sees bad pointers */

static volatile uint8_t fuzz_sink;

static inline void fuzz_touch(const onyx_value *v) {
    if (!v) return;
    switch (onyx_value_kind_of(v)) {
    case ONYX_VALUE_TENSOR: {
        const uint8_t *p = onyx_tensor_data(v);
        size_t n = onyx_tensor_nbytes(v);
        uint8_t acc = 0;
        if (onyx_tensor_dtype(v) == ONYX_STRING) {
            char *const *s = onyx_tensor_data(v);
            for (int64_t i = 0; i < onyx_tensor_numel(v); i++) acc ^= (uint8_t)strlen(s[i]);
        } else {
            for (size_t i = 0; i < n; i++) acc ^= p[i];
        }
        const int64_t *dims = onyx_tensor_dims(v);
        for (size_t i = 0; i < onyx_tensor_rank(v); i++) acc ^= (uint8_t)dims[i];
        fuzz_sink ^= acc;
        break;
    }
    case ONYX_VALUE_SEQUENCE:
        for (size_t i = 0; i < onyx_sequence_length(v); i++) fuzz_touch(onyx_sequence_at(v, i));
        break;
    case ONYX_VALUE_OPTIONAL: fuzz_touch(onyx_optional_value(v)); break;
    default: break;
    }
}

/* Every failure must come with a message. */
static inline void fuzz_check_message(onyx_status st) {
    if (st != ONYX_OK && onyx_last_error()[0] == '\0') {
        fprintf(stderr, "status %s without a message\n", onyx_status_name(st));
        abort();
    }
}

#endif
