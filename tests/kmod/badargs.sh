#!/bin/bash
# badargs.sh CHECK - guest script: every malformed request to /dev/lcpi
# fails with its documented errno; the module then unloads cleanly.
set -e
CHECK=$1
"$CHECK" badargs
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
