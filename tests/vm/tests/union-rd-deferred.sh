#!/bin/bash
# timeout: 900
# The first listing of a merged directory builds its readdir state in
# memory and lists from there; a work item writes the state to the ODF
# after the listing (docs/odf-format.md 7.5).  What a user relies on:
# - A: with the ODF frozen (fsfreeze), the first listing of a merged
#   directory completes (before, it waited for the thaw: the state was
#   written during the listing); the state file appears after the thaw
#   and a sync, and nothing reached the frozen ODF (ext4 WARNs, and the
#   harness fails on any kernel warning);
# - B: the offsets the first listing gave are the state's: after a
#   remount (a listing from the written state) every name has the same
#   d_off and d_ino;
# - C: a create and an unlink through the union right after the first
#   listing update the state in place (written first): no reconcile, no
#   second build, and the listing shows the change;
# - D: a directory listed and then removed leaves no state file;
# - E: four processes listing and creating in 16 fresh directories, the
#   union unmounted right after: every state is written at unmount (the
#   next mount builds and reconciles none), no "Busy inodes";
# - G: eight directories listed and the union unmounted at once: the
#   states still in memory are written at unmount (the next mount lists
#   them with the same offsets, building and reconciling none);
# - F: with the ODF full the first listing still lists every name, the
#   kernel log says the state could not be written, and a listing after
#   room is made builds it;
# - H: a directory too big for a state in memory (270,000 names) has its
#   state written during its listing, every name once, the same offsets
#   after a remount.
. "$SRC/tests/vm/lib.sh"

DL=$SRC/tests/vm/prog/dirlist
b0=/mnt/b0 b1=/mnt/b1 odf=/mnt/odf u=/mnt/u
TMP=$(mktemp -d)
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
mkdir -p $odf
mount -t ext4 "$ODF_DEV" $odf || fail "cannot mount the ODF as ext4"
opts="odf=$odf,dirs=$b0=rw:$b1=ro"

# mkmerged DIR N: DIR on both branches, names f0..f(N-1), a third of
# them on the upper branch, a tenth on both.
mkmerged() {
	python3 - "$b0/$1" "$b1/$1" "$2" <<'PY' || fail "cannot make $1 on the branches"
import os, sys
up, low, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(up, exist_ok=True)
os.makedirs(low, exist_ok=True)
for i in range(n):
    if i < n // 3:
        open('%s/f%d' % (up, i), 'w').close()
        if i < n // 10:
            open('%s/f%d' % (low, i), 'w').close()
    else:
        open('%s/f%d' % (low, i), 'w').close()
PY
}
# names DIR: the names of a dirlist output, sorted.
names() { awk '$1 != "end" && $4 != "." && $4 != ".." { print $4 }' "$1" | sort; }
seqnames() { local i; for ((i = 0; i < $1; i++)); do echo "f$i"; done | sort; }
state_of() { echo "$odf/readdir/$(printf %016x "$(stat -c %i "$1")")"; }
stat_of() { cat "$S/$1"; }
# remount WHAT: unmount with umount(8) (union_umount's find would list
# every directory), fail on "Busy inodes", mount again.
remount() {
	klog_mark
	umount $u || fail "umount $u $1"
	klog_new | grep -q "Busy inodes" &&
		fail "unmount $1 left busy inodes: $(klog_new | grep 'Busy inodes')"
	union_mount $u "$opts"
	S=/sys/fs/unionfs/$(mountpoint -d $u)
}

for d in a b c e; do mkmerged $d 300; done
for i in $(seq 16); do mkmerged s$i 100; done
for i in $(seq 8); do mkmerged g$i 200; done
union_mount $u "$opts"
S=/sys/fs/unionfs/$(mountpoint -d $u)

# --- A: a first listing with the ODF frozen ---
sa=$(state_of $u/a)
fsfreeze -f $odf || fail "fsfreeze -f $odf"
timeout 30 "$DL" $u/a >$TMP/a1 2>$TMP/a1.err &
p=$!
for ((t = 0; t < 100; t++)); do
	kill -0 $p 2>/dev/null || break
	sleep 0.1
done
if kill -0 $p 2>/dev/null; then
	fsfreeze -u $odf
	wait $p
	fail "the first listing of a/ waited for the frozen ODF"
fi
wait $p || { fsfreeze -u $odf; fail "dirlist a/: $(cat $TMP/a1.err)"; }
expect_eq "names of a/ listed with the ODF frozen" "$(seqnames 300)" "$(names $TMP/a1)"
[ -e "$sa" ] && { fsfreeze -u $odf; fail "a state reached the frozen ODF: $sa"; }
fsfreeze -u $odf || fail "fsfreeze -u $odf"
sync
[ -f "$sa" ] || fail "no state $sa after the thaw and a sync"
expect_eq "states built (a/)" 1 "$(stat_of readdir_built)"

# --- B: the first listing's offsets are the state's ---
"$DL" $u/b >$TMP/b1 || fail "dirlist b/"
remount "after listing b/"
"$DL" $u/b >$TMP/b2 || fail "dirlist b/ after remount"
expect_eq "states built by a listing after remount" 0 "$(stat_of readdir_built)"
expect_eq "b/: d_off d_ino d_type name of the first listing, then from the state" \
	"$(cat $TMP/b1)" "$(cat $TMP/b2)"
expect_eq "names of b/" "$(seqnames 300)" "$(names $TMP/b2)"

# --- C: changes right after the first listing update the state ---
"$DL" $u/c >$TMP/c1 || fail "dirlist c/"
: >$u/c/new || fail "create c/new"
rm $u/c/f200 || fail "unlink c/f200 (a lower name)"
"$DL" $u/c >$TMP/c2 || fail "dirlist c/ after the changes"
expect_eq "names of c/ after create and unlink" \
	"$( (seqnames 300 | grep -vx f200; echo new) | sort)" "$(names $TMP/c2)"
# every name the first listing had keeps its offset (an entry's own
# offset is the d_off of the entry before it)
own() { awk '$1 != "end" { if (NR > 1) print $4, prev; prev = $1 }' "$1"; }
own $TMP/c1 | grep -v '^f200 ' | sort >$TMP/c1.pairs
own $TMP/c2 | sort >$TMP/c2.pairs
comm -23 $TMP/c1.pairs $TMP/c2.pairs >$TMP/c.moved
[ -s $TMP/c.moved ] && fail "names of c/ whose offsets moved: $(head -n 3 $TMP/c.moved | tr '\n' ' ')"
expect_eq "states built (c/)" 1 "$(stat_of readdir_built)"
expect_eq "states reconciled (c/ kept fresh)" 0 "$(stat_of readdir_reconciled)"
expect_eq "states rebuilt" 0 "$(stat_of readdir_rebuilt)"

# --- D: listed, then removed ---
se=$(state_of $u/e)
"$DL" $u/e >/dev/null || fail "dirlist e/"
rm -f $u/e/* || fail "rm e/*"
rmdir $u/e || fail "rmdir e"
sync
[ -e "$se" ] && fail "the state of the removed e/ is still on the ODF: $se"

# --- E: listings and creates racing, then unmount ---
for w in 1 2 3 4; do
	(
		for i in $(seq 16); do
			"$DL" -b 1024 $u/s$i >/dev/null || exit 1
			: >$u/s$i/w$w || exit 1
		done
	) &
	eval p$w=$!
done
for w in 1 2 3 4; do
	eval wait \$p$w || fail "worker $w failed"
done
remount "after the workers"
for i in $(seq 16); do
	"$DL" $u/s$i >$TMP/s || fail "dirlist s$i after remount"
	expect_eq "names of s$i" "$( (seqnames 100; printf 'w%s\n' 1 2 3 4) | sort)" "$(names $TMP/s)"
done
expect_eq "states built after remount (all written at unmount)" 0 "$(stat_of readdir_built)"
expect_eq "states reconciled after remount" 0 "$(stat_of readdir_reconciled)"

# --- G: states still in memory at unmount are written then ---
for i in $(seq 8); do
	"$DL" $u/g$i >$TMP/g$i.1 || fail "dirlist g$i"
done
remount "right after the listings"
for i in $(seq 8); do
	"$DL" $u/g$i >$TMP/g$i.2 || fail "dirlist g$i after remount"
	expect_eq "g$i: the first listing, then from the state written at unmount" \
		"$(cat $TMP/g$i.1)" "$(cat $TMP/g$i.2)"
done
expect_eq "states built after remount (g*: written at unmount)" 0 "$(stat_of readdir_built)"
expect_eq "states reconciled after remount (g*)" 0 "$(stat_of readdir_reconciled)"

# --- F: the ODF full ---
mkmerged full 300
klog_mark
# most of it at once, the rest (ext4 keeps some room for itself) written
fallocate -l $(( ($(stat -f -c %a $odf) - 100) * 4096 )) $odf/filler ||
	fail "fallocate the filler on the ODF"
dd if=/dev/zero of=$odf/filler2 bs=4k 2>/dev/null
sync
"$DL" $u/full >$TMP/f1 || fail "dirlist full/ with the ODF full"
expect_eq "names of full/ with the ODF full" "$(seqnames 300)" "$(names $TMP/f1)"
sync
klog_new | grep -q "cannot write the readdir state" ||
	fail "no kernel message that the state of full/ was not written"
[ -e "$(state_of $u/full)" ] && fail "a state of full/ on a full ODF"
rm -f $odf/filler $odf/filler2
"$DL" $u/full >$TMP/f2 || fail "dirlist full/ after room was made"
expect_eq "names of full/ after room was made" "$(seqnames 300)" "$(names $TMP/f2)"
sync
[ -f "$(state_of $u/full)" ] || fail "no state of full/ after room was made and a sync"

# --- H: too big for a state in memory ---
# 270,000 one-slot names pass the 4096 record blocks (262,144 slots) a
# state in memory may have: the build goes on in the file, which is in
# place when the listing returns; every name is listed once, and the
# same offsets come back from the state after a remount.
python3 - $b1/huge <<'PY' || fail "cannot make huge/"
import os, sys
d = sys.argv[1]
os.mkdir(d)
for i in range(270000):
    os.close(os.open('%s/h%d' % (d, i), os.O_WRONLY | os.O_CREAT, 0o644))
PY
mkdir $b0/huge && : >$b0/huge/up || fail "cannot make the upper part of huge/"
"$DL" $u/huge >$TMP/h1 || fail "dirlist huge/"
[ -f "$(state_of $u/huge)" ] || fail "the state of huge/ is not in place when its listing returns"
expect_eq "entries of huge/ (with . and ..)" 270003 "$(grep -vc '^end ' $TMP/h1)"
expect_eq "names of huge/ listed twice" "" "$(names $TMP/h1 | uniq -d | head -n 3)"
remount "after listing huge/"
"$DL" $u/huge >$TMP/h2 || fail "dirlist huge/ after remount"
cmp -s $TMP/h1 $TMP/h2 || fail "huge/: the listing after remount differs: $(diff $TMP/h1 $TMP/h2 | head -n 4 | tr '\n' ' ')"

union_umount $u
umount $odf || fail "umount $odf"
"$ODFCK" -fn "$ODF_DEV" >$TMP/ck 2>&1 || fail "odfck -fn after the test: $(grep -v '^Pass' $TMP/ck | head -n 4 | tr '\n' ' ')"
echo "PASS"
