#!/bin/bash
# source.sh CHECK - guest script: libprofile's KmodSource reads lcpi.ko and
# reconciles what it delivered with the module's statistics.
set -e
"$1"
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
