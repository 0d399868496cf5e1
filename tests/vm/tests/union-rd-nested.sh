#!/bin/bash
# timeout: 400
# Readdir state in nested unions: an inner union (ext4 rw over xfs, its
# own ODF) is the lower branch of an outer one (tmpfs rw over it, a
# second ODF).  A directory merged at both levels is listed once per
# name through the outer union; each ODF holds the state of its own
# union's directory; offsets survive remounting both; a change made
# through the inner union (behind the outer union's back) shows through
# the outer one without moving the offsets of the other names; odfck
# finds both ODFs clean.
. "$SRC/tests/vm/lib.sh"

DIRLIST=$SRC/tests/vm/prog/dirlist
b0=/mnt/b0 b1=/mnt/b1 a0=/mnt/a0 ui=/mnt/ui uo=/mnt/uo
odf2=$(nth_disk 3)
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkbranch tmpfs none $a0
mkodf_dev "$ODF_DEV"
mkodf_dev "$odf2"
inner="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
outer="odf=$odf2,dirs=$a0=rw:$ui=ro"

mkdir -p $b0/d $b1/d $a0/d
for i in $(seq -w 0 199); do echo b1 >$b1/d/n$i; done
for i in $(seq -w 150 249); do echo b0 >$b0/d/n$i; done
for i in $(seq -w 230 299); do echo a0 >$a0/d/n$i; done

# ords DIR: "ORDINAL NAME" per entry (the d_off of the entry before it).
ords() {
	"$DIRLIST" -b 1048576 "$1" | awk '$1 != "end" {
		if (NR > 1 && $4 != "." && $4 != "..") print prev, $4
		prev = $1 }'
}
same() {
	diff "$2" "$3" >/tmp/diff.out ||
		fail "$1: $(head -n 6 /tmp/diff.out | tr '\n' ' ')"
}
mount_both() { union_mount $ui "$inner"; union_mount $uo "$outer"; }
umount_both() { union_umount $uo; union_umount $ui; }

mount_both
ords $uo/d >/tmp/o0
expect_eq "names through the outer union" 300 "$(wc -l </tmp/o0)"
expect_eq "each name once" 300 "$(awk '{ print $2 }' /tmp/o0 | sort -u | wc -l)"
expect_eq "n200 comes from the inner union's upper branch" b0 "$(cat $uo/d/n200)"
expect_eq "n240 from the outer upper branch" a0 "$(cat $uo/d/n240)"
ino_i=$(printf '%016x' "$(stat -c %i $ui/d)")
ino_o=$(printf '%016x' "$(stat -c %i $uo/d)")
umount_both
debugfs -R "stat /readdir/$ino_i" "$ODF_DEV" 2>&1 | grep -q 'Inode:' ||
	fail "the inner ODF has no state for its d ($ino_i)"
debugfs -R "stat /readdir/$ino_o" "$odf2" 2>&1 | grep -q 'Inode:' ||
	fail "the outer ODF has no state for its d ($ino_o)"
"$ODFCK" -fn "$odf2" >/dev/null 2>&1 || fail "odfck: the outer ODF is not clean"
odf_check

mount_both
ords $uo/d >/tmp/o1
same "offsets after remounting both unions" /tmp/o0 /tmp/o1
# Behind the outer union's back: changes through the inner one.
rm $ui/d/n010 $ui/d/n160 || fail "rm through the inner union"
echo new >$ui/d/m000 || fail "create through the inner union"
ords $uo/d >/tmp/o2
grep -v ' n010$\| n160$' /tmp/o0 >/tmp/a
grep -v ' m000$' /tmp/o2 >/tmp/b
same "offsets after changes below the outer union" /tmp/a /tmp/b
last=$(tail -n 1 /tmp/o2 | awk '{ print $2 }')
expect_eq "the new name comes last" m000 "$last"
# And through the outer union: a copy-up into tmpfs, a new name.
echo changed >$uo/d/n100 || fail "write through the outer union"
echo outer >$uo/d/o000 || fail "create through the outer union"
ords $uo/d >/tmp/o3
grep -v ' o000$' /tmp/o3 >/tmp/b
same "offsets after changes through the outer union" /tmp/o2 /tmp/b
expect_eq "n100 reads back" changed "$(cat $uo/d/n100)"
expect_eq "b1 is untouched" b1 "$(cat $b1/d/n100)"
umount_both
"$ODFCK" -fn "$odf2" >/dev/null 2>&1 || fail "odfck: the outer ODF is not clean at the end"
odf_check
exit 0
