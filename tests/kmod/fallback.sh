#!/bin/bash
# fallback.sh CHECK - guest script: the cpu-clock fallback policy, with
# errors injected into event creation through lcpi.ko's inject_errno and
# inject_cpu parameters (lcpi_kmod_check fallback); the module then
# unloads and the kernel log stays clean.
set -e
"$1" fallback
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
