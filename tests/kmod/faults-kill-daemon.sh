#!/bin/bash
# faults-kill-daemon.sh FAULTS LCPID - guest script: lcpid --source kmod is
# wedged (SIGSTOP) and then killed (SIGKILL) while the module samples; a new
# reader gets the device at once, finds every sample accounted (drops
# counted where the buffers filled) and samples again; the module unloads,
# and the kernel log stays clean.
set -e
"$1" kill-daemon "$2"
echo "kill-daemon: checker done at ${SECONDS}s"
rmmod lcpi
echo "kill-daemon: unloaded at ${SECONDS}s"
"$(dirname "$0")/dmesg-check.sh"
