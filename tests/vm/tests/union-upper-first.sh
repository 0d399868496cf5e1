#!/bin/bash
# The ODF's whiteouts, opaque and redirect records and the copies' map
# records stand for the writable branch they were made on (docs/
# odf-format.md 3.4).  A later mount that puts another branch first, or
# the writable one lower (read-write or read-only), is refused with
# EINVAL and one log line naming that branch; the lower branches may be
# given in another order, and then every deletion, rename, copy and
# inode number made before still shows; a refused mount leaves the
# ODF's /superblock as it was, and a remount that moves the writable
# branch is refused too.  Before, such a mount was
# accepted and the deleted names came back (the whiteouts went with the
# upper branch's part of each directory).
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch ext4 "$(nth_disk 3)" $l2
mkdir -p $u $l1/d $l2/d $l1/sub/in
echo gone >$l1/d/gone
echo gone2 >$l2/d/gone2
echo keep >$l1/d/keep
echo cp >$l1/d/cp
echo l1 >$l1/d/both
echo l2 >$l2/d/both
echo in >$l1/sub/in/f
mkodf_dev "$ODF_DEV"

union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=ro:$l2=ro"
rm $u/d/gone $u/d/gone2 || fail "rm"
echo more >>$u/d/cp || fail "append"
mv $u/d/keep $u/d/kept || fail "mv"
mv $u/sub/in $u/sub/moved || fail "mv dir"
ino_cp=$(ino $u/d/cp) ino_kept=$(ino $u/d/kept) ino_moved=$(ino $u/sub/moved)
union_umount $u

# What a refused mount must leave alone: the ODF's /superblock (header,
# state, branch table).
sb_sum() {
	local n
	n=$(debugfs -R 'cat /superblock' "$ODF_DEV" 2>/dev/null | wc -c)
	[ "$n" -gt 0 ] || fail "debugfs cannot read /superblock"
	debugfs -R 'cat /superblock' "$ODF_DEV" 2>/dev/null | md5sum
}
sb0=$(sb_sum)

try() {
	local got log
	klog_mark
	got=$(sysmount mount none $u unionfs "$1" "odf=$ODF_DEV,dirs=$2")
	log=$(klog_new | grep 'unionfs:')
	[ "$got" = OK ] && umount $u
	[ "$got" = EINVAL ] || fail "dirs=$2 ($1): expected EINVAL, got $got (log: $log)"
	case $log in
	*"holds the changes made on '$up': it must stay the first branch of dirs="*) ;;
	*) fail "dirs=$2: log '$log' does not name $up" ;;
	esac
	[ "$(echo "$log" | wc -l)" = 1 ] || fail "dirs=$2: more than one log line: $log"
}
try none "$l1=rw:$up=ro:$l2=ro"
try ro "$l1=ro:$up=ro:$l2=ro"
try ro "$l2=ro:$l1=ro:$up=ro"
try none "$l2=rw:$l1=ro:$up=ro"
expect_eq "ODF /superblock after the refused mounts" "$sb0" "$(sb_sum)"

# What the union shows with the writable branch first, lowers in any order.
view() {
	expect_eq "$1: d" "both cp kept" "$(ls $u/d | tr '\n' ' ' | sed 's/ $//')"
	expect_eq "$1: both" "$2" "$(cat $u/d/both)"
	expect_eq "$1: cp" "cp
more" "$(cat $u/d/cp)"
	expect_eq "$1: kept" keep "$(cat $u/d/kept)"
	expect_eq "$1: sub" moved "$(ls $u/sub)"
	expect_eq "$1: moved/f" in "$(cat $u/sub/moved/f)"
	expect_eq "$1: ino cp" "$ino_cp" "$(ino $u/d/cp)"
	expect_eq "$1: ino kept" "$ino_kept" "$(ino $u/d/kept)"
	expect_eq "$1: ino moved" "$ino_moved" "$(ino $u/sub/moved)"
	for n in gone gone2 keep; do
		[ -e $u/d/$n ] && fail "$1: deleted name d/$n shows"
	done
	return 0
}
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l2=ro:$l1=ro"
view "lowers swapped" l2
union_umount $u
union_mount $u "ro,odf=$ODF_DEV,dirs=$up=ro:$l1=ro:$l2=ro"
view "read-only" l1
umount $u || fail "umount"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=ro:$l2=ro"
view "as made" l1
# A remount cannot move it either (spec 3.5).
klog_mark
expect_eq "remount moving the writable branch" EINVAL \
	"$(sysmount remount $u none "dirs=$l1=rw:$up=ro:$l2=ro")"
case $(klog_new | grep 'unionfs:') in
*"cannot be removed or moved by remount"*) ;;
*) fail "remount: log lacks the reason: $(klog_new | grep 'unionfs:')" ;;
esac
view "after the refused remount" l1
# After a remount rewrote the table (del= of a lower branch), the rule
# holds for the branches left.
mount -o remount,del=$l2 $u || fail "remount,del=$l2"
expect_eq "d after del=$l2" "both cp kept" "$(ls $u/d | tr '\n' ' ' | sed 's/ $//')"
union_umount $u
sb0=$(sb_sum)
try ro "$l1=ro:$up=ro"
try none "$l1=rw:$up=ro"
expect_eq "ODF /superblock after the refused mounts" "$sb0" "$(sb_sum)"
union_mount $u "ro,odf=$ODF_DEV,dirs=$up=ro:$l1=ro"
expect_eq "d, two branches" "both cp kept" "$(ls $u/d | tr '\n' ' ' | sed 's/ $//')"
expect_eq "ino cp, two branches" "$ino_cp" "$(ino $u/d/cp)"
umount $u || fail "umount"

"$ODFCK" -fn "$ODF_DEV" >/tmp/odfck.out 2>&1 || fail "odfck: $(cat /tmp/odfck.out)"
echo "ok"
