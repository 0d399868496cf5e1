#!/bin/bash
# timeout: 3600
# A merged directory of a million entries (make check-long): 1 000 000
# names in a lower ext4 branch, 2 000 in the upper one (1 000 of them
# also below), 1 001 removed through the union.  The union lists each
# name once (the count is exact, no duplicates); the readdir state is
# on the ODF; after a remount the recorded offsets still seek right and
# SEEK_END is the end; odfck finds the ODF clean.  Kernel memory: a
# listing through the union holds less than 512 KiB more slab (and
# 16 MiB more kernel memory in all) than a plain listing of the same
# directory on the branch itself (docs/odf-format.md 1: "kernel memory
# does not grow with the size of any directory"); both the first
# listing (which builds the state) and one after drop_caches.  The
# durations are printed, never asserted.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
RD=$SRC/tests/vm/prog/rdseek
N=1000000
mkbranch ext4 "$(nth_disk 1)" $b0
# The lower branch has no journal: a million names take 4 minutes to
# make under TCG instead of 5.5.
mkdir -p $b1
mkfs.ext4 -q -F -O ^has_journal -N $((N + 100000)) "$(nth_disk 2)" && mount -t ext4 "$(nth_disk 2)" $b1 ||
	fail "cannot make the lower ext4 branch"
rmdir $b1/lost+found
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

# elapsed SINCE: seconds since the date +%s value SINCE.
elapsed() { echo $(($(date +%s) - $1)); }

t=$(date +%s)
mkdir -p $b0/d $b1/d
"$RD" mk $b1/d f 7 0 $((N - 1)) || fail "creating $N names in $b1/d"
"$RD" mk $b0/d f 7 $((N - 1000)) $((N + 999)) || fail "creating names in $b0/d"
sync
note "made $N + 2000 names in $(elapsed $t)s"

union_mount $u "$opts"
t=$(date +%s)
"$RD" rm $u/d f 7 0 $((N + 999)) 1000 || fail "unlinking every 1000th name through the union"
note "1001 unlinks through the union in $(elapsed $t)s"
want=$((N + 1000 - 1001))
union_umount $u

# count WHAT DIR: rdseek count --slab; sets ENTRIES, SLAB and KMEM (KiB
# that the listing holds at the end of the directory, still open: slab,
# and all kernel memory that is neither free, page cache nor user
# memory) and prints them with the same after the close.
count() {
	local out
	out=$("$RD" count --slab "$2" 2>&1) || fail "$1: listing $2: $out"
	v() { sed -n "s/^$1 //p" <<<"$out"; }
	ENTRIES=$(v entries) SLAB=$(v slab_kib) KMEM=$(v kernel_kib)
	SUNREC=$(v sunreclaim_kib)
	note "$1: $ENTRIES entries in $(v seconds)s; open: slab +$SLAB KiB (unreclaimable +$SUNREC KiB; slabinfo +$(v slabinfo_kib) KiB)," \
		"kernel +$KMEM KiB; closed: slab +$(v slab_closed_kib) KiB, kernel +$(v kernel_closed_kib) KiB;" \
		"slabs that grew most: $(v slab_grew | head -n 3 | tr '\n' ',' | sed 's/,$//')"
}
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; sleep 1; }

# The bare branch: cold (after drop_caches), then warm.
drop
count "bare $b1/d, cold" $b1/d
expect_eq "entries in $b1/d" $N "$ENTRIES"
bare_cold=$SLAB bare_cold_k=$KMEM
count "bare $b1/d, warm" $b1/d
bare_warm=$SLAB bare_warm_k=$KMEM bare_warm_u=$SUNREC

union_mount $u "$opts"
state=$(printf '%016x' "$(ino $u/d)")
# First listing through the union: builds the readdir state (the
# branch's directory blocks are in the cache already).
count "union, first listing (builds the state)" $u/d
expect_eq "entries in the union's d" $want "$ENTRIES"
union_first=$SLAB union_first_k=$KMEM union_first_u=$SUNREC
# Again after dropping every cache: reads the state.
drop
count "union, after drop_caches" $u/d
expect_eq "entries in the union's d, again" $want "$ENTRIES"
union_cold=$SLAB union_cold_k=$KMEM

# Failed checks below are collected; the test fails at the end.
failed=
# Offsets at this size: recorded, then checked after a remount.
t=$(date +%s)
"$RD" record --strict $u/d $TMP/r0 || fail "recording the listing (above)"
union_umount $u
union_mount $u "$opts"
"$RD" verify --strict --samples 100 $u/d $TMP/r0 || failed="$failed
  offsets after a remount (above)"
union_umount $u
note "record + remount + verify in $(elapsed $t)s"

if debugfs -R 'ls -l /readdir' "$ODF_DEV" 2>/dev/null | grep -w "$state" >$TMP/state; then
	note "state: $(tr -s ' ' <$TMP/state)"
else
	failed="$failed
  no readdir state /readdir/$state on the ODF"
fi
t=$(date +%s)
odf_check
note "odfck -fn in $(elapsed $t)s"
# (The lower branch's million names: the 10 000-name union-rd-seek
# checks that lower branches stay unchanged.)
assert_branch_clean $b0

# Memory held by a listing, measured at the end of the directory with
# the directory still open.  The guarantee (docs/odf-format.md 1: kernel
# memory does not grow with the size of any directory) is about the
# module's own memory in the steady state: the listing after
# drop_caches (the state exists) must hold no more than a cold listing
# of the branch itself.  The first listing writes the state (80 MB for
# a million names) through the ODF's page cache, and ext4 keeps a
# buffer head for each page it wrote (about 2 MiB here) until the page
# goes; the whiteout lookups leave the whiteouts' dentries and inodes
# cached: both are reclaimable caches, so the first listing is held to
# the margin in unreclaimable slab (SUnreclaim) over a warm plain
# listing, and its whole slab is reported.  Slab: 512 KiB more at
# most.  All kernel memory
# outside caches (which also sees kmalloc blocks too large for a slab
# and vmalloc, but moves by a few MiB with the per-CPU free page lists):
# 16 MiB more at most, 16 bytes an entry.
slab_limit=512 kmem_limit=16384
mem_check() { # WHAT UNION BARE LIMIT UNIT
	[ $(($2 - $3)) -lt $4 ] || failed="$failed
  $1 held $2 KiB of $5, the plain listing $3 KiB (limit: $4 KiB more)"
}
mem_check "the listing through the union after drop_caches" $union_cold $bare_cold $slab_limit slab
mem_check "the first listing through the union" $union_first_u $bare_warm_u $slab_limit "unreclaimable slab"
mem_check "the listing through the union after drop_caches" $union_cold_k $bare_cold_k $kmem_limit "kernel memory"
mem_check "the first listing through the union" $union_first_k $bare_warm_k $kmem_limit "kernel memory"
if [ -n "$failed" ]; then
	echo "checks that failed:$failed"
	fail "$(grep -c '^  [^ ]' <<<"$failed") checks failed (listed above), the first: $(sed -n '2s/^  //p' <<<"$failed")"
fi
