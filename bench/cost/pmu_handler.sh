#!/bin/bash
# pmu_handler.sh FLOOR CHECK SHARES NM_FILE [PERIOD [ROUNDS]] - guest script
# for an arm64 guest (its emulated PMU interrupts; run-guest.sh --arch arm64,
# with --nmi for the kernel with pseudo-NMIs): what one PMU overflow
# interrupt costs with each consumer, as the kernel itself measures it, and
# beside it what lcpi.ko measures of its own handler.
#
# The kernel times every PMU interrupt (armpmu_dispatch_irq:
# sched_clock() around the driver's handler, which calls the consumer's
# overflow handler) and keeps a per-CPU running average of the last ~128
# (perf_sample_event_took()). It shows that average only when it exceeds
# the allowed time per sample, in "perf: interrupt took too long (AVG >
# ALLOWED)". So each run samples PMU cycles at PERIOD (500,000) for 6 s with
# a generous allowance (kernel.perf_cpu_time_max_percent 99 of a 2,000/s
# sample rate: ~495 us), then, 4 s in, cuts the allowance to 100 ns
# (percent 1 of 100,000/s): the next interrupt reports the running average
# of that moment. The consumers, alternately, ROUNDS (3) times:
#   perf-ring  FLOOR (bench/cost's lcpi-cost-floor, built for arm64): the
#              perf core's own output, a sample record written into a mmap
#              ring per CPU and read, as `perf record` has it
#   lcpi       CHECK (lcpi_kmod_shares) through lcpi.ko, whose statistics
#              also give its own handler's ns per hit and per miss
# each while the shares workload SHARES spins. Under QEMU's TCG these are
# the emulator's figures, not any real CPU's.
set -e
FLOOR=$1
CHECK=$2
SHARES=$3
NM=$4
PERIOD=${5:-500000}
ROUNDS=${6:-3}
PROC=/proc/sys/kernel

# A generous allowance: nothing is reported or throttled while the running
# average settles (the rate cap, 2,000/s/CPU, is above what the emulated
# PMU delivers at PERIOD).
allow() {
	echo 99 >$PROC/perf_cpu_time_max_percent
	echo 2000 >$PROC/perf_event_max_sample_rate
}
# 100 ns allowed: the next interrupt on each CPU reports its running average.
probe() {
	echo 1 >$PROC/perf_cpu_time_max_percent
	echo 100000 >$PROC/perf_event_max_sample_rate
}
# The first average reported since MARK was written to the kernel log.
reported() {
	dmesg | sed -n "/$1/,\$p" | sed -n 's/.*interrupt took too long (\([0-9]*\) > .*/\1/p' | head -n1
}

mkfifo "$TMPDIR/floor.ctl"
for round in $(seq 1 "$ROUNDS"); do
	mark="pmu_handler: perf-ring round $round"
	echo "$mark" >/dev/kmsg
	allow
	"$FLOOR" --period "$PERIOD" --type 0 --config 0 <"$TMPDIR/floor.ctl" >"$TMPDIR/floor.out" &
	floor=$!
	exec 3>"$TMPDIR/floor.ctl"
	echo enable >&3
	"$SHARES" 6 &
	work=$!
	sleep 4
	probe
	wait "$work"
	echo disable >&3
	sleep 1
	exec 3>&-
	wait "$floor" || true
	echo "perf-ring round $round: PMU interrupt average $(reported "$mark") ns;" \
		"$(grep samples "$TMPDIR/floor.out" || echo "no samples line")"

	mark="pmu_handler: lcpi round $round"
	echo "$mark" >/dev/kmsg
	allow
	"$CHECK" --workload "$SHARES" --symbols "$NM" --seconds 6 --period "$PERIOD" \
		--expect work60=60 --expect work30=30 --expect work10=10 >"$TMPDIR/lcpi.out" 2>&1 &
	check=$!
	sleep 5
	probe
	wait "$check" || true
	echo "lcpi round $round: PMU interrupt average $(reported "$mark") ns;" \
		"$(grep '^module:' "$TMPDIR/lcpi.out" || echo "no module line")"
	# each round's module statistics start from zero
	rmmod lcpi
	insmod "$LCPI_KO"
done
dmesg | grep 'hw perfevents' || true
