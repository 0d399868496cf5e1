#!/bin/bash
# timeout: 900
# Stable offsets of a merged directory (docs/odf-format.md section 7):
# a 10 000-entry directory merged from ext4 rw over ext4 and xfs, with
# names in several branches and 1 000 whiteouts.  The (offset, name)
# pairs of a listing are recorded (tests/vm/prog/rdseek) and checked
# after close+reopen, umount+mount, 1 100 creates, unlinks and renames
# through the union, names added to and removed from the lower branches
# directly (unmounted, then mounted): seekdir to every recorded offset
# resumes at that name, or at the next surviving one; the survivors keep
# their order; new names come after them all; no name is listed twice
# or missing; SEEK_END is the end of a full listing; rewinddir repeats
# the listing; d_ino == st_ino; one entry per getdents64 call lists the
# same.  The ODF holds the directory's readdir state and is clean; the
# union wrote nothing into the branches.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
RD=$SRC/tests/vm/prog/rdseek
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch xfs "$(nth_disk 3)" $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

# gen PREFIX WIDTH FROM TO [STEP]: the names rdseek mk/rm make.
gen() {
	awk -v f="$1%0$2d\n" -v a="$3" -v b="$4" -v s="${5:-1}" \
		'BEGIN { for (i = a; i <= b; i += s) printf f, i }'
}
# $TMP/names: the names the union's d/ must hold (expected by verify).
names_add() { gen "$@" >>$TMP/names; LC_ALL=C sort -u -o $TMP/names $TMP/names; }
names_del() {
	gen "$@" >$TMP/del
	grep -vxFf $TMP/del $TMP/names >$TMP/names.new
	mv $TMP/names.new $TMP/names
}
mk() { "$RD" mk "$@" || fail "creating names in $1"; }
rmn() { "$RD" rm "$@" || fail "unlinking names in $1"; }

# A failed offset check is reported and the test goes on (each check
# only reads), so one run shows every broken promise; the test fails
# at the end.
failed=
check() { # WHAT COMMAND...
	local what=$1
	shift
	note "$what"
	if ! "$@" 2>&1; then
		echo "FAILED CHECK: $what"
		failed="$failed
  $what"
	fi
}
verify() { # WHAT RECORD SEED
	check "$1" "$RD" verify --strict --seed "$3" --samples 300 --expect $TMP/names $u/d "$2"
}
record() { # RECORD
	"$RD" record --strict $u/d "$1" ||
		fail "recording the listing of $u/d into $1 (above)"
}

# d/: n00000-n05999 in b2 (xfs), n04000-n08999 in b1 (ext4),
# n08000-n10999 in b0 (upper); sub/ (a directory in b1 and b2), lnk (a
# symlink in b2), fifo (in b1).
mkdir -p $b0/d $b1/d/sub $b2/d/sub
mk $b2/d n 5 0 5999
mk $b1/d n 5 4000 8999
mk $b0/d n 5 8000 10999
ln -s n00001 $b2/d/lnk && mkfifo $b1/d/fifo || fail "making lnk and fifo"
names_add n 5 0 10999
printf '%s\n' sub lnk fifo >>$TMP/names
snap lower1 $b1
snap lower2 $b2

union_mount $u "$opts"
# Whiteouts: every 11th name, from whichever branches hold it.
rmn $u/d n 5 0 10999 11
names_del n 5 0 10999 11
expect_eq "names in d (after 1000 unlinks)" 10003 "$(wc -l <$TMP/names)"
got=$(union_ls $u/d | tr ' ' '\n')
[ "$got" = "$(LC_ALL=C sort $TMP/names)" ] ||
	fail "listing of d: $(lines_diff "$(LC_ALL=C sort $TMP/names)" "$got" | head -n 5 | tr '\n' ' ')"
dino=$(ino $u/d)
record $TMP/r0

check "close+reopen: seekdir to recorded offsets, SEEK_END, rewinddir, d_ino" \
	"$RD" verify --strict --seed 1 --samples 1000 --expect $TMP/names $u/d $TMP/r0
check "one entry per getdents64 call" "$RD" onebyone $u/d

union_umount $u
union_mount $u "$opts"
verify "umount+mount" $TMP/r0 2
record $TMP/r1

# Through the union: 500 creates, 500 unlinks (upper, lower and
# duplicated names), 100 renames (lower names: copy-up + whiteout).
mk $u/d c 5 0 499
names_add c 5 0 499
rmn $u/d n 5 5 10999 22
names_del n 5 5 10999 22
for i in $(seq 7 110 10999); do
	printf -v n 'n%05d' $i
	printf -v r 'r%05d' $i
	mv $u/d/$n $u/d/$r || fail "rename d/$n d/$r"
	echo "$r" >>$TMP/names
done
names_del n 5 7 10999 110
LC_ALL=C sort -o $TMP/names $TMP/names
verify "after creates, unlinks and renames through the union (first record)" $TMP/r0 3
verify "after creates, unlinks and renames through the union (record after remount)" $TMP/r1 4
record $TMP/r2

union_umount $u
snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1" "$lower1" "$after1"
expect_same "lower branch $b2" "$lower2" "$after2"

# Directly in the lower branches while unmounted: 300 new names in b1;
# every 11th name from 3 on removed from b2 (n00003-n03999 vanish,
# n04000-n05999 stay: b1 has them too); names that the upper branch or
# a whiteout hides added to b2 (nothing changes).  (No name that was
# unlinked from the upper branch alone: no whiteout hides it.)
mk $b1/d l 5 0 299
names_add l 5 0 299
rmn $b2/d n 5 3 5999 11
names_del n 5 3 3999 11
mk $b2/d n 5 9012 9014		# in b0
mk $b2/d n 5 6028 6028		# 6028 = 11 * 548: whited out
union_mount $u "$opts"
verify "after lower changes while unmounted (first record)" $TMP/r0 5
verify "after lower changes while unmounted (record before the changes)" $TMP/r2 6
record $TMP/r3

# Directly in the lower branches while mounted: 200 new names in b2,
# every 11th name from n06015 to n07999 removed from b1 (only b1 had
# them).  Then a new listing.
mk $b2/d x 5 0 199
names_add x 5 0 199
rmn $b1/d n 5 6015 7999 11
names_del n 5 6015 7999 11
verify "after lower changes while mounted (first record)" $TMP/r0 7
verify "after lower changes while mounted (record before the changes)" $TMP/r3 8
check "one entry per getdents64 call, at the end" "$RD" onebyone $u/d
got=$(union_ls $u/d | tr ' ' '\n')
[ "$got" = "$(LC_ALL=C sort $TMP/names)" ] ||
	fail "listing of d at the end: $(lines_diff "$(LC_ALL=C sort $TMP/names)" "$got" | head -n 5 | tr '\n' ' ')"
expect_eq "inode of d" "$dino" "$(ino $u/d)"
"$SRC/tests/vm/prog/dirlist" -e $u/d >$TMP/end.out 2>&1
end_off=$(sed -n 's/^seek_end //p' $TMP/end.out)
list=$("$RD" record --strict $u/d $TMP/r4 2>&1)
snap lower1 $b1
snap lower2 $b2
union_umount $u

snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1 (after the direct changes)" "$lower1" "$after1"
expect_same "lower branch $b2 (after the direct changes)" "$lower2" "$after2"
for b in $b0 $b1 $b2; do assert_branch_clean $b; done

# The ODF: d's readdir state holds d's names in listing order, its end
# is SEEK_END; odfck finds the volume clean.
state=$(printf '%016x' "$dino")
if ! debugfs -R 'ls /readdir' "$ODF_DEV" 2>/dev/null | grep -qw "$state"; then
	failed="$failed
  no readdir state /readdir/$state for d on the ODF: $(debugfs -R 'ls /readdir' "$ODF_DEV" 2>&1 | tr -s ' \n' ' ')"
elif ! "$SRC/tests/unit/odfedit" "$ODF_DEV" rd-list "$dino" >$TMP/rdlist 2>&1; then
	failed="$failed
  odfedit rd-list $state: $(tail -n 1 $TMP/rdlist)"
else
	want=$(awk '$1 == "e" && $3 != "." && $3 != ".." { print $3 }' $TMP/r4)
	got=$(awk '$1 != "end" { print $2 }' $TMP/rdlist)
	[ "$want" = "$got" ] || failed="$failed
  the readdir state lists other names, or in another order, than the union:
$(lines_diff "$want" "$got" | head -n 6)"
	rd_end=$("$SRC/tests/unit/odfedit" "$ODF_DEV" rd-end "$dino" 2>&1)
	[ "$rd_end" = "$end_off" ] || failed="$failed
  SEEK_END on d gave '$end_off' ($(tr '\n' ' ' <$TMP/end.out | cut -c1-80)), the state's end is '$rd_end'"
fi
odf_check

if [ -n "$failed" ]; then
	echo "checks that failed:$failed"
	fail "$(grep -c '^  [^ ]' <<<"$failed") checks failed (listed above), the first: $(sed -n '2s/^  //p' <<<"$failed")"
fi
