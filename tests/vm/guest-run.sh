#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test VM after switch_root: the host's root is mounted
# read-only over 9p, the project tree is at $SRC (same path as on the
# host), and the host's output directory is shared writable as tag
# "odfout".  Reads the job the host wrote there, runs it, writes results
# back and powers the VM off.  It must never exit: PID 1 exiting panics.
#
# Results ($OUT/results), one line each:
#   ok NAME | not ok NAME: why | skip NAME: why | reboot
# Progress ($OUT/progress): "begin NAME" before each test, for the host's
# per-test watchdog.

# Bash reads a script as it runs it: the whole body is one compound
# command so it is parsed before it starts, and a host-side edit of this
# file during a run cannot change what PID 1 executes.
{
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

# Power off and never return: PID 1 exiting panics the kernel.  The wait
# uses only bash builtins, since the 9p root (and so every external
# command) may already be gone while the kernel shuts down.
poweroff_now() {
	sync
	mkfifo /run/odf-hold 2>/dev/null
	echo o >/proc/sysrq-trigger
	while :; do
		read -r _ <>/run/odf-hold
	done
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
SRC=
for arg in $(cat /proc/cmdline); do
	case $arg in odfsrc=*) SRC=${arg#odfsrc=} ;; esac
done
export SRC

# Writable scratch areas are tmpfs.  The project tree may live under one
# of them on the host (a clone in /tmp, say): it is bound back at its own
# path from a view of the host root kept at /run/odf/host, so every host
# path the job names stays valid.
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/odf/host /run/odf/out
mount --bind / /run/odf/host
for d in /tmp /var/tmp /mnt /root /media /srv /var/lib/nfs; do
	[ -d "$d" ] || continue
	mount -t tmpfs -o mode=1777 tmpfs "$d"
	case $SRC/ in
	"$d"/*) mkdir -p "$SRC" && mount --bind "/run/odf/host$SRC" "$SRC" ;;
	esac
done
OUT=/run/odf/out
if ! mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 \
	odfout "$OUT"; then
	echo "guest-run: cannot mount the output share" >/dev/console
	poweroff_now
fi
exec </dev/null >>"$OUT/guest.log" 2>&1
export OUT

# shellcheck source=/dev/null
. "$OUT/job"
# shellcheck source=tests/vm/runner.sh
. "$SRC/tests/vm/runner.sh"
guest_main
poweroff_now
}
