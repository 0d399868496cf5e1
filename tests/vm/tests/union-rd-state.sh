#!/bin/bash
# timeout: 400
# The readdir state file of a merged directory on the ODF, beyond plain
# listings (docs/odf-format.md section 7):
# - a state the previous session may have left half-written (ODF state
#   MOUNTED: a crash) is reconciled, not trusted: an entry missing from
#   it comes back, every other name keeps its offset;
# - that reconcile happens once per session: the directory's inode
#   evicted and read again (drop_caches) lists it with no ODF write;
# - a block appended without its header (what a crash between the
#   writes of 7.3 leaves) makes the state stale, not damaged: offsets are
#   kept (a rebuild would renumber past the tombstone below);
# - rename over a name keeps its offset and shows the new object's
#   inode; exchange swaps the inodes at both offsets;
# - a record block left without live entries is deallocated (punched)
#   and the offsets of the survivors do not change; a reconcile keeps
#   such holes and punches the blocks whose names went from a branch;
# - rmdir deletes the directory's state.
# odfck finds the ODF clean after each part.
. "$SRC/tests/vm/lib.sh"

ODFEDIT=$SRC/tests/unit/odfedit
DIRLIST=$SRC/tests/vm/prog/dirlist
b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u odfm=/mnt/odf
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

mkdir -p $b0/d $b1/d $b1/p $b1/e
for i in $(seq -w 0 99); do echo $i >$b1/d/l_$i; done
for i in $(seq -w 0 19); do echo $i >$b0/d/u_$i; done
echo lower >$b1/p/lower
echo e >$b1/e/f

# ords DIR: "ORDINAL NAME" per entry, in listing order.  The ordinal of
# an entry is the d_off of the entry before it (one getdents64 call).
ords() {
	"$DIRLIST" -b 1048576 "$1" | awk '$1 != "end" {
		if (NR > 1 && $4 != "." && $4 != "..") print prev, $4
		prev = $1 }'
}
# state_name DIR: the state file's name, /readdir/<016llx st_ino>.
state_name() { printf '%016x' "$(stat -c %i "$1")"; }
# state_blocks NAME: 512-byte blocks the state file uses (union unmounted).
state_blocks() {
	mkdir -p $odfm
	mount -t ext4 -o ro "$ODF_DEV" $odfm || fail "cannot mount the ODF"
	stat -c %b "$odfm/readdir/$1" || { umount $odfm; fail "no /readdir/$1"; }
	umount $odfm
}
# same WHAT A B: files A and B are equal.
same() {
	diff "$2" "$3" >/tmp/diff.out ||
		fail "$1: $(head -n 6 /tmp/diff.out | tr '\n' ' ')"
}
state_exists() {
	debugfs -R "stat /readdir/$1" "$ODF_DEV" 2>&1 | grep -q 'Inode:'
}

union_mount $u "$opts"
ords $u/d >/tmp/l0
expect_eq "names listed" 120 "$(wc -l </tmp/l0)"
D=$(state_name $u/d)
union_umount $u
odf_check
state_exists "$D" || fail "no readdir state /readdir/$D after a listing"

# --- a crash: the state is reconciled, not trusted ---
"$ODFEDIT" "$ODF_DEV" rd-tomb "0x$D" l_50 || fail "odfedit rd-tomb"
"$ODFEDIT" "$ODF_DEV" sb-set state 2 || fail "odfedit sb-set state"
union_mount $u "$opts"
ords $u/d >/tmp/l1
union_umount $u
odf_check
max0=$(awk '{ print $1 }' /tmp/l0 | sort -n | tail -n 1)
new50=$(awk '$2 == "l_50" { print $1 }' /tmp/l1)
[ -n "$new50" ] || fail "after a crash, l_50 (lost from the state) is not listed"
[ "$new50" -gt "$max0" ] ||
	fail "l_50 came back at offset $new50, not after every older entry ($max0)"
grep -v ' l_50$' /tmp/l0 >/tmp/a
grep -v ' l_50$' /tmp/l1 >/tmp/b
same "after a crash, offsets changed" /tmp/a /tmp/b

# --- the reconcile after a crash is done once per session ---
# (rh_session: before, an evicted inode forgot it and the state was
# rebuilt at each listing.)  The state file is watched through a second
# mount of the ODF's ext4 (it shares the module's superblock): a rebuild
# makes a new file, a reconcile rewrites it.
"$ODFEDIT" "$ODF_DEV" sb-set state 2 || fail "odfedit sb-set state"
union_mount $u "$opts"
ords $u/d >/tmp/l4
same "the second crash changed offsets" /tmp/l1 /tmp/l4
mkdir -p $odfm
mount -t ext4 "$ODF_DEV" $odfm || fail "cannot mount the ODF a second time"
st0=$(stat -c '%i %Y.%y' $odfm/readdir/$D) || fail "no state /readdir/$D"
for i in 1 2; do
	echo 3 >/proc/sys/vm/drop_caches	# the union inode of d goes
	ords $u/d >/tmp/l5
	same "listing $i after the reconcile" /tmp/l4 /tmp/l5
	expect_eq "state of d (inode, mtime) after listing $i" "$st0" \
		"$(stat -c '%i %Y.%y' $odfm/readdir/$D)"
done
umount $odfm
union_umount $u
odf_check

# --- a block appended without its header ---
union_mount $u "$opts"
rm $u/d/l_10 || fail "rm l_10"
for i in $(seq 1 70); do echo n >$u/d/new_$i; done
ords $u/d >/tmp/l2
union_umount $u
odf_check
size=$(debugfs -R "stat /readdir/$D" "$ODF_DEV" 2>/dev/null |
	awk '/Size: / { for (i = 1; i < NF; i++) if ($i == "Size:") print $(i + 1) }' | head -n 1)
[ -n "$size" ] || fail "cannot read the size of /readdir/$D"
"$ODFEDIT" "$ODF_DEV" truncate "/readdir/$D" $((size + 4096)) ||
	fail "odfedit truncate"
union_mount $u "$opts"
ords $u/d >/tmp/l3
union_umount $u
same "a leftover block renumbered the listing" /tmp/l2 /tmp/l3
odf_check

# --- rename over a name, exchange ---
union_mount $u "$opts"
ino_a=$(ino $u/d/u_05)
mv $u/d/u_05 $u/d/l_20 || fail "mv u_05 l_20"
ords $u/d >/tmp/l4
expect_eq "rename over: l_20 keeps its offset" \
	"$(awk '$2 == "l_20" { print $1 }' /tmp/l3)" \
	"$(awk '$2 == "l_20" { print $1 }' /tmp/l4)"
grep -q ' u_05$' /tmp/l4 && fail "u_05 still listed after its rename"
dino=$("$DIRLIST" $u/d | awk '$4 == "l_20" { print $2 }')
expect_eq "rename over: d_ino of l_20 is the renamed file's" "$ino_a" "$dino"
ino_x=$(ino $u/d/l_30) ino_y=$(ino $u/d/u_06)
python3 -c "$PY_ERRNO_LIB
print(run('renameat2(\"$u/d/l_30\", \"$u/d/u_06\", EXCHANGE)'))" | grep -qx OK ||
	fail "RENAME_EXCHANGE l_30 u_06"
"$DIRLIST" $u/d >/tmp/l5
expect_eq "exchange: d_ino at l_30" "$ino_y" "$(awk '$4 == "l_30" { print $2 }' /tmp/l5)"
expect_eq "exchange: d_ino at u_06" "$ino_x" "$(awk '$4 == "u_06" { print $2 }' /tmp/l5)"
grep -v ' u_05$' /tmp/l3 >/tmp/a
ords $u/d >/tmp/b
same "rename/exchange moved offsets" /tmp/a /tmp/b
union_umount $u
odf_check

# --- punched blocks ---
union_mount $u "$opts"
ls $u/p >/dev/null
long=$(printf 'n%.0s' $(seq 1 100))
for i in $(seq -w 1 300); do : >"$u/p/${long}_$i"; done
P=$(state_name $u/p)
ords $u/p >/tmp/p0
union_umount $u
odf_check
full=$(state_blocks "$P")
union_mount $u "$opts"
for i in $(seq -w 1 280); do rm "$u/p/${long}_$i"; done
union_umount $u
odf_check
thin=$(state_blocks "$P")
note "state of p: $full blocks with 301 names, $thin after 280 removed"
[ "$thin" -lt "$full" ] || fail "no record block was freed ($full -> $thin blocks)"
union_mount $u "$opts"
ords $u/p >/tmp/p1
union_umount $u
grep -v "_0[0-9][0-9]$\\|_1[0-9][0-9]$\\|_2[0-7][0-9]$\\|_280$" /tmp/p0 >/tmp/a
same "punching moved offsets" /tmp/a /tmp/p1
expect_eq "p after the removals" 21 "$(wc -l </tmp/p1)"
# A reconcile (the lower p changed behind the union's back) keeps those
# holes: the new file is preallocated, and its blocks without a live
# entry are punched again.  It also punches the blocks whose names were
# all removed from a branch directly (section 7.3).
touch $b1/p/lower2
union_mount $u "$opts"
ls $u/p >/dev/null
union_umount $u
odf_check
rec=$(state_blocks "$P")
note "after a reconcile: $rec blocks"
[ "$rec" -le $((thin + 8)) ] || fail "the reconcile filled the punched blocks ($thin -> $rec blocks)"
for i in $(seq -w 281 300); do rm "$b0/p/${long}_$i"; done
union_mount $u "$opts"
ls $u/p >/dev/null
ords $u/p >/tmp/p2
union_umount $u
odf_check
gone=$(state_blocks "$P")
note "after the 20 survivors were removed on the upper branch: $gone blocks"
[ "$gone" -lt "$rec" ] || fail "the reconcile kept blocks without live entries ($rec -> $gone blocks)"
expect_eq "p after the direct removals" "lower lower2" "$(awk '{print $2}' /tmp/p2 | sort | paste -sd' ')"

# --- rmdir deletes the state ---
union_mount $u "$opts"
ls $u/e >/dev/null
E=$(state_name $u/e)
rm -r $u/e || fail "rm -r e"
union_umount $u
state_exists "$E" && fail "/readdir/$E is still there after rmdir"
odf_check
exit 0
