/* CPU kernel of Einsum: equations that are a batched matrix product go to BLAS
 * (einsum_matmul.c); every other one runs one loop nest over every label (output labels outside,
 * summed labels inside) with per-input strides per label, so diagonals, broadcasting and any
 * contraction need no copies. Parallel over output elements; accumulates in double (integers in
 * wrapping uint64). */
#include <string.h>

#include "core/parallel.h"
#include "ops/math/einsum.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/math/einsum_matmul.h"

typedef struct einsum_job {
    int n_in;
    const void *x[EINSUM_MAX_INPUTS];
    void *y;
    int n_out, n_sum;                       /* labels in the output / summed */
    int64_t dim[EINSUM_MAX_LABELS];         /* by loop position */
    int64_t str[EINSUM_MAX_INPUTS][EINSUM_MAX_LABELS]; /* by loop position */
    int64_t nsum;                           /* summed combinations per output element */
} einsum_job;

#define DEFINE_EINSUM(N, T, ACC, LD, ST)                                                           \
    static void N##_einsum(void *ctx, int64_t b, int64_t e) {                                     \
        const einsum_job *j = ctx;                                                                 \
        for (int64_t o = b; o < e; o++) {                                                          \
            int64_t base[EINSUM_MAX_INPUTS] = {0}, rem = o;                                        \
            for (int d = j->n_out - 1; d >= 0; d--) {                                              \
                int64_t q = rem % j->dim[d];                                                       \
                rem /= j->dim[d];                                                                  \
                for (int i = 0; i < j->n_in; i++) base[i] += q * j->str[i][d];                     \
            }                                                                                      \
            int64_t cnt[EINSUM_MAX_LABELS] = {0}, off[EINSUM_MAX_INPUTS];                          \
            memcpy(off, base, sizeof off);                                                         \
            ACC acc = 0;                                                                           \
            for (int64_t s = 0; s < j->nsum; s++) {                                                \
                ACC prod = LD(((const T *)j->x[0])[off[0]]);                                       \
                for (int i = 1; i < j->n_in; i++) prod *= LD(((const T *)j->x[i])[off[i]]);       \
                acc += prod;                                                                       \
                for (int d = j->n_out + j->n_sum - 1; d >= j->n_out; d--) {                        \
                    for (int i = 0; i < j->n_in; i++) off[i] += j->str[i][d];                      \
                    if (++cnt[d] < j->dim[d]) break;                                               \
                    for (int i = 0; i < j->n_in; i++) off[i] -= j->str[i][d] * j->dim[d];          \
                    cnt[d] = 0;                                                                    \
                }                                                                                  \
            }                                                                                      \
            ((T *)j->y)[o] = ST(acc);                                                              \
        }                                                                                          \
    }

DEFINE_EINSUM(f32, float, double, (double), (float))
DEFINE_EINSUM(f64, double, double, (double), (double))
DEFINE_EINSUM(f16, uint16_t, double, cpu_f16_ld, cpu_f16_st)
DEFINE_EINSUM(bf16, uint16_t, double, cpu_bf16_ld, cpu_bf16_st)
#define INT_EINSUM(D, T) DEFINE_EINSUM(D, T, uint64_t, (uint64_t), (T))
CPU_FOR_INTS(INT_EINSUM)

onyx_status cpu_einsum(const kernel_call *c) {
    tensor *y = kernel_output(c, 0);
    const char *eq = attr_string(c->node, "equation", "");
    if (c->n_in < 1 || c->n_in > EINSUM_MAX_INPUTS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Einsum with %d inputs (onyx takes 1..%d)",
                          c->n_in, EINSUM_MAX_INPUTS);
    int ranks[EINSUM_MAX_INPUTS];
    const int64_t *dims[EINSUM_MAX_INPUTS];
    einsum_job j = {.n_in = c->n_in, .y = y->data};
    for (int i = 0; i < c->n_in; i++) {
        const tensor *t = kernel_input(c, i);
        if (!t || t->dtype != y->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d is missing or not of type %s", i,
                              onyx_dtype_name(y->dtype));
        ranks[i] = t->rank;
        dims[i] = t->dims;
        j.x[i] = t->data;
    }
    /* Parsed on every run rather than in a prepare: it is a pass over a few characters, next to
     * a loop nest over every product term, and it checks the labels against the real dims. */
    einsum_spec sp;
    TRY(einsum_parse(eq, c->n_in, ranks, dims, &sp));
    bool fits = y->rank == sp.out_len;
    for (int k = 0; fits && k < sp.out_len; k++) fits = y->dims[k] == sp.dim[sp.out_lab[k]];
    if (!fits) {
        char a[160];
        return onyx_error(ONYX_ERR_SHAPE, "output has shape %s, which the equation does not give",
                          shape_str(y->rank, y->dims, a, sizeof a));
    }
    bool done;
    TRY(cpu_einsum_matmul(c, &sp, &done));
    if (done) return ONYX_OK;
    void (*fn)(void *, int64_t, int64_t);
    switch (y->dtype) {
    case ONYX_FLOAT: fn = f32_einsum; break;
    case ONYX_DOUBLE: fn = f64_einsum; break;
    case ONYX_FLOAT16: fn = f16_einsum; break;
    case ONYX_BFLOAT16: fn = bf16_einsum; break;
#define CASE(D, T) case D: fn = D##_einsum; break;
        CPU_FOR_INTS(CASE)
#undef CASE
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "inputs have type %s, expected a numeric type",
                          onyx_dtype_name(y->dtype));
    }
    j.n_out = sp.out_len;
    j.n_sum = sp.n_labels - sp.out_len;
    j.nsum = 1;
    int pos[EINSUM_MAX_LABELS];
    for (int k = 0; k < sp.n_labels; k++) {
        pos[sp.order[k]] = k;
        j.dim[k] = sp.dim[sp.order[k]];
        if (k < sp.out_len) continue;
        if (j.dim[k] > 0 && j.nsum > INT64_MAX / j.dim[k])
            return onyx_error(ONYX_ERR_UNSUPPORTED, "Einsum sums over more than 2^63 terms");
        j.nsum *= j.dim[k];
    }
    for (int i = 0; i < c->n_in; i++) {
        const tensor *t = kernel_input(c, i);
        int64_t s = 1;
        for (int k = t->rank - 1; k >= 0; k--) {
            int l = pos[sp.in_lab[i][k]];
            /* a size-1 dim broadcast under "..." does not move */
            if (t->dims[k] != 1 || j.dim[l] == 1) j.str[i][l] += s;
            s *= t->dims[k];
        }
    }
    if (y->numel == 0) return ONYX_OK;
    parallel_for(y->numel, 16384 / (j.nsum + 1) + 1, fn, &j);
    return ONYX_OK;
}
