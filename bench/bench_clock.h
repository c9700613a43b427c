/* What the host-side benchmarks share: a monotonic clock in microseconds and the comparison that
 * sorts timings for a median. */
#ifndef RJ_BENCH_CLOCK_H
#define RJ_BENCH_CLOCK_H

#include <time.h>

static inline double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* qsort's comparison of two doubles, ascending. */
static inline int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#endif
