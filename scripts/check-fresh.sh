#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-fresh: run README.md's test command the way a new user meets
# it, on a Debian 12 root that has never seen the project.
#
#  1. a pristine "debootstrap bookworm" root (plus git and make, which a
#     user needs to get the repository and type "make") is made once and
#     kept as a tarball in $FRESH_CACHE (default
#     /var/cache/odf-unionfs/fresh), outside the tree;
#  2. every run unpacks it into $FRESH_CACHE/root, bind-mounts /proc, /sys
#     and /dev, and clones this repository (its committed HEAD) into
#     /root/odf-unionfs there;
#  3. runs "make check" once, as root in the chroot, with a clean
#     environment: nothing installed, nothing built;
#  4. passes when its last line is "N passed, 0 failed" (N > 0).
#
# Knobs: FRESH_CMD (default "make check") is what runs in the clone;
# VM_TESTS is passed through (VM_TESTS=tests/vm/tests/module-load.sh
# for a quick run); FRESH_MIRROR (default http://deb.debian.org/debian);
# FRESH_REFRESH=1 makes the pristine root again.  The log is
# build/fresh/check.log (FRESH_LOG, relative to the tree).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${FRESH_CACHE:-${DEBUG_CACHE:-/var/cache/odf-unionfs}/fresh}
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
cmd=${FRESH_CMD:-make check}
tarball=$cache/bookworm.tar
root=$cache/root
log=$top/${FRESH_LOG:-build/fresh/check.log}

[ "$(id -u)" = 0 ] || { echo "check-fresh: run as root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null ||
	{ echo "check-fresh: debootstrap is missing (scripts/deps.sh --fresh)" >&2; exit 2; }

mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[$i]}" 2>/dev/null || true
	done
}
trap cleanup EXIT

mkdir -p "$cache" "$(dirname "$log")"
if [ ! -s "$tarball" ] || [ "${FRESH_REFRESH:-0}" = 1 ]; then
	echo "check-fresh: debootstrap bookworm from $mirror (once; cached in $tarball)"
	rm -rf "$cache/new"
	debootstrap --include=git,make,ca-certificates bookworm "$cache/new" "$mirror"
	# The sources a Debian installer writes: main, updates, security.
	cat >"$cache/new/etc/apt/sources.list" <<-SOURCES
	deb $mirror bookworm main
	deb $mirror bookworm-updates main
	deb http://deb.debian.org/debian-security bookworm-security main
	SOURCES
	rm -rf "$cache/new/var/cache/apt/archives/"*.deb
	tar -C "$cache/new" -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
	rm -rf "$cache/new"
fi

echo "check-fresh: unpacking a pristine root into $root"
# A mount left below the old root (a killed run) must never be removed
# through: rm -rf would reach the host's /dev, /proc or /sys.
if awk -v r="$root/" 'index($2 "/", r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
	echo "check-fresh: something is still mounted below $root; umount it first" >&2
	exit 2
fi
rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# Marks a throw-away root: scripts that change the system's /usr/src and
# /lib/modules (scripts/check-dkms.sh) run only where this exists.
touch "$root/etc/odf-fresh-root"
for m in proc sys dev dev/pts; do
	mkdir -p "$root/$m"
	mount --bind "/$m" "$root/$m"
	mounted+=("$root/$m")
done

echo "check-fresh: cloning $top (HEAD $(git -C "$top" rev-parse --short HEAD)) into $root/root/odf-unionfs"
git clone -q --no-hardlinks "$top" "$root/root/odf-unionfs"

echo "check-fresh: running '$cmd' in the fresh root (log: $log)"
start=$(date +%s)
envs=(HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
[ -n "${VM_TESTS:-}" ] && envs+=("VM_TESTS=$VM_TESTS")
set +e
env -i "${envs[@]}" \
	chroot "$root" /bin/bash -c "cd /root/odf-unionfs && $cmd" </dev/null 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
echo "check-fresh: '$cmd' exited $rc after $(( $(date +%s) - start ))s"

last=$(tail -n 1 "$log")
if [ "$rc" = 0 ] && [[ $last =~ ^([0-9]+)\ passed,\ 0\ failed ]] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
	echo "check-fresh: PASS ($last)"
	exit 0
fi
echo "check-fresh: FAIL: the run must end with 'N passed, 0 failed'; it ended with: $last"
exit 1
