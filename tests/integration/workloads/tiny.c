/* tiny.c - a short-lived process: spins in tiny_spin for argv[1] ms (default 4),
 * then exits. The storm test execs hundreds of these from a shell loop.
 * Built for arm64 with TINY_COUNTER_CLOCK (the arm64 guest's storm,
 * lcpi_kmod_storm), it reads the time from the generic timer's virtual
 * counter itself, as the vDSO does, so that its user-mode samples fall in
 * its own static text and not in the vDSO, which the checker cannot see
 * (and not after system calls either: under QEMU their interrupts land on
 * the instruction after the return). */
#include <stdlib.h>
#include <time.h>
#ifdef TINY_COUNTER_CLOCK
static void counter_time(struct timespec *ts)
{
	unsigned long cnt, frq;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(cnt));
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(frq));
	ts->tv_sec = (time_t)(cnt / frq);
	ts->tv_nsec = (long)((cnt % frq) * 1000000000UL / frq);
}
#define clock_gettime(clk, ts) counter_time(ts)
#endif

static volatile unsigned long sink;

__attribute__((noinline)) void tiny_spin(double ms)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1e3 + (now.tv_nsec - start.tv_nsec) / 1e6 < ms);
}

int main(int argc, char **argv)
{
	tiny_spin(argc > 1 ? atof(argv[1]) : 4);
	return 0;
}
