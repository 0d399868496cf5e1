#!/bin/bash
# timeout: 300
# Per-mount statistics (issue 12 item 6): /sys/fs/unionfs/<dev>/, <dev>
# as mountpoint -d and /proc/self/mountinfo give it, holds one counter
# per file, counted since the mount: copy_ups, whiteouts, readdir_built,
# readdir_reconciled, readdir_rebuilt, readdir_counted, readdir_checks,
# map_records,
# map_reads, ns_reads, odf_errors, odf_full.  Each counts what the union did (checked against
# known operations; map_reads: lookups of objects that have no inode map
# record read no map, those of a copy do; ns_reads: a directory's node
# record is read once and then kept by its inode, so lookups and listings
# in it read none until the record changes; readdir_checks: an open
# directory checks each record block of its state once, seeks within it
# check none, a rewind or a new open checks again, a build's blocks are
# not checked);
# two mounts have a directory each; it goes at umount.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
mkdir -p $b1/d $b0/d
TMP_CHECKS=$(mktemp)
for i in 1 2 3; do echo l$i >$b1/d/l$i; echo u$i >$b0/d/u$i; done
names="copy_ups whiteouts readdir_built readdir_reconciled readdir_rebuilt readdir_counted readdir_checks map_records map_reads ns_reads odf_errors odf_full"

# stats DIR: "name=value ..." of every counter.
stats() {
	local n out=
	for n in $names; do out="$out $n=$(cat "$1/$n")" || return 1; done
	echo "${out# }"
}

union_mount $u "$opts"
dev=$(mountpoint -d $u) || fail "mountpoint -d $u"
S=/sys/fs/unionfs/$dev
[ -d $S ] || fail "no $S after mount (have: $(ls /sys/fs/unionfs 2>&1 | tr '\n' ' '))"
expect_eq "files in $S" "$(echo $names | tr ' ' '\n' | sort | paste -sd' ')" \
	"$(ls $S | sort | paste -sd' ')"
expect_eq "counters after mount" \
	"copy_ups=0 whiteouts=0 readdir_built=0 readdir_reconciled=0 readdir_rebuilt=0 readdir_counted=0 readdir_checks=0 map_records=0 map_reads=0 ns_reads=0 odf_errors=0 odf_full=0" \
	"$(stats $S)"
ls -li $u/d >/dev/null
expect_eq "map reads of a listing and lookups with no record on the ODF" 0 "$(cat $S/map_reads)"
echo more >>$u/d/l1 || fail "copy-up of d/l1"
rm $u/d/l2 $u/d/l3 || fail "unlink d/l2 d/l3"
chmod 600 $u/d/u1
st=$(stats $S)
note "after a listing, a copy-up, two whiteouts: $st"
for want in copy_ups=1 whiteouts=2 readdir_built=1 readdir_reconciled=0 \
	readdir_rebuilt=0 readdir_counted=0 odf_errors=0 odf_full=0; do
	grep -qw "$want" <<<"$st" || fail "counters: expected $want in '$st'"
done
mr=$(cat $S/map_records)
[ "$mr" -ge 2 ] || fail "map_records $mr after a copy-up (UPPER and COPIED records at least)"
# d has a node now (its whiteouts): its record is read at most once more,
# then kept by d's inode (spec 5.2), whatever the lookups and listings.
ls $u/d >/dev/null
nr=$(cat $S/ns_reads)
for i in $(seq 200); do [ -e $u/d/absent$i ] && fail "d/absent$i exists"; done
ls $u/d >/dev/null
expect_eq "node record reads of 200 lookups and a listing in d" "$nr" "$(cat $S/ns_reads)"
# A record that changes is read again: d renamed is opaque with a
# redirect to its lower part, still without l2 and l3.
mv $u/d $u/dr || fail "mv d dr"
expect_eq "dr after the rename" "l1 u1 u2 u3" "$(ls $u/dr | paste -sd' ')"
[ "$(cat $S/ns_reads)" -gt "$nr" ] || fail "the renamed d's new record was not read (ns_reads $(cat $S/ns_reads))"
mkdir $u/d && echo n >$u/d/new || fail "mkdir d, create d/new"
expect_eq "a new d where the old one was" "new" "$(ls $u/d | paste -sd' ')"
mv $u/dr/u2 $u/d/ || fail "mv dr/u2 d/"
expect_eq "dr after moving u2 out" "l1 u1 u3" "$(ls $u/dr | paste -sd' ')"
mv $u/d $u/d2 && mv $u/dr $u/d || fail "mv d d2; mv dr d"
expect_eq "d back" "l1 u1 u3" "$(ls $u/d | paste -sd' ')"
expect_eq "d2" "new u2" "$(ls $u/d2 | paste -sd' ')"
ino_l1=$(stat -c %i $u/d/l1)
echo 2 >/proc/sys/vm/drop_caches
reads=$(cat $S/map_reads)
expect_eq "st_ino of the copy d/l1 after the caches went" "$ino_l1" "$(stat -c %i $u/d/l1)"
[ "$(cat $S/map_reads)" -gt "$reads" ] || fail "the lookup of a copy read no map record (map_reads $(cat $S/map_reads))"
expect_errno "writing a counter" EACCES "open('$S/copy_ups', 'w')"

# Record blocks checked: m holds 300 short names, 5 blocks of 64 slots.
mkdir -p $b0/m $b1/m
for i in $(seq 100 249); do : >$b0/m/u$i; : >$b1/m/l$i; done
c0=$(cat $S/readdir_checks)
ls $u/m >/dev/null	# builds the state: its blocks are not checked
expect_eq "blocks checked by the listing that built m's state" "$c0" "$(cat $S/readdir_checks)"
python3 - $u/m <<'PY' >$TMP_CHECKS 2>&1 || fail "reading m on one descriptor: $(cat $TMP_CHECKS)"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(4096)
def names(fd):
    n = 0
    while True:
        r = libc.syscall(217, fd, buf, len(buf))
        if r < 0:
            raise OSError(ctypes.get_errno(), "getdents64")
        if r == 0:
            return n
        off = 0
        while off < r:
            reclen = int.from_bytes(buf.raw[off + 16:off + 18], "little")
            n += 1
            off += reclen
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
counts = [names(fd)]
os.lseek(fd, 2, os.SEEK_SET)	# the first entry's offset: within the view
counts.append(names(fd))
os.lseek(fd, 0, os.SEEK_SET)	# a rewind: a new view
counts.append(names(fd))
print(" ".join(map(str, counts)))
PY
expect_eq "entries read: whole, from the first entry, after a rewind" "302 300 302" "$(cat $TMP_CHECKS)"
expect_eq "blocks checked by one descriptor reading m twice and after a rewind" \
	$((c0 + 10)) "$(cat $S/readdir_checks)"

# A second union has its own directory.
mkdir -p /mnt/u2 /mnt/c1
mkbranch ext4 "$(nth_disk 3)" /mnt/c1
mkodf_dev "$(nth_disk 4)"
union_mount /mnt/u2 "odf=$(nth_disk 4),dirs=/mnt/c1=rw"
dev2=$(mountpoint -d /mnt/u2)
[ "$dev2" != "$dev" ] && [ -d /sys/fs/unionfs/$dev2 ] ||
	fail "second union: no /sys/fs/unionfs/$dev2"
expect_eq "second union's copy_ups" 0 "$(cat /sys/fs/unionfs/$dev2/copy_ups)"
union_umount /mnt/u2
[ -e /sys/fs/unionfs/$dev2 ] && fail "/sys/fs/unionfs/$dev2 is left after umount"
union_umount $u
[ -e $S ] && fail "$S is left after umount"

# After a crash the first listing of d reconciles its state.
"$SRC/tests/unit/odfedit" "$ODF_DEV" sb-set state 2 || fail "odfedit sb-set state"
union_mount $u "$opts"
S=/sys/fs/unionfs/$(mountpoint -d $u)
ls $u/d >/dev/null
expect_eq "readdir_reconciled after a crash and a listing" 1 "$(cat $S/readdir_reconciled)"
expect_eq "readdir_built after a crash and a listing" 0 "$(cat $S/readdir_built)"
union_umount $u
odf_check
