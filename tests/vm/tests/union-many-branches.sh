#!/bin/bash
# 32 and 64 branches (the ODF branch table size) mount; each contributes
# its names.  65 is refused in mount-bad-options.
. "$SRC/tests/vm/lib.sh"

mkfs_branch tmpfs none /mnt/br
mkodf_dev "$ODF_DEV"
mkdir -p /mnt/u
for n in 32 64; do
	dirs=
	for i in $(seq 1 $n); do
		mkdir -p /mnt/br/$n-$i/sub
		echo $i >/mnt/br/$n-$i/f$i
		echo $i >/mnt/br/$n-$i/sub/s$i
		echo $i >/mnt/br/$n-$i/same
		dirs=$dirs:/mnt/br/$n-$i=ro
	done
	mount -t unionfs -o ro,odf=$ODF_DEV,dirs=${dirs#:} none /mnt/u ||
		fail "$n branches: mount: $(dmesg | tail -n 1)"
	expect_eq "$n branches: names" $((n + 2)) "$(ls /mnt/u | wc -l)"
	expect_eq "$n branches: merged sub" $n "$(ls /mnt/u/sub | wc -l)"
	expect_eq "$n branches: last branch" $n "$(cat /mnt/u/f$n)"
	expect_eq "$n branches: priority" 1 "$(cat /mnt/u/same)"
	umount /mnt/u || fail "umount"
done
