#!/bin/bash
# An fd keeps its union dentry after the name is gone: unlinked, or the
# object renamed in place on a writable lower branch.  That dentry still
# holds the upper branch's negative dentry of the old name.  When a new
# file is made at the old name afterwards, the upper dentry turns
# positive: fchmod, fchown and fsetxattr through the old fd must not
# change that new file (bug: they did, as the object "already copied
# up"), and fstat must not show it.  Checked for a file of a read-only
# branch unlinked, a file of a writable lower branch unlinked in place,
# and one renamed in place; and a working directory removed, then made
# again (the VFS refuses a create in a removed directory: that part
# passed before the fix too).
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch ext4 "$(nth_disk 3)" $l2
mkdir -p $up/d $l1/d $l1/e $l2/d $l2/d/sub
echo ro >$l2/d/rof
echo rw1 >$l1/d/rmf
echo rw2 >$l1/d/mvf
chmod 644 $l2/d/rof $l1/d/rmf $l1/d/mvf
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"
ino_mv=$(ino $u/d/mvf)

out=$(python3 - "$u" <<'PY'
import os, sys, errno
u = sys.argv[1] + "/d/"

sys.path.insert(0, os.environ["SRC"] + "/tests/vm/prog")
from errname import err

def remake(name, text):
    with open(u + name, "w") as f:
        f.write(text)
    os.chmod(u + name, 0o644)

# 1. A read-only branch's file, unlinked through the union (whiteout).
fd = os.open(u + "rof", os.O_RDONLY)
os.unlink(u + "rof")
remake("rof", "new1\n")
print("rof", os.fstat(fd).st_size, err(lambda: os.fchmod(fd, 0o600)),
      err(lambda: os.setxattr(fd, "user.t", b"1")),
      err(lambda: os.fchown(fd, 4242, 4242)))
os.close(fd)

# 2. A writable lower branch's file, unlinked in place.
fd = os.open(u + "rmf", os.O_RDONLY)
os.unlink(u + "rmf")
remake("rmf", "new2\n")
print("rmf", os.fstat(fd).st_size, err(lambda: os.fchmod(fd, 0o600)),
      err(lambda: os.setxattr(fd, "user.t", b"2")),
      err(lambda: os.fchown(fd, 4242, 4242)))
os.close(fd)

# 3. A writable lower branch's file renamed in place (e/ is on l1 only),
# then a new file at the old name.  The fd's object is e/g: it changes.
fd = os.open(u + "mvf", os.O_RDONLY)
os.rename(u + "mvf", sys.argv[1] + "/e/g")
remake("mvf", "new3\n")
print("mvf", os.fstat(fd).st_size, err(lambda: os.fchmod(fd, 0o600)),
      err(lambda: os.setxattr(fd, "user.t", b"3")),
      err(lambda: os.fchown(fd, 4242, 4242)))
os.close(fd)

# 4. The working directory: a read-only branch's directory removed, and
# a new one made at its name.  The old one stays removed.
os.chdir(u + "sub")
os.rmdir(u + "sub")
os.mkdir(u + "sub")
print("cwd", err(lambda: os.close(os.open("x", os.O_WRONLY | os.O_CREAT, 0o644))),
      err(lambda: os.mkdir("y")))
PY
) || fail "python: $out"
echo "$out"

# What a user relies on: the new files keep what they were made with.
for f in rof rmf mvf; do
	[ -f $up/d/$f ] || fail "d/$f was not made on the upper branch"
	expect_eq "up/d/$f mode and owner" "644 0:0" "$(stat -c '%a %u:%g' $up/d/$f)"
	expect_eq "up/d/$f has no user.t" "" \
		"$(getfattr --only-values -n user.t $up/d/$f 2>/dev/null)"
done
expect_eq "union contents" "new1 new2 new3" "$(cat $u/d/rof $u/d/rmf $u/d/mvf | tr '\n' ' ' | sed 's/ $//')"
# The removed files: the union cannot keep a copy of them (an fd's change
# of a removed name is ENOENT, as union-rw-openfd checks); the renamed one
# is changed in place, where it is now.
expect_eq "removed read-only file (fstat: its size)" "rof 3 ENOENT ENOENT ENOENT" "$(echo "$out" | sed -n 1p)"
rmf=$(echo "$out" | sed -n 2p)
case "$rmf" in
"rmf 4 OK OK OK"|"rmf 4 ENOENT ENOENT ENOENT") ;;
*) fail "removed writable-lower file: $rmf" ;;
esac
expect_eq "create in a removed working directory" "cwd ENOENT ENOENT" "$(echo "$out" | sed -n 4p)"
expect_eq "the new d/sub is empty" "" "$(ls -A $u/d/sub; ls -A $up/d/sub)"
expect_eq "renamed file" "mvf 4 OK OK OK" "$(echo "$out" | sed -n 3p)"
expect_eq "l1/e/g changed in place" "600 4242:4242 3 rw2" \
	"$(stat -c '%a %u:%g' $l1/e/g) $(getfattr --only-values -n user.t $l1/e/g) $(cat $l1/e/g)"
expect_eq "e/g keeps its number" "$ino_mv" "$(ino $u/e/g)"
[ -e $up/e ] && fail "e/ was copied up"
[ -e $l1/d/mvf ] && fail "l1/d/mvf still there"

expect_eq "l2 unchanged" ro "$(cat $l2/d/rof)"
union_umount $u
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck -fn"; }
exit 0
