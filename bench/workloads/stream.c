/*
 * stream.c - McCalpin's STREAM loops (assign, scale, saxpy, sum), written
 * here from the published kernel definitions: memory-bound loops over
 * arrays far larger than the caches, the case where a profiler's own cache
 * footprint shows. Single-threaded; the arrays are filled from a fixed seed,
 * and the final checksum is printed so the work cannot be optimised away.
 *
 *   stream ELEMENTS ITERATIONS
 *
 * Each iteration runs the four loops once over three arrays of ELEMENTS
 * doubles (24 bytes per element in all).
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: stream ELEMENTS ITERATIONS\n");
		return 2;
	}
	long n = atol(argv[1]);
	long iters = atol(argv[2]);
	if (n <= 0 || iters <= 0) {
		fprintf(stderr, "stream: ELEMENTS and ITERATIONS must be positive\n");
		return 2;
	}
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
	if (!a || !b || !c) {
		fprintf(stderr, "stream: cannot allocate %ld elements\n", n);
		return 1;
	}
	unsigned long x = 1997; /* a fixed LCG: the same inputs every run */
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		a[i] = (double)(x >> 40) / (1 << 24);
		b[i] = 1.0;
		c[i] = 0.0;
	}
	const double q = 3.0;
	double sum = 0.0;
	for (long it = 0; it < iters; it++) {
		for (long i = 0; i < n; i++) /* assign */
			c[i] = a[i];
		for (long i = 0; i < n; i++) /* scale */
			b[i] = q * c[i];
		for (long i = 0; i < n; i++) /* saxpy (STREAM's triad) */
			a[i] = b[i] + q * c[i];
		double s = 0.0;
		for (long i = 0; i < n; i++) /* sum */
			s += a[i];
		sum += s;
		for (long i = 0; i < n; i++) /* keep the values bounded */
			a[i] *= 0.25;
	}
	printf("stream: %ld elements x %ld iterations, checksum %.6e\n", n, iters, sum);
	free(a);
	free(b);
	free(c);
	return 0;
}
