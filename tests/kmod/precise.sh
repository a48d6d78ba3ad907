#!/bin/bash
# precise.sh CHECK - guest script (a guest with a PMU): lcpi.ko opens a PMU
# event at the highest precise_ip the PMU accepts and GET_INFO says which
# (lcpi_kmod_check precise, which also makes the PMU refuse levels through
# the module's inject_precise); the module unloads, the kernel log is clean.
set -e
"$1" precise
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
