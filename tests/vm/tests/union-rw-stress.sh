#!/bin/bash
# timeout: 900
# Stress: four processes change one union (ext4 rw over xfs and tmpfs,
# with lower trees to copy up, whiteout and rename) at random for two
# minutes: create, write, truncate, read, unlink, mkdir, rmdir, rename
# (plain, NOREPLACE, EXCHANGE), symlink, link, chmod, stat, each checked
# against a model of what the calls must answer (tests/vm/prog/
# unionstress.c), plus a quarter of the calls racing in one shared
# directory and a reader listing it all the time.  Then every tree must
# match its model (names once, d_type, d_ino == st_ino, modes, inode
# numbers, contents); after umount the lower branches are unchanged,
# no branch holds union metadata, odfck finds the ODF clean; after a
# remount the trees are still the same.
# STRESS_SECONDS and STRESS_SEED override the duration and the seed;
# STRESS_RW_LOWER=1 (union-rw-lower-stress.sh) marks the xfs branch =rw:
# its objects are then changed in place, so only the tmpfs branch must
# stay unchanged, and a rename or link in shared/ of a file another
# worker writes in place may be EBUSY.
. "$SRC/tests/vm/lib.sh"

stress=$SRC/tests/vm/prog/unionstress
[ -x "$stress" ] || fail "tests/vm/prog/unionstress is not built (make testprogs)"
b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkbranch tmpfs none $b2
mkodf_dev "$ODF_DEV"
b1mode=ro
if [ -n "${STRESS_RW_LOWER:-}" ]; then
	b1mode=rw
	export UNIONSTRESS_RW_LOWER=1
fi
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=$b1mode:$b2=ro"
nproc=4 seconds=${STRESS_SECONDS:-120} seed=${STRESS_SEED:-$RANDOM}

# Each worker's directory wI:
#   b1 (xfs): n0 n1 n2 n3, n4/{n0,n1}, n5 (hard link of n0), n6 -> nowhere/x
#   b2 (tmpfs): n0 (hidden by b1's), n4/n2, n7/n1, n8
#   b0 (ext4): n9, n4/n3
# shared: b1 s0 s1 s2 s3 s4/s0; b2 s4/s1 s5/s1; b0 s6
rnd() { head -c $((RANDOM % 5000)) /dev/urandom; }
for i in $(seq 0 $((nproc - 1))); do
	w=w$i
	mkdir -p $b1/$w/n4 $b2/$w/n4 $b2/$w/n7 $b0/$w/n4
	for f in n0 n1 n2 n3 n4/n0 n4/n1; do rnd >$b1/$w/$f; done
	ln $b1/$w/n0 $b1/$w/n5
	ln -s nowhere/x $b1/$w/n6
	for f in n0 n4/n2 n7/n1 n8; do rnd >$b2/$w/$f; done
	for f in n9 n4/n3; do rnd >$b0/$w/$f; done
done
mkdir -p $b1/shared/s4 $b2/shared/s4 $b2/shared/s5 $b0/shared
for f in s0 s1 s2 s3 s4/s0; do echo $f >$b1/shared/$f; done
for f in s4/s1 s5/s1; do echo $f >$b2/shared/$f; done
echo s6 >$b0/shared/s6
snap lower1 $b1
snap lower2 $b2

union_mount $u "$opts"
# A reader that lists and reads the shared directory all the time.
(
	while [ ! -e $TMP/stop ]; do
		ls -laR $u/shared >/dev/null 2>&1
		cat $u/shared/* $u/shared/*/* >/dev/null 2>&1
	done
) &
reader=$!
note "unionstress: $nproc workers, $seconds s, seed $seed"
"$stress" run $u $nproc "$seconds" "$seed" $TMP/manifest >$TMP/stress.out 2>&1
rc=$?
touch $TMP/stop
wait $reader
cat $TMP/stress.out
if [ $rc != 0 ]; then
	# For each worker that failed, its last calls on the top-level names
	# of the call that failed.
	for t in $TMP/manifest.trace.*; do
		f=$(grep '^FAILED: ' $t) || continue
		call=${f#FAILED: }
		names=$(for w in $(echo "${call%%: *}" | cut -d' ' -f2-); do echo "${w%%/*}"; done |
			sort -u | paste -sd'|')
		echo "--- worker ${t##*.}: $call; its last calls naming ${names//|/ or }:"
		grep -E -w -- "$names" $t | grep -v '^FAILED\|^shared' | tail -n 25
	done
fi
if [ $rc != 0 ] && nums=$(sed -n 's/.*: d_ino \([0-9]*\), st_ino \([0-9]*\).*/\1 \2/p' \
	$TMP/stress.out | head -n 1) && [ -n "$nums" ]; then
	# An inode number that readdir and stat disagree on: what the ODF's
	# inode maps and the branches hold for both numbers.
	union_umount $u
	echo "--- map records naming $nums (union numbers, or their branch inodes):"
	pat=""
	for n in $nums; do
		pat="$pat|0x$(printf %x $n)\b|,$((n & 0xffffffffffff))\)"
	done
	"$SRC/tests/unit/odfedit" "$ODF_DEV" dump | grep -E "${pat#|}"
	for n in $nums; do
		echo "--- branch objects with inode $((n & 0xffffffffffff)) (branch id $((n >> 48))):"
		find $b0 $b1 $b2 -xdev -inum $((n & 0xffffffffffff)) -printf '%p %y %i\n'
	done
	odf_ns
	echo "--- ODF /ns redirects:"
	grep '^R' <<<"$NS"
fi
[ $rc = 0 ] || fail "unionstress run: $(grep -v '^unionstress: seed' $TMP/stress.out | head -n 3 | tr '\n' ' ')"
ops=$(sed -n 's/.*: \([0-9]*\) operations checked.*/\1/p' $TMP/stress.out)
[ "${ops:-0}" -ge 100 ] || fail "only ${ops:-0} operations in $seconds s"
union_umount $u

snap after1 $b1
snap after2 $b2
if [ $b1mode = rw ]; then
	[ "$lower1" != "$after1" ] || fail "nothing was changed in place on $b1"
else
	expect_same "lower branch $b1" "$lower1" "$after1"
fi
expect_same "lower branch $b2" "$lower2" "$after2"
for b in $b0 $b1 $b2; do assert_branch_clean $b; done
odf_check
odf_ns
grep -q '^BAD' <<<"$NS" && fail "ODF /ns: $(grep '^BAD' <<<"$NS" | head -n 2)"
note "ODF /ns: $(grep -c '^W' <<<"$NS") whiteouts, $(grep -c '^O' <<<"$NS") opaque, $(grep -c '^R' <<<"$NS") redirects"

union_mount $u "$opts"
"$stress" verify $u $nproc $TMP/manifest || fail "after remount, the trees differ from the models"
union_umount $u
odf_check
