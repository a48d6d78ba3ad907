/* perf_map_spin.c - a JIT's likeness for the hostile test: it maps an
 * anonymous executable page holding a branch to itself, writes each further
 * argument as a line of /tmp/perf-PID.map (what a hostile map may say;
 * with none, a line naming the page jit_spin), and spins in the page until
 * SECONDS pass (SIGALRM ends it).
 *
 *   perf_map_spin SECONDS [LINE...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
#if defined(__x86_64__) || defined(__i386__)
	static const unsigned char self_branch[] = {0xeb, 0xfe}; /* jmp . */
#elif defined(__aarch64__)
	static const unsigned char self_branch[] = {0x00, 0x00, 0x00, 0x14}; /* b . */
#else
#error "perf_map_spin: no self branch for this architecture"
#endif
	const long page = sysconf(_SC_PAGESIZE);
	char path[64];
	unsigned char *code;
	FILE *map;

	if (argc < 2) {
		fprintf(stderr, "usage: perf_map_spin SECONDS [LINE...]\n");
		return 2;
	}
	code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(code, self_branch, sizeof(self_branch));
	__builtin___clear_cache((char *)code, (char *)code + sizeof(self_branch));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map) {
		perror(path);
		return 1;
	}
	if (argc == 2)
		fprintf(map, "%lx %lx jit_spin\n", (unsigned long)code, (unsigned long)page);
	for (int i = 2; i < argc; i++)
		fprintf(map, "%s\n", argv[i]);
	fclose(map);
	alarm((unsigned)atoi(argv[1]));
	((void (*)(void))code)();
	return 0;
}
