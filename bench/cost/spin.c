/*
 * lcpi-cost-spin - the cost bench's workload: one thread per online CPU,
 * each running the same fixed number of iterations of a small arithmetic
 * loop (no memory traffic, no system calls), so its CPU time is the same
 * from run to run but for what sampling interrupts add to it.
 *
 *   lcpi-cost-spin ITERATIONS [THREADS]
 *
 * Prints the loop's result so the compiler keeps the loop.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static uint64_t iterations;

static void *spin(void *arg)
{
	uint64_t x = (uintptr_t)arg + 1;

	for (uint64_t i = 0; i < iterations; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return (void *)(uintptr_t)x;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t[256];
	uint64_t sum = 0;

	if (argc < 2 || n < 1 || n > 256) {
		fprintf(stderr, "usage: lcpi-cost-spin ITERATIONS [THREADS]\n");
		return 2;
	}
	iterations = strtoull(argv[1], NULL, 0);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, spin, (void *)(uintptr_t)i);
	for (long i = 0; i < n; i++) {
		void *r;

		pthread_join(t[i], &r);
		sum += (uintptr_t)r;
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
