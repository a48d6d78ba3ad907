/* pid_reuse.c - runs program A, then program B under the same pid number.
 *
 * Usage: pid_reuse A B SECONDS. A runs for SECONDS and exits; then B is
 * forked until it gets A's pid: /proc/sys/kernel/ns_last_pid is set to one
 * below it just before each fork (other processes may fork in between, so
 * a child with another pid is discarded and the fork retried). Each child
 * waits on a pipe until the parent has checked its pid, so a discarded child
 * never execs. Prints the pid; exit 0 when B ran as A's pid, 3 if the pid
 * could not be reused, 1 on another error. Needs root (ns_last_pid). The
 * pid is the one in this pid namespace, which is the one lcpid sees when it
 * runs in the same namespace. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Forks a child that execs argv once released; returns its pid. */
static pid_t spawn_gated(char **argv, int *gate)
{
	int fds[2];

	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();

	if (pid == 0) {
		char go;

		close(fds[1]);
		if (read(fds[0], &go, 1) != 1)
			_exit(0); /* discarded */
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[0]);
	*gate = fds[1];
	return pid;
}

static int run_released(pid_t pid, int gate)
{
	int status;

	if (write(gate, "g", 1) != 1)
		return 1;
	close(gate);
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int set_last_pid(pid_t last)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");

	if (!f)
		return -1;
	int ok = fprintf(f, "%d", (int)last) > 0;

	return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: pid_reuse A B SECONDS\n");
		return 1;
	}
	char *a[] = {argv[1], argv[3], NULL}, *b[] = {argv[2], argv[3], NULL};
	int gate;
	pid_t first = spawn_gated(a, &gate);

	if (first < 0 || run_released(first, gate) != 0)
		return 1;
	for (int attempt = 0; attempt < 1000; attempt++) {
		if (set_last_pid(first - 1) < 0) {
			perror("ns_last_pid");
			return 1;
		}
		pid_t second = spawn_gated(b, &gate);

		if (second < 0)
			return 1;
		if (second == first) {
			printf("%d\n", (int)first);
			fflush(stdout);
			return run_released(second, gate);
		}
		close(gate); /* the child reads EOF and exits without exec */
		waitpid(second, NULL, 0);
	}
	fprintf(stderr, "pid_reuse: pid %d never came back\n", (int)first);
	return 3;
}
