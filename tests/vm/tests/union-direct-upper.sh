#!/bin/bash
# timeout: 400
# readdir's d_ino after a direct edit of the upper branch reused the inode
# number of a copy (issue 10).  A copy keeps its origin's number through
# an UPPER record keyed by its upper inode number.  When the copy is
# removed directly in the upper branch and ext4 gives its inode number
# to a new file there, the record is stale: lookup sees it (the REVERSE
# record's generation differs) and numbers the new file after its own
# inode, so readdir must too.  Before the fix readdir gave the copy's
# old number, so d_ino != st_ino.  Checked for the three ways a listing
# is made: a merged directory's readdir state, an upper-only directory
# passed through, and a read-only union's in-memory merge; each listed
# from a fresh mount before anything looks the name up.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
mkdir -p $b1/d $b1/m $b1/n
echo lower-f >$b1/d/f; echo lower-h >$b1/m/h; echo lower-x >$b1/d/x
echo lower-p >$b1/n/p; echo lower-q >$b1/n/q
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

union_mount $u "$opts"
echo more >>$u/d/f || fail "append to d/f (copy-up)"
mkdir $u/e || fail "mkdir e"
mv $u/m/h $u/e/h || fail "mv m/h e/h (copy-up and rename)"
echo more >>$u/n/p || fail "append to n/p (copy-up)"
ino_f=$(ino $u/d/f) ino_h=$(ino $u/e/h) ino_p=$(ino $u/n/p)
expect_eq "d/f keeps its lower number" "$(uino 2 "$(ino $b1/d/f)")" "$ino_f"
expect_eq "e/h keeps its lower number" "$(uino 2 "$(ino $b1/m/h)")" "$ino_h"
union_umount $u

# reuse DIR OLDNAME NEWPREFIX ALLOCDIR: remove DIR/OLDNAME directly and
# create files in ALLOCDIR (where the copy's inode was allocated: ext4
# allocates near the parent) until one gets its inode number, then move
# that one to DIR; sets REUSED to its name.
reuse() {
	local want i
	want=$(ino "$1/$2")
	rm "$1/$2"
	for i in $(seq 1 50); do
		echo "new $i" >"$4/$3$i"
		if [ "$(ino "$4/$3$i")" = "$want" ]; then
			for want in $(seq 1 $((i - 1))); do rm "$4/$3$want"; done
			[ "$4" = "$1" ] || mv "$4/$3$i" "$1/$3$i"
			REUSED=$3$i
			return
		fi
	done
	fail "ext4 did not reuse inode $want of $1/$2 for 50 new files in $4"
}
reuse $b0/d f g $b0/d; g=$REUSED
reuse $b0/e h k $b0/m; k=$REUSED
reuse $b0/n p r $b0/n; r=$REUSED
note "upper d/$g, e/$k and n/$r took the inode numbers of the copies d/f, e/h and n/p"

# listed DIR NAME...: union_ls of DIR (d_ino == st_ino for every entry)
# holds each NAME.
listed() {
	local l n d=$1
	shift
	l=$(union_ls "$d")
	for n in "$@"; do
		[[ " $l " == *" $n "* ]] || fail "$d: $n not listed, or the listing is wrong: $l"
	done
}

# 1. The merged directory d/ (its readdir state is built by this listing).
union_mount $u "$opts"
listed $u/d f "$g" x
[ "$(ino $u/d/$g)" = "$ino_f" ] && fail "d/$g shows the number of the removed copy d/f"
expect_eq "d/f shows its lower file again" lower-f "$(cat $u/d/f)"
expect_eq "st_ino of d/f" "$ino_f" "$(ino $u/d/f)"
union_umount $u

# 2. The upper-only directory e/ (passed through), from a fresh mount.
union_mount $u "$opts"
listed $u/e "$k"
[ "$(ino $u/e/$k)" = "$ino_h" ] && fail "e/$k shows the number of the removed copy e/h"
union_umount $u

# 3. A read-only union merges n/ in memory (no readdir state of n/ yet).
union_mount $u "ro,$opts"
listed $u/n p q "$r"
[ "$(ino $u/n/$r)" = "$ino_p" ] && fail "n/$r shows the number of the removed copy n/p"
union_umount $u
odf_check
