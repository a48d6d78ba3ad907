# overlay_root.sh - sourced by package.sh and package_scripts.sh: a
# throw-away root to run maintainer scripts or dpkg in. It is this machine's
# own root file system under an overlay whose upper layer is a tmpfs, in a
# private mount namespace (unshare -m): everything the scripts need is
# already there, and nothing they do (groups, /var/lib/lcpi, the dpkg
# database) reaches the real machine, as the upper layer vanishes with the
# namespace. Needs root.

# in_overlay_root WORK SIZE FILE... -- COMMAND ARGS...: copies each FILE to
# the overlay's /, then runs COMMAND chrooted in it; returns its status.
# WORK/root holds the tmpfs of SIZE (e.g. 64m).
in_overlay_root() {
  local work=$1 size=$2
  shift 2
  local files=()
  while [ "$1" != -- ]; do
    files+=("$1")
    shift
  done
  shift
  mkdir -p "$work/root"
  unshare --mount --propagation private bash -c '
    set -e
    root=$1 size=$2 n=$3
    shift 3
    mount -t tmpfs -o size="$size" lcpi-overlay "$root"
    mkdir "$root/upper" "$root/work" "$root/merged"
    mount -t overlay overlay -o lowerdir=/,upperdir="$root/upper",workdir="$root/work" "$root/merged"
    m=$root/merged
    mount -t proc proc "$m/proc"
    mount --rbind /dev "$m/dev"
    mount -t tmpfs run "$m/run"      # no /run/systemd/system: no systemd to talk to
    mount -t tmpfs tmp "$m/tmp"
    cp "${@:1:$n}" "$m/"
    shift "$n"
    chroot "$m" "$@"
  ' _ "$work/root" "$size" "${#files[@]}" "${files[@]}" "$@"
}
