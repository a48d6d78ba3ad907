#!/bin/bash
# memory.sh CHECK - guest script, booted with more possible CPUs than online
# ones: lcpi.ko's per-CPU memory follows the online CPUs and an offline
# CPU's counts are not lost (lcpi_kmod_check memory); then the module
# unloads, its memory is gone, and the kernel log stays clean.
set -e
"$1" memory
rmmod lcpi
if grep -q ' \[lcpi\]' /proc/vmallocinfo; then
	echo "memory: lcpi's vmalloc areas left after rmmod:"
	grep ' \[lcpi\]' /proc/vmallocinfo
	exit 1
fi
"$(dirname "$0")/dmesg-check.sh"
