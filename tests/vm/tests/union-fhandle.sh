#!/bin/bash
# timeout: 400
# File handles of union objects (issue 14), through name_to_handle_at
# and open_by_handle_at on the union: the same export_operations knfsd
# uses, without NFS.  A handle opens the object it was made for, with
# every cache dropped, after copy-up, rename, union remount; a handle of
# a removed object, of a name removed and made again, or a tampered
# handle gives ESTALE, never another object.  A union with a branch
# that has no file handles (ramfs) is not exportable and says so.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u H=$TMP/h
FH="python3 $SRC/tests/vm/prog/fhandle.py"
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
mkdir -p $H $b1/d/sub $b1/e $b0/d
for n in a b mv del ren; do echo "$n" >$b1/d/$n; done
echo deep >$b1/d/sub/deep
echo up >$b0/d/up
echo gone >$b0/d/gone

union_mount $u "$opts"
# save NAME: the handle of $u/NAME in $H/NAME (slashes as _); ino too.
save() {
	local f=$H/${1//\//_} out
	out=$($FH save "$u/$1" "$f") || fail "fhandle save $1"
	case $out in type=213\ *) ;; *) fail "handle of $1: $out (want type 213)" ;; esac
	ino "$u/$1" >"$f.ino"
}
# opens NAME WANT: the handle saved for NAME opens as WANT ("data=..",
# "dir=..", or an errno name); ino= is checked against the saved one.
opens() {
	local f=$H/${1//\//_} got want
	got=$($FH open $u "$f")
	case $2 in
	E*) want=$2 ;;
	*) want="ino=$(cat "$f.ino") $2" ;;
	esac
	[ "$got" = "$want" ] || fail "handle of $1 ($3): expected '$want', got '$got'"
}
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }

for n in d d/a d/b d/mv d/del d/ren d/up d/gone d/sub d/sub/deep; do save $n; done
bytes=$($FH save $u/d/sub/deep $TMP/x | sed 's/.*bytes=//')
note "handle sizes: file on ext4 $bytes bytes"
[ "$bytes" -le 56 ] || fail "a union handle of $bytes bytes does not fit NFSv3 (56 with fsid=)"

cold
opens d/a "data=a" "lower file, cold"
opens d/up "data=up" "upper file, cold"
opens d/sub/deep "data=deep" "lower file two levels down, cold"
opens d "dir=a,b,del,gone,mv,ren,sub,up" "merged directory, cold"
opens d/sub "dir=deep" "lower directory, cold"

# Copy-up keeps the handle: it opens the copy.
echo a2 >>$u/d/a || fail "copy-up of d/a"
[ -f $b0/d/a ] || fail "d/a was not copied up"
opens d/a "data=a|a2" "after copy-up"
cold
opens d/a "data=a|a2" "after copy-up, cold"

# Rename in the same directory after copy-up (found by its REVERSE record).
mv $u/d/a $u/d/a-renamed || fail "rename d/a"
cold
opens d/a "data=a|a2" "copied up and renamed, cold"
mv $u/d/ren $u/d/ren2 || fail "rename d/ren"
opens d/ren "data=ren" "lower file renamed (copied up by the rename)"
cold
opens d/ren "data=ren" "lower file renamed, cold"
mv $u/d/up $u/d/up2 || fail "rename d/up"
cold
opens d/up "data=up" "upper file renamed, cold"

# Into another directory: found while its inode is cached...
exec 7<$u/d/b
echo b2 >>$u/d/b && mv $u/d/b $u/e/b || fail "copy-up and move of d/b"
cold
opens d/b "data=b|b2" "copied up, moved to another directory, still open"
exec 7<&-
# ...and with nothing cached (a disconnected union dentry: its handle
# names the lower file, whose copy's handle has no parent, or an upper
# file whose handle names a parent that no longer holds it).
mv $u/d/mv $u/e/mv || fail "move d/mv"
cold
opens d/mv "data=mv" "lower file copied up by a move to another directory, cold"
echo mv2 >$u/d/upmv && save d/upmv && mv $u/d/upmv $u/e/upmv || fail "move d/upmv"
cold
opens d/upmv "data=mv2" "upper file moved to another directory, cold"
# Written through the handle's disconnected dentry: the moved file changes.
$FH append $u $H/d_upmv mv3 || fail "append through the handle of the moved file"
expect_eq "moved upper file written through its handle" "mv2 mv3" "$(paste -sd' ' $b0/e/upmv)"
opens d/upmv "data=mv2|mv3" "upper file moved, after a write through its handle"
# Still the same object when a lookup finds it by name again.
expect_eq "inode number of the moved file by name" "$(cat $H/d_upmv.ino)" "$(ino $u/e/upmv)"
rm $u/e/upmv || fail "unlink the moved file"
cold
opens d/upmv ESTALE "moved upper file unlinked, cold"

# Removed objects: ESTALE, also when the name is made again.
rm $u/d/del $u/d/gone || fail "unlink"
opens d/del ESTALE "lower file whited out"
opens d/gone ESTALE "upper file unlinked"
echo new >$u/d/del && echo new >$u/d/gone || fail "create again"
cold
opens d/del ESTALE "whited out and made again, cold"
opens d/gone ESTALE "unlinked and made again, cold"
rm -r $u/d/sub || fail "rm -r d/sub"
opens d/sub/deep ESTALE "file of a removed directory"
opens d/sub ESTALE "removed directory"

# Tampered handles: another object's number with this branch handle,
# a bad magic, a bad length.
cp $H/d_ren $H/bad1
$FH edit $H/bad1 8 "$(python3 -c "import struct,sys; print(struct.pack('<Q', int(sys.argv[1])).hex())" "$(ino $u/e/b)")"
got=$($FH open $u $H/bad1)
[ "$got" = ESTALE ] || fail "handle with another object's number: got '$got'"
cp $H/d_ren $H/bad2 && $FH edit $H/bad2 0 00
got=$($FH open $u $H/bad2)
[ "$got" = ESTALE ] || fail "handle with a bad magic: got '$got'"
cp $H/d_ren $H/bad3 && $FH edit $H/bad3 6 ff00
got=$($FH open $u $H/bad3)
[ "$got" = ESTALE ] || fail "handle with a bad length: got '$got'"

# The union unmounted and mounted again (a reboot, for the handles).
union_umount $u
union_mount $u "$opts"
opens d/a "data=a|a2" "after remount"
opens d/ren "data=ren" "after remount"
opens d/up "data=up" "after remount"
opens d "dir=a-renamed,del,gone,ren2,up2" "directory after remount"
opens d/del ESTALE "removed, after remount"
union_umount $u
odf_check

# A branch without file handles: no export, one line saying so.
mkdir -p /mnt/r /mnt/ur
mount -t ramfs ramfs /mnt/r || fail "mount ramfs"
mkodf_dev "$(nth_disk 3)"
klog_mark
union_mount /mnt/ur "odf=$(nth_disk 3),dirs=/mnt/r=rw:$b1=ro"
line=$(klog_new | grep 'unionfs:.*cannot be exported')
[ "$(echo "$line" | grep -c .)" = 1 ] ||
	fail "ramfs branch: expected one log line saying the union cannot be exported, got '$(klog_new | grep unionfs:)'"
note "log: ${line#*] }"
got=$($FH save /mnt/ur/d $TMP/x)
[ "$got" = ENOTSUP ] || fail "name_to_handle_at (EOPNOTSUPP) on a union over ramfs: got '$got'"
umount /mnt/ur || fail "umount /mnt/ur"
umount /mnt/r
