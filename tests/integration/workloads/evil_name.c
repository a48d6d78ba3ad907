/* evil_name.c - a process whose name is a terminal escape sequence: it sets
 * its comm with PR_SET_NAME to ESC [2J (clear the screen), a carriage
 * return and a bell, then spins for argv[1] seconds (default 1). The tools
 * must print that name as text, never send it to the terminal. */
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void evil_spin(double seconds)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	prctl(PR_SET_NAME, "\x1b[2J\rpwn\a", 0, 0, 0);
	evil_spin(argc > 1 ? atof(argv[1]) : 1);
	return 0;
}
