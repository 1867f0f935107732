/* Helpers the signal-family CPU kernels share. */
#ifndef ONYX_KERNELS_CPU_SIGNAL_H
#define ONYX_KERNELS_CPU_SIGNAL_H

#include "core/value.h"

/* Stores v into element i of a float or integer tensor; integers truncate toward zero and
 * saturate (as numpy's astype of in-range values), NaN stores 0. */
void cpu_signal_store(tensor *t, int64_t i, double v);

#endif
