#!/bin/bash
# shares.sh SHARES WORKLOAD NM_FILE [OPTION...] - guest script (a guest with
# a PMU): the shares workload sampled by hardware cycles through lcpi.ko
# lands on its known shares (lcpi_kmod_shares, with OPTIONs such as --nmi);
# the module unloads and the kernel log stays clean.
set -e
check=$1 workload=$2 symbols=$3
shift 3	# (busybox sh, the arm64 guest's, has no "${@:4}")
"$check" --workload "$workload" --symbols "$symbols" --seconds 5 --period 500000 \
	--expect work60=60 --expect work30=30 --expect work10=10 "$@"
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
