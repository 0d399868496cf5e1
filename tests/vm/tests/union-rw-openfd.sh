#!/bin/bash
# Changes through file descriptors opened before a name was removed or
# before another name of the object was copied up (bugs found in review):
# fchmod on an fd of an unlinked lower file must not bring the file back,
# and an fd on a lower hard link must not make a second copy when another
# name of the object was copied up meanwhile.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkfs_branch ext4 "$(nth_disk 1)" $b0
mkfs_branch ext4 "$(nth_disk 2)" $b1
rmdir $b0/lost+found
mkdir -p $u
echo gone >$b1/f; echo shared >$b1/a; ln $b1/a $b1/b
mkodf_dev "$ODF_DEV"
mount -t unionfs -o odf="$ODF_DEV",dirs=$b0=rw:$b1=ro none $u || fail "mount"

out=$(python3 - "$u" <<'PY'
import os, sys, errno
u = sys.argv[1]
fd = os.open(u + "/f", os.O_RDONLY)
os.unlink(u + "/f")
try:
    os.fchmod(fd, 0o600)
    r = "fchmod OK"
except OSError as e:
    r = "fchmod " + errno.errorcode[e.errno]
os.close(fd)
print(r, "f exists" if os.path.lexists(u + "/f") else "f gone")

fd = os.open(u + "/b", os.O_RDONLY)
with open(u + "/a", "a") as f:
    f.write("more\n")
os.fchmod(fd, 0o640)
os.close(fd)
sa, sb = os.stat(u + "/a"), os.stat(u + "/b")
print(sa.st_ino == sb.st_ino, oct(sa.st_mode & 0o777), oct(sb.st_mode & 0o777),
      open(u + "/b").read().replace("\n", "|"))
PY
) || fail "python: $out"
expect_eq "unlinked file" "fchmod ENOENT f gone" "$(echo "$out" | sed -n 1p)"
expect_eq "hard link through an old fd" "True 0o640 0o640 shared|more|" "$(echo "$out" | sed -n 2p)"
[ -e $b0/f ] && fail "the unlinked file is back in the upper branch"
expect_eq "one upper inode for a and b" "2 2" "$(stat -c %h $b0/a $b0/b | tr '\n' ' ' | sed 's/ $//')"
expect_eq "lower branch unchanged" "gone shared" "$(cat $b1/f $b1/a | tr '\n' ' ' | sed 's/ $//')"
umount $u
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck -fn"; }
exit 0
