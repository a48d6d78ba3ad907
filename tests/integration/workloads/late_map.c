/* late_map.c - maps a file executable only after a while: opens FILE and
 * reads it whole (so its pages are cached), waits DELAY_MS, maps it with
 * PROT_EXEC (a new executable mapping a profiler sees then, of a file it
 * has not seen), then spins in late_spin for SECONDS. A test stops the file
 * system FILE is on during the wait: the profiler finds it hung.
 *
 *   late_map FILE DELAY_MS SECONDS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spin.h"

SPIN(late_spin)

int main(int argc, char **argv)
{
	char buf[65536];
	struct stat st;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: late_map FILE DELAY_MS SECONDS\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(argv[1]);
		return 1;
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	usleep((useconds_t)atoi(argv[2]) * 1000);
	if (mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	late_spin(atof(argv[3]));
	return 0;
}
