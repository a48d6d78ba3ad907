#!/bin/bash
# daemon.sh DAEMON_TEST BUDGET_TEST STACKS_SH ARGS... - guest script: lcpid
# with the kmod source must give the answers the perf source gives on the
# host: the known-shares workload and the storm of short-lived processes
# (the same Catch2 tests, run with LCPI_TEST_SOURCE=kmod); with
# perf_event_max_sample_rate lowered, the module counts the throttle events
# of its cpu-clock at 10 us, and the samples throttling cost it estimates
# add up to the unthrottled rate; call stacks, taken through the perf event
# beside the module, give stacks.sh's known answers.
set -e
export LCPI_TEST_SOURCE=kmod
# one comma-separated spec (Catch2 ORs its parts); --warn NoTests fails a run
# whose names match nothing
"$1" --warn NoTests "known shares of work come back within a few points,\
a storm of 500 short-lived processes is attributed to its image,\
SIGTERM loses nothing and the figures add up,\
events perf throttles are counted in the status and the database,\
kmod: the samples throttling cost are estimated within 25 % of the unthrottled rate"
# a sample costs ~170 us here under TCG: 1 % would sit at the 100/s floor;
# TCG's late hrtimers deliver ~40 % of a governed cpu-clock rate
LCPI_TEST_BUDGET_PCT=20 LCPI_TEST_RATE_LOW=0.3 LCPI_TEST_SAMPLE_COST_NS=200000 "$2" --warn NoTests "the governed period reaches the source and every window stores its own"
shift 2
"$@"
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
