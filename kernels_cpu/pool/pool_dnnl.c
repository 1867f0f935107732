/* oneDNN pooling for float32 MaxPool/AveragePool and int8/uint8 MaxPool over plain NC(D)(H)W
 * memory (or channels last, for tensors kept in the convolutions' opaque layout): the light CNNs
 * spend their pooling time here, and oneDNN's kernels beat scalar loops. */
#include <stdlib.h>

#include "kernels_cpu/common/dnnl_util.h"
#include "kernels_cpu/pool/pool.h"

/* The engine and the per-thread streams come from dnnl_util. The primitive (user scratchpad
 * mode) is shared by concurrent runs; the memories, bound to a run's buffers each time, belong
 * to one run context (cpu_pool_dnnl_mem). */
struct cpu_pool_dnnl {
    dnnl_primitive_t prim;
    dnnl_memory_desc_t src_md, dst_md, pad_md;
    size_t pad_size;
};

struct cpu_pool_dnnl_mem {
    dnnl_memory_t src, dst, pad;
};

void cpu_pool_dnnl_free(cpu_pool_dnnl *d) {
    if (!d) return;
    if (d->prim) dnnl_primitive_destroy(d->prim);
    if (d->src_md) dnnl_memory_desc_destroy(d->src_md);
    if (d->dst_md) dnnl_memory_desc_destroy(d->dst_md);
    if (d->pad_md) dnnl_memory_desc_destroy(d->pad_md);
    free(d);
}

void cpu_pool_dnnl_mem_free(cpu_pool_dnnl_mem *m) {
    if (!m) return;
    if (m->src) dnnl_memory_destroy(m->src);
    if (m->dst) dnnl_memory_destroy(m->dst);
    if (m->pad) dnnl_memory_destroy(m->pad);
    free(m);
}

onyx_status cpu_pool_dnnl_mem_create(const cpu_pool_dnnl *d, cpu_pool_dnnl_mem **out) {
    cpu_pool_dnnl_mem *m = calloc(1, sizeof *m);
    if (!m) return onyx_oom("oneDNN pooling memories");
    onyx_status st = cpu_dnnl_memory(&m->src, d->src_md);
    if (st == ONYX_OK) st = cpu_dnnl_memory(&m->dst, d->dst_md);
    if (st == ONYX_OK && d->pad_size) st = cpu_dnnl_memory(&m->pad, d->pad_md);
    if (st != ONYX_OK) {
        cpu_pool_dnnl_mem_free(m);
        return st;
    }
    *out = m;
    return ONYX_OK;
}

size_t cpu_pool_dnnl_scratch(const cpu_pool_dnnl *d) { return d->pad_size; }

onyx_status cpu_pool_dnnl_create(onyx_dtype dt, const spatial_params *p, bool max,
                                 bool include_pad, bool channels_last, const int64_t *in,
                                 const int64_t *out, cpu_pool_dnnl **res) {
    *res = NULL;
    dnnl_data_type_t ddt = dt == ONYX_FLOAT ? dnnl_f32 : dt == ONYX_INT8 ? dnnl_s8
                           : dt == ONYX_UINT8 ? dnnl_u8 : dnnl_data_type_undef;
    if (ddt == dnnl_data_type_undef || (ddt != dnnl_f32 && !max)) return ONYX_OK;
    dnnl_engine_t engine;
    if (cpu_dnnl_engine(&engine) != ONYX_OK) {
        onyx_error_clear(); /* no oneDNN: the loops do the work */
        return ONYX_OK;
    }
    int nd = p->nd, rank = nd + 2;
    dnnl_dims_t strides, kernel, dil, pl, pr;
    for (int i = 0; i < rank; i++)
        if (in[i] > INT32_MAX || out[i] > INT32_MAX) return ONYX_OK;
    for (int i = 0; i < nd; i++) {
        strides[i] = p->stride[i];
        kernel[i] = p->kernel[i];
        dil[i] = p->dilation[i] - 1; /* oneDNN counts dilation from 0 */
        pl[i] = p->pad_begin[i];
        /* oneDNN wants pads that give the output size with floor division; a ceil_mode output
         * needs a larger right pad, which is harmless for max and for averages that exclude
         * padding, but would be counted by averages that include it */
        int64_t need = (out[2 + i] - 1) * p->stride[i] +
                       (p->kernel[i] - 1) * p->dilation[i] + 1 - in[2 + i] - p->pad_begin[i];
        pr[i] = need > p->pad_end[i] ? need : p->pad_end[i];
        if (pr[i] != p->pad_end[i] && !max && include_pad) return ONYX_OK;
        if (pl[i] >= (p->kernel[i] - 1) * p->dilation[i] + 1 ||
            pr[i] >= (p->kernel[i] - 1) * p->dilation[i] + 1)
            return ONYX_OK;
    }
    cpu_pool_dnnl *d = calloc(1, sizeof *d);
    if (!d) return onyx_oom("oneDNN pooling");
    onyx_status (*md)(dnnl_memory_desc_t *, int, const int64_t *, dnnl_data_type_t) =
        channels_last ? cpu_dnnl_md_channels_last : cpu_dnnl_md_plain;
    dnnl_alg_kind_t alg = max ? dnnl_pooling_max
                          : include_pad ? dnnl_pooling_avg_include_padding
                                        : dnnl_pooling_avg_exclude_padding;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    onyx_status st = ONYX_OK;
    /* Anything oneDNN does not take leaves the work to the loops: no error. */
    bool ok = md(&d->src_md, rank, in, ddt) == ONYX_OK && md(&d->dst_md, rank, out, ddt) == ONYX_OK;
    if (ok && (st = cpu_dnnl_attr(&attr)) != ONYX_OK) goto done;
    ok = ok && dnnl_guard_pooling_pd(&pd, engine, dnnl_forward_inference, alg, d->src_md,
                                     d->dst_md, strides, kernel, dil, pl, pr, attr) == dnnl_success;
    if (ok && (d->pad_size = cpu_dnnl_scratchpad(pd, &d->pad_md)) == SIZE_MAX) {
        st = onyx_oom("oneDNN pooling scratchpad descriptor");
        goto done;
    }
    ok = ok && dnnl_guard_primitive_create(&d->prim, pd) == dnnl_success;
    if (ok) {
        *res = d;
        d = NULL;
    } else {
        onyx_error_clear();
    }
done:
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (pd) dnnl_primitive_desc_destroy(pd);
    cpu_pool_dnnl_free(d);
    return st;
}

onyx_status cpu_pool_dnnl_run(const cpu_pool_dnnl *d, cpu_pool_dnnl_mem *m, const void *x,
                              void *y, void *scratch) {
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, m->src}, {DNNL_ARG_DST, m->dst}};
    int n = 2;
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->src, (void *)x), "binding pooling input"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->dst, y), "binding pooling output"));
    if (m->pad) {
        TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->pad, scratch), "binding the scratchpad"));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, m->pad};
    }
    return cpu_dnnl_execute(d->prim, n, args);
}
