/* Schema of STFT: the short-time Fourier transform of signal [batch, length, 1|2] in frames of
 * frame_length every frame_step samples, optionally windowed: [batch, frames, bins, 2]. */
#include "ops/signal/signal_common.h"

#include <inttypes.h>
#include <string.h>

onyx_status ops_stft_plan_make(const graph_node *n, int rank, const int64_t *dims,
                               const tensor *frame_step, const tensor *window,
                               const tensor *frame_length, ops_stft_plan *p) {
    if (rank != 3 || (dims[2] != 1 && dims[2] != 2))
        return onyx_error(ONYX_ERR_SHAPE, "signal must be [batch, length, 1 or 2], got rank %d",
                          rank);
    p->batch = dims[0];
    p->length = dims[1];
    p->real_in = dims[2] == 1;
    p->onesided = attr_int(n, "onesided", 1) != 0;
    TRY(ops_scalar_int(frame_step, "frame_step", &p->step));
    if (p->step < 1)
        return onyx_error(ONYX_ERR_SHAPE, "frame_step is %" PRId64 ", expected > 0", p->step);
    if (window && window->rank != 1)
        return onyx_error(ONYX_ERR_SHAPE, "window has rank %d, expected 1", window->rank);
    if (frame_length && frame_length->numel > 0) {
        TRY(ops_scalar_int(frame_length, "frame_length", &p->frame_length));
        if (window && window->dims[0] != p->frame_length)
            return onyx_error(ONYX_ERR_SHAPE,
                              "window has %" PRId64 " values, frame_length is %" PRId64,
                              window->dims[0], p->frame_length);
    } else if (window) {
        p->frame_length = window->dims[0];
    } else {
        p->frame_length = p->length;
    }
    if (p->frame_length < 1 || p->frame_length > p->length)
        return onyx_error(ONYX_ERR_SHAPE,
                          "frame_length is %" PRId64 ", expected 1..%" PRId64 " (signal length)",
                          p->frame_length, p->length);
    p->frames = 1 + (p->length - p->frame_length) / p->step;
    p->bins = p->onesided ? p->frame_length / 2 + 1 : p->frame_length;
    return ONYX_OK;
}

static onyx_status stft_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 0, DT_FLOATS));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    const type_info *x = c->in[0];
    bool has_win = c->n_in > 2 && c->in[2], has_len = c->n_in > 3 && c->in[3];
    if (has_win && c->in[2]->dtype != ONYX_UNDEFINED && x->dtype != ONYX_UNDEFINED &&
        c->in[2]->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "window has type %s, expected %s like the signal",
                          onyx_dtype_name(c->in[2]->dtype), onyx_dtype_name(x->dtype));
    if (has_len) TRY(infer_dtype_in(c, 3, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    if (x->rank >= 0 && x->rank != 3)
        return onyx_error(ONYX_ERR_SHAPE, "signal has rank %d, expected 3", x->rank);
    const tensor *step = c->in_value ? c->in_value[1] : NULL;
    const tensor *len = has_len && c->in_value ? c->in_value[3] : NULL;
    bool known = x->rank == 3 && step && (!has_len || len) && x->dims[1] >= 0 && x->dims[2] >= 0;
    /* only the window's length matters, which its type carries */
    tensor win;
    memset(&win, 0, sizeof win);
    if (has_win) {
        const type_info *w = c->in[2];
        if (w->rank != 1 || w->dims[0] < 0) known = false;
        else {
            win.rank = 1;
            win.dims[0] = w->dims[0];
        }
    }
    if (!known) {
        type_set_tensor(&c->out[0], x->dtype, 4, NULL);
        c->out[0].dims[0] = x->rank == 3 ? x->dims[0] : -1;
        c->out[0].dims[3] = 2;
        return ONYX_OK;
    }
    ops_stft_plan p;
    TRY(ops_stft_plan_make(c->node, x->rank, x->dims, step, has_win ? &win : NULL, len, &p));
    int64_t dims[4] = {x->dims[0], p.frames, p.bins, 2};
    type_set_tensor(&c->out[0], x->dtype, 4, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"onesided", ATTR_INT}, {NULL, 0}};

const op_schema op_STFT[] = {{"", "STFT", 17, 2, 4, 1, 1, attrs, stft_infer, 0}, OP_END};
