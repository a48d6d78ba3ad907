#!/bin/bash
# pinned.sh CHECK - guest script (a guest with a PMU): a user's pinned
# cycles counters crowd out lcpi.ko's unpinned cycles event, and START
# reports it as not running (lcpi_kmod_check pinned); the module unloads
# and the kernel log is clean.
set -e
"$1" pinned
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
