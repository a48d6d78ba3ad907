/* exec_second.c - exec'd by exec_first: spins in second_work for argv[1] seconds. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void second_work(double seconds)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 10000; i++)
			sink ^= (unsigned long)i * 7;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	second_work(argc > 1 ? atof(argv[1]) : 1);
	return 0;
}
