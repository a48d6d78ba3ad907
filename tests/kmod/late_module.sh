#!/bin/bash
# late_module.sh LCPID LCPICTL LCPIPROF - guest script: kernel code loaded
# after lcpid started is named on the kernel side. lcpid starts (source
# kmod: lcpi.ko is loaded), then Debian's sha3_generic module is loaded and
# kept busy hashing through AF_ALG for a few seconds. Its pcs lie outside
# every module lcpid read at start; lcpid must read kallsyms again and file
# them on the module's image, named by procedure (crypto_sha3_update, into
# which Debian's build inlines keccakf), not on the
# "[kernel]" unresolved image nor any process's unknown image.
set -e
LCPID=$1
LCPICTL=$2
LCPIPROF=$3
fail() { echo "late_module: FAIL: $*"; exit 1; }
. "$(dirname "$0")/stop-lcpid.sh"
db=$TMPDIR/late.db sock=$TMPDIR/late.sock log=$TMPDIR/late.log
grep -q '^sha3_generic ' /proc/modules && fail "sha3_generic is loaded before lcpid started"
# The socket interface to the crypto API, before lcpid: only the hashing
# module is the late one. (The guest has no module autoloading.)
modprobe -a af_alg algif_hash || fail "modprobe af_alg algif_hash"

"$LCPID" --foreground --db "$db" --socket "$sock" --log-level info >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
	"$LCPICTL" --socket "$sock" status >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "lcpid exited"; }
	sleep 0.5
done
"$LCPICTL" --socket "$sock" flush >/dev/null  # kernel symbols stored; start-up done

modprobe sha3_generic || fail "modprobe sha3_generic"
python3 - <<'PY'
import socket, time
alg = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)
alg.bind(("hash", "sha3-512-generic"))
op, _ = alg.accept()
block = bytes(range(256)) * 256
end = time.time() + 4
rounds = 0
while time.time() < end:
    op.sendall(block)
    op.recv(64)
    rounds += 1
print(f"late_module: {rounds} x 64 KB hashed with sha3-512-generic")
PY

"$LCPICTL" --socket "$sock" flush >/dev/null  # the tables hold the samples till then
status=$("$LCPICTL" --socket "$sock" status)
stop_lcpid "$pid" || { rc=$?; cat "$log"; fail "lcpid exit status $rc"; }
echo "$status" | grep -E '^(source|samples|unknown|kernel_symbol)' || true
"$LCPIPROF" --db "$db" -p --format csv >"$TMPDIR/procs.csv"
python3 - "$TMPDIR/procs.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
col = next(k for k in rows[0] if k.endswith('_percent') and not k.endswith('cum_percent'))
count = col[:-len('_percent')]
def total(pred):
    return sum(float(r[count]) for r in rows if pred(r))
module = total(lambda r: r['image'] == '[sha3_generic]')
# keccakf is inlined into crypto_sha3_update in Debian's build
sha3 = ('crypto_sha3_update', 'keccakf', 'crypto_sha3_final')
named = total(lambda r: r['image'] == '[sha3_generic]' and r['procedure'] in sha3)
unresolved = total(lambda r: r['identity'] == 'kernel:unresolved')
print(f"late_module: [sha3_generic] {module:.0f} samples, named sha3 code {named:.0f};"
      f" [kernel] unresolved {unresolved:.0f}")
for r in sorted(rows, key=lambda r: -float(r[count]))[:8]:
    print(f"  {float(r[count]):8.0f}  {r['procedure']:40} {r['image']}")
assert named >= 50, "the module loaded after lcpid started is not named"
assert named > 0.9 * module, "the late module's samples are not named by procedure"
assert named > unresolved, "more kernel samples unresolved than on the late module"
PY
grep -q '^kernel_symbol_reloads [1-9]' <<<"$status" || fail "no kallsyms re-read counted"
rmmod lcpi
"$(dirname "$0")/dmesg-check.sh"
echo "late_module: ok"
