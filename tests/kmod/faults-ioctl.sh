#!/bin/bash
# faults-ioctl.sh FAULTS [SEED] - guest script: every ioctl with hostile
# arguments (NULL, kernel and unmapped pointers, random bytes, random
# numbers and sizes, random event configurations); no oops, the device works
# after, the module unloads, and the kernel log stays clean.
set -e
"$1" hostile-ioctls --seed "${2:-0x1c91}"
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
