/*
 * sled.c - runs through 16 MiB of straight-line code (no-ops ending in a
 * return) for ARGV[1] seconds, so its samples land on millions of distinct
 * offsets of one image: a few minutes of sampling fill one merge batch with
 * a million entries (merge_test.cpp).
 */
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__)
__asm__(".text\n.globl sled\n.type sled, @function\nsled:\n"
	".fill 0x1000000, 1, 0x90\n"
	"ret\n.size sled, . - sled\n");
#elif defined(__aarch64__)
__asm__(".text\n.globl sled\n.type sled, %function\nsled:\n"
	".fill 0x400000, 4, 0xd503201f\n"
	"ret\n.size sled, . - sled\n");
#else
#error "sled.c: no nop for this architecture"
#endif

void sled(void);

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);

	while (time(NULL) < end)
		for (int i = 0; i < 16; i++)
			sled();
	return 0;
}
