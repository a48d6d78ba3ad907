#!/bin/bash
# faults-kill-daemon.sh FAULTS MODE [ARG...] - guest script: the reader of
# /dev/lcpi is wedged (SIGSTOP) and then killed (SIGKILL) while the module
# samples; a new reader gets the device at once, finds every sample
# accounted (drops counted where the buffers filled) and samples again; the
# module unloads, and the kernel log stays clean. MODE is the checker's:
# "kill-daemon LCPID" (lcpid --source kmod is the reader) or "kill-reader
# [--cycles]" (a reader of the checker's own, where lcpid cannot run).
set -e
faults=$1
shift	# (busybox sh, the arm64 guest's, has no "${@:2}")
"$faults" "$@"
echo "kill-daemon: checker done at ${SECONDS}s"
rmmod lcpi
echo "kill-daemon: unloaded at ${SECONDS}s"
"$(dirname "$0")/dmesg-check.sh"
