#!/bin/bash
# storm.sh STORM WORKLOAD NM_FILE - guest script (a guest with a PMU, where
# lcpid cannot run): 500 short-lived processes sampled by hardware cycles
# through lcpi.ko are attributed to their image by pid and address
# (lcpi_kmod_storm); the module unloads and the kernel log stays clean.
set -e
"$1" --workload "$2" --symbols "$3" --processes 500 --ms 4
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
