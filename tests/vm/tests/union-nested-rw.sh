#!/bin/bash
# timeout: 400
# A union as the writable branch of another: the outer union copies up
# into the inner one, which has no O_TMPFILE, so files are built at their
# name under a COPYUP intent (docs/odf-format.md 9.6).  Before, every
# copy-up of a file failed with EOPNOTSUPP.  Contents, owner, mode,
# xattrs and ACLs arrive on the inner union's upper branch; numbers are
# kept across a remount of both; no intent stays in either ODF; odfck
# finds both clean.  Branches added to and removed from the inner union
# by remount show through the mounted outer union.  A union over the
# outer one is past the kernel's stacking limit: its mount fails with a
# message.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 c1=/mnt/c1 ui=/mnt/ui uo=/mnt/uo
odf2=$(nth_disk 4)
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch ext4 "$(nth_disk 3)" $c1
mkodf_dev "$ODF_DEV"
mkodf_dev "$odf2"
inner="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
outer="odf=$odf2,dirs=$ui=rw:$c1=ro"

acl() { getfacl -cp "$1" 2>/dev/null | grep -v '^#'; }
mkdir -p $b1/in $c1/d
echo inner-lower >$b1/in/x
head -c 300000 /dev/urandom >$c1/d/big
echo small >$c1/d/small
chown 1234:1234 $c1/d/small && chmod 0640 $c1/d/small
setfattr -n user.colour -v red $c1/d/small
setfacl -m u:4321:r $c1/d/small
sum=$(md5sum <$c1/d/big)

mount_both() { union_mount $ui "$inner"; union_mount $uo "$outer"; }
umount_both() { union_umount $uo; union_umount $ui; }
reclaim_left() {	# DEV: what /reclaim holds (the union unmounted)
	mount -o ro -t ext4 "$1" /mnt/odf || fail "mount the ODF $1"
	ls /mnt/odf/reclaim
	umount /mnt/odf
}
mkdir -p /mnt/odf

mount_both
ino_big=$(ino $uo/d/big) ino_small=$(ino $uo/d/small)
echo more >>$uo/d/big || fail "append to d/big (copy-up into the inner union)"
chmod 0604 $uo/d/small || fail "chmod d/small (copy-up into the inner union)"
echo new >$uo/d/created || fail "create in d"
expect_eq "d/big through the outer union" "$( (cat $c1/d/big; echo more) | md5sum)" "$(md5sum <$uo/d/big)"
expect_eq "d/small through the outer union" small "$(cat $uo/d/small)"
# What the inner union's upper branch holds.
[ -f $b0/d/big ] && [ -f $b0/d/small ] && [ -f $b0/d/created ] ||
	fail "inner upper branch: $(cd $b0 && find . | sort | tr '\n' ' ')"
expect_eq "d/big on the inner upper branch" "$( (cat $c1/d/big; echo more) | md5sum)" "$(md5sum <$b0/d/big)"
expect_eq "d/small owner and mode" "1234:1234 604" "$(stat -c '%u:%g %a' $b0/d/small)"
expect_eq "d/small xattr" red "$(getfattr --absolute-names --only-values -n user.colour $b0/d/small)"
cp -a $c1/d/small $TMP/ref && chmod 0604 $TMP/ref
expect_eq "d/small ACL (the lower one, after chmod 0604)" "$(acl $TMP/ref)" "$(acl $b0/d/small)"
expect_eq "the lower branch of the outer union is unchanged" "$sum" "$(md5sum <$c1/d/big)"
expect_eq "st_ino of d/big kept by the copy-up" "$ino_big" "$(ino $uo/d/big)"
expect_eq "st_ino of d/small kept by the copy-up" "$ino_small" "$(ino $uo/d/small)"
# The inner union still merges its own branches.
expect_eq "inner union's own lower" inner-lower "$(cat $uo/in/x)"
umount_both

expect_eq "outer ODF /reclaim" "" "$(reclaim_left "$odf2")"
expect_eq "inner ODF /reclaim" "" "$(reclaim_left "$ODF_DEV")"
"$ODFCK" -fn "$ODF_DEV" >$TMP/f1 2>&1 || { cat $TMP/f1; fail "odfck -fn of the inner ODF"; }
"$ODFCK" -fn "$odf2" >$TMP/f2 2>&1 || { cat $TMP/f2; fail "odfck -fn of the outer ODF"; }

mount_both
expect_eq "st_ino of d/big after remount" "$ino_big" "$(ino $uo/d/big)"
expect_eq "st_ino of d/small after remount" "$ino_small" "$(ino $uo/d/small)"
expect_eq "names in d after remount" "big created small" "$(ls $uo/d | tr '\n' ' ' | sed 's/ $//')"

# The inner union's branches change while the outer union is mounted
# and has the names cached, the missing ones too: the outer union shows
# the new set at the next lookup and listing, and writes through both
# still land on the inner upper branch.  Before, the outer union kept
# the names it had cached from the inner union's old set.
c2=/mnt/c2
mkbranch tmpfs none $c2
mkdir -p $c2/in $c2/d3
echo added >$c2/in/newname
echo three >$c2/d3/f
ls -laR $uo >/dev/null
stat $uo/in/newname $uo/d3 >/dev/null 2>&1 && fail "names of c2 show before it is added"
ino_x=$(ino $uo/in/x)
mount -o remount,add=1:$c2=ro $ui || fail "remount,add= of the inner union under the outer one"
expect_eq "outer: in/newname from the branch added to the inner union" added \
	"$(cat $uo/in/newname 2>&1)"
expect_eq "outer: in listing after the inner add=" "newname x" "$(ls $uo/in | tr '\n' ' ' | sed 's/ $//')"
expect_eq "outer: d3/f" three "$(cat $uo/d3/f 2>&1)"
expect_eq "outer: st_ino of in/x kept" "$ino_x" "$(ino $uo/in/x)"
echo through >$uo/in/w || fail "write through the outer union after the inner add="
expect_eq "in/w on the inner upper branch" through "$(cat $b0/in/w 2>&1)"
mount -o remount,del=$c2 $ui || fail "remount,del= of the inner union under the outer one"
[ -e $uo/in/newname ] && fail "outer: in/newname still shows after the inner del="
[ -e $uo/d3 ] && fail "outer: d3 still shows after the inner del="
expect_eq "outer: in listing after the inner del=" "w x" "$(ls $uo/in | tr '\n' ' ' | sed 's/ $//')"
expect_eq "outer: st_ino of in/x kept after del=" "$ino_x" "$(ino $uo/in/x)"
grep " $ui unionfs " /proc/mounts | grep -q "c2" && fail "inner /proc/mounts still names c2"

# Past the kernel's stacking limit (FILESYSTEM_MAX_STACK_DEPTH, 2: the
# outer union is at it) a third union does not mount, and says why.
odf3=$(nth_disk 5)
mkodf_dev "$odf3"
mkdir -p /mnt/u3
out=$(mount -t unionfs -o "ro,odf=$odf3,dirs=$uo=ro" none /mnt/u3 2>&1) && {
	umount /mnt/u3
	fail "a union over the outer union mounted (stacking depth 3)"
}
dmesg | tail -n 20 | grep -q "stacked too deeply" ||
	fail "no message for the third union: mount said '$out', kernel: $(dmesg | tail -n 3 | tr '\n' ' ')"
umount_both
umount $c2
"$ODFCK" -fn "$ODF_DEV" >$TMP/f1 2>&1 || { cat $TMP/f1; fail "odfck -fn of the inner ODF after its branch changes"; }
"$ODFCK" -fn "$odf2" >$TMP/f2 2>&1 || { cat $TMP/f2; fail "odfck -fn of the outer ODF after the inner branch changes"; }
echo "nested rw union passed"
