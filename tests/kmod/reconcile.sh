#!/bin/bash
# reconcile.sh CHECK - guest script: with lcpi.ko loaded, sample busy
# processes, flush, read every buffer and reconcile the counts with the
# statistics (lcpi_kmod_check reconcile), then unload; the kernel log must
# stay clean.
set -e
CHECK=$1
"$CHECK" reconcile --ms 2000
"$CHECK" reconcile --ms 1000 --hotplug
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
