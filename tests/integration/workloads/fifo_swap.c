/* fifo_swap.c - a hostile program: it moves its own file aside and leaves a
 * FIFO at its path (whoever opens that path to read it waits for a writer
 * that never comes), then spins in fifo_spin for argv[1] ms (default 2000)
 * and exits. Linked without a build-id, so a profiler that wants its
 * identity must open the file. Run it from a directory its user owns. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spin.h"

SPIN(fifo_spin)

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
	fifo_spin((argc > 1 ? atof(argv[1]) : 2000) / 1000);
	return 0;
}
