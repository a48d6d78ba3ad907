/*
 * sled.c - runs through 16 MiB of straight-line code (no-ops ending in a
 * return) for ARGV[1] seconds, so its samples land on millions of distinct
 * offsets of one image: a few minutes of sampling fill one merge batch with
 * a million entries (merge_test.cpp).
 *
 * SLED_VARIANT makes copies that are distinct images (another build-id):
 * samples on this VM land mostly on one offset in 64 (where the CPU takes
 * the timer interrupt in a run of no-ops), so one sled offers about 262,000
 * likely offsets, and a million entries come sooner from four images.
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

#ifndef SLED_VARIANT
#define SLED_VARIANT 0
#endif
/* Read by main, so each variant's file (and build-id) differs. */
static volatile const int variant = SLED_VARIANT;

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);

	(void)variant;
	while (time(NULL) < end)
		for (int i = 0; i < 16; i++)
			sled();
	return 0;
}
