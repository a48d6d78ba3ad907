/* churn.c - process churn: runs PROGRAM (argv[1]) COUNT (argv[2]) times,
 * each a fresh fork + exec with the remaining arguments, JOBS (argv[3]) at a
 * time. Exits 0 only if every child exited 0; prints how many ran. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: churn PROGRAM COUNT JOBS [ARGS...]\n");
		return 2;
	}
	long count = atol(argv[2]), jobs = atol(argv[3]), started = 0, ok = 0, running = 0;
	char **child_argv = &argv[3]; /* argv[3] is replaced by the program */

	child_argv[0] = argv[1];
	while (started < count || running > 0) {
		while (started < count && running < jobs) {
			pid_t pid = fork();

			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (pid == 0) {
				execv(child_argv[0], child_argv);
				_exit(127);
			}
			started++;
			running++;
		}
		int status;

		if (wait(&status) < 0)
			break;
		running--;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
	}
	printf("%ld\n", ok);
	return ok == count ? 0 : 1;
}
