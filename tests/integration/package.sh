#!/usr/bin/env bash
# package.sh BUILD_DIR VERSION - builds the Debian package (cpack -G DEB) from
# BUILD_DIR and checks it: its files and their modes (dpkg-deb -c), lintian
# (no errors; warnings listed), then dpkg -i, dpkg -r and dpkg --purge in a
# throw-away root.
#
# The throw-away root (overlay_root.sh) is this machine's own root file
# system under an overlay whose upper layer is a tmpfs, in a private mount
# namespace (unshare -m), and dpkg runs chrooted into it. Everything the package's scripts need (adduser,
# init-system-helpers, man-db, systemd-analyze) is already there, nothing is
# bootstrapped, and nothing the install, remove or purge does (the group,
# /var/lib/lcpi, the dpkg database) reaches the real machine: the upper
# layer vanishes with the namespace. That is why it is preferred to
# `dpkg -i` on the machine itself (a pre-existing lcpi group or
# /var/lib/lcpi would be deleted by the purge) and to `dpkg --root` (an empty
# root would need a bootstrap of every dependency first).
#
# dkms is replaced in the overlay by a stub that logs its arguments, so the
# maintainer scripts' DKMS steps are checked without building the module.
# Needs root (exit 77 otherwise).
set -euo pipefail
build=$(cd "$1" && pwd)
version=$2

if [ "$(id -u)" -ne 0 ]; then
  echo "package: needs root (dpkg -i in an overlay of /)" >&2
  exit 77
fi
for tool in cpack dpkg-deb lintian man unshare chroot systemd-analyze help2man fakeroot; do
  command -v "$tool" >/dev/null || { echo "package: $tool missing: run scripts/setup.sh" >&2; exit 1; }
done

work=$(mktemp -d /tmp/lcpi-package-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# --- build -------------------------------------------------------------------
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; exit 1; }
deb=$(ls "$work"/out/lcpi_"$version"_*.deb)
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"

# --- contents and modes --------------------------------------------------------
# "MODE OWNER PATH" for every file and directory of the package
dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); sub(/\/$/, "", p); print $1, $2, p }' \
  >"$work/contents"
expect() {  # expect MODE PATH: the package holds PATH with MODE, owned by root
  local mode=$1 path=$2 line
  line=$(awk -v p="$path" '$3 == p' "$work/contents")
  if [ -z "$line" ]; then
    fail "$path is not in the package"
  elif [ "$line" != "$mode root/root $path" ]; then
    fail "$path: want $mode root/root, have ${line% *}"
  else
    pass "$mode root/root $path"
  fi
}
expect -rwxr-xr-x /usr/sbin/lcpid
for t in lcpictl lcpiprof lcpilist lcpidiff lcpi-ship; do expect -rwxr-xr-x /usr/bin/$t; done
expect -rw-r--r-- /lib/systemd/system/lcpid.service
expect -rw-r--r-- /lib/systemd/system/lcpi-ship.service
expect -rw-r--r-- /usr/share/man/man8/lcpid.8.gz
for t in lcpictl lcpiprof lcpilist lcpidiff lcpi-ship; do expect -rw-r--r-- /usr/share/man/man1/$t.1.gz; done
src=/usr/src/lcpi-$version
for f in dkms.conf Kbuild Makefile lcpi.h lcpi_main.c lcpi_sample.c lcpi_dev.c \
  include/lcpi_abi.h include/lcpi_hashtable.h; do
  expect -rw-r--r-- "$src/$f"
done
for f in copyright changelog.gz operators.md tools.md fleet.md; do expect -rw-r--r-- /usr/share/doc/lcpi/$f; done
if grep -E '\.(o|ko|cmd|mod)$' "$work/contents"; then fail "build products of kmod/ in the package"; fi
dpkg-deb -x "$deb" "$work/x"
if grep -qx "PACKAGE_VERSION=\"$version\"" "$work/x$src/dkms.conf"; then
  pass "dkms.conf says PACKAGE_VERSION=\"$version\""
else
  fail "dkms.conf: $(grep PACKAGE_VERSION "$work/x$src/dkms.conf")"
fi
dpkg-deb -f "$deb" Depends Recommends | sed 's/^/package: /'

# --- lintian -------------------------------------------------------------------
# Errors fail the test; warnings and the rest are listed.
lintian --fail-on error --display-info "$deb" >"$work/lintian.log" 2>&1 && lint=0 || lint=$?
sed 's/^/lintian: /' "$work/lintian.log"
if [ "$lint" -ne 0 ] || grep -q '^E: ' "$work/lintian.log"; then
  fail "lintian reports errors"
else
  pass "lintian: no errors ($(grep -c '^W: ' "$work/lintian.log" || true) warnings)"
fi

# --- install, remove, purge in the throw-away root -------------------------------
cp "$deb" "$work/lcpi.deb"
cat >"$work/inroot.sh" <<'EOF'
#!/bin/bash
# Runs chrooted in the overlay: install, check, remove, check, purge, check.
set -u
version=$1 src=/usr/src/lcpi-$1
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
mode_of() { stat -c '%A %U:%G' "$1" 2>/dev/null || echo missing; }
want_mode() {  # want_mode "MODE OWNER:GROUP" PATH
  local have; have=$(mode_of "$2")
  if [ "$have" = "$1" ]; then pass "$1 $2"; else fail "$2: want $1, have $have"; fi
}

# This root is a copy: start it without lcpi, its group or its state.
dpkg --purge lcpi >/dev/null 2>&1 || true
getent group lcpi >/dev/null && groupdel lcpi
rm -rf /var/lib/lcpi
if getent group lcpi >/dev/null; then fail "group lcpi exists before the install"; fi
# dkms: a stub that logs what the maintainer scripts ask of it.
printf '#!/bin/sh\necho "$*" >>/var/log/dkms-stub.log\nexit 0\n' >/usr/local/sbin/dkms
chmod 0755 /usr/local/sbin/dkms
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

echo "--- dpkg -i"
dpkg -i /lcpi.deb || fail "dpkg -i"
if getent group lcpi >/dev/null; then pass "group lcpi exists: $(getent group lcpi)"; else fail "no group lcpi after install"; fi
want_mode "drwxr-x--- root:lcpi" /var/lib/lcpi
want_mode "-rwxr-xr-x root:root" /usr/sbin/lcpid
for t in lcpictl lcpiprof lcpilist lcpidiff lcpi-ship; do want_mode "-rwxr-xr-x root:root" /usr/bin/$t; done
want_mode "-rw-r--r-- root:root" /lib/systemd/system/lcpid.service
want_mode "-rw-r--r-- root:root" $src/dkms.conf
for step in "add -m lcpi -v $version" "build -m lcpi -v $version" "install -m lcpi -v $version"; do
  if grep -qx -- "$step" /var/log/dkms-stub.log; then pass "postinst: dkms $step"; else fail "postinst did not run dkms $step"; fi
done
if [ -L /etc/systemd/system/multi-user.target.wants/lcpid.service ]; then
  pass "lcpid.service enabled (multi-user.target.wants)"
else
  fail "lcpid.service not enabled"
fi
/usr/sbin/lcpid --help >/dev/null || fail "lcpid --help"
/usr/bin/lcpiprof --help >/dev/null || fail "lcpiprof --help"

# The unit: systemd-analyze verify (it also checks its man: links) and the
# exposure score.
if out=$(systemd-analyze verify /lib/systemd/system/lcpid.service 2>&1) && [ -z "$out" ]; then
  pass "systemd-analyze verify lcpid.service"
else
  fail "systemd-analyze verify: $out"
fi
exposure=$(systemd-analyze security --offline=true /lib/systemd/system/lcpid.service 2>/dev/null |
  sed -n 's/.*Overall exposure level for lcpid.service: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security: exposure $exposure"
if [ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e < 4.0) }'; then
  pass "exposure $exposure < 4.0"
else
  fail "exposure '$exposure' is not below 4.0"
fi

# Every man page: found by man, and rendered without a groff warning.
for page in lcpid.8 lcpictl.1 lcpiprof.1 lcpilist.1 lcpidiff.1; do
  name=${page%.*} section=${page##*.}
  file=/usr/share/man/man$section/$page.gz
  if [ "$(man -w "$section" "$name" 2>/dev/null)" != "$file" ]; then fail "man -w $section $name"; fi
  text=$(MANWIDTH=80 man --warnings -l "$file" 2>/tmp/man.err) || fail "man -l $file"
  if [ -s /tmp/man.err ]; then fail "man -l $file: $(cat /tmp/man.err)"; fi
  if grep -q "^NAME" <<<"$text" && grep -q -- "--help" <<<"$text" && grep -q "^SEE ALSO" <<<"$text"; then
    pass "man -l $file renders ($(wc -l <<<"$text") lines)"
  else
    fail "man -l $file: no NAME, --help or SEE ALSO"
  fi
done

echo "--- dpkg -r"
echo profiles >/var/lib/lcpi/profiles.db
chown root:lcpi /var/lib/lcpi/profiles.db
dpkg -r lcpi || fail "dpkg -r"
[ ! -e /usr/sbin/lcpid ] && [ ! -e $src ] && pass "remove: programs and module source gone" ||
  fail "remove left /usr/sbin/lcpid or $src"
grep -qx -- "remove -m lcpi -v $version --all" /var/log/dkms-stub.log && pass "prerm: dkms remove" ||
  fail "prerm did not run dkms remove"
[ -f /var/lib/lcpi/profiles.db ] && pass "remove keeps /var/lib/lcpi/profiles.db" || fail "remove deleted the profiles"
getent group lcpi >/dev/null && pass "remove keeps the group" || fail "remove deleted the group"

echo "--- dpkg --purge"
dpkg --purge lcpi || fail "dpkg --purge"
[ ! -e /var/lib/lcpi ] && pass "purge: /var/lib/lcpi gone" || fail "purge left /var/lib/lcpi"
getent group lcpi >/dev/null && fail "purge left the group lcpi" || pass "purge: group lcpi gone"
[ ! -e /etc/systemd/system/multi-user.target.wants/lcpid.service ] && pass "purge: unit disabled" ||
  fail "purge left the unit enabled"
dpkg-query -W lcpi >/dev/null 2>&1 && fail "dpkg still knows lcpi" || pass "dpkg: lcpi not installed"
exit $((failures > 0))
EOF
chmod 0755 "$work/inroot.sh"

. "$(dirname "$0")/overlay_root.sh"
in_overlay_root "$work" 512m "$work/lcpi.deb" "$work/inroot.sh" -- /inroot.sh "$version" &&
  inroot=0 || inroot=$?
if [ "$inroot" -ne 0 ]; then fail "install, remove or purge (above)"; fi

if [ "$failures" -ne 0 ]; then
  echo "package: $failures failure(s)" >&2
  exit 1
fi
echo "package: all checks passed"
