/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * lcpi_throttle.h - the estimate of the samples an event lost while perf
 * throttled it. Compiled into the module and into
 * tests/unit/kmod/throttle_test.cpp.
 */
#ifndef LCPI_THROTTLE_H
#define LCPI_THROTTLE_H

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/types.h>
#else
#include <linux/types.h>
static inline __u64 div64_u64(__u64 a, __u64 b)
{
	return a / b;
}
#endif

/*
 * The samples lost between a throttle and the event's next sample, @gap ns
 * later, with @interval ns between its last two samples before: the time
 * past the one interval the sample now ends, over the interval. That time
 * is at most @tick_ns: perf unthrottles at the next tick (6.1
 * kernel/events/core.c perf_adjust_freq_unthr_context()), and the rest of
 * the gap is idle (cycles stop) or multiplexed out, where nothing is lost.
 * One division.
 */
static inline __u64 lcpi_throttle_lost(__u64 gap, __u64 interval,
				       __u64 tick_ns)
{
	if (!interval || gap <= interval)
		return 0;
	gap -= interval;
	if (gap > tick_ns)
		gap = tick_ns;
	return div64_u64(gap, interval);
}

#endif /* LCPI_THROTTLE_H */
