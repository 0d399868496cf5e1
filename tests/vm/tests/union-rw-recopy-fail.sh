#!/bin/bash
# A copy of a copy that fails at its last step.  d/x of the read-only l2
# is copied to the writable l1 by a change (l1's copy keeps x's number
# U); with l1 made read-only, the next change copies l1's copy again, to
# the upper branch.  That copy commits its inode-map records first, then
# links the copy at its name: here the link fails (ENOSPC: the upper
# branch is full and so is its directory's last block).  The records of
# l1's copy must be what they were before: d/x keeps its number U, now,
# after a new mount and once the copy succeeds; a handle of d/x made
# while it was l2's still opens it with every cache dropped (through the
# REVERSE record of U); odfck finds the ODF clean.  The bug: the failed copy's records were dropped
# with the REVERSE record of U and the COPIED record of l2's x, which it
# had replaced.
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 u=/mnt/u
mkdir -p $up
mkfs.ext4 -q -F -m 0 -N 256 "$(nth_disk 1)" 8M || fail "mkfs.ext4 of an 8 MiB up"
mount -t ext4 "$(nth_disk 1)" $up || fail "mount up"
rmdir $up/lost+found
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch ext4 "$(nth_disk 3)" $l2
mkdir -p $up/d $l1/d $l2/d
: >$l2/d/x
chmod 644 $l2/d/x
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"
union_mount $u "$opts"
U=$(ino $u/d/x)
expect_eq "d/x numbered after l2's x" "$(uino 3 "$(ino $l2/d/x)")" "$U"
# A handle made while d/x is l2's: once copied, it is found through the
# REVERSE record of U.
fh=$TMP/fh
python3 "$SRC/tests/vm/prog/fhandle.py" save $u/d/x $fh >/dev/null || fail "save a handle of d/x"
# by_handle WHAT: open the handle with every cache dropped.
by_handle() {
	sync; echo 3 >/proc/sys/vm/drop_caches
	expect_eq "open d/x by its handle, $1" "ino=$U data=" \
		"$(python3 "$SRC/tests/vm/prog/fhandle.py" open $u $fh 2>&1)"
}

chmod 640 $u/d/x || fail "chmod d/x (copy to l1)"
[ -f $l1/d/x ] || fail "d/x was not copied to l1"
expect_eq "l1/d/x mode" 640 "$(stat -c %a $l1/d/x)"
expect_eq "st_ino of l1's copy" "$U" "$(ino $u/d/x)"
by_handle "copied to l1"
mount -o remount,mode=$l1=ro $u || fail "remount mode=$l1=ro"
opts="odf=$ODF_DEV,dirs=$up=rw:$l1=ro:$l2=ro"

# Fill the upper branch: its data blocks, then d/'s last directory block.
# ext4 frees what its delayed allocation held back once written: fill
# again after each sync.
i=0
for pass in 1 2 3; do
	dd if=/dev/zero of=$up/fill$pass bs=4k 2>/dev/null
	sync
	while touch $up/d/n$i 2>/dev/null; do i=$((i + 1)); done
	sync
done
note "up/d holds $i fillers; $(df --output=avail -k $up | tail -n 1) KiB free"

expect_errno "chmod d/x: the copy's link fails" ENOSPC "os.chmod('$u/d/x', 0o600)"
[ -e $up/d/x ] && fail "up/d/x exists after a failed copy"
expect_eq "st_ino of d/x after the failed copy" "$U" "$(ino $u/d/x)"
expect_eq "d/x mode after the failed copy" 640 "$(stat -c %a $u/d/x)"
by_handle "after the failed copy"

union_umount $u
odf_check
union_mount $u "$opts"
expect_eq "st_ino of d/x after a new mount" "$U" "$(ino $u/d/x)"
by_handle "after a new mount"

# Room again: the copy goes up, with the number.
rm -f $up/fill*
chmod 600 $u/d/x || fail "chmod d/x with room"
expect_eq "up/d/x mode" 600 "$(stat -c %a $up/d/x)"
expect_eq "l1/d/x unchanged" 640 "$(stat -c %a $l1/d/x)"
expect_eq "st_ino of d/x copied up" "$U" "$(ino $u/d/x)"
by_handle "copied up"
union_umount $u
odf_check
union_mount $u "$opts"
expect_eq "st_ino of d/x copied up, after a new mount" "$U" "$(ino $u/d/x)"
by_handle "copied up, after a new mount"
union_umount $u
exit 0
