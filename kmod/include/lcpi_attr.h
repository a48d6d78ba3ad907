/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * lcpi_attr.h - the one place where lcpi.ko turns a requested event
 * (struct lcpi_event_config) into the perf_event_attr it creates, and the
 * order in which it asks again when the PMU refuses. Compiled into the
 * module and into tests/unit/kmod/attr_test.cpp, which states the rules
 * where there is no PMU. docs/kmod.md cites the kernel lines behind each.
 *
 * The rules:
 *  - A sample period, never a frequency (freq = 0), and one overflow
 *    interrupt per sample: wakeup_events = 1 with no watermark. With
 *    precise_ip set, x86's intel_pmu_hw_config() (6.1 core.c:3962-3968,
 *    6.12 core.c:4083-4089) sets AUTO_RELOAD, and with sample_type 0 also
 *    LARGE_PEBS and PERF_ATTACH_SCHED_CB, unless freq or wakeup_events
 *    (without watermark) is set. LARGE_PEBS batches records into a 64 KiB
 *    buffer that reaches the overflow handler once per buffer; the sched
 *    callback's static key takes cpus_read_lock() inside START's. A kernel
 *    counter has no ring, so wakeup_events wakes nobody: it only keeps
 *    every sample on the interrupt path.
 *  - precise_ip only where it can help: hardware cycles and instructions
 *    (Intel PEBS, AMD IBS op for cycles); every other event at 0, so no
 *    PEBS-less raw or cache event is put on an empty PEBS constraint.
 *    And only with the per-sample interrupt above (lcpi_attr_build()
 *    never sets one without the other).
 *  - exclude_guest: on a KVM host a PMU overflow while a vCPU runs would
 *    be filed as a host sample (perf record sets it by default too).
 *    Except where a precise PMU refuses it: AMD's IBS PMUs declare
 *    PERF_PMU_CAP_NO_EXCLUDE (6.1 amd/ibs.c:641,665), so
 *    perf_try_init_event() returns -EINVAL (6.1 kernel/events/core.c:11640)
 *    and cycles would never reach IBS. perf's tool drops exclude_guest for
 *    precise events on AMD; lcpi asks once without it after -EINVAL at a
 *    precise level, before lowering it (GET_INFO reports the flag).
 *  - The floors (lcpi_abi.h): a clock's mean period is at least
 *    LCPI_MIN_PERIOD_CLOCK_NS, a PMU event's LCPI_MIN_PERIOD_EVENTS.
 *  - The lowering order when creation fails: at precise_ip above 0, after
 *    -EINVAL with exclude_guest set, the same level once without it; then
 *    precise_ip one level down (exclude_guest set again) on ANY error (as perf's tool does: AMD's IBS refuses with
 *    -ENOENT what its core PMU takes at precise 0), down to 0; only then,
 *    and only for hardware cycles with LCPI_EVENT_FALLBACK_CPU_CLOCK, the
 *    software cpu-clock, when the PMU lacks cycles (-ENOENT, -EOPNOTSUPP);
 *    any other error is reported.
 */
#ifndef LCPI_ATTR_H
#define LCPI_ATTR_H

#include <linux/perf_event.h>

#include "lcpi_abi.h"

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/string.h>
#else
#include <errno.h>
#include <string.h>
#endif

/* perf_event_attr.precise_ip's highest level: the exact instruction */
#define LCPI_PRECISE_MAX 3

/* a fallen-back PMU period becomes ns as if at 2 GHz, as lcpid's perf source */
#define LCPI_ASSUMED_CYCLES_PER_NS 2

static inline int lcpi_attr_is_clock(const struct lcpi_event_config *ev)
{
	return ev->type == PERF_TYPE_SOFTWARE &&
	       (ev->config == PERF_COUNT_SW_CPU_CLOCK ||
		ev->config == PERF_COUNT_SW_TASK_CLOCK);
}

static inline int lcpi_attr_is_cycles(const struct lcpi_event_config *ev)
{
	return ev->type == PERF_TYPE_HARDWARE &&
	       ev->config == PERF_COUNT_HW_CPU_CYCLES;
}

/* The shortest mean period @ev may ask for (lcpi_abi.h's floors). */
static inline __u64 lcpi_attr_min_period(const struct lcpi_event_config *ev)
{
	return lcpi_attr_is_clock(ev) ? LCPI_MIN_PERIOD_CLOCK_NS :
					LCPI_MIN_PERIOD_EVENTS;
}

/*
 * 0 if @period may be @ev's mean period, else -EINVAL: from its floor up to
 * 2^62 (SET_CONFIG's and SET_PERIODS' bounds; the jitter then moves single
 * periods by at most half of it, far from perf's limit of 2^63).
 */
static inline int lcpi_attr_check_period(const struct lcpi_event_config *ev,
					 __u64 period)
{
	if (period < lcpi_attr_min_period(ev) || period >= (1ULL << 62))
		return -EINVAL;
	return 0;
}

/*
 * 0 if SET_CONFIG may take @ev as a used slot, else -EINVAL: a type the
 * module knows, of the software events only the two clocks (lcpi_dev.c
 * says why), a mean period from its floor up to 2^62, jitter 0..50 %, no
 * unknown flag, the reserved field zero.
 */
static inline int lcpi_attr_check(const struct lcpi_event_config *ev)
{
	if (ev->type != PERF_TYPE_HARDWARE && ev->type != PERF_TYPE_SOFTWARE &&
	    ev->type != PERF_TYPE_HW_CACHE && ev->type != PERF_TYPE_RAW)
		return -EINVAL;
	if (ev->type == PERF_TYPE_SOFTWARE && !lcpi_attr_is_clock(ev))
		return -EINVAL;
	if (lcpi_attr_check_period(ev, ev->period))
		return -EINVAL;
	if (ev->jitter_pct > 50 || ev->reserved)
		return -EINVAL;
	if (ev->flags & ~LCPI_EVENT_FALLBACK_CPU_CLOCK)
		return -EINVAL;
	return 0;
}

/*
 * The precise_ip @ev is first asked for: LCPI_PRECISE_MAX for hardware
 * cycles and instructions, where PEBS or IBS can tag the exact
 * instruction; 0 for everything else.
 */
static inline __u8 lcpi_attr_precise_first(const struct lcpi_event_config *ev)
{
	if (ev->type != PERF_TYPE_HARDWARE)
		return 0;
	if (ev->config == PERF_COUNT_HW_CPU_CYCLES ||
	    ev->config == PERF_COUNT_HW_INSTRUCTIONS)
		return LCPI_PRECISE_MAX;
	return 0;
}

/*
 * The attributes lcpi.ko creates @ev with, at precise level @precise,
 * counting guest mode too if @guest (lcpi_attr_retry() says when).
 */
static inline void lcpi_attr_build(struct perf_event_attr *attr,
				   const struct lcpi_event_config *ev,
				   __u8 precise, __u8 guest)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = ev->type;
	attr->size = sizeof(*attr);
	attr->config = ev->config;
	attr->sample_period = ev->period;
	/* one interrupt per sample: no AUTO_RELOAD, LARGE_PEBS, sched cb */
	attr->wakeup_events = 1;
	attr->precise_ip = precise;
	attr->exclude_guest = !guest;
}

/* What the caller does after a creation error: lcpi_attr_retry(). */
enum lcpi_attr_step {
	LCPI_ATTR_GIVE_UP = 0,		/* report the error */
	LCPI_ATTR_LOWERED = 1,		/* *precise is one less: create again */
	LCPI_ATTR_FELL_BACK = 2,	/* *ev is cpu-clock now: create again */
	LCPI_ATTR_GUEST = 3,		/* *guest is 1: create again */
};

/*
 * Creating @ev at *@precise, with guest mode counted if *@guest, failed
 * with @err (< 0): above precise 0, after -EINVAL sets *@guest and asks the
 * same level again (IBS refuses exclude_guest); else lowers *@precise, with
 * *@guest 0 again, on any error while above 0; then, for hardware cycles that may fall back and
 * that the PMU lacks, turns *@ev into cpu-clock at the same rate if a cycle
 * took 1/LCPI_ASSUMED_CYCLES_PER_NS ns (at least the clock's floor), with
 * precise 0.
 */
static inline enum lcpi_attr_step
lcpi_attr_retry(struct lcpi_event_config *ev, __u8 *precise, __u8 *guest,
		long err)
{
	__u64 period;

	if (*precise && err == -EINVAL && !*guest) {
		*guest = 1;
		return LCPI_ATTR_GUEST;
	}
	*guest = 0;
	if (*precise) {
		(*precise)--;
		return LCPI_ATTR_LOWERED;
	}
	if (err != -ENOENT && err != -EOPNOTSUPP)
		return LCPI_ATTR_GIVE_UP;
	if (!(ev->flags & LCPI_EVENT_FALLBACK_CPU_CLOCK) ||
	    !lcpi_attr_is_cycles(ev))
		return LCPI_ATTR_GIVE_UP;
	ev->type = PERF_TYPE_SOFTWARE;
	ev->config = PERF_COUNT_SW_CPU_CLOCK;
	period = ev->period / LCPI_ASSUMED_CYCLES_PER_NS;
	ev->period = period > LCPI_MIN_PERIOD_CLOCK_NS ?
		     period : LCPI_MIN_PERIOD_CLOCK_NS;
	*precise = 0;
	return LCPI_ATTR_FELL_BACK;
}

#endif /* LCPI_ATTR_H */
