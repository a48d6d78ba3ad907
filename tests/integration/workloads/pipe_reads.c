/* pipe_reads.c SECONDS - a system call path for kernel stacks: a child
 * writes a pipe and this process reads it one byte at a time, so its time
 * is spent in read() in the kernel (entry_SYSCALL_64 -> do_syscall_64 ->
 * ksys_read -> pipe_read). */
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 2;
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    char buf[4096] = {0};
    close(fds[0]);
    for (;;)
      if (write(fds[1], buf, sizeof(buf)) < 0) _exit(0);
  }
  close(fds[1]);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char c;
  do {
    for (int k = 0; k < 1000; k++)
      if (read(fds[0], &c, 1) != 1) return 1;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
  kill(child, SIGKILL);
  return 0;
}
