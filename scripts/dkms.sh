#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make dkms-install / dkms-remove: hand the module to DKMS the way the
# unionfs-dkms package does, from this tree.
#
#   dkms.sh install   copy kernel/, include/ and dkms.conf to
#                     /usr/src/unionfs-VERSION, "dkms add" it, and build
#                     and install it for every installed kernel that has
#                     headers (/lib/modules/KVER/build); DKMS rebuilds it
#                     for each kernel installed later (AUTOINSTALL).
#   dkms.sh remove    remove every kernel's build and /usr/src/unionfs-VERSION
#   dkms.sh version   print VERSION (dkms.conf's PACKAGE_VERSION)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
name=unionfs
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
src=/usr/src/$name-$version

need_root() {
	[ "$(id -u)" = 0 ] || { echo "dkms: run as root" >&2; exit 1; }
	command -v dkms >/dev/null || { echo "dkms: dkms is not installed (scripts/deps.sh --dkms)" >&2; exit 1; }
}

remove() {
	if dkms status -m "$name" -v "$version" 2>/dev/null | grep -q .; then
		dkms remove -m "$name" -v "$version" --all
	fi
	rm -rf "$src"
}

install() {
	local k built=0
	remove
	mkdir -p "$src/kernel" "$src/include/odf"
	# Sources only: never a build output of the tree.
	cp "$top"/kernel/Kbuild "$top"/kernel/Makefile "$top"/kernel/*.[ch] "$src/kernel/"
	cp "$top"/include/odf/*.h "$src/include/odf/"
	cp "$top"/dkms.conf "$top"/LICENSE "$src/"
	dkms add -m "$name" -v "$version"
	for k in /lib/modules/*; do
		k=${k#/lib/modules/}
		[ -e "/lib/modules/$k/build/Makefile" ] || continue
		dkms install -m "$name" -v "$version" -k "$k"
		built=$((built + 1))
	done
	if [ "$built" = 0 ]; then
		echo "dkms: no installed kernel has headers (/lib/modules/*/build); install linux-headers-amd64" >&2
		exit 1
	fi
	dkms status -m "$name" -v "$version"
}

case ${1:-} in
install) need_root; install ;;
remove) need_root; remove ;;
version) echo "$version" ;;
*) echo "usage: $0 install|remove|version" >&2; exit 2 ;;
esac
