/* Helpers the control-flow, sequence and optional CPU kernels share: element copies that work
 * for every dtype (strings, sub-byte), scalar reads of untrusted inputs, and axis slicing. */
#ifndef ONYX_KERNELS_CPU_CONTROL_UTIL_H
#define ONYX_KERNELS_CPU_CONTROL_UTIL_H

#include "core/kernel.h"

/* Copies `outer` blocks of `inner` elements: block o goes from src element soff + o*sstride to
 * dst element doff + o*dstride. Same dtype; strings are duplicated, sub-byte types moved element
 * by element. dst must be owned when it holds strings. */
onyx_status cpu_ctl_copy_blocks(tensor *dst, int64_t doff, int64_t dstride, const tensor *src,
                                int64_t soff, int64_t sstride, int64_t outer, int64_t inner);

/* Reads a one-element int32/int64 tensor (`what` names it in errors). */
onyx_status cpu_ctl_read_index(const onyx_value *v, const char *what, int64_t *out);
/* Reads a one-element bool tensor. */
onyx_status cpu_ctl_read_bool(const onyx_value *v, const char *what, bool *out);

/* Products of dims before / after `axis`. */
int64_t cpu_ctl_outer(const tensor *t, int axis);
int64_t cpu_ctl_inner(const tensor *t, int axis);

/* Makes `dst` the slice of `src` at `index` along `axis` (that axis removed): borrowed when the
 * slice is contiguous and byte-aligned, else copied into dst, which is reused when it already
 * is an owned tensor of the right shape. */
onyx_status cpu_ctl_slice(onyx_value *dst, const tensor *src, int axis, int64_t index);

/* "tensor" / "sequence" / "optional" / "none" for messages. */
const char *cpu_ctl_kind_name(const onyx_value *v);

#endif
