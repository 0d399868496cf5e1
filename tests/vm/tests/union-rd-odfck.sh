#!/bin/bash
# timeout: 600
# A damaged readdir state is a cache that is dropped and rebuilt
# (docs/odf-format.md 7, 10.3): a 3 000-entry merged directory (ext4 rw
# over xfs, 300 whiteouts) is listed, which writes its state to the
# ODF.  Then, with the union unmounted, one byte of the state is
# changed: in the record area, in an index bucket, in the header.  Each
# time odfck -fn reports it (exit 4), odfck -fp drops it (exit 1, naming
# the file), a second odfck -fn is clean, and the next listing through
# the union rebuilds the state with exactly the same (offset, name)
# pairs (the directory did not change).  Also: a damaged header seen by
# the module itself (no odfck in between) and a missing state are
# rebuilt the same way; the ODF is clean afterwards.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
RD=$SRC/tests/vm/prog/rdseek
ODFEDIT=$SRC/tests/unit/odfedit
[ -x "$ODFEDIT" ] || fail "tests/unit/odfedit is not built"
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

# d/: a0000-a1999 in b1, a1500-a2999 in b0; every 10th name removed
# through the union (whiteouts for those below).  Then nothing changes.
mkdir -p $b0/d $b1/d
"$RD" mk $b1/d a 4 0 1999 && "$RD" mk $b0/d a 4 1500 2999 ||
	fail "making the names of d"
union_mount $u "$opts"
"$RD" rm $u/d a 4 0 2999 10 || fail "unlinking every 10th name"
dino=$(ino $u/d)
state=$(printf '%016x' "$dino")
"$RD" record --strict $u/d $TMP/r0 || fail "the first listing of d (above)"
expect_eq "entries listed" 2702 "$(grep -c '^e ' $TMP/r0)"
union_umount $u

# has_state: the ODF holds /readdir/$state (union unmounted).
has_state() {
	debugfs -R 'ls /readdir' "$ODF_DEV" 2>/dev/null | grep -qw "$state"
}
has_state || fail "no readdir state /readdir/$state on the ODF after a listing"
odf_check
"$ODFEDIT" "$ODF_DEV" rd-list "$dino" >$TMP/rd0 2>&1 ||
	fail "odfedit rd-list: $(tail -n 1 $TMP/rd0)"
expect_eq "entries in the state" 2700 "$(grep -vc '^end$' $TMP/rd0)"

# Where things are in the state file: rh_index_buckets and rh_rec_start
# (header offsets 36 and 40).
debugfs -R "dump /readdir/$state $TMP/state" "$ODF_DEV" >/dev/null 2>&1 ||
	fail "cannot read /readdir/$state with debugfs"
read -r nb rec_start <<<"$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(4096)
print(*struct.unpack_from("<II", b, 36))' $TMP/state)"
# The index is sized for the 2700 names (spec 7.4: 16 buckets); the
# records may start further on, never inside it.
expect_eq "rh_index_buckets" 16 "$nb"
[ "$rec_start" -ge $((1 + nb)) ] || fail "rh_rec_start $rec_start inside the index (nb $nb)"
note "state $state: $nb index buckets, $(stat -c %s $TMP/state) bytes"

# flip OFFSET: change the byte at OFFSET of the state file (every bit).
flip() {
	local old new
	debugfs -R "dump /readdir/$state $TMP/state" "$ODF_DEV" >/dev/null 2>&1 ||
		fail "cannot read /readdir/$state with debugfs"
	old=$(od -An -tx1 -j "$1" -N 1 $TMP/state | tr -d ' ')
	[ -n "$old" ] || fail "the state has no byte at $1"
	printf -v new '%02x' $((0x$old ^ 0xff))
	"$ODFEDIT" "$ODF_DEV" poke "/readdir/$state" "$1" "$new" ||
		fail "odfedit poke /readdir/$state $1 $new"
}

# relist WHAT: mount, list d, the same (offset, name) pairs as the first
# listing, seekdir to them works, the state is back and the same.
relist() {
	union_mount $u "$opts"
	"$RD" record --strict $u/d $TMP/r1 || fail "$1: listing d (above)"
	if ! diff $TMP/r0 $TMP/r1 >$TMP/diff; then
		fail "$1: the rebuilt listing differs from the first one: $(grep '^[<>]' $TMP/diff | head -n 6 | tr '\n' ' ')"
	fi
	grep '^e ' $TMP/r0 | cut -d' ' -f3- | grep -vx '\.\.\?' >$TMP/names
	"$RD" verify --strict --samples 200 --expect $TMP/names $u/d $TMP/r0 ||
		fail "$1: offsets of the rebuilt state (above)"
	union_umount $u
	has_state || fail "$1: no readdir state /readdir/$state after the listing"
	"$ODFEDIT" "$ODF_DEV" rd-list "$dino" >$TMP/rd1 2>&1 ||
		fail "$1: odfedit rd-list: $(tail -n 1 $TMP/rd1)"
	diff -q $TMP/rd0 $TMP/rd1 >/dev/null ||
		fail "$1: the rebuilt state holds other ordinals: $(diff $TMP/rd0 $TMP/rd1 | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
	odf_check
}

# damage WHAT OFFSET: the odfck cycle for one damaged byte.
damage() {
	local out rc
	note "$1: byte $2 of /readdir/$state"
	flip "$2"
	out=$("$ODFCK" -fn "$ODF_DEV" 2>&1)
	rc=$?
	expect_eq "$1: odfck -fn exit status (problems left)" 4 "$rc"
	grep -q "/readdir/$state" <<<"$out" ||
		fail "$1: odfck -fn does not name /readdir/$state: $(grep -v '^Pass' <<<"$out" | head -n 4 | tr '\n' ' ')"
	out=$("$ODFCK" -fp "$ODF_DEV" 2>&1)
	rc=$?
	expect_eq "$1: odfck -fp exit status (repaired) [$(grep -v '^Pass' <<<"$out" | head -n 3 | tr '\n' ' ')]" 1 "$rc"
	grep "/readdir/$state" <<<"$out" | grep -q invalid ||
		fail "$1: odfck -fp does not say /readdir/$state is invalid: $(grep -v '^Pass' <<<"$out" | head -n 4 | tr '\n' ' ')"
	out=$("$ODFCK" -fn "$ODF_DEV" 2>&1)
	rc=$?
	expect_eq "$1: odfck -fn after the repair [$(grep -v '^Pass' <<<"$out" | head -n 3 | tr '\n' ' ')]" 0 "$rc"
	has_state && fail "$1: odfck -fp left /readdir/$state in place"
	relist "$1"
}

# Record area: a name byte of the first entry (slot 0, offset 24).
damage "record area" $((rec_start * 4096 + 24))
# Index: a byte of the first bucket (block 1), inside its entries.
damage "index bucket" $((4096 + 64))
# Header: rh_next_slot (offset 44).
damage "header" 44

# The module meets a damaged header itself (no odfck): it rebuilds.
note "damaged header, mounted without odfck"
flip 0
relist "damaged header seen by the module"

# A missing state: the volume is clean, the listing rebuilds it.
"$ODFEDIT" "$ODF_DEV" rm "/readdir/$state" || fail "odfedit rm /readdir/$state"
has_state && fail "odfedit rm left /readdir/$state"
odf_check
relist "missing state"

for b in $b0 $b1; do assert_branch_clean $b; done
