/* versioned.c - one program built several times under different names
 * (-DNAME=reuse_a, reuse_b, replaced_v1, replaced_v2): each build spins in
 * its own NAME_work function for argv[1] seconds, so each has its own
 * symbol and its own build-id. The pid-reuse and replaced-binary tests tell
 * the builds apart by both. */
#include <stdlib.h>
#include <time.h>

#ifndef NAME
#error "build with -DNAME=..."
#endif
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define WORK CAT(NAME, _work)

static volatile unsigned long sink;

__attribute__((noinline)) void WORK(double seconds)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 10000; i++)
			sink = sink * 31 + (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	WORK(argc > 1 ? atof(argv[1]) : 1);
	return 0;
}
