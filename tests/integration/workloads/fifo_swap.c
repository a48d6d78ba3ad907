/* fifo_swap.c - a hostile program: it moves its own file aside and leaves a
 * FIFO at its path (whoever opens that path to read it waits for a writer
 * that never comes), then spins in fifo_spin for argv[1] ms (default 2000)
 * and exits. Linked without a build-id, so a profiler that wants its
 * identity must open the file. Run it from a directory its user owns. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void fifo_spin(double ms)
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
	char self[PATH_MAX], aside[PATH_MAX + 8];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = 0;
	snprintf(aside, sizeof(aside), "%s.aside", self);
	if (rename(self, aside) != 0 || mkfifo(self, 0644) != 0) {
		perror(self);
		return 1;
	}
	fifo_spin(argc > 1 ? atof(argv[1]) : 2000);
	return 0;
}
