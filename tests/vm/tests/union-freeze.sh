#!/bin/bash
# Freezing and read-only branches are honoured (issue 10, item 3).  With
# the upper branch frozen (fsfreeze -f), a create, a copy-up and a write
# through the union wait until the thaw and then complete; with the ODF
# frozen, an unlink that needs a whiteout waits too.  Nothing reaches a
# frozen file system (ext4 WARNs when written while frozen; the harness
# fails on any kernel warning).  A read-only bind mount as the upper
# branch makes a rw mount fail with EROFS and one line saying why; the
# union's own directory fsync(2) works.
# timeout: 300
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 odf=/mnt/odf u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
mkdir -p $odf
mount -t ext4 "$ODF_DEV" $odf || fail "cannot mount the ODF as ext4"
mkdir -p $b1/d
echo lower >$b1/d/low
echo gone >$b1/d/victim
union_mount $u "odf=$odf,dirs=$b0=rw:$b1=ro"

# still_running PID WHAT: the background command has not finished yet.
still_running() {
	kill -0 "$1" 2>/dev/null || fail "$2 finished while the file system was frozen"
}

# --- the upper branch frozen ---
fsfreeze -f $b0 || fail "fsfreeze -f $b0"
touch $u/d/new & p1=$!
echo more >>$u/d/low & p2=$!
sleep 2
still_running $p1 "create"
still_running $p2 "copy-up"
[ -e $b0/d/new ] && fail "create reached the frozen upper branch"
fsfreeze -u $b0 || fail "fsfreeze -u $b0"
wait $p1 || fail "create failed after the thaw"
wait $p2 || fail "append failed after the thaw"
expect_eq "created after thaw" yes "$([ -f $b0/d/new ] && echo yes)"
expect_eq "copied up after thaw" "lower
more" "$(cat $b0/d/low)"
expect_eq "lower untouched" lower "$(cat $b1/d/low)"

# --- the ODF frozen: an unlink that needs a whiteout waits ---
fsfreeze -f $odf || fail "fsfreeze -f $odf"
rm $u/d/victim & p3=$!
sleep 2
still_running $p3 "unlink"
fsfreeze -u $odf || fail "fsfreeze -u $odf"
wait $p3 || fail "unlink failed after the thaw"
[ -e $u/d/victim ] && fail "victim still visible"
expect_eq "lower branch keeps it" gone "$(cat $b1/d/victim)"

# --- fsync(2) of a union directory (was EINVAL) ---
out=$(python3 -c '
import os, sys
for d in sys.argv[1:]:
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.fdatasync(fd)
    os.close(fd)
print("OK")' $u $u/d 2>&1)
expect_eq "directory fsync" OK "$out"

union_umount $u
umount $odf || fail "umount $odf"
odf_check

# --- a read-only upper branch: a rw union is refused ---
mkdir -p /mnt/b0ro
mount --bind $b0 /mnt/b0ro && mount -o remount,bind,ro /mnt/b0ro ||
	fail "cannot make a read-only bind mount"
klog_mark
expect_eq "rw union on a read-only upper" EROFS \
	"$(sysmount mount none $u unionfs none "odf=$ODF_DEV,dirs=/mnt/b0ro=rw:$b1=ro")"
klog_new | grep -q "unionfs: upper branch '/mnt/b0ro' is read-only" ||
	fail "no log line for the read-only upper: $(klog_new | tail -n 3)"
# Read-only, it mounts and shows the files.
union_mount $u "ro,odf=$ODF_DEV,dirs=/mnt/b0ro=ro:$b1=ro"
expect_eq "ro union over ro bind" "lower
more" "$(cat $u/d/low)"
union_umount $u
umount /mnt/b0ro
odf_check
exit 0
