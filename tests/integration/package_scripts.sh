#!/usr/bin/env bash
# package_scripts.sh DEBIAN_DIR VERSION - the package's group, as its
# maintainer scripts (DEBIAN_DIR/postinst.in, postrm.in) handle it, without
# building a package: each case runs postinst configure and postrm purge
# chrooted in a throw-away overlay of this machine's root (overlay_root.sh,
# as package.sh does for dpkg), so no group is made or deleted on the
# machine itself.
#
#   a pre-existing lcpi group that is not a system group (gid 1500): postinst
#     refuses, says why, exits non-zero, and leaves the group as it was
#   a pre-existing system group lcpi: adopted; purge leaves it (not ours)
#   no group: postinst creates it and records that; purge deletes it
#   a group-writable /var/lib/lcpi with a symlink planted as the marker:
#     root's write does not follow it
#   a group lcpi only a directory service (LDAP) knows: refused
# Needs root (exit 77 otherwise).
set -euo pipefail
debian=$(cd "$1" && pwd)
version=$2

if [ "$(id -u)" -ne 0 ]; then
  echo "package_scripts: needs root (a chroot in an overlay of /)" >&2
  exit 77
fi

work=$(mktemp -d /tmp/lcpi-package-scripts-XXXXXX)
trap 'rm -rf "$work"' EXIT
for s in postinst postrm; do
  sed "s/@PROJECT_VERSION@/$version/g" "$debian/$s.in" >"$work/$s"
  chmod 0755 "$work/$s"
done

cat >"$work/inroot.sh" <<'INROOT'
#!/bin/bash
set -u
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export DPKG_MAINTSCRIPT_PACKAGE=lcpi  # deb-systemd-helper runs only under dpkg
printf '#!/bin/sh\nexit 0\n' >/usr/local/sbin/dkms
chmod 0755 /usr/local/sbin/dkms
fresh() {
  getent group lcpi >/dev/null && groupdel lcpi
  rm -rf /var/lib/lcpi
}

echo "--- a pre-existing ordinary group lcpi (gid 1500)"
fresh
groupadd -g 1500 lcpi
rc=0
/postinst configure >/tmp/out 2>&1 || rc=$?
cat /tmp/out
[ "$rc" -ne 0 ] && pass "postinst refuses it (exit $rc)" || fail "postinst adopted an ordinary group lcpi"
grep -q "not a system group" /tmp/out && pass "postinst says why" || fail "postinst gave no reason"
[ "$(getent group lcpi | cut -d: -f3)" = 1500 ] && pass "the group is left as it was" ||
  fail "the group changed: $(getent group lcpi)"

echo "--- a pre-existing system group lcpi"
fresh
groupadd --system lcpi
gid=$(getent group lcpi | cut -d: -f3)
/postinst configure && pass "postinst adopts the system group lcpi ($gid)" || fail "postinst refused a system group"
/postrm purge || fail "postrm purge"
[ "$(getent group lcpi | cut -d: -f3)" = "$gid" ] && pass "purge leaves a group the package did not create" ||
  fail "purge deleted a group the package did not create"

echo "--- no group lcpi"
fresh
/postinst configure || fail "postinst"
getent group lcpi >/dev/null && pass "postinst creates lcpi: $(getent group lcpi)" || fail "no group lcpi"
/postrm purge || fail "postrm purge"
getent group lcpi >/dev/null && fail "purge left the group the package created" || pass "purge deletes it"

echo "--- a group-writable /var/lib/lcpi with a symbolic link planted as the marker"
fresh
install -d -m 0770 /var/lib/lcpi
echo "root's file" >/etc/lcpi-victim
ln -s /etc/lcpi-victim /var/lib/lcpi/.group-made-by-package
/postinst configure >/tmp/out 2>&1 || fail "postinst: $(cat /tmp/out)"
cat /tmp/out
[ "$(cat /etc/lcpi-victim)" = "root's file" ] && pass "root's write did not follow the link" ||
  fail "the planted link redirected postinst's write: /etc/lcpi-victim is now '$(cat /etc/lcpi-victim)'"
rm -f /etc/lcpi-victim /var/lib/lcpi/.group-made-by-package

echo "--- a group lcpi from a directory service (getent sees it, /etc/group does not)"
fresh
printf '#!/bin/sh\n[ "$1 $2" = "group lcpi" ] && { echo "lcpi:*:500:"; exit 0; }\nexec /usr/bin/getent "$@"\n' \
  >/usr/local/bin/getent
chmod 0755 /usr/local/bin/getent
rc=0
/postinst configure >/tmp/out 2>&1 || rc=$?
cat /tmp/out
# (Adopted, it fails later for another reason: install -g cannot name the
# stub's group. The refusal must be postinst's own, saying why.)
[ "$rc" -ne 0 ] && grep -q "not in /etc/group" /tmp/out &&
  pass "postinst refuses a group not in /etc/group (exit $rc)" ||
  fail "postinst adopted a directory service's group lcpi (exit $rc)"
rm -f /usr/local/bin/getent
exit $((failures > 0))
INROOT
chmod 0755 "$work/inroot.sh"

. "$(dirname "$0")/overlay_root.sh"
if in_overlay_root "$work" 64m "$work/postinst" "$work/postrm" "$work/inroot.sh" -- /inroot.sh; then
  echo "package_scripts: all checks passed"
else
  echo "package_scripts: failure(s) above" >&2
  exit 1
fi
