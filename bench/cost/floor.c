/*
 * lcpi-cost-floor - the floor of the cost bench: the kernel's sampling
 * interrupt and sample write alone. It opens the event lcpid's perf source
 * opens (cpu-clock by default: this host has no PMU), system-wide, one per
 * online CPU, with the same sample fields (IP, TID, TIME), the same 512 KB
 * ring per CPU and the same wakeup watermark (a quarter ring), and a minimal
 * loop that reads every record and discards it (counting samples, the
 * samples of one process and lost records): nothing is resolved,
 * aggregated or written. Reading is needed
 * so the ring never fills; a full ring would drop samples and make the
 * kernel's work per interrupt smaller than any real profiler's.
 *
 *   lcpi-cost-floor --period NS [--type T --config C]
 *
 * Driven over stdin, one command a line, answered on stdout:
 *   enable    start sampling on every CPU            -> "ok"
 *   pid PID   count PID's samples apart (the workload) -> "ok"
 *   disable   stop it, drain the rings   -> "samples N lost M pid P"
 *             (N: every sample, P: PID's)
 * EOF on stdin ends the program. Needs root (or perf_event_paranoid <= -1).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RING_PAGES 128 /* lcpid's perf source: page order 7 */
#define MAX_CPUS 1024

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;
};

static struct ring rings[MAX_CPUS];
static int nrings;
static uint64_t samples, lost, pid_samples;
static uint32_t pid;

static void die(const char *what)
{
	fprintf(stderr, "lcpi-cost-floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Consume every record in the ring: count it, keep nothing. */
static void drain(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % r->size;
		unsigned char *p = (unsigned char *)&h;

		/* the header may wrap around the end of the ring */
		for (size_t i = 0; i < sizeof(h); i++)
			p[i] = r->data[(off + i) % r->size];
		if (h.size == 0)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			uint32_t p = 0; /* after the header and IP: pid, tid */

			for (size_t i = 0; i < 4; i++)
				((unsigned char *)&p)[i] =
					r->data[(off + 16 + i) % r->size];
			samples++;
			pid_samples += p == pid;
		} else if (h.type == PERF_RECORD_LOST) {
			uint64_t n = 0; /* id, then lost: bytes 16..23 of the record */

			for (size_t i = 0; i < 8; i++)
				((unsigned char *)&n)[i] =
					r->data[(off + 16 + i) % r->size];
			lost += n;
		}
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void open_rings(uint32_t type, uint64_t config, uint64_t period)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long page = sysconf(_SC_PAGESIZE);

	for (int cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		struct perf_event_attr a;
		struct ring *r = &rings[nrings];

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = type;
		a.config = config;
		a.sample_period = period;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				PERF_SAMPLE_TIME;
		a.disabled = 1;
		a.exclude_guest = 1;
		a.watermark = 1;
		a.wakeup_watermark = RING_PAGES * page / 4;
		r->fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1,
				PERF_FLAG_FD_CLOEXEC);
		if (r->fd < 0)
			die("perf_event_open");
		r->size = (uint64_t)RING_PAGES * page;
		r->meta = mmap(NULL, (RING_PAGES + 1) * page,
			       PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->meta == MAP_FAILED)
			die("mmap");
		r->data = (unsigned char *)r->meta + page;
		nrings++;
	}
}

static void all(unsigned long req)
{
	for (int i = 0; i < nrings; i++)
		if (ioctl(rings[i].fd, req, 0) < 0)
			die("ioctl");
}

static int command(const char *line)
{
	if (strcmp(line, "enable") == 0) {
		samples = lost = pid_samples = 0;
		pid = 0;
		all(PERF_EVENT_IOC_ENABLE);
		printf("ok\n");
	} else if (strncmp(line, "pid ", 4) == 0) {
		pid = strtoul(line + 4, NULL, 10);
		printf("ok\n");
	} else if (strcmp(line, "disable") == 0) {
		all(PERF_EVENT_IOC_DISABLE);
		for (int i = 0; i < nrings; i++)
			drain(&rings[i]);
		printf("samples %llu lost %llu pid %llu\n",
		       (unsigned long long)samples, (unsigned long long)lost,
		       (unsigned long long)pid_samples);
	} else {
		printf("error unknown command '%s'\n", line);
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t period = 0, config = PERF_COUNT_SW_CPU_CLOCK;
	uint32_t type = PERF_TYPE_SOFTWARE;
	struct pollfd fds[MAX_CPUS + 1];
	char line[256];
	size_t len = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--period") == 0)
			period = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--type") == 0)
			type = strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--config") == 0)
			config = strtoull(argv[i + 1], NULL, 0);
	}
	if (period == 0) {
		fprintf(stderr,
			"usage: lcpi-cost-floor --period NS [--type T --config C]\n");
		return 2;
	}
	open_rings(type, config, period);
	fds[0].fd = 0;
	fds[0].events = POLLIN;
	for (int i = 0; i < nrings; i++) {
		fds[i + 1].fd = rings[i].fd;
		fds[i + 1].events = POLLIN;
	}
	printf("ready %d\n", nrings);
	fflush(stdout);
	for (;;) {
		if (poll(fds, nrings + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (int i = 0; i < nrings; i++)
			if (fds[i + 1].revents & POLLIN)
				drain(&rings[i]);
		if (fds[0].revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(0, line + len, sizeof(line) - 1 - len);

			if (n <= 0)
				return 0;
			len += n;
			line[len] = 0;
			for (char *nl; (nl = strchr(line, '\n'));) {
				*nl = 0;
				command(line);
				len -= nl + 1 - line;
				memmove(line, nl + 1, len + 1);
			}
			if (len == sizeof(line) - 1)
				len = 0; /* an overlong line: dropped */
		}
	}
}
