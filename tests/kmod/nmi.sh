#!/bin/bash
# nmi.sh SHARES WORKLOAD NM_FILE - guest script for the arm64 kernel built
# with pseudo-NMIs (run-guest.sh --nmi): the PMU driver says its overflow
# interrupt is an NMI, and shares.sh passes with --nmi: the known shares
# within 2 points, and every run of lcpi.ko's handler was in NMI context.
set -e
dmesg | grep 'hw perfevents' || true
if ! dmesg | grep -q 'hw perfevents:.* using NMIs'; then
	echo "nmi: the PMU's overflow interrupt is not an NMI on this kernel"
	exit 1
fi
exec "$(dirname "$0")/shares.sh" "$@" --nmi
