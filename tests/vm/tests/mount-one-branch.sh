#!/bin/bash
# A union of one read-only ext4 branch shows exactly the branch: names,
# types, contents, link counts, symlinks; inode numbers are the branch's
# under the branch id (docs/odf-format.md: id << 48 | ino, root 2); it is
# read-only and unmounts cleanly.
. "$SRC/tests/vm/lib.sh"

br=/mnt/b0 u=/mnt/u
mkfs_branch ext4 "$(nth_disk 1)" $br
mkdir -p $br/dir/sub $u
printf 'hello\n' >$br/file
head -c 1048576 /dev/urandom >$br/dir/big
ln $br/file $br/hardlink
ln -s ../file $br/dir/link
mkfifo $br/fifo
mknod $br/null c 1 3
touch $br/dir/sub/empty
chmod 0640 $br/file
chown 1000:1000 $br/dir/big
mount -o remount,ro $br
mkodf_dev "$ODF_DEV"

mount -t unionfs -o ro,odf="$ODF_DEV",dirs=$br=ro none $u ||
	fail "mount failed: $(dmesg | tail -n 1)"

# Same tree: names, types, sizes, modes, owners, link counts.
listing() {
	(cd "$1" && find . -printf '%p %y %s %m %U:%G %n\n' | sort)
}
expect_eq "tree" "$(listing $br)" "$(listing $u)"
expect_eq "root inode" 2 "$(stat -c %i $u)"
for f in file dir dir/big dir/link fifo null; do
	expect_eq "inode of $f" $(( (1 << 48) + $(stat -c %i $br/$f) )) "$(stat -c %i $u/$f)"
done
cmp $br/dir/big $u/dir/big || fail "content of dir/big differs"
expect_eq "file content" "hello" "$(cat $u/file)"
expect_eq "readlink" "../file" "$(readlink $u/dir/link)"
expect_eq "through symlink" "hello" "$(cat $u/dir/link)"
expect_eq "device" "1,3" "$(stat -c '%Hr,%Lr' $u/null)"
expect_eq "hard links share an inode" "$(stat -c %i $u/file)" "$(stat -c %i $u/hardlink)"

# d_ino from readdir equals st_ino.
python3 - "$u" <<'PY' || fail "d_ino differs from st_ino"
import os, sys
for e in os.scandir(sys.argv[1]):
    st = os.stat(e.path, follow_symlinks=False)
    if e.inode() != st.st_ino:
        print(f"{e.name}: d_ino {e.inode()} st_ino {st.st_ino}")
        sys.exit(1)
PY

# mmap reads the branch's pages.
python3 - "$u/dir/big" "$br/dir/big" <<'PY' || fail "mmap content differs"
import mmap, sys
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "rb") as g:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    if m[:] != g.read():
        sys.exit(1)
PY

# statfs: the union's own type, the branch's numbers.
expect_eq "statfs type" "4f444655" "$(stat -f -c %t $u)"
expect_eq "statfs blocks" "$(stat -f -c %b $br)" "$(stat -f -c %b $u)"

# The mount says what it is.
opts=$(awk -v m=$u '$2 == m { print $3, $4 }' /proc/mounts)
case $opts in
"unionfs ro,"*"odf=$ODF_DEV,dirs=$br=ro"*) ;;
*) fail "/proc/mounts shows '$opts'" ;;
esac

# Read-only: every change fails with EROFS and the branch is untouched.
touch $u/new 2>/dev/null && fail "created a file in a read-only union"
out=$(touch $u/new 2>&1); case $out in *"Read-only file system"*) ;; *) fail "touch: $out" ;; esac
echo x 2>/dev/null >>$u/file && fail "appended to a file in a read-only union"
rm $u/file 2>/dev/null && fail "removed a file in a read-only union"
expect_eq "branch after writes" "hello" "$(cat $br/file)"

umount $u || fail "umount failed"
grep -q " $u " /proc/mounts && fail "still mounted"
exit 0
