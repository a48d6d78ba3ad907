// SPDX-License-Identifier: GPL-2.0
/*
 * lcpi_sample.c - the perf counters of lcpi.ko and their overflow handler.
 *
 * Each online CPU gets one kernel counter per configured event
 * (perf_event_create_kernel_counter()), created at start and when a CPU
 * comes online, released at stop and when it goes offline. The perf core
 * programs the PMU, multiplexes and throttles; this file only counts.
 *
 * The overflow handler runs in NMI context for PMU events (on x86, and on
 * arm64 with pseudo-NMIs; else in hard interrupt context) and in hrtimer
 * interrupt context for the software cpu-clock event: it must be safe from
 * any context. It counts its runs in NMI context (nmi_samples). It takes no lock, allocates nothing and wakes nobody
 * directly: a sealed buffer is announced through irq_work. Everything it
 * writes belongs to the CPU it runs on (per-CPU tables: an NMI cannot
 * synchronise with anyone, a shared table would contend at high rates).
 * The only writers of a table are this handler and lcpi_flush_step(), which
 * runs on the table's CPU with interrupts off. Each takes the table with
 * lcpi_ht_enter(): a handler (an NMI) that arrives while either is inside
 * counts itself in 'nested' and leaves; a flush IPI that arrives while a
 * handler is inside (one running with interrupts on) leaves the table
 * alone and FLUSH returns -EAGAIN, for the reader to call again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "lcpi.h"
#include "include/lcpi_attr.h"
#include "include/lcpi_throttle.h"

/*
 * kernel/events/core.c's MAX_INTERRUPTS (not in any header): the mark
 * __perf_event_account_interrupt() leaves in hw.interrupts when it
 * throttles an event, before __perf_event_overflow() calls the overflow
 * handler (6.1 and 6.12 alike); cleared when the tick unthrottles it.
 */
#define LCPI_PERF_MAX_INTERRUPTS (~0ULL)

static const struct lcpi_config lcpi_default_cfg = {
	.size = sizeof(struct lcpi_config),
	.nr_events = 1,
	.events[0] = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.flags = LCPI_EVENT_FALLBACK_CPU_CLOCK,
		.period = 1000000,
		.jitter_pct = 10,
	},
};

struct lcpi_config lcpi_cfg;
struct lcpi_event_config lcpi_real[LCPI_MAX_EVENTS];
bool lcpi_running;
u32 lcpi_not_running;

/*
 * Testing only (root, via /sys/module/lcpi/parameters): make creating any
 * event but cpu-clock fail with -inject_errno on CPU inject_cpu (-1: on
 * every CPU), to exercise the fallback policy where the PMU has every
 * event or none. 0, the default, injects nothing.
 */
static int lcpi_inject_errno;
module_param_named(inject_errno, lcpi_inject_errno, int, 0600);
MODULE_PARM_DESC(inject_errno,
		 "testing: fail event creation with -ERRNO (0: off)");
static int lcpi_inject_cpu = -1;
module_param_named(inject_cpu, lcpi_inject_cpu, int, 0600);
MODULE_PARM_DESC(inject_cpu,
		 "testing: the CPU inject_errno applies to (-1: all)");
/*
 * Testing only: refuse a PMU event at a precise_ip above inject_precise
 * with -EOPNOTSUPP, as x86 does for a level its PEBS lacks, so the lowering
 * is exercised on a PMU that accepts every level (Arm's). -1: off.
 */
static int lcpi_inject_precise = -1;
module_param_named(inject_precise, lcpi_inject_precise, int, 0600);
MODULE_PARM_DESC(inject_precise,
		 "testing: refuse precise_ip above this (-1: off)");

/*
 * What the handler needs to choose each event's next period, so it never
 * divides: the mean period, which SET_PERIODS changes while handlers run
 * (one aligned 64-bit word, read once per run), and the jitter as a 32-bit
 * binary fraction of it (jitter_pct / 100), fixed from SET_CONFIG on: a
 * handler never pairs one mean with another's spread.
 */
static u64 lcpi_period[LCPI_MAX_EVENTS];
static u32 lcpi_jitter_frac[LCPI_MAX_EVENTS];
/*
 * The precise_ip each event is opened with: lcpi_attr_precise_first(),
 * lowered at START while the PMU refuses it (lcpi_retry()). Under
 * lcpi_mutex.
 */
static u8 lcpi_precise[LCPI_MAX_EVENTS];
/* 1: event i counts guest mode too (a precise PMU refused exclude_guest) */
static u8 lcpi_guest[LCPI_MAX_EVENTS];

void lcpi_wake_func(struct irq_work *work)
{
	wake_up_interruptible(&lcpi_wait);
}

static u64 lcpi_rand(struct lcpi_cpu *c)
{
	u64 x = c->rnd;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	c->rnd = x;
	return x;
}

/*
 * Chooses the next period uniformly in mean +- delta. Setting
 * hw.sample_period from the overflow handler is what perf's own period
 * logic relies on: the cpu-clock hrtimer re-arms with it right after this
 * handler returns; x86 PMU events reload it at their next overflow.
 * Only this CPU touches the event's hw state here.
 */
static void lcpi_jitter(struct lcpi_cpu *c, struct perf_event *event, u32 idx)
{
	u64 mean = READ_ONCE(lcpi_period[idx]);
	u64 delta = mul_u64_u32_shr(mean, lcpi_jitter_frac[idx], 32);
	u64 next;

	if (!delta)
		return;
	/* delta <= mean / 2: no wrap */
	next = mean - delta + mul_u64_u64_shr(lcpi_rand(c), 2 * delta + 1, 64);
	event->hw.sample_period = next ? next : 1;
}

/*
 * The samples event @i would have taken while throttled, estimated at its
 * first sample after by lcpi_throttle_lost(): the time since the throttle
 * past one interval (the sample taken now), at most a tick (perf
 * unthrottles at the tick), over the interval between its two samples
 * before it. Inside the
 * table's guard (a nested run leaves it alone: its throttle is still
 * counted in throttle_events). The division runs once per throttle.
 */
static void lcpi_throttle_account(struct lcpi_cpu *c, u32 i, u64 now,
				  bool throttled)
{
	u64 gap;

	if (c->throttled_at[i]) {
		gap = now - c->throttled_at[i];
		c->throttled_lost += lcpi_throttle_lost(gap, c->interval_ns[i],
						       TICK_NSEC);
		c->throttled_at[i] = 0;
	} else if (c->last_ns[i] && now > c->last_ns[i]) {
		c->interval_ns[i] = now - c->last_ns[i];
	}
	c->last_ns[i] = now;
	if (throttled)
		c->throttled_at[i] = now;
}

/* Must be safe from any context, NMI included. */
static void lcpi_overflow(struct perf_event *event,
			  struct perf_sample_data *data, struct pt_regs *regs)
{
	struct lcpi_evctx *x = event->overflow_handler_context;
	struct lcpi_cpu *c = x->cpu;
	enum lcpi_ht_result r;
	bool throttled;
	u32 flags = 0;
	int wake = 0;
	u64 t0, t1;

	t0 = local_clock();
	/*
	 * Written in NMI context only, and NMIs do not nest on a CPU: no other
	 * context can interrupt this increment with one of its own.
	 */
	if (in_nmi())
		c->nmi_samples++;
	/* perf has just stopped this event until the next tick: say so */
	throttled = event->hw.interrupts == LCPI_PERF_MAX_INTERRUPTS;
	if (throttled)
		local64_inc(&c->throttle_events);
	if (!lcpi_ht_enter(&c->ht)) {
		/* we interrupted the handler or a flush on this CPU */
		local64_inc(&c->nested);
		return;
	}

	lcpi_throttle_account(c, x->idx, t0, throttled);
	if (!user_mode(regs))
		flags |= LCPI_RECORD_KERNEL;
	r = lcpi_ht_add(&c->ht, task_tgid_nr(current),
			instruction_pointer(regs), x->idx, flags, t0, &wake);
	lcpi_jitter(c, event, x->idx);

	/*
	 * Timing only feeds statistics: one run in LCPI_TIMED_EVERY is timed
	 * and counts for all of them, which saves a clock read per sample.
	 */
	if (!(++c->untimed & (LCPI_TIMED_EVERY - 1))) {
		t1 = local_clock();
		if (r == LCPI_HT_HIT)
			c->handler_ns_hit += (t1 - t0) * LCPI_TIMED_EVERY;
		else
			c->handler_ns_miss += (t1 - t0) * LCPI_TIMED_EVERY;
	}
	lcpi_ht_leave(&c->ht);

	if (wake)
		irq_work_queue(&c->wake_work);
}

static void lcpi_ctx_set(struct lcpi_cpu *c, u32 i)
{
	c->ctx[i].cpu = c;
	c->ctx[i].idx = i;
}

static struct perf_event *lcpi_event_create(struct lcpi_cpu *c, u32 i)
{
	const struct lcpi_event_config *ev = &lcpi_real[i];
	struct perf_event_attr attr;

	/* the rules are lcpi_attr.h's, tested in user space (attr_test) */
	lcpi_attr_build(&attr, ev, lcpi_precise[i], lcpi_guest[i]);
	lcpi_ctx_set(c, i);
	if (lcpi_inject_errno > 0 && lcpi_inject_errno < MAX_ERRNO &&
	    (lcpi_inject_cpu < 0 || (unsigned int)lcpi_inject_cpu == c->id) &&
	    !(ev->type == PERF_TYPE_SOFTWARE &&
	      ev->config == PERF_COUNT_SW_CPU_CLOCK))
		return ERR_PTR(-lcpi_inject_errno);
	if (lcpi_inject_precise >= 0 && lcpi_precise[i] > lcpi_inject_precise)
		return ERR_PTR(-EOPNOTSUPP);
	return perf_event_create_kernel_counter(&attr, c->id, NULL,
						lcpi_overflow, &c->ctx[i]);
}

/* The clocks get precise_ip 0: it means nothing to an hrtimer (perf too). */
static void lcpi_real_set(u32 i, const struct lcpi_event_config *ev)
{
	lcpi_real[i] = *ev;
	WRITE_ONCE(lcpi_period[i], ev->period);
	/* jitter_pct <= 50: the fraction fits 32 bits */
	lcpi_jitter_frac[i] = div_u64((u64)ev->jitter_pct << 32, 100);
	lcpi_precise[i] = lcpi_attr_precise_first(ev);
	lcpi_guest[i] = 0;
}

/*
 * Creating event @i failed with @err: asks it again, for every CPU, as
 * lcpi_attr_retry() says: after -EINVAL at a precise level, the same level
 * once with exclude_guest cleared (AMD's IBS refuses it); one precise_ip
 * level less on any error, as
 * perf's tool does (AMD's IBS refuses with -ENOENT what its core PMU
 * takes at 0), then, at 0, cpu-clock for cycles the PMU lacks; false if
 * the error is to be reported.
 */
static bool lcpi_retry(u32 i, long err)
{
	struct lcpi_event_config ev = lcpi_real[i];

	switch (lcpi_attr_retry(&ev, &lcpi_precise[i], &lcpi_guest[i], err)) {
	case LCPI_ATTR_GUEST:
		pr_info("event %u (type %u config 0x%llx) precise %u refused (%ld): asking again with guest mode counted\n",
			i, ev.type, ev.config, lcpi_precise[i], err);
		return true;
	case LCPI_ATTR_LOWERED:
		pr_info("event %u (type %u config 0x%llx) refused (%ld): precise %u now\n",
			i, ev.type, ev.config, err, lcpi_precise[i]);
		return true;
	case LCPI_ATTR_FELL_BACK:
		pr_info("event %u (type %u config 0x%llx) unavailable (%ld): sampling cpu-clock instead\n",
			i, lcpi_real[i].type, lcpi_real[i].config, err);
		lcpi_real_set(i, &ev);
		return true;
	default:
		return false;
	}
}

/* Reads an event's times, then releases it: no handler runs after this. */
static void lcpi_event_release(struct lcpi_cpu *c, u32 i)
{
	struct perf_event *event = c->events[i];
	u64 enabled = 0, running = 0;

	c->probe_gen = 0;
	if (!event)
		return;
	perf_event_read_value(event, &enabled, &running);
	c->time_enabled[i] += enabled;
	c->time_running[i] += running;
	perf_event_release_kernel(event);
	c->events[i] = NULL;
}

static void lcpi_cpu_release(struct lcpi_cpu *c)
{
	u32 i;

	for (i = 0; i < LCPI_MAX_EVENTS; i++)
		lcpi_event_release(c, i);
}

/*
 * Creates @c's counters. With @probe (at START, for every online CPU) a
 * failure releases them and is returned (an errno, < 0), or 1 if an event
 * just changed for every CPU: the PMU refused its precise_ip on this CPU
 * and it asks for one level less, or the PMU lacks it here and it fell
 * back to cpu-clock. The caller then starts over, so that every CPU
 * samples the same event at the same level. Without @probe (a CPU coming
 * online) a failure only leaves that event off on this CPU. Under
 * lcpi_mutex.
 */
static int lcpi_cpu_create(struct lcpi_cpu *c, bool probe)
{
	struct perf_event *event;
	long err;
	u32 i;

	/* no handler runs here yet: a gap never spans two runs */
	memset(c->last_ns, 0, sizeof(c->last_ns));
	memset(c->interval_ns, 0, sizeof(c->interval_ns));
	memset(c->throttled_at, 0, sizeof(c->throttled_at));
	for (i = 0; i < lcpi_cfg.nr_events; i++) {
		event = lcpi_event_create(c, i);
		if (!IS_ERR(event)) {
			c->events[i] = event;
			continue;
		}
		err = PTR_ERR(event);
		if (!probe) {
			pr_warn_ratelimited("event %u: not sampled on cpu %u (%ld)\n",
					    i, c->id, err);
			continue;
		}
		lcpi_cpu_release(c);
		if (lcpi_retry(i, err))
			return 1;
		pr_warn("event %u: cannot sample on cpu %u (%ld)\n", i, c->id,
			err);
		return err;
	}
	return 0;
}

/* Takes a checked configuration. Under lcpi_mutex, while stopped. */
void lcpi_sample_configure(const struct lcpi_config *cfg)
{
	static const struct lcpi_event_config none;
	u32 i;

	lcpi_cfg = *cfg;
	for (i = 0; i < LCPI_MAX_EVENTS; i++)
		lcpi_real_set(i, i < cfg->nr_events ? &cfg->events[i] : &none);
}

static u64 lcpi_event_running(struct perf_event *event)
{
	u64 enabled = 0, running = 0;

	perf_event_read_value(event, &enabled, &running);
	return running;
}

/* Counts successful STARTs: a probe's end belongs to the START it names. */
static u64 lcpi_start_gen;

/*
 * After START: which events never get the PMU. Each event's time_running
 * on every CPU is read here, then again by lcpi_probe_running_end()
 * LCPI_RUNNING_PROBE_MS later (several multiplexing intervals: a
 * multiplexed event runs in some of them). Returns the START's generation.
 * Under cpus_read_lock() and lcpi_mutex.
 */
static u64 lcpi_probe_running_begin(void)
{
	struct lcpi_cpu *c;
	unsigned int cpu;
	u32 i;

	lcpi_start_gen++;
	for_each_online_cpu(cpu) {
		c = lcpi_cpus[cpu];
		c->probe_gen = lcpi_start_gen;
		for (i = 0; i < lcpi_cfg.nr_events; i++)
			if (c->events[i])
				c->probe_running[i] =
					lcpi_event_running(c->events[i]);
	}
	return lcpi_start_gen;
}

/*
 * The probe's second read, after the caller slept without the locks (a
 * START must not block CPU hotplug for 50 ms). Nothing if sampling
 * stopped or started again meanwhile (@gen is not the last START's); only
 * the CPUs whose events have lived since the first read (a CPU taken off
 * or put back on meanwhile has probe_gen 0 or older). An event that
 * advanced on no such CPU is marked in lcpi_not_running (GET_INFO's
 * LCPI_EVENT_INFO_NOT_RUNNING) and said in the log. Its samples are not a
 * profile until it runs. Under cpus_read_lock() and lcpi_mutex.
 */
void lcpi_probe_running_end(u64 gen)
{
	struct lcpi_cpu *c;
	unsigned int cpu;
	u32 i, ran = 0;

	if (!lcpi_running || gen != lcpi_start_gen)
		return;
	for_each_online_cpu(cpu) {
		c = lcpi_cpus[cpu];
		if (c->probe_gen != gen)
			continue;
		for (i = 0; i < lcpi_cfg.nr_events; i++)
			if (c->events[i] &&
			    lcpi_event_running(c->events[i]) >
			    c->probe_running[i])
				ran |= BIT(i);
	}
	lcpi_not_running = 0;
	for (i = 0; i < lcpi_cfg.nr_events; i++) {
		if (ran & BIT(i))
			continue;
		lcpi_not_running |= BIT(i);
		pr_warn("event %u (type %u config 0x%llx) created but not running on any CPU in %u ms: the PMU has no counter for it\n",
			i, lcpi_real[i].type, lcpi_real[i].config,
			LCPI_RUNNING_PROBE_MS);
	}
}

/*
 * Under cpus_read_lock() and lcpi_mutex. On success *@gen names it for
 * lcpi_probe_running_end(), which the caller runs LCPI_RUNNING_PROBE_MS
 * later, the locks dropped in between.
 */
int lcpi_sample_start(u64 *gen)
{
	unsigned int cpu;
	int ret;

	if (lcpi_running)
		return -EBUSY;
	/* probe again: a fallback chosen last time may not be needed now */
	lcpi_sample_configure(&lcpi_cfg);
again:
	/* every CPU is probed: the PMU may lack an event on some CPUs only */
	for_each_online_cpu(cpu) {
		ret = lcpi_cpu_create(lcpi_cpus[cpu], true);
		if (ret == 1) {
			/* an event is less precise or cpu-clock now, everywhere */
			lcpi_sample_stop();
			goto again;
		}
		if (ret) {
			lcpi_sample_stop();
			return ret;
		}
	}
	lcpi_running = true;
	*gen = lcpi_probe_running_begin();
	return 0;
}

/* Under cpus_read_lock() and lcpi_mutex. */
void lcpi_sample_stop(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		lcpi_cpu_release(lcpi_cpus[cpu]);
	lcpi_running = false;
	lcpi_not_running = 0;
}

/*
 * Every event's mean period is @periods[i] from now on: the handlers' next
 * choice (lcpi_jitter()), each CPU's live event at once (perf_event_period()
 * stops it, sets attr and hw.sample_period, clears period_left and starts
 * it again, on the event's CPU), and the events a CPU coming online opens
 * (lcpi_real). Returns the first error of perf_event_period(). Under
 * cpus_read_lock() and lcpi_mutex (no CPU comes or goes, no START or STOP).
 */
static int lcpi_periods_apply(const u64 *periods)
{
	struct lcpi_cpu *c;
	unsigned int cpu;
	int ret;
	u32 i;

	for (i = 0; i < lcpi_cfg.nr_events; i++) {
		WRITE_ONCE(lcpi_period[i], periods[i]);
		lcpi_real[i].period = periods[i];
	}
	for_each_online_cpu(cpu) {
		c = lcpi_cpus[cpu];
		for (i = 0; i < lcpi_cfg.nr_events; i++) {
			if (!c->events[i])
				continue;
			ret = perf_event_period(c->events[i], periods[i]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * SET_PERIODS: @periods (one per configured event, checked by the caller
 * against each event's floor and 2^62) become the mean periods while
 * sampling; on an error every event goes back to the periods it had, so
 * all CPUs keep sampling at one period. -EINVAL while stopped. Under
 * cpus_read_lock() and lcpi_mutex.
 */
int lcpi_sample_set_periods(const u64 *periods)
{
	u64 old[LCPI_MAX_EVENTS];
	u32 i;
	int ret;

	if (!lcpi_running)
		return -EINVAL;
	for (i = 0; i < lcpi_cfg.nr_events; i++)
		old[i] = lcpi_period[i];
	ret = lcpi_periods_apply(periods);
	if (ret) {
		pr_warn("SET_PERIODS: perf refused a period (%d): the old ones stay\n",
			ret);
		lcpi_periods_apply(old);
	}
	return ret;
}

/* The mean period event @i samples at now. Under lcpi_mutex. */
u64 lcpi_sample_period(u32 i)
{
	return lcpi_period[i];
}

void lcpi_sample_init(void)
{
	lcpi_sample_configure(&lcpi_default_cfg);
}

/* Hotplug: runs on @cpu with the hotplug lock held. Never fails. */
int lcpi_sample_cpu_online(unsigned int cpu)
{
	mutex_lock(&lcpi_mutex);
	if (lcpi_running)
		lcpi_cpu_create(lcpi_cpus[cpu], false);
	mutex_unlock(&lcpi_mutex);
	return 0;
}

void lcpi_sample_cpu_offline(unsigned int cpu)
{
	mutex_lock(&lcpi_mutex);
	lcpi_cpu_release(lcpi_cpus[cpu]);
	mutex_unlock(&lcpi_mutex);
}

struct lcpi_flush_arg {
	struct lcpi_cpu *c;
	u64 first;		/* the step: entries [first, first + n) */
	u64 n;
	int seal;		/* the last step: seal the active buffer */
	int again;
	int wake;
};

/*
 * One step of a flush, on the table's CPU with interrupts off, or for an
 * offline CPU anywhere. lcpi_ht_flush_range() takes the table as the
 * handler does (NMIs now stay out), or leaves it alone if this IPI
 * interrupted a handler inside it.
 */
static void lcpi_flush_step(void *info)
{
	struct lcpi_flush_arg *a = info;

	if (lcpi_ht_flush_range(&a->c->ht, a->first, a->n, a->seal,
				local_clock(), &a->wake))
		a->again = 1;
}

/* The IPI: one step, timed (interrupts are off for all of it). */
static void lcpi_flush_step_ipi(void *info)
{
	struct lcpi_flush_arg *a = info;
	u64 t0 = local_clock();
	u64 ns;

	lcpi_flush_step(info);
	ns = local_clock() - t0;
	if (ns > a->c->flush_irqoff_ns_max)
		a->c->flush_irqoff_ns_max = ns;
}

/*
 * Writes @c's table out in steps of LCPI_FLUSH_STEP_ENTRIES, each a
 * separate IPI, so interrupts are never off for a whole table (16,384
 * entries by default) on a sampled CPU. A sample that arrives between two
 * steps is counted in the table as any other, for the next flush. Returns
 * -EAGAIN when the buffers filled or a handler was inside the table (the
 * reader drains and calls again), another errno if the IPI failed, else 0;
 * sets *@wake when a buffer was sealed.
 */
static int lcpi_flush_table(struct lcpi_cpu *c, bool online, bool *wake)
{
	u64 entries = lcpi_ht_entries(&c->ht);
	struct lcpi_flush_arg a = { .c = c };
	int ret;

	for (a.first = 0; a.first < entries; a.first += a.n) {
		a.n = min_t(u64, LCPI_FLUSH_STEP_ENTRIES, entries - a.first);
		a.seal = a.first + a.n == entries;
		a.wake = 0;
		if (online) {
			ret = smp_call_function_single(c->id, lcpi_flush_step_ipi,
						       &a, 1);
			if (ret)
				return ret;
		} else {
			lcpi_flush_step(&a);
		}
		*wake |= a.wake;
		if (a.again)
			return -EAGAIN;
	}
	return 0;
}

/*
 * Writes every table out to its buffers. -EAGAIN if some buffers filled
 * first, or a table was in use by a handler the flush interrupted: the
 * reader drains the buffers and calls again. Under cpus_read_lock() and
 * lcpi_mutex, so no CPU comes or goes meanwhile; an offline CPU has no
 * counters, so its table, if it still has one, is flushed from here, and
 * freed once drained.
 */
int lcpi_sample_flush(void)
{
	struct lcpi_cpu *c;
	unsigned int cpu;
	bool again = false, wake = false;
	int ret;

	for_each_possible_cpu(cpu) {
		c = lcpi_cpus[cpu];
		if (cpu_online(cpu)) {
			ret = lcpi_flush_table(c, true, &wake);
		} else if (c->mem) {
			/* an offline CPU's counts not drained yet */
			ret = lcpi_flush_table(c, false, &wake);
			lcpi_cpu_mem_trim(c);
		} else {
			continue;
		}
		if (ret == -EAGAIN)
			again = true;
		else if (ret)
			return ret;
	}
	if (wake)
		wake_up_interruptible(&lcpi_wait);
	return again ? -EAGAIN : 0;
}

/*
 * Event @i as the first CPU that samples it opened it, for GET_INFO's view
 * of its attributes; NULL while stopped. Under lcpi_mutex.
 */
const struct perf_event *lcpi_sample_first_event(u32 i)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (lcpi_cpus[cpu]->events[i])
			return lcpi_cpus[cpu]->events[i];
	return NULL;
}

/* Total times of @c's events, released ones included. Under lcpi_mutex. */
void lcpi_sample_times(struct lcpi_cpu *c, u64 *enabled, u64 *running)
{
	u64 en, run;
	u32 i;

	for (i = 0; i < LCPI_MAX_EVENTS; i++) {
		enabled[i] = c->time_enabled[i];
		running[i] = c->time_running[i];
		if (!c->events[i])
			continue;
		en = 0;
		run = 0;
		perf_event_read_value(c->events[i], &en, &run);
		enabled[i] += en;
		running[i] += run;
	}
}
