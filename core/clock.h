/* The clock of run deadlines and profiles (core/clock.c). */
#ifndef ONYX_CORE_CLOCK_H
#define ONYX_CORE_CLOCK_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC (the clock of run_control.deadline_ns). */
int64_t exec_now_ns(void);

#endif
