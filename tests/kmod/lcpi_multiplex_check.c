// lcpi_multiplex_check.c - does this PMU multiplex, and do the times say so?
// Opens more hardware cycles counters on one CPU than the PMU has (the arm64
// guest's emulated PMUv3 has 7), each with the read_format lcpid's perf
// source uses (PERF_FORMAT_TOTAL_TIME_ENABLED | _RUNNING), spins, and reads
// each: a multiplexed event ran less than it was enabled. Prints one line
// per event and exits 0 when at least one ran < enabled and every one ran
// > 0 (the PMU time-shared them), 1 otherwise, 77 without a PMU event.
// Static and libc-only, so the busybox guest runs it.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* 12 > the 7 counters; -DNR_EVENTS=4 shows the check failing */
#ifndef NR_EVENTS
#define NR_EVENTS 12
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	int fds[NR_EVENTS];
	int scaled = 0, idle = 0;
	cpu_set_t set;
	volatile uint64_t sink = 0;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (int i = 0; i < NR_EVENTS; i++) {
		struct perf_event_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				   PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr.exclude_guest = 1;
		fds[i] = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
		if (fds[i] < 0) {
			printf("perf_event_open(cycles) #%d: %s\n", i, strerror(errno));
			return i == 0 ? 77 : 1;
		}
	}
	// Long enough for many rotations (perf_event_mux_interval_ms, 1-4 ms).
	for (uint64_t end = now_ns() + 500000000ull; now_ns() < end;)
		for (int k = 0; k < 10000; k++)
			sink += (uint64_t)k * k;
	for (int i = 0; i < NR_EVENTS; i++) {
		uint64_t v[3];

		if (read(fds[i], v, sizeof(v)) != (ssize_t)sizeof(v)) {
			printf("read #%d: %s\n", i, strerror(errno));
			return 1;
		}
		printf("event %d: count %llu enabled %llu running %llu (%.1f%%)\n", i,
		       (unsigned long long)v[0], (unsigned long long)v[1],
		       (unsigned long long)v[2],
		       v[1] ? 100.0 * (double)v[2] / (double)v[1] : 0.0);
		if (v[2] < v[1])
			scaled++;
		if (v[2] == 0)
			idle++;
	}
	printf("multiplexed: %d of %d events ran less than enabled; %d never ran\n",
	       scaled, NR_EVENTS, idle);
	return scaled > 0 && idle == 0 ? 0 : 1;
}
