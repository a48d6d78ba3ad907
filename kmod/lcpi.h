/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lcpi.h - declarations shared by the files of lcpi.ko.
 *
 * Per-CPU state: a struct lcpi_cpu per possible CPU, allocated at module
 * load and freed at unload, holds the statistics and the buffers' states.
 * The memory of its hash table and two overflow buffers (lcpi_hashtable.h,
 * 'mem') exists while the CPU is up: it is allocated in the prepare stage
 * of bringing the CPU up, before any counter can write to it, and freed
 * once the CPU is dead and the table and buffers are drained (until then
 * FLUSH and read() drain an offline CPU's table as any other).
 * The handler may run in NMI context: everything it writes lives in
 * the per-CPU struct lcpi_cpu of the CPU it runs on, guarded against nesting
 * by the table's own guard (lcpi_ht_enter() in lcpi_hashtable.h).
 *
 * Locking: lcpi_mutex serialises configuration, start/stop, flush, statistics
 * and the hotplug callbacks. Always take cpus_read_lock() before lcpi_mutex;
 * hotplug callbacks run with the hotplug lock already held.
 */
#ifndef LCPI_H
#define LCPI_H

#include <linux/irq_work.h>
#include <asm/local64.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "include/lcpi_abi.h"
#include "include/lcpi_hashtable.h"

struct lcpi_cpu;

/* One overflow handler run in this many is timed (a power of two). */
#define LCPI_TIMED_EVERY 64

/* The overflow handler's context: which CPU, which configured event. */
struct lcpi_evctx {
	struct lcpi_cpu *cpu;
	u32 idx;
};

struct lcpi_cpu {
	struct lcpi_ht ht;
	/* lcpi_ht_mem_size() bytes, or NULL; set and freed under lcpi_mutex
	 * and the hotplug lock (lcpi_main.c)
	 */
	void *mem;
	unsigned int id;
	/*
	 * written by this CPU's handler only; the handler may interrupt
	 * itself (an NMI a cpu-clock hrtimer run): these two are counted
	 * before or without the table's guard, so with local64_inc(), one
	 * instruction no interrupt on this CPU can split
	 */
	local64_t nested;
	local64_t throttle_events;
	/* inside the table's guard: the throttled-sample estimate */
	u64 last_ns[LCPI_MAX_EVENTS];		/* the event's last sample */
	u64 interval_ns[LCPI_MAX_EVENTS];	/* between its last two */
	u64 throttled_at[LCPI_MAX_EVENTS];	/* 0, or when it was throttled */
	u64 throttled_lost;
	u64 nmi_samples;		/* NMI context only: NMIs do not nest */
	u64 handler_ns_hit;		/* estimated: see LCPI_TIMED_EVERY */
	u64 handler_ns_miss;
	u32 untimed;			/* handler runs, for the timing sample */
	u64 rnd;			/* xorshift64 state for period jitter */
	/* the longest flush step on this CPU (interrupts off), under lcpi_mutex */
	u64 flush_irqoff_ns_max;
	/* written by the reader only, under lcpi_read_mutex */
	u64 buffers_read;
	/* under lcpi_mutex */
	struct perf_event *events[LCPI_MAX_EVENTS];
	struct lcpi_evctx ctx[LCPI_MAX_EVENTS];
	u64 time_enabled[LCPI_MAX_EVENTS];	/* of events already released */
	u64 time_running[LCPI_MAX_EVENTS];
	u64 probe_running[LCPI_MAX_EVENTS];	/* at START, for the probe */
	u64 probe_gen;		/* the START probe_running is of; 0: none */
	/* wakes the reader from the handler (NMI-safe) */
	struct irq_work wake_work;
};

extern struct mutex lcpi_mutex;
extern wait_queue_head_t lcpi_wait;
extern struct lcpi_cpu **lcpi_cpus;	/* [nr_cpu_ids], NULL if not possible */
extern struct lcpi_ht_config lcpi_ht_cfg;

/* Configuration and state, under lcpi_mutex. */
extern struct lcpi_config lcpi_cfg;
extern struct lcpi_event_config lcpi_real[LCPI_MAX_EVENTS];
extern bool lcpi_running;
extern u32 lcpi_not_running;	/* BIT(i): event i did not run at START */

/* lcpi_main.c */
void lcpi_cpu_mem_trim(struct lcpi_cpu *c);

/* lcpi_sample.c */
void lcpi_sample_init(void);
void lcpi_sample_configure(const struct lcpi_config *cfg);
int lcpi_sample_start(u64 *gen);
void lcpi_probe_running_end(u64 gen);
void lcpi_sample_stop(void);
int lcpi_sample_set_periods(const u64 *periods);
u64 lcpi_sample_period(u32 i);
int lcpi_sample_cpu_online(unsigned int cpu);
void lcpi_sample_cpu_offline(unsigned int cpu);
int lcpi_sample_flush(void);
void lcpi_sample_times(struct lcpi_cpu *c, u64 *enabled, u64 *running);
const struct perf_event *lcpi_sample_first_event(u32 i);
void lcpi_wake_func(struct irq_work *work);

/* lcpi_dev.c */
int lcpi_dev_register(void);
void lcpi_dev_unregister(void);
int lcpi_config_check(const struct lcpi_config *cfg);

#endif /* LCPI_H */
