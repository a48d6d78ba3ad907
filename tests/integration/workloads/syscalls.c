/* syscalls.c - spends its time in the kernel: reads /dev/zero in 64 KB
 * chunks for argv[1] seconds. */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct timespec start, now;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 100; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				return 1;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return 0;
}
