/* clock_loop.c - asks the time in a tight loop for SECONDS (default 3):
 * clock_gettime runs in the kernel's vDSO, with no system call, so most of
 * this program's samples lie in [vdso]. The coarse clock: it reads no
 * clocksource, so its samples lie in clock_gettime itself, whatever the
 * host's clocksource (with kvm-clock, CLOCK_MONOTONIC spent 86 % of them in
 * the vDSO's pvclock reader, a local function no symbol names). */
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 3.0;
  struct timespec start, now;
  long long sink = 0;

  clock_gettime(CLOCK_MONOTONIC_COARSE, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    sink += now.tv_nsec & 1;
  } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
  return sink == -1;
}
