/* A node's resolved parameters (as ggml's op_params): the geometry its schema computes once, when
 * a plan infers the node's shapes, kept with the node's plan step and handed to every device's
 * kernel through kernel_prep and kernel_call (core/kernel.h). Kernels read it and never derive it
 * again from the attributes. A plan's parameters are read-only; where they have unknown dims (a
 * generic plan), each run resolves them again from its own inputs, for that run alone. */
#ifndef ONYX_CORE_OP_PARAMS_H
#define ONYX_CORE_OP_PARAMS_H

#include "geometry/window.h"

typedef enum op_params_kind {
    OP_PARAMS_NONE = 0,   /* the schema resolves nothing for its kernels */
    OP_PARAMS_UNRESOLVED, /* a plan's step of an OP_GEOMETRY schema that resolved none yet
                             (inputs of unknown type or rank): each run resolves what it gives */
    OP_PARAMS_WINDOW,     /* convolutions and pools: geometry/window.h's geom_window */
} op_params_kind;

typedef struct op_params {
    op_params_kind kind;
    union {
        geom_window window;
    } u;
} op_params;

/* Whether p holds no unknown dim: the same for every run of the plan. */
static inline bool op_params_known(const op_params *p) {
    switch (p->kind) {
    case OP_PARAMS_WINDOW: return geom_window_known(&p->u.window);
    case OP_PARAMS_UNRESOLVED: return false;
    case OP_PARAMS_NONE: break;
    }
    return true;
}

/* p's window, or NULL when p is NULL or holds another kind. */
static inline const geom_window *op_params_window(const op_params *p) {
    return p && p->kind == OP_PARAMS_WINDOW ? &p->u.window : NULL;
}

#endif
