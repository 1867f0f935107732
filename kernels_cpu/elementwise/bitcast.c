/* CPU kernel of BitCast: the bytes are copied unchanged (onyx stores every type little endian and
 * sub-byte types packed as ONNX does, so equal widths mean equal storage). */
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

onyx_status cpu_bitcast_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->nbytes != y->nbytes)
        return onyx_error(ONYX_ERR_SHAPE, "input has %zu bytes, output %zu", x->nbytes, y->nbytes);
    if (y->data != x->data && x->nbytes) memcpy(y->data, x->data, x->nbytes);
    return ONYX_OK;
}
