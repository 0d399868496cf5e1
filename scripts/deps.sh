#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package odf-unionfs needs to build, test, demo and
# benchmark.  Idempotent: when everything is present it only runs dpkg-query
# and returns.  Run as root on Debian 12.
set -eu

# What each package is for:
#   build:    gcc make libc6-dev pkg-config linux-headers-amd64 (kbuild, module)
#             libext2fs-dev comerr-dev e2fsprogs linux-libc-dev (tools/lib,
#             mkodf, odfck, include/odf), libblkid-dev (mount.unionfs)
#   tests:    check libsubunit-dev (unit tests), linux-image-amd64 (the guest kernel),
#             qemu-system-x86 (the VM), busybox-static (initramfs),
#             cpio kmod (initramfs build, module resolution),
#             xfsprogs attr acl util-linux (branch filesystems, xattrs),
#             python3 (test helpers), sparse (C=1 checks),
#             dmsetup (dm-log-writes and dm-snapshot targets of the power-cut
#             tests, tests/vm/tests/union-powercut.sh)
#             xz-utils (6.12's modules are .ko.xz; the initramfs unpacks them)
#             xorriso (an ISO 9660 branch, tests/vm/tests/union-dtunknown.sh)
#   --kver KVER: linux-image-KVER and linux-headers-KVER, the guest kernel
#             and the headers the module is built against for that
#             release (make check KVER=6.12.118+deb12-amd64; the default
#             kernel comes with the two -amd64 metapackages above)
#   --debug:  linux-source-<series of KVER> (DEBUG_KSERIES, default 6.1)
#             and what building a kernel needs (check-debug)
#   --bench:  linux-source-6.1 (make bench reads a part of its tree) and
#             python3-matplotlib (the plot of listing and seek costs)
#   --fuzz:   clang (libFuzzer, for make fuzz)
#   --fresh:  debootstrap (make check-fresh builds a pristine Debian 12 root)
#   --dkms:   dkms (make dkms-install)
#   --deb:    build-essential dpkg-dev debhelper dh-dkms lintian (make deb;
#             dpkg-buildpackage requires build-essential)
packages="gcc make libc6-dev pkg-config
	linux-headers-amd64 linux-image-amd64
	libext2fs-dev comerr-dev e2fsprogs linux-libc-dev libblkid-dev check libsubunit-dev
	qemu-system-x86 busybox-static cpio kmod
	xfsprogs attr acl util-linux python3 sparse dmsetup xz-utils xorriso
	nfs-kernel-server nfs-common rpcbind iproute2"
while [ $# -gt 0 ]; do
	case $1 in
	--kver) [ -n "${2:-}" ] && packages="$packages linux-image-$2 linux-headers-$2"
		shift ;;
	--debug) packages="$packages linux-source-${DEBUG_KSERIES:-6.1} bc flex bison libelf-dev libssl-dev" ;;
	--bench) packages="$packages linux-source-6.1 python3-matplotlib" ;;
	--fuzz) packages="$packages clang" ;;
	--fresh) packages="$packages debootstrap" ;;
	--dkms) packages="$packages dkms" ;;
	--deb) packages="$packages build-essential dpkg-dev debhelper dh-dkms lintian" ;;
	*) echo "deps: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

missing=
for p in $packages; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing (run 'make deps' as root)" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
