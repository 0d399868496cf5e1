#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test VM's initramfs: busybox plus the modules the guest needs
# to reach its root (virtio, 9p) and to run the tests (ext4, xfs, loop,
# overlay; dm-log-writes and dm-snapshot for the power-cut tests), with
# every dependency resolved from the kernel's own module tree by
# modprobe, never listed by hand.  What is built into a kernel (virtio_pci
# in 6.12) needs nothing; compressed modules (6.12's .ko.xz) are
# unpacked.  (The guest's root is the host's, so modprobe works there
# too; loading them here makes them present even before the root is
# mounted.)
#
# usage: mkinitramfs.sh KVER OUTPUT [MODROOT]
#   MODROOT: root holding lib/modules/KVER (default /); a kernel without
#           modules (the debug kernel, everything built in) passes "none".
set -eu

kver=$1
out=$2
modroot=${3:-/}
here=$(cd "$(dirname "$0")" && pwd)
wanted="virtio_pci virtio_blk virtio_console 9pnet_virtio 9p ext4 xfs loop overlay dm_mod dm_log_writes dm_snapshot"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work"/bin "$work"/dev "$work"/proc "$work"/sys "$work"/newroot \
	"$work"/lib/modules
cp /bin/busybox "$work"/bin/busybox
cp "$here"/init "$work"/init
chmod 755 "$work"/init

: >"$work"/modules.load
if [ "$modroot" != none ]; then
	for m in $wanted; do
		# "insmod PATH" lines in load order; "builtin NAME" needs nothing.
		modprobe -d "$modroot" -S "$kver" --show-depends "$m" |
			awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' | while read -r ko; do
		# 6.12 ships modules compressed; busybox insmod wants them plain.
		name=$(basename "$ko")
		case $ko in
		*.ko.xz) name=${name%.xz}; xz -dc "$ko" >"$work/lib/modules/$name" ;;
		*.ko.zst) name=${name%.zst}; zstd -qdc "$ko" >"$work/lib/modules/$name" ;;
		*.ko.gz) name=${name%.gz}; gzip -dc "$ko" >"$work/lib/modules/$name" ;;
		*) cp "$ko" "$work"/lib/modules/ ;;
		esac
		echo "$name" >>"$work"/modules.load
	done
fi

mkdir -p "$(dirname "$out")"
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
