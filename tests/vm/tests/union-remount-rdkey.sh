#!/bin/bash
# timeout: 400
# Directory offsets of a lower-only merged directory survive the removal
# of the branch its number is made of (issue 11, spec 3.5).  m/ is on two
# lower branches only; it is numbered after its part on the oldest (b1),
# and its readdir state is keyed by that number.  remount,del= of b1 gives
# m/ the number of its part on b2; its state must move with it, so that
# the offsets of b2's names, handed out before, still resume at the same
# names (before, the state was left under the old number and m/ got a
# new one with new offsets).  Also after a fresh mount of the new set;
# odfck is clean and no state is left under the old number.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
RS=$SRC/tests/vm/prog/rdseek
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch xfs "$(nth_disk 3)" $b2
mkodf_dev "$ODF_DEV"
mkdir -p $b1/m $b2/m
for i in $(seq -w 0 99); do : >$b1/m/p$i; done
for i in $(seq -w 0 299); do : >$b2/m/q$i; done
sync

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"
old=$(ino $u/m)
expect_eq "number of m/ (made of b1's part: branch id 2)" \
	"$(uino 2 "$(ino $b1/m)")" "$old"
"$RS" record --strict $u/m $TMP/rec >$TMP/out 2>&1 || fail "rdseek record: $(tail -n 3 $TMP/out)"
ls -f $u/m | grep -c '^q' | grep -qx 300 || fail "m/ does not list b2's 300 names"

mount -o remount,del=$b1 $u || fail "remount,del=$b1"
new=$(ino $u/m)
expect_eq "number of m/ after del= (b2's part: branch id 3)" \
	"$(uino 3 "$(ino $b2/m)")" "$new"
# The 300 names of b2 stay at the offsets recorded before; b1's are gone
# (rdseek verify takes a recorded name missing now as removed).
names=$(ls -f $u/m | grep -vc '^\.\.\?$')
expect_eq "names of m/ after del=" 300 "$names"
"$RS" verify --strict --samples 100 $u/m $TMP/rec >$TMP/out 2>&1 ||
	fail "offsets of m/ handed out before del= do not hold after it: $(head -n 5 $TMP/out)"

union_umount $u
state() { debugfs -R 'ls /readdir' "$ODF_DEV" 2>/dev/null | grep -ow "$(printf '%016x' "$1")"; }
[ -n "$(state "$new")" ] || fail "no readdir state under m/'s new number $new"
[ -z "$(state "$old")" ] || fail "a readdir state is left under m/'s old number $old"
odf_check

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b2=ro"
expect_eq "number of m/ after a fresh mount" "$new" "$(ino $u/m)"
"$RS" verify --strict --samples 100 $u/m $TMP/rec >$TMP/out 2>&1 ||
	fail "offsets of m/ do not hold after a fresh mount: $(head -n 5 $TMP/out)"
union_umount $u
odf_check
exit 0
