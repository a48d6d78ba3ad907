/* callers_6040.c SECONDS - a known answer for call stacks: leaf() does all
 * the work and is called 60 % of the time through top_a -> mid_a and 40 %
 * through top_b -> mid_b (three calls in five), so lcpiprof --callers leaf
 * must say mid_a 60 %, mid_b 40 %. No call is a tail call (each adds to the
 * result after it), so every frame stays on the stack. leaf keeps its sum
 * on its stack: gcc 12 sets up no frame pointer in a leaf that needs no
 * stack, even with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,
 * and a frame-pointer walk from such a leaf skips its caller (mid_a). */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf(unsigned long x) {
  volatile unsigned long s = x;
  for (int i = 0; i < 20000; i++) s = s * 6364136223846793005ul + 1442695040888963407ul;
  return s;
}

__attribute__((noinline)) unsigned long mid_a(unsigned long x) { return leaf(x) + 1; }
__attribute__((noinline)) unsigned long mid_b(unsigned long x) { return leaf(x) + 2; }
__attribute__((noinline)) unsigned long top_a(unsigned long x) { return mid_a(x) + 3; }
__attribute__((noinline)) unsigned long top_b(unsigned long x) { return mid_b(x) + 4; }

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 3;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  unsigned long i = 0;
  do {
    for (int k = 0; k < 50; k++, i++) sink += i % 5 < 3 ? top_a(i) : top_b(i);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
  return 0;
}
