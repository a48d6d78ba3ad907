/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * lcpi_abi.h - the one definition of the interface between lcpi.ko and
 * user space (lcpid, the tests, the simulator).
 *
 * Both sides include this file; nothing in it may be duplicated elsewhere.
 * Every struct uses fixed-width types with explicit padding, so the layout
 * is the same in the kernel and in any user-space compiler. Structs that
 * may grow carry their size as their first member: the kernel accepts any
 * size it knows (LCPI_*_SIZE_VERn) and rejects others with -EINVAL.
 *
 * The data stream read from /dev/lcpi is a sequence of overflow buffers:
 *
 *   struct lcpi_buffer_header   (header_size bytes)
 *   struct lcpi_record          (nr_records of them)
 *
 * read() hands out whole buffers only: a read whose length cannot hold one
 * whole buffer (LCPI_INFO.buffer_bytes) fails with -EINVAL; a read never
 * splits a buffer.
 */
#ifndef LCPI_ABI_H
#define LCPI_ABI_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped on any incompatible change; compat additions only grow structs. */
#define LCPI_ABI_VERSION 1

#define LCPI_DEVICE_PATH "/dev/lcpi"

/* Events sampled at once; more than the PMU has are multiplexed by perf. */
#define LCPI_MAX_EVENTS 4

/*
 * One overflow record: a (pid, pc, event) key and the number of samples it
 * collected while it lived in the hash table. The same 16-byte layout is a
 * hash-table entry; count == 0 marks an empty entry.
 */
struct lcpi_record {
	__u64 pc;	/* sampled instruction address */
	__u32 pid;	/* thread group id (the process), 0 for idle */
	__u16 count;	/* samples; an entry that would overflow is evicted */
	__u8 event;	/* index into lcpi_config.events */
	__u8 flags;	/* LCPI_RECORD_* */
};

#define LCPI_RECORD_KERNEL 0x01	/* pc is a kernel-mode address */
#define LCPI_RECORD_COUNT_MAX 0xffffu

/*
 * Precedes the records of each overflow buffer. The time window
 * [t_first, t_last] is in the perf clock (local_clock(), the clock of
 * perf's side-band records), so the daemon can resolve each record
 * against the address space live in that window.
 */
struct lcpi_buffer_header {
	__u32 magic;		/* LCPI_BUFFER_MAGIC */
	__u16 version;		/* LCPI_ABI_VERSION */
	__u16 header_size;	/* sizeof(struct lcpi_buffer_header) */
	__u32 cpu;
	__u32 nr_records;
	__u64 seq;		/* per-CPU, +1 for every buffer handed out */
	__u64 t_first;		/* ns: first record written into the buffer */
	__u64 t_last;		/* ns: the buffer was sealed */
	__u64 dropped;		/* samples dropped on this CPU before this buffer */
};

#define LCPI_BUFFER_MAGIC 0x4c435042u	/* "LCPB" */

/*
 * Statistics of one per-CPU hash table. Every sample is accounted once:
 *   samples == hits + misses + dropped
 * and every sample ends up in exactly one place:
 *   samples == sum(record counts handed out) + sum(counts in the table)
 *              + dropped
 */
struct lcpi_table_stats {
	__u64 samples;		/* samples offered to the table */
	__u64 hits;		/* key found: count incremented */
	__u64 misses;		/* key not found: inserted */
	__u64 evictions;	/* victims written to a buffer to make room */
	__u64 saturations;	/* entries written out because count was full */
	__u64 flushed;		/* entries written out by a flush */
	__u64 swaps;		/* buffers sealed and handed to the reader */
	__u64 dropped;		/* samples lost: both buffers were full */
};

/* One event to sample. type/config are perf_event_attr's. */
struct lcpi_event_config {
	__u32 type;		/* PERF_TYPE_* */
	__u32 flags;		/* LCPI_EVENT_* */
	__u64 config;		/* perf_event_attr.config */
	__u64 period;		/* mean sample period, > 0 */
	__u32 jitter_pct;	/* randomise each period by +- this % (0..50) */
	__u32 reserved;		/* must be zero */
};

/* Fall back to the software cpu-clock event if the PMU lacks this one. */
#define LCPI_EVENT_FALLBACK_CPU_CLOCK 0x01
/*
 * GET_INFO only (never accepted by SET_CONFIG): the event was opened with
 * perf_event_attr.exclude_guest, so a KVM host's guest-mode overflows are
 * not filed as host samples.
 */
#define LCPI_EVENT_INFO_EXCLUDE_GUEST 0x100
/*
 * GET_INFO only: the event was created but never counted during the probe
 * after START (LCPI_RUNNING_PROBE_MS): on no CPU did its time_running
 * advance. The PMU could not schedule it: pinned events of other users
 * hold the counters, or (Intel before Icelake) a constraint no counter
 * meets. It is sampled as soon as it gets the PMU; until then it takes no
 * samples, so its counts are not a profile.
 */
#define LCPI_EVENT_INFO_NOT_RUNNING 0x200
/* How long START watches the new events' time_running (ms). */
#define LCPI_RUNNING_PROBE_MS 50

/*
 * The shortest mean periods SET_CONFIG accepts: 10 us for the software
 * clocks (cpu-clock, task-clock; perf's own hrtimer floor), so at most
 * 100,000 samples/s per CPU per clock event, and 10,000 events for a PMU
 * event (cycles: 400,000 samples/s per CPU at 4 GHz, before perf's
 * throttle). The only software events accepted are the two clocks.
 */
#define LCPI_MIN_PERIOD_CLOCK_NS 10000
#define LCPI_MIN_PERIOD_EVENTS 10000

/* LCPI_IOC_SET_CONFIG: choose events; only while stopped. */
struct lcpi_config {
	__u32 size;		/* sizeof(struct lcpi_config) */
	__u32 nr_events;	/* 1..LCPI_MAX_EVENTS */
	struct lcpi_event_config events[LCPI_MAX_EVENTS];
};

#define LCPI_CONFIG_SIZE_VER1 136

/*
 * LCPI_IOC_GET_INFO: the module's geometry and the events really in use,
 * plus the module's own view of the ABI struct sizes (a test compares
 * them with user space's).
 */
struct lcpi_info {
	__u32 size;		/* in: sizeof(struct lcpi_info) */
	__u32 abi_version;
	__u32 nr_cpus;		/* nr_cpu_ids: valid cpu numbers are below */
	__u32 ways;
	__u32 sets;
	__u32 buffer_records;	/* records per overflow buffer */
	__u32 buffer_bytes;	/* header + records: the smallest read() */
	__u32 running;		/* 1 while sampling */
	__u32 nr_events;
	__u32 sizeof_record;
	__u32 sizeof_buffer_header;
	__u32 sizeof_cpu_stats;
	__u32 sizeof_config;
	__u32 reserved;
	/* what each configured event really is (after any fallback) */
	struct lcpi_event_config events[LCPI_MAX_EVENTS];
	/*
	 * since VER2, while sampling: the perf_event_attr.precise_ip each
	 * event was opened with, the highest of 3, 2, 1 the PMU accepted for
	 * a PMU event (else 0; always 0 for the clocks). Accepted is not
	 * honoured: a PMU without a precise mechanism may take any level
	 * (Arm's PMUv3 driver never looks at it). 0 while stopped.
	 */
	__u8 precise_ip[LCPI_MAX_EVENTS];
	__u32 reserved2;
};

/*
 * VER1 (184 bytes) had no precise_ip; GET_INFO still answers it, as
 * LCPI_IOC_GET_INFO_VER1, with the first 184 bytes.
 */
#define LCPI_INFO_SIZE_VER1 184
#define LCPI_INFO_SIZE_VER2 192

/* LCPI_IOC_GET_STATS: one CPU's statistics. */
struct lcpi_cpu_stats {
	__u32 size;		/* in: sizeof(struct lcpi_cpu_stats) */
	__u32 cpu;		/* in: which CPU */
	__u32 online;		/* out: 1 if the CPU is sampling */
	/*
	 * out: the longest one step of FLUSH ran with interrupts off on this
	 * CPU, in ns, since load (saturates at ~0u; 0: no flush yet). A flush
	 * writes a table out in steps of LCPI_FLUSH_STEP_ENTRIES entries.
	 */
	__u32 flush_irqoff_ns_max;
	struct lcpi_table_stats table;
	__u64 nested;		/* samples dropped: the table was in use */
	/* total handler time for hits and misses, estimated: one handler run
	 * in 64 is timed and counts for 64
	 */
	__u64 handler_ns_hit;
	__u64 handler_ns_miss;
	__u64 buffers_read;	/* buffers handed to user space */
	__u64 time_enabled[LCPI_MAX_EVENTS];	/* ns, for multiplex scaling */
	__u64 time_running[LCPI_MAX_EVENTS];
	/*
	 * since VER2: times perf's core throttled one of this CPU's events
	 * (too many overflows in one tick, kernel.perf_event_max_sample_rate):
	 * each stops that event until the next tick. Events, not samples:
	 * the samples the stopped event would have taken are only estimated,
	 * in throttled_lost_estimate (VER4).
	 */
	__u64 throttle_events;
	/*
	 * since VER3: runs of the overflow handler in NMI context (in_nmi()),
	 * each a sample offered to the table or counted in 'nested'. A PMU
	 * event's overflow is an NMI on x86 and on arm64 with pseudo-NMIs
	 * (CONFIG_ARM64_PSEUDO_NMI, irqchip.gicv3_pseudo_nmi=1); the clocks'
	 * hrtimers never are.
	 */
	__u64 nmi_samples;
	/*
	 * since VER4: samples this CPU's events would have taken while perf's
	 * core kept them throttled, estimated: for each throttle, the time
	 * from the throttle to the event's next sample over the interval
	 * between its two samples before it, less one. Counted nowhere else:
	 * lost samples, beside table.dropped and nested.
	 */
	__u64 throttled_lost_estimate;
};

/*
 * VER1 (176 bytes) had no throttle_events, VER2 (184) no nmi_samples, VER3
 * (192) no throttled_lost_estimate; GET_STATS still answers them, as
 * LCPI_IOC_GET_STATS_VER1, _VER2 and _VER3, with their first bytes.
 */
#define LCPI_CPU_STATS_SIZE_VER1 176
#define LCPI_CPU_STATS_SIZE_VER2 184
#define LCPI_CPU_STATS_SIZE_VER3 192
#define LCPI_CPU_STATS_SIZE_VER4 200

/*
 * LCPI_IOC_SET_PERIODS: new mean periods while sampling (lcpid's cost
 * budget lowers and raises its rate with it). In: nr_events, which must be
 * the configured number, and one mean period per event in the unit of the
 * event really sampled (GET_INFO's events[i]: ns for a clock, a cycles
 * event fallen back to cpu-clock included), each from SET_CONFIG's floor
 * (LCPI_MIN_PERIOD_*) up to 2^62; unused slots zero. Out: the mean period
 * each event samples at from now on (GET_INFO's events[i].period says the
 * same); the jitter_pct of SET_CONFIG still randomises every period around
 * it. Every CPU's event changes at once (perf_event_period()); a CPU that
 * comes online later opens its events with the new periods. -EINVAL for a
 * bad size, nr_events or period, a non-zero unused slot, or while stopped
 * (START takes SET_CONFIG's periods).
 */
struct lcpi_periods {
	__u32 size;		/* sizeof(struct lcpi_periods) */
	__u32 nr_events;	/* in: lcpi_config.nr_events of the configuration */
	__u64 period[LCPI_MAX_EVENTS];	/* in: asked; out: in effect */
};

#define LCPI_PERIODS_SIZE_VER1 40

/* Table entries one interrupts-off step of FLUSH writes out (1/16 table). */
#define LCPI_FLUSH_STEP_ENTRIES 1024

#define LCPI_IOC_MAGIC 0xb7

#define LCPI_IOC_GET_VERSION	_IOR(LCPI_IOC_MAGIC, 0x00, __u32)
#define LCPI_IOC_SET_CONFIG	_IOW(LCPI_IOC_MAGIC, 0x01, struct lcpi_config)
#define LCPI_IOC_START		_IO(LCPI_IOC_MAGIC, 0x02)
#define LCPI_IOC_STOP		_IO(LCPI_IOC_MAGIC, 0x03)
/*
 * Drain every CPU's table into its buffers (runs on each CPU, with
 * interrupts off for at most LCPI_FLUSH_STEP_ENTRIES entries at a time).
 */
#define LCPI_IOC_FLUSH		_IO(LCPI_IOC_MAGIC, 0x04)
#define LCPI_IOC_GET_INFO	_IOWR(LCPI_IOC_MAGIC, 0x05, struct lcpi_info)
#define LCPI_IOC_GET_INFO_VER1	_IOC(_IOC_READ | _IOC_WRITE, LCPI_IOC_MAGIC, \
				     0x05, LCPI_INFO_SIZE_VER1)
#define LCPI_IOC_GET_STATS	_IOWR(LCPI_IOC_MAGIC, 0x06, struct lcpi_cpu_stats)
#define LCPI_IOC_GET_STATS_VER1	_IOC(_IOC_READ | _IOC_WRITE, LCPI_IOC_MAGIC, \
				     0x06, LCPI_CPU_STATS_SIZE_VER1)
#define LCPI_IOC_GET_STATS_VER2	_IOC(_IOC_READ | _IOC_WRITE, LCPI_IOC_MAGIC, \
				     0x06, LCPI_CPU_STATS_SIZE_VER2)
#define LCPI_IOC_GET_STATS_VER3	_IOC(_IOC_READ | _IOC_WRITE, LCPI_IOC_MAGIC, \
				     0x06, LCPI_CPU_STATS_SIZE_VER3)
#define LCPI_IOC_SET_PERIODS	_IOWR(LCPI_IOC_MAGIC, 0x07, struct lcpi_periods)

#ifdef __cplusplus
static_assert(sizeof(struct lcpi_record) == 16, "record layout");
static_assert(sizeof(struct lcpi_buffer_header) == 48, "buffer header layout");
static_assert(sizeof(struct lcpi_table_stats) == 64, "table stats layout");
static_assert(sizeof(struct lcpi_config) == LCPI_CONFIG_SIZE_VER1, "config");
static_assert(sizeof(struct lcpi_info) == LCPI_INFO_SIZE_VER2, "info");
static_assert(sizeof(struct lcpi_cpu_stats) == LCPI_CPU_STATS_SIZE_VER4, "stats");
static_assert(sizeof(struct lcpi_periods) == LCPI_PERIODS_SIZE_VER1, "periods");
#elif !defined(__KERNEL__)
_Static_assert(sizeof(struct lcpi_record) == 16, "record layout");
_Static_assert(sizeof(struct lcpi_buffer_header) == 48, "buffer header");
_Static_assert(sizeof(struct lcpi_config) == LCPI_CONFIG_SIZE_VER1, "config");
_Static_assert(sizeof(struct lcpi_info) == LCPI_INFO_SIZE_VER2, "info");
_Static_assert(sizeof(struct lcpi_cpu_stats) == LCPI_CPU_STATS_SIZE_VER4,
	       "stats");
_Static_assert(sizeof(struct lcpi_periods) == LCPI_PERIODS_SIZE_VER1,
	       "periods");
#endif
/* The kernel side checks the same sizes with BUILD_BUG_ON() at init. */

#endif /* LCPI_ABI_H */
