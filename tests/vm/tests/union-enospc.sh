#!/bin/bash
# timeout: 400
# Full disks (issue 10 E).
# A. Upper branch full (24 MiB ext4, no reserved blocks, over ext4):
#    a copy-up of a lower file bigger than the free space fails with
#    ENOSPC and leaves nothing (no copy in the upper branch, the space
#    comes back, the union shows the lower file intact); with the upper
#    branch full, append (copy-up), mkdir, rename of a lower file or
#    directory fail with ENOSPC and change nothing, unlink of a lower
#    file works in a directory with an upper part (the whiteout is on
#    the ODF) and fails with ENOSPC in a lower-only one (which must be
#    copied up first), reads work; after space is
#    freed the same writes work; odfck finds the ODF clean.
# B. ODF full (8 MiB, 256 inodes, then filled by a file in lost+found):
#    listing a big merged directory whose readdir state does not fit
#    still lists every name; unlinks of lower files (whiteouts) work
#    until the ODF has no room, then fail with ENOSPC and change
#    nothing.  A full ODF is not damage (docs/odf-format.md 3.2): the
#    union goes on -- writes that need no ODF room work, those that do
#    fail with ENOSPC, never EIO; nothing half-done is visible; the
#    union unmounts and odfck -fn finds the ODF clean; once the filler
#    is removed, a new mount writes again and kept every whiteout.
. "$SRC/tests/vm/lib.sh"

up=/mnt/up low=/mnt/low u=/mnt/u
updev=$(nth_disk 1) lowdev=$(nth_disk 2)
md5() { md5sum <"$1" | cut -d' ' -f1; }
free_kb() { df -k --output=avail "$1" | tail -n 1 | tr -d ' '; }

# ---------------------------------------------------------------- A
note "A: upper branch full"
mkdir -p $up
mkfs.ext4 -q -F -m 0 "$updev" 24M && mount -t ext4 "$updev" $up ||
	fail "cannot make the 24 MiB upper branch"
rmdir $up/lost+found
mkbranch ext4 "$lowdev" $low
mkodf_dev "$ODF_DEV"
mkdir -p $low/d $low/ldir/sub
head -c 40M /dev/urandom >$low/bigfile
for i in 1 2 3 4; do echo "small $i" >$low/d/s$i; done
echo inner >$low/ldir/sub/inner
bigsum=$(md5 $low/bigfile)
snap lower_before $low
opts="odf=$ODF_DEV,dirs=$up=rw:$low=ro"
union_mount $u "$opts"

free0=$(free_kb $up)
expect_errno "copy-up of a 40 MiB file into 24 MiB" ENOSPC \
	"wr('$u/bigfile', 'x', os.O_WRONLY | os.O_APPEND)"
[ -e $up/bigfile ] && fail "a partial copy of bigfile is in the upper branch"
sync
free1=$(free_kb $up)
[ $((free0 - free1)) -le 64 ] ||
	fail "the failed copy-up kept $((free0 - free1)) KiB of the upper branch"
expect_eq "bigfile through the union after the failed copy-up" "$bigsum" "$(md5 $u/bigfile)"
expect_eq "bigfile size" 41943040 "$(stat -c %s $u/bigfile)"
expect_errno "truncating copy-up of bigfile" ENOSPC \
	"os.truncate('$u/bigfile', 30 << 20)"
[ -e $up/bigfile ] && fail "a partial copy of bigfile is in the upper branch (truncate)"
expect_eq "bigfile after the failed truncate" "$bigsum" "$(md5 $u/bigfile)"

# d/ gets its upper part now: an unlink in it then needs only the ODF.
touch $u/d || fail "touch d (its copy-up)"
# Fill the upper branch through the union.
got=$(pyerr "
fd = os.open('$u/filler', os.O_WRONLY | os.O_CREAT, 0o644)
try:
    while True:
        os.write(fd, b'f' * 65536)
finally:
    os.close(fd)")
expect_eq "filling the upper branch" ENOSPC "$got"
# What no longer fits; the union is unchanged by each failure.
expect_errnos "writes into a full upper branch" <<EOF
ENOSPC wr('$u/d/s1', 'more', os.O_WRONLY | os.O_APPEND)
ENOSPC os.rename('$u/d/s2', '$u/d/s2-renamed')
ENOSPC os.rename('$u/ldir', '$u/ldir2')
EOF
# mkdir needs a block in a full file system; an empty create may fit.
got=$(pyerr "os.mkdir('$u/newdir')")
case $got in
ENOSPC) [ -e $u/newdir ] && fail "mkdir failed with ENOSPC but newdir is visible" ;;
OK) note "mkdir in the full upper branch still found a block" ;;
*) fail "mkdir in a full upper branch: $got" ;;
esac
[ -e $up/d/s1 ] && fail "a partial copy of d/s1 is in the upper branch"
[ -e $up/d/s2 ] || [ -e $up/d/s2-renamed ] && fail "the failed rename left a copy of d/s2"
[ -e $up/ldir2 ] && fail "the failed rename left ldir2 in the upper branch"
expect_eq "d/s1 after the failed copy-up" "small 1" "$(cat $u/d/s1)"
[ -e $u/d/s2-renamed ] && fail "d/s2-renamed is visible after a failed rename"
expect_eq "d/s2 after the failed rename" "small 2" "$(cat $u/d/s2)"
expect_eq "ldir after the failed rename" "inner" "$(cat $u/ldir/sub/inner)"
[ -e $u/ldir2 ] && fail "ldir2 is visible after a failed rename"
# Unlink of a lower file in a directory with an upper part writes only
# the ODF: it works.
rm $u/d/s3 || fail "unlink of a lower file with the upper branch full"
[ -e $u/d/s3 ] && fail "d/s3 still visible after unlink"
# In a lower-only directory the directory is copied up first (spec 9.4,
# as overlayfs does), which a full upper branch refuses.
expect_errno "unlink in a lower-only directory, upper branch full" ENOSPC \
	"os.unlink('$u/ldir/sub/inner')"
expect_eq "ldir/sub/inner after the failed unlink" inner "$(cat $u/ldir/sub/inner)"
expect_eq "ls d" "s1 s2 s4" "$(union_ls $u/d)"
expect_eq "ls /" "bigfile d filler ldir" "$(union_ls $u | sed 's/ newdir//')"
expect_eq "bigfile readable with the upper branch full" "$bigsum" "$(md5 $u/bigfile)"

# Space freed: the writes work again.
full=$(free_kb $up)
rm $u/filler || fail "rm filler"
# The union holds no reference to the unlinked upper inode: its blocks
# are free at once (the negative union dentry kept them until memory
# pressure or unmount).
freed=$(( $(free_kb $up) - full ))
[ $freed -ge 16384 ] || fail "rm of the 20 MiB filler freed only $freed KiB of the upper branch"
rmdir $u/newdir 2>/dev/null
expect_errnos "writes after space was freed" <<EOF
OK wr('$u/d/s1', ' more', os.O_WRONLY | os.O_APPEND)
OK os.rename('$u/d/s2', '$u/d/s2-renamed')
OK os.rename('$u/ldir', '$u/ldir2')
OK os.mkdir('$u/newdir')
ENOSPC wr('$u/bigfile', 'x', os.O_WRONLY | os.O_APPEND)
EOF
expect_eq "d/s1 copied up" "$(printf 'small 1\n more')" "$(cat $u/d/s1)"
expect_eq "d/s1 in the upper branch" "$(printf 'small 1\n more')" "$(cat $up/d/s1)"
expect_eq "ldir2/sub/inner" "inner" "$(cat $u/ldir2/sub/inner)"
[ -e $up/bigfile ] && fail "a partial copy of bigfile is in the upper branch (second try)"
union_umount $u
snap lower_after $low
expect_same "lower branch" "$lower_before" "$lower_after"
assert_branch_clean $up
odf_check
umount $up || fail "umount upper"
umount $low || fail "umount lower"

# ---------------------------------------------------------------- B
note "B: ODF full"
"$MKODF" -q -f -N 256 "$ODF_DEV" 8M >/dev/null || fail "mkodf -N 256 8M"
mkbranch ext4 "$updev" $up
mkbranch ext4 "$lowdev" $low
mkdir -p $low/many $low/bigdir $low/keep
for i in $(seq 1 300); do echo "m$i" >$low/many/f$i; done
echo keep >$low/keep/k
python3 -c "
import os
for i in range(3000):
    open('$low/bigdir/%s-%d' % ('n' * 180, i), 'w').close()"
# Leave 100 blocks (ext4 keeps some for itself) and 12 inodes free.
m=/mnt/odfx
mkdir -p $m
mount -t ext4 "$ODF_DEV" $m || fail "mount the ODF as ext4"
mkdir $m/lost+found/fill
i=0
while [ "$(stat -f -c %d $m)" -gt 12 ]; do : >$m/lost+found/fill/i$i; i=$((i + 1)); done
fallocate -l $(( ($(stat -f -c %a $m) - 100) * 4096 )) $m/lost+found/filler ||
	fail "fallocate the filler"
note "ODF: $(stat -f -c '%a blocks, %d inodes' $m) free"
umount $m || fail "umount the ODF"
odf_check

opts="odf=$ODF_DEV,dirs=$up=rw:$low=ro"
union_mount $u "$opts"
klog_mark
# The readdir state of bigdir (3000 long names, ~190 blocks) does not
# fit: the listing must still be complete.
n=$(ls -a $u/bigdir | grep -c .) || fail "ls of bigdir with the ODF full"
expect_eq "entries of bigdir listed with the ODF full" 3002 "$n"
n=$("$SRC/tests/vm/prog/dirlist" -b 300 $u/bigdir | grep -vc '^end ') ||
	fail "dirlist of bigdir with the ODF full"
expect_eq "entries of bigdir, one per getdents" 3002 "$n"
note "kernel log after listing bigdir: $(klog_new | grep -c unionfs) unionfs lines"

# Whiteouts until the ODF is full.
first_err= removed=0
for i in $(seq 1 300); do
	got=$(pyerr "os.unlink('$u/many/f$i')")
	if [ "$got" = OK ]; then
		[ -e $u/many/f$i ] && fail "many/f$i visible after a successful unlink"
		removed=$((removed + 1))
		continue
	fi
	first_err=$got
	break
done
note "$removed whiteouts fitted; then unlink failed with $first_err"
# 12 inodes were free: a failed readdir state build must not keep its
# half-written <ino>.new (it took the room of the whiteouts).
[ "$removed" -ge 5 ] || fail "only $removed whiteouts fitted in 12 free inodes"
[ -n "$first_err" ] || fail "300 whiteouts fitted in a full ODF"
[ "$first_err" = ENOSPC ] || fail "unlink with the ODF full: $first_err, expected ENOSPC"
# The failed unlink changed nothing.
expect_eq "many/f$i after its failed unlink" "m$i" "$(cat $u/many/f$i)"
klog_new | grep 'unionfs' | sed 's/^/# log: /'
# The ODF is full, not failed: what needs ODF room fails with ENOSPC,
# what does not works; never EIO.
expect_errnos "writes with the ODF full" <<EOF
ENOSPC os.unlink('$u/many/f$((i + 1))')
OK creat('$u/newfile')
OK os.mkdir('$u/newdir')
EOF
got=$(pyerr "wr('$u/keep/k', 'more', os.O_WRONLY | os.O_APPEND)")
case $got in
OK) expect_eq "keep/k after its copy-up" "$(printf 'keep\nmore')" "$(cat $u/keep/k)" ;;
ENOSPC) expect_eq "keep/k after its failed copy-up" keep "$(cat $u/keep/k)"
	[ -e $up/keep/k ] && fail "a failed copy-up left keep/k on the upper branch" ;;
*) fail "copy-up with the ODF full: $got, expected OK or ENOSPC" ;;
esac
note "copy-up of keep/k with the ODF full: $got"
klog_new | grep -q 'the union is now read-only' &&
	fail "a full ODF was taken for damage: $(klog_new | grep unionfs | tail -n 2)"
cat $u/keep/k >/dev/null || fail "keep/k unreadable"
expect_eq "many/f300 readable" m300 "$(cat $u/many/f300)"
n=$(ls $u/many | grep -c .)
expect_eq "names left in many" $((300 - removed)) "$n"
[ -e $u/newfile ] && [ -e $up/newfile ] || fail "newfile is missing"
union_umount $u

# odfck: a full ODF is not a damaged one.
odf_check
mount -t ext4 "$ODF_DEV" $m || fail "mount the ODF as ext4"
rm -rf $m/lost+found/fill $m/lost+found/filler
umount $m
odf_check
union_mount $u "$opts"
n=$(ls $u/many | grep -c .)
expect_eq "names left in many after the remount" $((300 - removed)) "$n"
rm $u/many/f$i || fail "unlink after the remount"
cp $u/keep/k $TMP/kk && echo again >>$TMP/kk
echo again >>$u/keep/k || fail "copy-up after the remount"
cmp -s $TMP/kk $u/keep/k || fail "keep/k after the remount: '$(cat $u/keep/k)', expected '$(cat $TMP/kk)'"
expect_eq "bigdir after the remount" 3002 "$(ls -a $u/bigdir | grep -c .)"
union_umount $u
odf_check
umount $up
umount $low
exit 0
