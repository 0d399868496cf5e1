#!/bin/bash
# Extended attributes and POSIX ACLs of branch objects show through the
# union (user, trusted, system.posix_acl_*), listing included; the branch
# decides who may read them; changing them in a read-only union fails
# with EROFS and leaves the branch untouched.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkfs_branch ext4 "$(nth_disk 1)" $b0
mkfs_branch xfs "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
mkdir -p $u $b0/d $b1/d
echo top >$b0/d/f0
echo low >$b1/d/f1
ln -s f1 $b1/d/l1
setfattr -n user.color -v blue $b0/d/f0
setfattr -n trusted.tag -v t0 $b0/d/f0
setfattr -n user.color -v red $b1/d/f1
setfattr -n user.dir -v top $b0/d
setfattr -n user.dir -v low $b1/d
setfacl -m u:1234:r $b1/d/f1
chmod 0600 $b0/d/f0

mount -t unionfs -o ro,odf="$ODF_DEV",dirs=$b0=ro:$b1=ro none $u ||
	fail "mount: $(dmesg | tail -n 1)"

expect_eq "user xattr, top branch" blue "$(getfattr --only-values -n user.color $u/d/f0)"
expect_eq "user xattr, lower branch" red "$(getfattr --only-values -n user.color $u/d/f1)"
expect_eq "trusted xattr" t0 "$(getfattr --only-values -n trusted.tag $u/d/f0)"
expect_eq "merged dir's xattr is the top one's" top "$(getfattr --only-values -n user.dir $u/d)"
expect_eq "list" "trusted.tag user.color" \
	"$(getfattr -m - -d $u/d/f0 2>/dev/null | sed -n 's/=.*//p' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "ACL" "$(getfacl -c $b1/d/f1 2>/dev/null)" "$(getfacl -c $u/d/f1 2>/dev/null)"
out=$(getfattr -n user.none $u/d/f0 2>&1) && fail "missing xattr found"
case $out in *"No such attribute"*) ;; *) fail "missing xattr: $out" ;; esac

# The branch decides: an unprivileged user cannot read trusted.* nor a
# mode-0600 file's user.* attributes.
out=$(setpriv --reuid=1234 --regid=1234 --clear-groups getfattr -n user.color $u/d/f0 2>&1) &&
	fail "uid 1234 read user.color of a 0600 file"
case $out in *"Permission denied"*) ;; *) fail "unprivileged user.*: $out" ;; esac
out=$(setpriv --reuid=1234 --regid=1234 --clear-groups getfattr -n trusted.tag $u/d/f0 2>&1)
case $out in *"No such attribute"*|*"Operation not permitted"*) ;; *) fail "unprivileged trusted.*: $out" ;; esac
# The ACL on the branch grants uid 1234 read access to f1.
expect_eq "ACL grants read" low "$(setpriv --reuid=1234 --regid=1234 --clear-groups cat $u/d/f1)"

# Read-only: no change goes through, the branches keep their values.
out=$(setfattr -n user.color -v green $u/d/f0 2>&1) && fail "setfattr succeeded"
case $out in *"Read-only file system"*) ;; *) fail "setfattr: $out" ;; esac
setfattr -x user.color $u/d/f1 2>/dev/null && fail "removexattr succeeded"
setfacl -m u:99:r $u/d/f1 2>/dev/null && fail "setfacl succeeded"
expect_eq "branch value kept" blue "$(getfattr --only-values -n user.color $b0/d/f0)"
expect_eq "lower value kept" red "$(getfattr --only-values -n user.color $b1/d/f1)"

umount $u || fail "umount"
