/* spin.h - the busy loop of the hostile test's workloads: SPIN(name)
 * defines void name(double seconds), kept out of line under its own name,
 * which spins for that long of wall time. */
#ifndef LCPI_WORKLOADS_SPIN_H
#define LCPI_WORKLOADS_SPIN_H

#include <time.h>

static volatile unsigned long spin_sink;

#define SPIN(name)                                                                         \
  __attribute__((noinline)) void name(double seconds) {                                    \
    struct timespec start, now;                                                            \
    clock_gettime(CLOCK_MONOTONIC, &start);                                                \
    do {                                                                                   \
      for (int i = 0; i < 1000; i++) spin_sink += (unsigned long)i;                        \
      clock_gettime(CLOCK_MONOTONIC, &now);                                                \
    } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds); \
  }

#endif
