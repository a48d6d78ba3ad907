#!/bin/busybox sh
# shellcheck shell=dash disable=SC2154,SC2013
# guest-init.sh - /init of the initramfs run-guest.sh builds: loads the 9p
# modules, mounts the host's / read-only at /host with fresh /proc, /sys,
# /dev and a tmpfs on /run, mounts the run's shared directory writable at its
# host path, runs the command run-guest.sh wrote there (chrooted into the
# host's tree), prints "LCPI-GUEST-EXIT=<status>" and powers off.
# With lcpi_chroot=0 (a guest of another architecture, which cannot run the
# host's programs) the initramfs stays the root: busybox is its shell, and
# the host folders listed in the shared directory's .guest-binds are
# mounted from /host at their own paths.
# lcpi_shared, lcpi_dmesg, lcpi_chroot and lcpi_watchdog come from the kernel
# command line.
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
[ -e /dev/console ] || mknod /dev/console c 5 1
exec </dev/console >/dev/console 2>&1
# The kernel booted: run-guest.sh boots again only a guest that died before this.
echo "LCPI-GUEST-INIT"

finish() {
	echo "LCPI-GUEST-EXIT=$1"
	if [ "$lcpi_dmesg" = 1 ]; then
		echo "----- guest dmesg -----"
		dmesg
		echo "----- end of guest dmesg -----"
	fi
	sync
	poweroff -f
}

for m in $(cat /modules.order); do
	insmod "/lib/modules/$m" || echo "guest-init: insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose \
	hostroot /host || finish 125
echo 0 >/proc/sys/kernel/printk_ratelimit 2>/dev/null
# A command still running shortly before run-guest.sh's timeout
# (lcpi_watchdog: seconds after the kernel started): the end of the kernel's
# log, which the console's quiet level leaves out (an RCU stall's task dump
# is KERN_INFO), printed before the host stops the guest.
up=$(cut -d. -f1 /proc/uptime)
if [ "${lcpi_watchdog:-0}" -gt "$up" ]; then
	(
		sleep $((lcpi_watchdog - up))
		echo "guest-init: the command still runs $lcpi_watchdog s after boot; the end of the kernel's log:"
		dmesg | tail -n 100
		echo "guest-init: end of the kernel's log"
	) &
fi
if [ "$lcpi_chroot" = 0 ]; then
	mkdir -p /shared /run/tmp /tmp
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 \
		lcpishared /shared || finish 125
	while IFS= read -r d; do
		mkdir -p "$d" || finish 125
		mount --bind "/host$d" "$d" || finish 125
	done </shared/.guest-binds
	# after the binds, which may hold the shared directory's path
	mkdir -p "$lcpi_shared" 2>/dev/null
	mount --bind /shared "$lcpi_shared" || finish 125
	/bin/sh "$lcpi_shared/.guest-cmd.sh"
	finish $?
fi
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mount -t tmpfs run /host/run
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 \
	lcpishared "/host$lcpi_shared" || finish 125

chroot /host /bin/bash "$lcpi_shared/.guest-cmd.sh"
finish $?
