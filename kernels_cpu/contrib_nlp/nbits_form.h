/* The form in which CPU kernels read a constant MatMulNBits weight (B, its scales and zero
 * points): chosen once, in kernels_cpu/contrib_nlp/matmulnbits.c, as MatMulNBits chooses it for
 * its accuracy_level, so that every kernel reading one weight (the product, and ai.onyx
 * GatherNBits reading a tied embedding's rows) shares one copy of it. */
#ifndef ONYX_KERNELS_CPU_NBITS_FORM_H
#define ONYX_KERNELS_CPU_NBITS_FORM_H

#include "core/kernel.h"
#include "kernels_cpu/contrib_nlp/nbits_i8.h"
#include "ops/contrib_nlp/contrib_nlp.h"

typedef struct nbits_form {
    const nb_weight *w;        /* block tables over B as stored (B then read as stored), or NULL */
    const nbi8_pack *pack;     /* the int8 repack (B then read only through it), or NULL */
    nbi8_isa isa;              /* pack's kernels */
} nbits_form;

/* The form of the weight at inputs b_in (B), s_in (scales) and z_in (zero points, may be absent)
 * for accuracy_level `level`, shared by every kernel of the rep that asks with the same weight:
 * the int8 repack at level 4 for 4-bit codes where this CPU runs the int8 kernels (the model's
 * copy of B may then be handed back), else the block tables. Neither when B, the scales or given
 * zero points are not constants. Refuses inputs whose sizes do not fit q. */
onyx_status nbits_form_prepare(const kernel_prep *p, const cnlp_nbits *q, int64_t level, int b_in,
                               int s_in, int z_in, nbits_form *out);

#endif
