#!/bin/bash
# dmesg_check_test.sh - dmesg-check.sh against fixture kernel logs, on the
# host: every fixtures/dmesg/*.txt but clean.txt holds one report the
# check must fail on; clean.txt (words like "DEBUG" that hold "BUG")
# must pass. A stub `dmesg` first on PATH prints the fixture.
set -u
here=$(cd "$(dirname "$0")" && pwd)
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
printf '#!/bin/sh\ncat "$DMESG_FIXTURE"\n' >"$stub/dmesg"
chmod +x "$stub/dmesg"
fail=0
for f in "$here"/fixtures/dmesg/*.txt; do
	name=$(basename "$f")
	DMESG_FIXTURE=$f PATH="$stub:$PATH" "$here/dmesg-check.sh" >/dev/null 2>&1
	rc=$?
	if [ "$name" = clean.txt ]; then
		want=0
	else
		want=1
	fi
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $name: dmesg-check exit $rc, want $want"
		fail=1
	else
		echo "ok: $name: exit $rc"
	fi
done
exit "$fail"
