/* map_flood.c - what a user can make lcpid keep of its mappings: maps an
 * anonymous executable page at MAPPINGS distinct addresses, one after the
 * other, unmapping each at once (the kernel holds one at a time; perf
 * reports each mmap and no munmap), then forks CHILDREN that sleep, and
 * sleeps until killed. Prints "ready" on stdout when all children run.
 * About 4 s for 150,000 mappings on a loaded host.
 *
 *   map_flood MAPPINGS CHILDREN */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

int main(int argc, char **argv)
{
	const uintptr_t base = (uintptr_t)1 << 40; /* far from anything mapped */
	long mappings, children, i;
	long page = sysconf(_SC_PAGESIZE);

	if (argc != 3) {
		fprintf(stderr, "usage: map_flood MAPPINGS CHILDREN\n");
		return 2;
	}
	mappings = strtol(argv[1], NULL, 10);
	children = strtol(argv[2], NULL, 10);
	for (i = 0; i < mappings; i++) {
		/* every other page: no two mappings adjoin (none merges) */
		void *at = (void *)(base + (uintptr_t)i * 2 * page);
		void *p = mmap(at, page, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		munmap(p, page);
		/* perf's side-band ring holds some 8,000 of these records: a
		 * pause lets lcpid read them rather than the kernel lose them */
		if (i % 512 == 511)
			usleep(200);
	}
	for (i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			for (;;)
				pause();
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
