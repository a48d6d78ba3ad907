/* qsort_calls.c SECONDS - call stacks through a Debian library built
 * without frame pointers: main -> sort_rounds -> libc's qsort -> compare,
 * where compare does the work. A frame-pointer walk from compare stops in
 * qsort's frames (libc keeps no frame pointer); an unwinder reading libc's
 * .eh_frame reaches sort_rounds and main. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* Each a frame of its own under its own name: noclone keeps gcc from
 * making a renamed .constprop copy; clang (the sanitizer tree) has no such
 * pass, and no such attribute. */
#if defined(__clang__)
#define OWN_FRAME __attribute__((noinline))
#else
#define OWN_FRAME __attribute__((noinline, noclone))
#endif

OWN_FRAME static int compare(const void* a, const void* b) {
  unsigned long x = *(const unsigned long*)a, y = *(const unsigned long*)b;
  volatile unsigned long s = x ^ y;
  for (int i = 0; i < 200; i++) s = s * 6364136223846793005ul + 1442695040888963407ul;
  sink += s;
  return x < y ? -1 : x > y;
}

OWN_FRAME static void sort_rounds(unsigned long* v, size_t n) {
  for (size_t i = 0; i < n; i++) v[i] = (i * 2654435761ul) % 100003;
  qsort(v, n, sizeof(*v), compare);
  sink += v[0];
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 3;
  static unsigned long v[4096];
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    sort_rounds(v, sizeof(v) / sizeof(v[0]));
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
  return 0;
}
