#include "kernels_cpu/common/post_vmath.h"

#include "core/parallel.h"
#include "kernels_cpu/common/vmath.h"

/* Elements per task: a few of them per thread even on small outputs, each long enough for the
 * vector loops. */
#define GRAIN 8192

int cpu_post_vmath_tail(const fuse_chain *chain) {
    if (!chain || chain->n < 1) return -1;
    switch (chain->ops[chain->n - 1].kind) {
    case FUSE_SWISH:
    case FUSE_GELU:
    case FUSE_TANH: return chain->n - 1;
    default: return -1;
    }
}

int cpu_post_vmath_conv_tail(const fuse_chain *chain) {
    int tail = cpu_post_vmath_tail(chain);
    if (tail >= 0 && chain->ops[tail].kind == FUSE_SWISH && __builtin_cpu_is("intel") &&
        __builtin_cpu_supports("avx512f"))
        return -1;
    return tail;
}

typedef struct apply_job {
    const fuse_op *op;
    const cpu_vmath *vm;
    float *y;
    int64_t n;
} apply_job;

static void apply_range(void *ctx, int64_t b, int64_t e) {
    const apply_job *j = ctx;
    float *y = j->y + b * GRAIN;
    int64_t n = (e * GRAIN < j->n ? e * GRAIN : j->n) - b * GRAIN;
    switch (j->op->kind) {
    case FUSE_SWISH: j->vm->swish(y, y, n, j->op->alpha); break;
    case FUSE_GELU: (j->op->alpha != 0.f ? j->vm->gelu_tanh : j->vm->gelu)(y, y, n); break;
    case FUSE_TANH: j->vm->tanh(y, y, n); break;
    default: break;
    }
}

void cpu_post_vmath_apply(const fuse_op *op, float *y, int64_t n) {
    if (n <= 0) return;
    apply_job j = {op, cpu_vmath_get(), y, n};
    parallel_for((n + GRAIN - 1) / GRAIN, 1, apply_range, &j);
}
