/* exec_first.c - spins in first_work for argv[2] seconds, then execs argv[1]
 * (exec_second) in the same process: its samples belong to both images. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void first_work(double seconds)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	first_work(atof(argv[2]));
	execl(argv[1], argv[1], argv[2], (char *)NULL);
	return 1;
}
