/* shares.c - a workload with known shares of work: work60, work30 and work10
 * run the same loop for 60, 30 and 10 units of every 100, for argv[1] seconds.
 * Built with SHARES_ALT, the same shares with other names (alt60, alt30,
 * alt10) and other code (names alone live outside the loaded segments,
 * which an identity without build-id hashes): a different program. */
#include <stdlib.h>
#include <time.h>

#ifdef SHARES_ALT
#define work60 alt60
#define work30 alt30
#define work10 alt10
#define FACTOR 37
#else
#define FACTOR 31
#endif

static volatile unsigned long sink;

/* Each loop in one 64-byte block: the shares are of iterations, so the three
 * must run at one speed. Unaligned, gcc's work10 loop crossed a 64-byte
 * boundary and ran about 20 % slower on this AMD EPYC host (12-13 % of the
 * samples instead of 10, while clang's build, laid out otherwise, gave 10). */
#define WORK(name)                                               \
	__attribute__((noinline, aligned(64))) void name(long n) \
	{                                                        \
		for (long i = 0; i < n; i++)                     \
			sink = sink * FACTOR + (unsigned long)i; \
	}

WORK(work60)
WORK(work30)
WORK(work10)

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	struct timespec start, now;
	const long unit = 20000;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		work60(60 * unit);
		work30(30 * unit);
		work10(10 * unit);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return 0;
}
