/* oneDNN glue: one engine per process, one stream per thread (streams are not shared between
 * threads), status translation, plain and channels-last descriptors and execution. */
#include "kernels_cpu/common/dnnl_util.h"

#include "core/fuse_chain.h"
#include "core/parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t engine;
static dnnl_status_t engine_status;
static pthread_key_t stream_key;

static void destroy_stream(void *s) { dnnl_stream_destroy(s); }

static void create_engine(void) {
    engine_status = dnnl_guard_engine_create(&engine, dnnl_cpu, 0);
    if (engine_status == dnnl_success && pthread_key_create(&stream_key, destroy_stream) != 0)
        engine_status = dnnl_out_of_memory;
}

onyx_status cpu_dnnl_check(dnnl_status_t s, const char *what) {
    switch (s) {
    case dnnl_success: return ONYX_OK;
    case dnnl_out_of_memory: return onyx_error(ONYX_ERR_NO_MEMORY, "oneDNN: %s: out of memory", what);
    case dnnl_unimplemented:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN: %s: this configuration is not "
                          "implemented", what);
    case dnnl_invalid_arguments:
        return onyx_error(ONYX_ERR_RUNTIME, "oneDNN: %s: invalid arguments", what);
    default: return onyx_error(ONYX_ERR_RUNTIME, "oneDNN: %s failed (status %d)", what, (int)s);
    }
}

onyx_status cpu_dnnl_engine(dnnl_engine_t *out) {
    pthread_once(&engine_once, create_engine);
    TRY(cpu_dnnl_check(engine_status, "creating the CPU engine"));
    *out = engine;
    return ONYX_OK;
}

static onyx_status thread_stream(dnnl_stream_t *out) {
    dnnl_engine_t e;
    TRY(cpu_dnnl_engine(&e));
    dnnl_stream_t s = pthread_getspecific(stream_key);
    if (!s) {
        TRY(cpu_dnnl_check(dnnl_guard_stream_create(&s, e, dnnl_stream_default_flags), "creating a stream"));
        if (pthread_setspecific(stream_key, s) != 0) {
            dnnl_stream_destroy(s);
            return onyx_oom("oneDNN stream");
        }
    }
    *out = s;
    return ONYX_OK;
}

/* oneDNN miscomputes dims of 2^31 and more (a convolution corrupted its heap under fuzzing):
 * no tensor with such a dim reaches it. */
static onyx_status dims_fit(int rank, const int64_t *dims) {
    for (int i = 0; i < rank; i++)
        if (dims[i] > INT32_MAX)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN: dim %d is %lld, it takes dims below "
                              "2^31", i, (long long)dims[i]);
    return ONYX_OK;
}

onyx_status cpu_dnnl_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                              dnnl_data_type_t dt) {
    if (rank < 1 || rank > DNNL_MAX_NDIMS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN: rank %d is not supported", rank);
    TRY(dims_fit(rank, dims));
    dnnl_dims_t d, strides;
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        d[i] = dims[i];
        strides[i] = s;
        s *= dims[i] > 0 ? dims[i] : 1;
    }
    return cpu_dnnl_check(dnnl_memory_desc_create_with_strides(md, rank, d, dt, strides),
                          "describing a tensor");
}

onyx_status cpu_dnnl_md_channels_last(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                                      dnnl_data_type_t dt) {
    if (rank < 3 || rank > 5)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN: no channels-last layout of rank %d", rank);
    TRY(dims_fit(rank, dims));
    dnnl_dims_t d;
    for (int i = 0; i < rank; i++) d[i] = dims[i];
    dnnl_format_tag_t tag = rank == 3 ? dnnl_nwc : rank == 4 ? dnnl_nhwc : dnnl_ndhwc;
    return cpu_dnnl_check(dnnl_memory_desc_create_with_tag(md, rank, d, dt, tag),
                          "describing a channels-last tensor");
}

onyx_status cpu_dnnl_attr(dnnl_primitive_attr_t *out) {
    dnnl_primitive_attr_t a = NULL;
    TRY(cpu_dnnl_check(dnnl_primitive_attr_create(&a), "creating attributes"));
    onyx_status st = cpu_dnnl_check(dnnl_primitive_attr_set_scratchpad_mode(a,
                                                                         dnnl_scratchpad_mode_user),
                                    "setting the scratchpad mode");
    if (st != ONYX_OK) {
        dnnl_primitive_attr_destroy(a);
        return st;
    }
    *out = a;
    return ONYX_OK;
}

size_t cpu_dnnl_scratchpad(const_dnnl_primitive_desc_t pd, dnnl_memory_desc_t *md) {
    const_dnnl_memory_desc_t q = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t size = q ? dnnl_memory_desc_get_size(q) : 0;
    *md = NULL;
    if (size && dnnl_memory_desc_clone(md, q) != dnnl_success) {
        *md = NULL;
        return SIZE_MAX;
    }
    return size;
}

onyx_status cpu_dnnl_reorder(const_dnnl_memory_desc_t from, const_dnnl_memory_desc_t to,
                             dnnl_primitive_t *prim, dnnl_memory_desc_t *pad, size_t *pad_size) {
    dnnl_engine_t eng;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    TRY(cpu_dnnl_engine(&eng));
    TRY(cpu_dnnl_attr(&attr));
    onyx_status st = cpu_dnnl_check(dnnl_guard_reorder_pd(&rpd, from, eng, to, eng, attr),
                                    "creating a reorder");
    dnnl_primitive_attr_destroy(attr);
    if (st != ONYX_OK) return st;
    dnnl_memory_desc_t pad_md = NULL;
    size_t size = cpu_dnnl_scratchpad(rpd, &pad_md);
    st = size == SIZE_MAX ? onyx_oom("reorder scratchpad descriptor")
                          : cpu_dnnl_check(dnnl_guard_primitive_create(prim, rpd), "creating a reorder");
    dnnl_primitive_desc_destroy(rpd);
    if (st != ONYX_OK) {
        dnnl_memory_desc_destroy(pad_md);
        return st;
    }
    *pad = pad_md;
    *pad_size = size;
    return ONYX_OK;
}

onyx_status cpu_dnnl_reorder_once(const_dnnl_memory_desc_t from, const void *src,
                                  const_dnnl_memory_desc_t to, void *dst) {
    onyx_status st = ONYX_OK;
    dnnl_primitive_t r = NULL;
    dnnl_memory_desc_t pad_md = NULL;
    dnnl_memory_t mf = NULL, mt = NULL, mp = NULL;
    size_t pad_size = 0;
    void *pad = NULL;
    dnnl_engine_t eng;
    CHECK(cpu_dnnl_engine(&eng));
    CHECK(cpu_dnnl_reorder(from, to, &r, &pad_md, &pad_size));
    CHECK(cpu_dnnl_check(dnnl_guard_memory_create(&mf, from, eng, (void *)src), "binding a reorder"));
    CHECK(cpu_dnnl_check(dnnl_guard_memory_create(&mt, to, eng, dst), "binding a reorder"));
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, mf}, {DNNL_ARG_TO, mt}};
    int n = 2;
    if (pad_size) {
        if (!(pad = cpu_dnnl_alloc(pad_size))) {
            st = onyx_oom("reorder scratchpad");
            goto done;
        }
        CHECK(cpu_dnnl_check(dnnl_guard_memory_create(&mp, pad_md, eng, pad), "binding a scratchpad"));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, mp};
    }
    CHECK(cpu_dnnl_execute(r, n, args));
done:
    if (mp) dnnl_memory_destroy(mp);
    if (mt) dnnl_memory_destroy(mt);
    if (mf) dnnl_memory_destroy(mf);
    if (pad_md) dnnl_memory_desc_destroy(pad_md);
    if (r) dnnl_primitive_destroy(r);
    free(pad);
    return st;
}

onyx_status cpu_dnnl_memory(dnnl_memory_t *out, const_dnnl_memory_desc_t md) {
    dnnl_engine_t e;
    TRY(cpu_dnnl_engine(&e));
    return cpu_dnnl_check(dnnl_guard_memory_create(out, md, e, DNNL_MEMORY_NONE), "creating a memory");
}

onyx_status cpu_dnnl_execute(dnnl_primitive_t prim, int nargs, const dnnl_exec_arg_t *args) {
    dnnl_stream_t s = NULL;
    TRY(thread_stream(&s));
    parallel_work_coming();
    dnnl_status_t st = dnnl_guard_execute_wait(prim, s, nargs, args);
    parallel_work_done();
    return cpu_dnnl_check(st, "executing a primitive");
}

bool cpu_dnnl_layout_of(const_dnnl_memory_desc_t md, cpu_dnnl_layout *out) {
    memset(out, 0, sizeof *out);
    dnnl_format_kind_t fk;
    dnnl_data_type_t dt;
    int32_t nd, nb;
    const dnnl_dims_t *dims, *pdims, *poffs, *strides, *blks, *idxs;
    if (dnnl_memory_desc_query(md, dnnl_query_format_kind, &fk) != dnnl_success ||
        fk != dnnl_blocked ||
        dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &nd) != dnnl_success ||
        nd < 0 || nd > DNNL_MAX_NDIMS ||
        dnnl_memory_desc_query(md, dnnl_query_data_type, &dt) != dnnl_success ||
        dnnl_memory_desc_query(md, dnnl_query_submemory_offset_s64, &out->offset0) !=
            dnnl_success ||
        dnnl_memory_desc_query(md, dnnl_query_dims, &dims) != dnnl_success ||
        dnnl_memory_desc_query(md, dnnl_query_padded_dims, &pdims) != dnnl_success ||
        dnnl_memory_desc_query(md, dnnl_query_padded_offsets, &poffs) != dnnl_success ||
        dnnl_memory_desc_query(md, dnnl_query_strides, &strides) != dnnl_success ||
        dnnl_memory_desc_query(md, dnnl_query_inner_nblks_s32, &nb) != dnnl_success ||
        nb < 0 || nb > DNNL_MAX_NDIMS ||
        dnnl_memory_desc_query(md, dnnl_query_inner_blks, &blks) != dnnl_success ||
        dnnl_memory_desc_query(md, dnnl_query_inner_idxs, &idxs) != dnnl_success) {
        memset(out, 0, sizeof *out);
        return false;
    }
    out->ndims = nd;
    out->data_type = (int32_t)dt;
    out->format_kind = (int32_t)fk;
    out->inner_nblks = nb;
    out->size = (int64_t)dnnl_memory_desc_get_size(md);
    memcpy(out->dims, *dims, sizeof(dnnl_dim_t) * (size_t)nd);
    memcpy(out->padded_dims, *pdims, sizeof(dnnl_dim_t) * (size_t)nd);
    memcpy(out->padded_offsets, *poffs, sizeof(dnnl_dim_t) * (size_t)nd);
    memcpy(out->strides, *strides, sizeof(dnnl_dim_t) * (size_t)nd);
    memcpy(out->inner_blks, *blks, sizeof(dnnl_dim_t) * (size_t)nb);
    memcpy(out->inner_idxs, *idxs, sizeof(dnnl_dim_t) * (size_t)nb);
    return true;
}

void *cpu_dnnl_alloc(size_t size) {
    size = (size + 63) / 64 * 64;
    return aligned_alloc(64, size ? size : 64);
}

onyx_status cpu_dnnl_post_ops(const fuse_chain *chain, dnnl_post_ops_t po) {
    return cpu_dnnl_post_ops_n(chain, chain->n, po);
}

onyx_status cpu_dnnl_post_ops_n(const fuse_chain *chain, int n, dnnl_post_ops_t po) {
    for (int i = 0; i < n && i < chain->n; i++) {
        const fuse_op *op = &chain->ops[i];
        dnnl_status_t r = dnnl_success;
        switch (op->kind) {
        case FUSE_BATCHNORM:
        case FUSE_SCALE:
        case FUSE_SHIFT: break; /* folded into the weights and bias by the kernel */
        case FUSE_RELU: r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_relu, op->alpha, 0.f); break;
        case FUSE_CLIP:
            r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_clip_v2, op->alpha, op->beta);
            break;
        case FUSE_SIGMOID: r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_logistic, 0.f, 0.f); break;
        case FUSE_TANH: r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_tanh, 0.f, 0.f); break;
        case FUSE_HARDSIGMOID:
            r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_linear, op->alpha, op->beta);
            if (r == dnnl_success)
                r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_clip_v2, 0.f, 1.f);
            break;
        case FUSE_SWISH: r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_swish, op->alpha, 0.f); break;
        case FUSE_HARDSWISH:
            /* oneDNN 3's hardswish is x * clip(alpha * x + beta, 0, 1) */
            r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_hardswish, 1.f / 6.f, 0.5f);
            break;
        case FUSE_GELU:
            r = dnnl_post_ops_append_eltwise(
                po, op->alpha != 0.f ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf, 0.f, 0.f);
            break;
        case FUSE_SUM: r = dnnl_post_ops_append_sum(po, 1.f, 0, dnnl_data_type_undef); break;
        case FUSE_LINEAR: r = dnnl_post_ops_append_eltwise(po, dnnl_eltwise_linear, op->alpha, 0.f); break;
        }
        TRY(cpu_dnnl_check(r, "adding a post-op"));
    }
    return ONYX_OK;
}
