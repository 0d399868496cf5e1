#!/bin/bash
# Lookups of copied-up files read the inode maps beside the changes
# (imap.c: no lock against them; a record met half written is read again
# with the changes held off).  Two processes look every name up again and
# again (dentries dropped between rounds, so each lookup of a copy reads
# its forward-map record) while three copy up 900 files (2,700 records:
# each map grows several times under the readers) and one unlinks a third
# of the copies (records deleted).  Checked: every lookup gave the
# number the name had before its copy-up, no record was reported
# damaged, the maps grew, the numbers are the same after a remount, and
# odfck finds nothing; then a record damaged on the ODF is reported and
# passed over, not waited for.
# timeout: 600
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
n=900
mkdir -p $b1/d
for i in $(seq 1 $n); do echo "$i" >$b1/d/f$i; done
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
union_mount $u "$opts"
klog_mark

(cd $u/d && stat -c '%n %i' $(seq -f 'f%.0f' 1 $n)) | sort >/tmp/ino.before
[ "$(wc -l </tmp/ino.before)" = $n ] || fail "stat of $n names before"
fwd_size() { stat -c %s "$1"; }

# Readers: every name, again and again, until the writers are done.
reader() {
	local r=0 names
	names=$(seq -f 'f%.0f' 1 $n)
	while [ ! -e /tmp/done ]; do
		echo 2 >/proc/sys/vm/drop_caches
		# a name unlinked meanwhile is fine; a number that changed is not
		(cd $u/d && stat -c '%n %i' $names 2>/dev/null) | sort |
			join - /tmp/ino.before | awk '$2 != $3 { print }' >>/tmp/bad.$1
		r=$((r + 1))
	done
	echo $r >/tmp/rounds.$1
}
rm -f /tmp/done /tmp/bad.* /tmp/rounds.*
reader 1 &
r1=$!
reader 2 &
r2=$!

# Writers: three copy up a third of the names each; the fourth unlinks
# every third copy once it is made.
copier() {
	local i
	for i in $(seq "$1" 3 $n); do
		echo x >>$u/d/f$i || echo "copy-up of f$i failed" >>/tmp/werr
	done
}
unlinker() {
	local i
	for i in $(seq 3 3 $n); do
		while [ ! -e $b0/d/f$i ]; do sleep 0.05; done
		rm $u/d/f$i || echo "unlink of f$i failed" >>/tmp/werr
	done
}
rm -f /tmp/werr
copier 1 & c1=$!
copier 2 & c2=$!
copier 3 & c3=$!
unlinker & ul=$!
for p in $c1 $c2 $c3 $ul; do wait $p; done
touch /tmp/done
wait $r1 $r2
[ -e /tmp/werr ] && fail "writers: $(head -n 3 /tmp/werr | tr '\n' ' ')"
note "reader rounds: $(cat /tmp/rounds.1) and $(cat /tmp/rounds.2)"
[ "$(cat /tmp/rounds.1)" -ge 2 ] && [ "$(cat /tmp/rounds.2)" -ge 2 ] ||
	fail "the readers did not overlap the writers"
bad=$(cat /tmp/bad.1 /tmp/bad.2)
[ -z "$bad" ] || fail "numbers changed under the writers (name now before): $(echo "$bad" | head -n 5 | tr '\n' ' ')"
dmg=$(klog_new | grep -c 'damaged record')
expect_eq "records reported damaged" 0 "$dmg"

# What is left: two thirds of the names, copied up, with their numbers.
awk '{ sub(/^f/, "", $1); if ($1 % 3) print "f" $1, $2 }' /tmp/ino.before | sort >/tmp/ino.want
(cd $u/d && ls) | wc -l | { read -r c; expect_eq "names left" $((n - n / 3)) "$c"; }
(cd $u/d && stat -c '%n %i' $(awk '{ print $1 }' /tmp/ino.want)) | sort >/tmp/ino.after
d=$(lines_diff "$(cat /tmp/ino.want)" "$(cat /tmp/ino.after)")
[ -z "$d" ] || fail "numbers after the race: $d"
expect_eq "copies on the upper" $((n - n / 3)) "$(ls $b0/d | wc -l)"
union_umount $u
union_mount $u "$opts"
(cd $u/d && stat -c '%n %i' $(awk '{ print $1 }' /tmp/ino.want)) | sort >/tmp/ino.remount
d=$(lines_diff "$(cat /tmp/ino.want)" "$(cat /tmp/ino.remount)")
[ -z "$d" ] || fail "numbers after a remount: $d"
union_umount $u

# The maps grew under the readers (16 buckets of 16 records at mkodf).
m=/tmp/odfro
mkdir -p $m
mount -t ext4 -o ro,noload "$ODF_DEV" $m || fail "cannot mount the ODF"
fsz=$(fwd_size $m/imap/forward) rsz=$(fwd_size $m/imap/reverse)
umount $m
note "forward map $fsz bytes, reverse map $rsz bytes"
[ "$fsz" -gt $((17 * 4096 * 4)) ] || fail "the forward map did not grow: $fsz bytes"
[ "$rsz" -gt $((17 * 4096 * 2)) ] || fail "the reverse map did not grow: $rsz bytes"
odf_check

# A record that stays damaged: the lookup's second look (with the
# changes held off) finds it still bad, says so and goes on without it
# (the copy then shows its upper number), instead of waiting forever.
ui=$(stat -c %i $b0/d/f1)
mount -t ext4 "$ODF_DEV" $m || fail "cannot mount the ODF"
python3 - $m/imap/forward "$ui" <<'PYEND' || fail "cannot damage the UPPER record of f1"
import struct, sys
path, ino = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    data = f.read()
    for off in range(4096, len(data), 256):
        state, kind = data[off], data[off + 1]
        key = struct.unpack_from("<Q", data, off + 8)[0]
        if state == 1 and kind == 1 and key == ino:
            f.seek(off + 200)
            f.write(b"\xff")
            sys.exit(0)
sys.exit(1)
PYEND
umount $m
union_mount $u "$opts"
klog_mark
ino1=$(stat -c %i $u/d/f1) || fail "stat of f1 with its record damaged"
expect_eq "f1 with its record damaged: the upper number" "$(uino 1 "$ui")" "$ino1"
dmg=$(klog_new | grep -c 'damaged record in /imap/forward')
[ "$dmg" -ge 1 ] || fail "the damaged record was not reported"
union_umount $u
"$ODFCK" -fy "$ODF_DEV" >/dev/null 2>&1
odf_check
