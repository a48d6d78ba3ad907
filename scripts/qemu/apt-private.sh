# shellcheck shell=bash disable=SC2034 # sets variables for the scripts that source it
# apt-private.sh - sourced by fetch-kernel.sh and build-nmi-kernel.sh, which
# download Debian's kernel packages at the host kernel's version without
# installing them: which version that is, and a private apt state in the
# cache folder for one Debian suite and architecture, so `apt-get download`
# can fetch another suite's or architecture's packages (or a source package
# the host never installs) without touching the host's dpkg or apt lists.
#
#   host_kernel              sets HOST_KABI (6.1.0-N) and HOST_KVERSION
#                            (6.1.M-K): the kernel the host's
#                            linux-image-amd64 depends on; both empty if none
#   apt_private SUITE ARCH   sets APT (an array of apt-get/apt-cache options)
#                            and APTDIR, updating the lists when they are
#                            more than a day old; returns 1 if that fails
#
# Uses CACHE (the cache folder) and a function say (messages to stderr).
# The archive is the host's (deb.debian.org), the lists are for ARCH only
# (they include the architecture-independent packages, linux-source-*).

host_kernel() {
	HOST_KABI=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/.*linux-image-\([0-9][^ ,]*\)-amd64.*/\1/p' | head -n1)
	HOST_KVERSION=""
	[ -z "$HOST_KABI" ] ||
		HOST_KVERSION=$(dpkg-query -W -f='${Version}' "linux-image-$HOST_KABI-amd64" 2>/dev/null || true)
}

apt_private() {
	local suite=$1 arch=$2
	local mirror=http://deb.debian.org/debian
	local security=http://deb.debian.org/debian-security
	APTDIR="$CACHE/apt/$suite-$arch"
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/sources.list.d"
	if [ ! -f "$APTDIR/sources.list" ]; then
		cat >"$APTDIR/sources.list" <<EOF
deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main
deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite-updates main
deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $security $suite-security main
EOF
	fi
	APT=(-o "Dir::Etc::SourceList=$APTDIR/sources.list"
		-o "Dir::Etc::SourceParts=$APTDIR/sources.list.d"
		-o "Dir::State::Lists=$APTDIR/lists"
		-o "Dir::Cache=$APTDIR/cache"
		-o "Dir::State::status=/dev/null"
		-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
		-o "Debug::NoLocking=1")
	# as root, apt's download sandbox user cannot write into the cache folder
	[ "$(id -u)" != 0 ] || APT+=(-o "APT::Sandbox::User=root")
	# Lists older than a day are refreshed (security updates replace kernels).
	if [ -z "$(find "$APTDIR/lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null)" ]; then
		say "updating the package lists of $suite for $arch in $APTDIR"
		# apt's own locks are off (Debug::NoLocking): one update at a time
		# (scripts/prebuild.sh may run beside a guest test's fetch)
		flock "$APTDIR/.update.lock" apt-get "${APT[@]}" update -qq >&2 || return 1
	fi
}
