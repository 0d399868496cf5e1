#!/bin/bash
# A rename interrupted by a crash is finished or dropped at the next mount
# (docs/odf-format.md 9.5, 9.7): the state a crash leaves after each step
# is built offline (upper branch by hand, ODF with odfedit), then a mount
# must bring the union to the old or the new name, never both, never
# neither; the intent is gone and odfck finds the ODF clean.  Intents
# name the parents by union inode number and the upper object by inode
# and generation; they are finished only when the upper rename is
# there.  An intent whose hint leads to a directory with another union
# inode number is not trusted.  A damaged intent (never committed) is
# dropped.
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

# Intents that name the upper object (inode, generation): the upper
# branch decides.
upper_id() { echo "$(stat -c %i "$1") $(lsattr -v -d "$1" 2>/dev/null | awk '{print $1}')"; }
check_names() {	# STEP DIR EXPECTED-NAMES
	mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u ||
		fail "step $1: mount: $(dmesg | tail -n 2)"
	expect_eq "step $1: names in $2" "$3" "$(ls $u$2 | tr '\n' ' ' | sed 's/ $//')"
}
finish_check() {	# STEP
	umount $u
	mount -o ro -t ext4 "$ODF_DEV" /mnt/odf
	left=$(ls /mnt/odf/reclaim)
	umount /mnt/odf
	expect_eq "step $1: reclaim after mount" "" "$left"
	"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "step $1: odfck -fn"; }
}

# The union inode numbers: branch ids 1 (b0) and 2 (b1); D and E are
# upper directories of their own (deterministic numbers of branch 1).
D() { uino 1 "$(ino $b0/D)"; }
E() { uino 1 "$(ino $b0/E)"; }
# mark: what 9.7 step 2 leaves: A's node opaque, redirected to its lower
# part (A's upper copy was made by hand: its number is deterministic).
mark() { "$ODFEDIT" "$ODF_DEV" node-make "$(uino 1 "$(ino $b0/D/A)")" redirect \
		$(upper_id $b0/D/A) 2:/D/A >/dev/null || fail "node-make"; }

# 1: directory marked, no intent (a crash before step 3): nothing
# visible changed, the name stays A with its lower contents.
setup
mkdir $b0/D/A
mark
check_names 1 /D "A"
expect_eq "step 1: contents" "x y" "$(cat $u/D/A/x $u/D/A/sub/y | tr '\n' ' ' | sed 's/ $//')"
finish_check 1

# 2: and the intent, the upper rename never became durable: the intent
# is dropped and the directory keeps its old name.
setup
mkdir $b0/D/A
mark
"$ODFEDIT" "$ODF_DEV" intent-add 7 $(D) A $(D) B $(upper_id $b0/D/A) /D /D ||
	fail "intent-add"
check_names 2 /D "A"
expect_eq "step 2: contents" "x y" "$(cat $u/D/A/x $u/D/A/sub/y | tr '\n' ' ' | sed 's/ $//')"
finish_check 2
[ -d $b0/D/A ] && [ ! -e $b0/D/B ] || fail "step 2: upper branch changed"

# 3: the upper rename is durable, the ODF part never began: it is
# redone (the whiteout of A); B shows A's lower contents (redirect).
setup
mkdir $b0/D/A
mark
id=$(upper_id $b0/D/A)
mv $b0/D/A $b0/D/B
"$ODFEDIT" "$ODF_DEV" intent-add 7 $(D) A $(D) B $id /D /D
check 3

# 4: and the whiteout was written; only the intent is left.
setup
mkdir $b0/D/A
mark
id=$(upper_id $b0/D/A)
mv $b0/D/A $b0/D/B
"$ODFEDIT" "$ODF_DEV" intent-add 7 $(D) A $(D) B $id /D /D
"$ODFEDIT" "$ODF_DEV" whiteout $(D) A || fail "whiteout"
check 4

# 5: a hint that leads elsewhere (a directory with another union inode
# number at /D) is not trusted: the upper rename is there, but the
# intent is dropped, and no whiteout is written into the node of the
# number it names (12345 = 0x3039).
setup
mkdir $b0/D/A
mark
id=$(upper_id $b0/D/A)
mv $b0/D/A $b0/D/B
"$ODFEDIT" "$ODF_DEV" intent-add 7 12345 A 12345 B $id /D /D
check_names 5 /D "A B"
finish_check 5
mount -o ro -t ext4 "$ODF_DEV" /mnt/odf
[ -e /mnt/odf/ns/0000000000003039 ] && { umount /mnt/odf; fail "step 5: a whiteout went into node 12345"; }
umount /mnt/odf

# 7: a lower file renamed into another directory; copy-up durable,
# upper rename not: the file keeps its old name, whole.
setup_file() {
	setup
	mkdir -p $b1/E $b0/E
	echo lowfile >$b1/D/f
	cp -a $b1/D/f $b0/D/f
}
setup_file
"$ODFEDIT" "$ODF_DEV" intent-add 9 $(D) f $(E) g $(upper_id $b0/D/f) /D /E
check_names 7 /D "A f"
expect_eq "step 7: /E" "" "$(ls $u/E)"
expect_eq "step 7: content" lowfile "$(cat $u/D/f)"
finish_check 7

# 8: the upper rename is durable, the whiteout is not: it is written.
setup_file
id=$(upper_id $b0/D/f)
mv $b0/D/f $b0/E/g
"$ODFEDIT" "$ODF_DEV" intent-add 9 $(D) f $(E) g $id /D /E
check_names 8 /D "A"
expect_eq "step 8: /E" "g" "$(ls $u/E)"
expect_eq "step 8: content" lowfile "$(cat $u/E/g)"
finish_check 8

# 9: neither the copy-up's link nor the rename became durable: the lower
# file shows at its old name; an unrelated upper object at the target
# (same name, other inode) does not make the intent finish.
setup_file
id=$(upper_id $b0/D/f)
rm $b0/D/f
echo other >$b0/E/g
"$ODFEDIT" "$ODF_DEV" intent-add 9 $(D) f $(E) g $id /D /E
check_names 9 /D "A f"
expect_eq "step 9: content" lowfile "$(cat $u/D/f)"
expect_eq "step 9: /E/g is the other file" other "$(cat $u/E/g)"
finish_check 9

# A damaged intent was never committed: dropped, nothing renamed.
setup
mkdir $b0/D/A
"$ODFEDIT" "$ODF_DEV" intent-add 7 $(D) A $(D) B $(upper_id $b0/D/A) /D /D
"$ODFEDIT" "$ODF_DEV" poke /reclaim/intent-0000000000000007 4 ffff ||
	fail "cannot damage the intent"
klog_mark
mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u || fail "mount with a damaged intent"
klog_new | grep -q "intent 0000000000000007 is damaged" || fail "no log line for the damaged intent"
expect_eq "damaged intent: names" "A" "$(ls $u/D)"
umount $u
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck after a damaged intent"; }
exit 0
