/* CPU kernels of RNN, GRU and LSTM: the input projection of all steps in one GEMM, then one
 * recurrent GEMM per step (two for GRU without linear_before_reset) and the gates elementwise.
 * float16/bfloat16 compute in float, double in double (rnn_impl.h, stamped per type). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/rnn/rnn_common.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

/* One run's inputs and sizes, read off the tensors once. */
typedef struct rnn_job {
    rnn_attrs a;
    onyx_dtype dt;
    int64_t seq, batch, in, H;
    const tensor *X, *W, *R, *B, *h0, *c0, *P;
    const int32_t *lens; /* NULL: every sequence is seq long */
    tensor *Y, *Yh, *Yc;
} rnn_job;

/* Scratch (grown on demand; sized in prepare when the shapes are static). */
static inline int64_t rnn_len(const rnn_job *j, int64_t b) {
    return j->lens ? j->lens[b] : j->seq;
}

/* Whether X needs a converted, step-major copy. */
static inline bool rnn_need_x(const rnn_job *j) {
    bool native = j->dt == ONYX_FLOAT || j->dt == ONYX_DOUBLE;
    return !native || j->a.layout != 0;
}

/* Scratch bytes for a job (rnn_impl.h carves it); false on overflow. */
static bool scratch_bytes(const rnn_job *j, size_t *out) {
    /* dims may come from declared shapes at prepare: bound them before any product */
    if (j->H > INT32_MAX || j->in > ((int64_t)1 << 60)) return false;
    int64_t seq = j->seq, batch = j->batch, I = j->in, H = j->H, GH = j->a.gates * j->H;
    int64_t sb, t, n = 0;
    bool native = j->dt == ONYX_FLOAT || j->dt == ONYX_DOUBLE;
    if (__builtin_mul_overflow(seq, batch, &sb)) return false;
    int64_t terms[][2] = {
        {sb, rnn_need_x(j) ? I : 0}, {sb, GH}, {batch, GH}, {batch, 3 * H}, {1, GH + H},
        {GH, native ? 0 : I + H + 2}, {3, native ? 0 : H}};
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        if (__builtin_mul_overflow(terms[i][0], terms[i][1], &t) ||
            __builtin_add_overflow(n, t, &n))
            return false;
    }
    size_t es = j->dt == ONYX_DOUBLE ? sizeof(double) : sizeof(float);
    if ((uint64_t)n > SIZE_MAX / es) return false;
    *out = (size_t)n * es;
    return true;
}

/* Vectorizable float tanh and sigmoid (Cephes' polynomials, within 2 ulp of the exact values):
 * libm's scalar tanhf/expf calls cost the gates as much as their GEMMs. */
static inline float va_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint32_t va_fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* c ? a : b as bit masks: -O2 keeps float ternaries as branches (trapping math), which stops the
 * loops from vectorizing */
static inline float va_sel(bool c, float a, float b) {
    uint32_t m = 0u - (uint32_t)c;
    return va_bits((va_fbits(a) & m) | (va_fbits(b) & ~m));
}

/* e^x for x clamped to [-87.3, 88.3] (the gates need no more): 2^n e^r, |r| <= ln2 / 2 */
static inline float va_exp(float x) {
    float c = va_sel(x < 88.3f, x, 88.3f);
    c = va_sel(c > -87.3f, c, -87.3f);
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float n = (c * 1.44269504088896341f + magic) - magic;
    float r = c - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500E-4f;
    p = p * r + 1.3981999507E-3f;
    p = p * r + 8.3334519073E-3f;
    p = p * r + 4.1665795894E-2f;
    p = p * r + 1.6666665459E-1f;
    p = p * r + 5.0000001201E-1f;
    return (p * r * r + r + 1.0f) * va_bits((uint32_t)((int32_t)n + 127) << 23);
}

static inline float va_sigmoid(float x) {
    float y = 1.0f / (1.0f + va_exp(-x));
    return va_sel(x != x, x, y);
}

/* an odd polynomial near 0 (where 1 - 2 / (e^2x + 1) would cancel), the exponential form past */
static inline float va_tanh(float x) {
    float a = va_bits(va_fbits(x) & 0x7fffffffu), z = x * x;
    float s = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z - 5.37397155531E-2f) * z +
                1.33314422036E-1f) * z - 3.33332819422E-1f) * z * x + x;
    float l = 1.0f - 2.0f / (va_exp(2.0f * a) + 1.0f); /* >= 0: x's sign is or'ed in */
    l = va_bits(va_fbits(l) | (va_fbits(x) & 0x80000000u));
    float y = va_sel(a < 0.625f, s, l);
    return va_sel(x != x, x, y);
}

static inline double sigmoid_f64(double x) { return 1 / (1 + exp(-x)); }

#define RT float
#define RT_DTYPE ONYX_FLOAT
#define RT_GEMM cpu_sgemm
#define RT_SIGMOID va_sigmoid
#define RT_TANH va_tanh
#define RT_EXP expf
#define RT_LOG1P log1pf
#define RT_FABS fabsf
#define RNN_FN(x) x##_f32
#include "kernels_cpu/rnn/rnn_impl.h"
#undef RT
#undef RT_DTYPE
#undef RT_GEMM
#undef RT_TANH
#undef RT_SIGMOID
#undef RT_EXP
#undef RT_LOG1P
#undef RT_FABS
#undef RNN_FN

#define RT double
#define RT_DTYPE ONYX_DOUBLE
#define RT_GEMM cpu_dgemm
#define RT_SIGMOID sigmoid_f64
#define RT_TANH tanh
#define RT_EXP exp
#define RT_LOG1P log1p
#define RT_FABS fabs
#define RNN_FN(x) x##_f64
#include "kernels_cpu/rnn/rnn_impl.h"
#undef RT
#undef RT_DTYPE
#undef RT_GEMM
#undef RT_TANH
#undef RT_SIGMOID
#undef RT_EXP
#undef RT_LOG1P
#undef RT_FABS
#undef RNN_FN

/* Checks that t has exactly the dims given (what: its name for messages). */
static onyx_status check_dims(const tensor *t, int i, const char *what, int rank,
                              const int64_t *dims) {
    bool ok = t->rank == rank;
    for (int d = 0; ok && d < rank; d++) ok = t->dims[d] == dims[d];
    if (ok) return ONYX_OK;
    char got[128] = "", want[128] = "";
    for (int d = 0; d < t->rank && d < 8; d++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? "," : "",
                 (long long)t->dims[d]);
    for (int d = 0; d < rank; d++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? "," : "",
                 (long long)dims[d]);
    return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has shape [%s], expected [%s]", i, what, got,
                      want);
}

static onyx_status job_setup(const kernel_call *c, rnn_cell cell, rnn_job *j) {
    memset(j, 0, sizeof *j);
    TRY(rnn_parse_attrs(c->node, cell, &j->a));
    const rnn_attrs *a = &j->a;
    j->X = kernel_input(c, 0);
    j->W = kernel_input(c, 1);
    j->R = kernel_input(c, 2);
    j->B = kernel_input(c, 3);
    const tensor *lens = kernel_input(c, 4);
    j->h0 = kernel_input(c, 5);
    if (cell == RNN_CELL_LSTM) {
        j->c0 = kernel_input(c, 6);
        j->P = kernel_input(c, 7);
    }
    j->Y = kernel_output(c, 0);
    j->Yh = kernel_output(c, 1);
    if (cell == RNN_CELL_LSTM) j->Yc = kernel_output(c, 2);
    if (!j->X || !j->W || !j->R)
        return onyx_error(ONYX_ERR_SHAPE, "inputs X, W and R are required tensors");
    j->dt = j->X->dtype;
    if (j->X->rank != 3 || j->R->rank != 3)
        return onyx_error(ONYX_ERR_SHAPE, "X and R have ranks %d and %d, expected 3",
                          j->X->rank, j->R->rank);
    j->seq = j->X->dims[a->layout ? 1 : 0];
    j->batch = j->X->dims[a->layout ? 0 : 1];
    j->in = j->X->dims[2];
    j->H = a->hidden >= 0 ? a->hidden : j->R->dims[2];
    if (j->H > INT32_MAX) /* (an empty R may have any last dim) */
        return onyx_error(ONYX_ERR_UNSUPPORTED, "hidden size %lld, at most %d supported",
                          (long long)j->H, INT32_MAX);
    int64_t nd = a->num_dir, GH = a->gates * j->H, H = j->H, batch = j->batch;
    int64_t wd[3] = {nd, GH, j->in}, rd[3] = {nd, GH, H}, bd[2] = {nd, 2 * GH}, pd[2] = {nd, 3 * H};
    int64_t hd[3] = {nd, batch, H};
    if (a->layout) hd[0] = batch, hd[1] = nd;
    const tensor *ts[] = {j->W, j->R, j->B, j->h0, j->c0, j->P};
    const char *names[] = {"W", "R", "B", "initial_h", "initial_c", "P"};
    for (int i = 0; i < 6; i++)
        if (ts[i] && ts[i]->dtype != j->dt)
            return onyx_error(ONYX_ERR_SHAPE, "%s has type %s, expected %s", names[i],
                              onyx_dtype_name(ts[i]->dtype), onyx_dtype_name(j->dt));
    TRY(check_dims(j->W, 1, "W", 3, wd));
    TRY(check_dims(j->R, 2, "R", 3, rd));
    if (j->B) TRY(check_dims(j->B, 3, "B", 2, bd));
    if (j->h0) TRY(check_dims(j->h0, 5, "initial_h", 3, hd));
    if (j->c0) TRY(check_dims(j->c0, 6, "initial_c", 3, hd));
    if (j->P) TRY(check_dims(j->P, 7, "P", 2, pd));
    if (lens) {
        if (lens->dtype != ONYX_INT32)
            return onyx_error(ONYX_ERR_SHAPE, "input 4 (sequence_lens) has type %s, expected "
                              "int32", onyx_dtype_name(lens->dtype));
        TRY(check_dims(lens, 4, "sequence_lens", 1, &j->batch));
        j->lens = lens->data;
        for (int64_t b = 0; b < batch; b++)
            if (j->lens[b] < 0 || j->lens[b] > j->seq)
                return onyx_error(ONYX_ERR_SHAPE, "sequence_lens[%lld] is %d, expected 0..%lld",
                                  (long long)b, (int)j->lens[b], (long long)j->seq);
    }
    int64_t yd[4] = {j->seq, nd, batch, H};
    if (a->layout) yd[0] = batch, yd[1] = j->seq, yd[2] = nd;
    if (j->Y && (j->Y->rank != 4 || memcmp(j->Y->dims, yd, sizeof yd)))
        return onyx_error(ONYX_ERR_SHAPE, "output Y does not have the expected shape");
    if ((j->Yh && (j->Yh->rank != 3 || memcmp(j->Yh->dims, hd, sizeof hd))) ||
        (j->Yc && (j->Yc->rank != 3 || memcmp(j->Yc->dims, hd, sizeof hd))))
        return onyx_error(ONYX_ERR_SHAPE, "output Y_h or Y_c does not have the expected shape");
    int64_t sb;
    if (__builtin_mul_overflow(j->seq, batch, &sb) || !cpu_blas_dims_ok(sb, GH, j->in) ||
        !cpu_blas_dims_ok(batch, GH, H))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "dims exceed BLAS's int range");
    return ONYX_OK;
}

/* Prepare only checks the attributes: the working memory comes from the run context's scratch
 * (kernel_scratch), so there is no state for concurrent runs to share. */
static onyx_status rnn_prepare(const kernel_prep *p, rnn_cell cell, void **state) {
    rnn_attrs a;
    TRY(rnn_parse_attrs(p->node, cell, &a));
    *state = NULL;
    return ONYX_OK;
}

static onyx_status rnn_run(const kernel_call *c, rnn_cell cell) {
    rnn_job j;
    TRY(job_setup(c, cell, &j));
    size_t bytes;
    if (!scratch_bytes(&j, &bytes)) return onyx_error(ONYX_ERR_UNSUPPORTED, "RNN scratch size "
                                                      "overflows");
    void *buf;
    TRY(kernel_scratch(c, bytes ? bytes : 1, &buf));
    /* steps past a sequence's length leave zeros in Y */
    if (j.Y && j.lens && j.Y->nbytes) memset(j.Y->data, 0, j.Y->nbytes);
    if (j.dt == ONYX_DOUBLE) layer_f64(&j, buf);
    else layer_f32(&j, buf);
    return ONYX_OK;
}

void cpu_rnn_release(void *state) { (void)state; }

onyx_status cpu_rnn_prepare(const kernel_prep *p, void **state) {
    return rnn_prepare(p, RNN_CELL_RNN, state);
}
onyx_status cpu_gru_prepare(const kernel_prep *p, void **state) {
    return rnn_prepare(p, RNN_CELL_GRU, state);
}
onyx_status cpu_lstm_prepare(const kernel_prep *p, void **state) {
    return rnn_prepare(p, RNN_CELL_LSTM, state);
}
onyx_status cpu_rnn_run(const kernel_call *c) { return rnn_run(c, RNN_CELL_RNN); }
onyx_status cpu_gru_run(const kernel_call *c) { return rnn_run(c, RNN_CELL_GRU); }
onyx_status cpu_lstm_run(const kernel_call *c) { return rnn_run(c, RNN_CELL_LSTM); }
