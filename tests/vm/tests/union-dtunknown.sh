#!/bin/bash
# timeout: 400
# A branch whose listings give every entry as DT_UNKNOWN: an ISO 9660
# image, the README's DVD (whose d_ino is not its st_ino either).  Its
# directories still merge with the same directory on another branch, and
# a listing numbers and types its entries as lookup and lstat do: d_ino
# == st_ino and d_type == lstat's type for every entry of the merged
# directories and of a directory only the ISO has (union_ls).  The
# numbering rule
# (a lower-only directory is numbered after its part on the oldest
# branch, spec 3.5) only bites when the oldest part is not the top one,
# so both orders are made with remount,add=: the ISO added above an ext4
# branch (case A), and an ext4 branch added above the ISO (case B).
# Each is listed right after the remount and again from a fresh mount.
. "$SRC/tests/vm/lib.sh"

command -v xorriso >/dev/null || fail "xorriso is not installed (make deps)"
grep -qw iso9660 /proc/filesystems || modprobe isofs 2>/dev/null ||
	fail "no iso9660 in this kernel"

b0=/mnt/b0 b1=/mnt/b1 dvd=/mnt/dvd u=/mnt/u
iso=$(nth_disk 3)
mkdir -p $TMP/img/m/s $TMP/img/y
echo i1 >$TMP/img/m/i1; echo g >$TMP/img/m/s/g; echo z >$TMP/img/z
echo y >$TMP/img/y/yf
xorriso -as mkisofs -quiet -R -o $TMP/dvd.iso $TMP/img 2>$TMP/xorriso.err ||
	fail "xorriso: $(tail -n 1 $TMP/xorriso.err)"
dd if=$TMP/dvd.iso of="$iso" bs=1M conv=fsync status=none || fail "dd of the image"
mkdir -p $dvd
mount -t iso9660 -o ro "$iso" $dvd || fail "mount of the ISO image"
"$SRC/tests/vm/prog/dirlist" $dvd/m | grep -q ' unknown i1$' ||
	fail "the ISO lists m/i1 with a type: this test needs a DT_UNKNOWN branch"

# ext4 branch b1: m/ (with s/) as on the ISO, and names of its own.
setup_b1() {
	mkbranch ext4 "$(nth_disk 2)" $b1
	mkdir -p $b1/m/s
	echo e1 >$b1/m/e1; echo f >$b1/m/s/f; echo x >$b1/x
}

# check CASE: the merged listings are right.
check_view() {
	expect_eq "$1: /" "m x y z" "$(union_ls $u)"
	expect_eq "$1: m/" "e1 i1 s" "$(union_ls $u/m)"
	expect_eq "$1: m/s/" "f g" "$(union_ls $u/m/s)"
	expect_eq "$1: m/s/g" "g" "$(cat $u/m/s/g)"
	expect_eq "$1: y/ (on the ISO only)" "yf" "$(union_ls $u/y)"
	expect_eq "$1: y/yf" "y" "$(cat $u/y/yf)"
}

# run_case NAME FIRST ADDED OLDEST: mount dirs=b0:FIRST, add ADDED above
# FIRST; m/ must be numbered after OLDEST's part (branch id 2, the
# first lower branch of the set).  Then list it all again from a fresh
# mount of the new set.
run_case() {
	mountpoint -q $b0 && umount $b0 $b1
	mkbranch ext4 "$(nth_disk 1)" $b0
	setup_b1
	mkodf_dev "$ODF_DEV"
	union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$2=ro"
	mount -o remount,add=$3=ro $u || fail "$1: remount,add=$3"
	expect_eq "$1: m/ after the add is numbered after $4's part" \
		"$(uino 2 "$(ino $4/m)")" "$(ino $u/m)"
	check_view "$1"
	union_umount $u
	union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$3=ro:$2=ro"
	echo 3 >/proc/sys/vm/drop_caches
	check_view "$1, fresh mount"
	union_umount $u
	odf_check
}

# Case A: the ISO added above b1 (it gets the newest id).
run_case "case A" $b1 $dvd $b1
# Case B: b1 added above the ISO, whose part is the oldest.
run_case "case B" $dvd $b1 $dvd
umount $dvd
