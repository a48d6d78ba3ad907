/* tiny.c - a short-lived process: spins in tiny_spin for argv[1] ms (default 4),
 * then exits. The storm test execs hundreds of these from a shell loop. */
#include <stdlib.h>
#include <time.h>

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
