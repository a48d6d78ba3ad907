#!/bin/bash
# boot_retry.sh RUN_GUEST BUILD_DIR - runs on the host. run-guest.sh boots
# once more, and only once, a guest whose kernel died before /init ran (here
# made to die: rdinit and init name no program, so the kernel panics), and
# says so; a command that fails in a guest that booted is not retried.
set -u
RUN_GUEST=$1
BUILD=$2
fail() {
	echo "FAIL: $*"
	exit 1
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

LCPI_GUEST_APPEND="rdinit=/nonexistent init=/nonexistent" "$RUN_GUEST" --no-load --timeout 90 \
	--build-dir "$BUILD" -- true >/dev/null 2>"$out"
rc=$?
cat "$out"
[ "$rc" = 77 ] && exit 77
[ "$rc" = 125 ] || fail "a guest that never booted: exit $rc, want 125"
n=$(grep -c 'died while booting, before /init ran' "$out")
[ "$n" = 1 ] || fail "said $n times that the guest died while booting, want 1"
kept=$(sed -n 's/.*log: \(.*console.boot-1.log\)).*/\1/p' "$out")
[ -s "$kept" ] || fail "the first boot's console log ($kept) was not kept"
grep -q 'Kernel panic' "$kept" || fail "the kept log shows no kernel panic"

"$RUN_GUEST" --no-load --timeout 90 --build-dir "$BUILD" -- false >/dev/null 2>"$out"
rc=$?
cat "$out"
[ "$rc" = 1 ] || fail "false in a booted guest: exit $rc, want 1"
! grep -q 'died while booting' "$out" || fail "a guest that booted was booted again"
echo "PASS"
