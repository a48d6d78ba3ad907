#!/bin/bash
# badargs.sh CHECK - guest script: every malformed request to /dev/lcpi
# fails with its documented errno; SET_PERIODS changes the rate while
# sampling (in this boot: a guest boot costs a minute of CI under TCG); the
# module then unloads cleanly.
set -e
CHECK=$1
"$CHECK" badargs
"$CHECK" periods
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
