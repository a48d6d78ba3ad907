#!/bin/bash
# faults-unload-open.sh FAULTS - guest script: unloading lcpi.ko while
# /dev/lcpi is open (sampling, a reader blocked in read()) is refused ("in use"; delete_module gives EAGAIN)
# and harms nothing; after close it unloads. The kernel log stays clean.
set -e
"$1" unload-open
if lsmod | grep -q '^lcpi '; then echo "lcpi still loaded"; exit 1; fi
"$(dirname "$0")/dmesg-check.sh"
