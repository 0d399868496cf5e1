#!/bin/bash
# A directory rename interrupted by a crash is finished at the next mount
# (docs/odf-format.md 9.7): the state a crash leaves after each step is
# built offline (upper branch by hand, ODF with odfedit), then a mount
# must roll the intent forward: the directory and its lower contents show
# under the new name only, the intent is gone and odfck finds the ODF
# clean.  A damaged intent (never committed) is dropped.
. "$SRC/tests/vm/lib.sh"

ODFEDIT=$SRC/tests/unit/odfedit
b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkdir -p $u /mnt/odf

setup() {
	umount $b0 $b1 2>/dev/null
	mkfs_branch ext4 "$(nth_disk 1)" $b0
	mkfs_branch ext4 "$(nth_disk 2)" $b1
	rmdir $b0/lost+found $b1/lost+found
	mkdir -p $b1/D/A/sub $b0/D
	echo x >$b1/D/A/x; echo y >$b1/D/A/sub/y
	mkodf_dev "$ODF_DEV"
	# Record the branches as a mount would.
	mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u || fail "first mount"
	umount $u
	(cd $b1 && find . | sort) >$TMP/lower.before
}

check() {	# STEP
	mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u ||
		fail "step $1: mount: $(dmesg | tail -n 2)"
	expect_eq "step $1: names in /D" "B" "$(ls $u/D | tr '\n' ' ' | sed 's/ $//')"
	expect_eq "step $1: contents" "x y" "$(cat $u/D/B/x $u/D/B/sub/y | tr '\n' ' ' | sed 's/ $//')"
	[ -e $u/D/A ] && fail "step $1: the old name is still there"
	umount $u
	[ -d $b0/D/B ] && [ ! -e $b0/D/A ] || fail "step $1: upper branch: $(cd $b0 && find . | sort | tr '\n' ' ')"
	expect_eq "step $1: lower branch unchanged" "$(cat $TMP/lower.before)" "$(cd $b1 && find . | sort)"
	mount -o ro -t ext4 "$ODF_DEV" /mnt/odf
	left=$(ls /mnt/odf/reclaim)
	umount /mnt/odf
	expect_eq "step $1: reclaim after mount" "" "$left"
	"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "step $1: odfck -fn"; }
}

# 1: intent written, directory copied up, nothing else.
setup
mkdir $b0/D/A
"$ODFEDIT" "$ODF_DEV" intent-add 7 /D/A /D/B || fail "intent-add"
check 1

# 2: and the node has its redirect.
setup
mkdir $b0/D/A
"$ODFEDIT" "$ODF_DEV" intent-add 7 /D/A /D/B
"$ODFEDIT" "$ODF_DEV" redirect /D/A /D/A || fail "redirect"
check 2

# 3: and the node moved, a whiteout took the old name.
setup
mkdir $b0/D/A
"$ODFEDIT" "$ODF_DEV" intent-add 7 /D/A /D/B
"$ODFEDIT" "$ODF_DEV" redirect /D/B /D/A
"$ODFEDIT" "$ODF_DEV" whiteout /D/A
check 3

# 4: and the upper directory was renamed; only the intent is left.
setup
mkdir $b0/D/B
"$ODFEDIT" "$ODF_DEV" intent-add 7 /D/A /D/B
"$ODFEDIT" "$ODF_DEV" redirect /D/B /D/A
"$ODFEDIT" "$ODF_DEV" whiteout /D/A
check 4

# A damaged intent was never committed: dropped, nothing renamed.
setup
mkdir $b0/D/A
"$ODFEDIT" "$ODF_DEV" intent-add 7 /D/A /D/B
"$ODFEDIT" "$ODF_DEV" poke /reclaim/intent-0000000000000007 4 ffff ||
	fail "cannot damage the intent"
klog_mark
mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u || fail "mount with a damaged intent"
klog_new | grep -q "intent 0000000000000007 is damaged" || fail "no log line for the damaged intent"
expect_eq "damaged intent: names" "A" "$(ls $u/D)"
umount $u
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck after a damaged intent"; }
exit 0
