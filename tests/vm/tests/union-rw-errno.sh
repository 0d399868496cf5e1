#!/bin/bash
# timeout: 300
# Error numbers of a read-write union (two ext4 branches, rw over ro):
# ENOENT (also for whited-out names), EEXIST, ENOTEMPTY, ENOTDIR,
# EISDIR, EINVAL, EPERM, ENAMETOOLONG; a failed call changes nothing the
# user can see and copies no file up.  The same union mounted ro shows
# the same tree, answers EROFS to every change and writes nothing: not
# to the branches (the upper one is rw), not to the ODF (its ext4 is
# not even mounted writable).  A rw union over an upper branch whose
# file system is read-only either is refused with EROFS or answers
# EROFS to changes, and writes nothing either.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

# b0: ufile, udir/u           b1: file, dir/inner, emptydir/, link -> file,
#                                 dangling -> nowhere, gone, gonedir/g
echo ufile >$b0/ufile
mkdir -p $b0/udir $b1/dir $b1/emptydir $b1/gonedir
echo u >$b0/udir/u
echo file >$b1/file
echo inner >$b1/dir/inner
ln -s file $b1/link
ln -s nowhere $b1/dangling
echo gone >$b1/gone
echo g >$b1/gonedir/g
snap lower $b1

union_mount $u "$opts"
rm $u/gone $u/gonedir/g || fail "unlink gone, gonedir/g"
rmdir $u/gonedir || fail "rmdir gonedir"
snap view_before $u

long=$(printf 'n%.0s' $(seq 1 256))
expect_errnos "errno cases" <<EOF
# ENOENT: missing names, whited-out names
ENOENT os.open('$u/nothing', os.O_RDONLY)
ENOENT os.stat('$u/dir/nothing')
ENOENT os.unlink('$u/nothing')
ENOENT os.rmdir('$u/nothing')
ENOENT os.rename('$u/nothing', '$u/x')
ENOENT os.mkdir('$u/nothing/sub')
ENOENT creat('$u/nothing/x')
ENOENT os.link('$u/nothing', '$u/x')
ENOENT os.chmod('$u/nothing', 0o600)
ENOENT os.readlink('$u/nothing')
ENOENT os.open('$u/dangling', os.O_RDONLY)
ENOENT os.stat('$u/gone')
ENOENT os.lstat('$u/gone')
ENOENT os.open('$u/gone', os.O_RDONLY)
ENOENT os.open('$u/gone', os.O_WRONLY)
ENOENT os.unlink('$u/gone')
ENOENT os.rmdir('$u/gonedir')
ENOENT os.stat('$u/gonedir/g')
ENOENT creat('$u/gonedir/new')
ENOENT os.rename('$u/gone', '$u/x')
ENOENT os.link('$u/gone', '$u/x')
ENOENT os.chmod('$u/gone', 0o600)
ENOENT os.truncate('$u/gone', 0)
ENOENT os.setxattr('$u/gone', 'user.x', b'1')
ENOENT os.listdir('$u/gonedir')
# EEXIST
EEXIST os.mkdir('$u/file')
EEXIST os.mkdir('$u/dir')
EEXIST os.mkdir('$u/ufile')
EEXIST os.mkdir('$u/udir')
EEXIST os.mkdir('$u/dangling')
EEXIST creat('$u/file')
EEXIST creat('$u/dir')
EEXIST creat('$u/udir/u')
EEXIST os.symlink('x', '$u/link')
EEXIST os.symlink('x', '$u/dir/inner')
EEXIST os.link('$u/file', '$u/dir')
EEXIST os.link('$u/ufile', '$u/file')
EEXIST os.mknod('$u/file')
EEXIST os.mkfifo('$u/emptydir')
EEXIST renameat2('$u/file', '$u/ufile', NOREPLACE)
EEXIST renameat2('$u/emptydir', '$u/dir', NOREPLACE)
# ENOTEMPTY
ENOTEMPTY os.rmdir('$u/dir')
ENOTEMPTY os.rmdir('$u/udir')
ENOTEMPTY os.rename('$u/emptydir', '$u/dir')
ENOTEMPTY os.rename('$u/emptydir', '$u/udir')
# ENOTDIR
ENOTDIR os.rmdir('$u/file')
ENOTDIR os.rmdir('$u/ufile')
ENOTDIR os.rmdir('$u/link')
ENOTDIR os.open('$u/file/x', os.O_RDONLY)
ENOTDIR os.stat('$u/link/x')
ENOTDIR os.mkdir('$u/file/x')
ENOTDIR creat('$u/ufile/x')
ENOTDIR os.listdir('$u/file')
ENOTDIR os.rename('$u/dir', '$u/file')
ENOTDIR os.rename('$u/emptydir', '$u/ufile')
ENOTDIR os.rename('$u/file', '$u/file/x')
# EISDIR
EISDIR os.open('$u/dir', os.O_WRONLY)
EISDIR os.open('$u/dir', os.O_RDWR)
EISDIR os.open('$u/udir', os.O_WRONLY | os.O_TRUNC)
EISDIR os.unlink('$u/dir')
EISDIR os.unlink('$u/udir')
EISDIR os.unlink('$u/emptydir')
EISDIR os.rename('$u/file', '$u/emptydir')
EISDIR os.rename('$u/ufile', '$u/dir')
EISDIR os.truncate('$u/dir', 0)
# EINVAL, EPERM, ENAMETOOLONG
EINVAL os.rename('$u/dir', '$u/dir/sub')
EINVAL os.rmdir('$u/emptydir/.')
EINVAL renameat2('$u/file', '$u/ufile', NOREPLACE | EXCHANGE)
EPERM os.link('$u/dir', '$u/dir2')
ENAMETOOLONG creat('$u/$long')
ENAMETOOLONG os.mkdir('$u/dir/$long')
EOF

# Nothing the user sees changed; no file was copied up.
snap view_after $u
expect_same "union after failed calls" "$view_before" "$view_after"
expect_tree "upper branch" $b0 <<'EOF'
ufile f
udir d
udir/u f
EOF
union_umount $u
odf_check
snap upper $b0
snap after $b1
expect_same "lower branch" "$lower" "$after"
assert_branch_clean $b0
assert_branch_clean $b1

# The same union, read-only.
odf_state() {
	dumpe2fs -h "$ODF_DEV" 2>/dev/null |
		grep -E '^(Mount count|Last mount time|Last write time|Filesystem state):'
	debugfs -R 'cat /superblock' "$ODF_DEV" 2>/dev/null | md5sum
	"$SRC/tests/unit/odfedit" "$ODF_DEV" dump
}
odf_before=$(odf_state)
union_mount $u "ro,$opts"
snap view_ro $u
expect_same "read-only union's view" "$view_after" "$view_ro"
expect_errnos "read-only union" <<EOF
EROFS creat('$u/new')
EROFS os.open('$u/file', os.O_WRONLY)
EROFS os.open('$u/ufile', os.O_RDWR)
EROFS os.open('$u/file', os.O_WRONLY | os.O_TRUNC)
EROFS os.open('$u/ufile', os.O_WRONLY | os.O_APPEND)
EROFS os.unlink('$u/file')
EROFS os.unlink('$u/ufile')
EROFS os.rmdir('$u/emptydir')
EROFS os.mkdir('$u/newdir')
EROFS os.mkdir('$u/gonedir')
EROFS os.rename('$u/file', '$u/file2')
EROFS os.rename('$u/ufile', '$u/file')
EROFS renameat2('$u/file', '$u/ufile', EXCHANGE)
EROFS os.link('$u/file', '$u/hl')
EROFS os.symlink('file', '$u/sl')
EROFS os.mkfifo('$u/fifo')
EROFS os.chmod('$u/file', 0o600)
EROFS os.chmod('$u/ufile', 0o600)
EROFS os.chown('$u/file', 5, 5)
EROFS os.utime('$u/file', (1, 1))
EROFS os.truncate('$u/ufile', 0)
EROFS os.setxattr('$u/file', 'user.x', b'1')
EROFS os.removexattr('$u/ufile', 'user.x')
ENOENT os.stat('$u/gone')
EOF
expect_eq "read through the ro union" "file u" "$(cat $u/file $u/udir/u | tr '\n' ' ' | sed 's/ $//')"
union_umount $u
expect_eq "ODF after the ro union" "$odf_before" "$(odf_state)"
snap upper2 $b0
snap after2 $b1
expect_same "upper branch after the ro union" "$upper" "$upper2"
expect_same "lower branch after the ro union" "$lower" "$after2"
odf_check

# A rw union whose upper branch's file system is read-only: refused
# with EROFS, or mounted and then every change is EROFS.
mount -o remount,ro $b0 || fail "cannot make $b0 read-only"
klog_mark
got=$(sysmount mount none $u unionfs none "$opts")
case $got in
EROFS)
	klog_new | grep -q 'unionfs:' || fail "EROFS at mount without a log line" ;;
OK)
	expect_errnos "rw union over a read-only upper file system" <<EOF
EROFS creat('$u/new')
EROFS os.open('$u/file', os.O_WRONLY)
EROFS os.unlink('$u/file')
EROFS os.mkdir('$u/newdir')
EROFS os.chmod('$u/file', 0o600)
EOF
	union_umount $u ;;
*) fail "rw union over a read-only upper file system: mount gave $got" ;;
esac
note "rw union over a read-only upper file system: mount $got"
snap after3 $b1
expect_same "lower branch after the read-only upper" "$lower" "$after3"
mount -o remount,rw $b0 || fail "cannot make $b0 writable again"
snap upper3 $b0
expect_same "upper branch after the read-only upper" "$upper" "$upper3"
odf_check
