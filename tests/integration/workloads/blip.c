/* blip.c - the smallest useful process: statically linked (exec is cheap, no
 * shared libraries to map), spins in blip_spin for argv[1] microseconds
 * (default 1000), exits. The churn test runs 10,000 of these. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void blip_spin(long us)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 200; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

int main(int argc, char **argv)
{
	blip_spin(argc > 1 ? atol(argv[1]) : 1000);
	return 0;
}
