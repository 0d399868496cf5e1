#!/bin/bash
# timeout: 300
# open(O_TMPFILE) in a union (ext4 rw over tmpfs): in an upper directory
# and in a lower-only one (which is copied up first), the file reads,
# writes, fstats (no links), fchmods and fsyncs like any union file, and
# shows in no listing and in no branch; linkat() through /proc/self/fd
# (AT_SYMLINK_FOLLOW) or with AT_EMPTY_PATH names it in the union, and
# it is then on the upper branch with its data, owner and mode (umask
# applied), listed with d_ino == st_ino; a tmpfile made by uid 1234 in a
# 1777 lower directory belongs to 1234; an O_EXCL tmpfile cannot be
# linked (ENOENT); one closed without a name leaves nothing anywhere;
# nothing changes in the lower branch, the ODF has no markers and is
# clean, the upper file system too.  A read-only union, and one of
# read-only branches only, give EROFS; an upper branch without O_TMPFILE
# (overlayfs before 6.6) gives what that file system gives, EOPNOTSUPP.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch tmpfs none $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

# b0 (ext4)      b1 (tmpfs)
# up/ up/old     low/sub/ low/sub/lfile
#                pub/ (1777)
mkdir -p $b0/up $b1/low/sub $b1/pub
echo old >$b0/up/old
echo lfile >$b1/low/sub/lfile
chmod 1777 $b1/pub
snap lower1 $b1

union_mount $u "$opts"
umask 022

# The tmpfiles, as root: each step prints what it saw, one line.
TMPFILE_PY='
import ctypes, errno, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_SYMLINK_FOLLOW, AT_EMPTY_PATH = -100, 0x400, 0x1000
def tmpfile(d, mode, excl=False):
    return os.open(d, os.O_TMPFILE | os.O_RDWR | (os.O_EXCL if excl else 0), mode)
# linkat() itself: os.link() may call link(2), which does not follow.
def linkat(fd, old, new, flags):
    if libc.linkat(fd, old.encode(), AT_FDCWD, new.encode(), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def link_empty(fd, path):
    linkat(fd, "", path, AT_EMPTY_PATH)
def link_proc(fd, path):
    linkat(AT_FDCWD, "/proc/self/fd/%d" % fd, path, AT_SYMLINK_FOLLOW)
sys.path.insert(0, os.environ["SRC"] + "/tests/vm/prog")
from errname import err
def st(fd):
    s = os.fstat(fd)
    return "nlink=%d mode=%o owner=%d:%d size=%d" % (s.st_nlink, stat.S_IMODE(s.st_mode), s.st_uid, s.st_gid, s.st_size)
'

out=$(python3 - $u 2>&1 <<PY
$TMPFILE_PY
u = sys.argv[1]
# In a directory that is on the upper branch already.
fd = tmpfile(u + "/up", 0o640)
os.write(fd, b"upper data\n")
os.fsync(fd)
print("t1 open:", st(fd), "listed:", sorted(os.listdir(u + "/up")))
os.fchmod(fd, 0o604)
os.lseek(fd, 0, os.SEEK_SET)
print("t1 read:", os.read(fd, 100))
print("t1 link:", err(link_proc, fd, u + "/up/t1"), st(fd))
os.write(fd, b"more\n")
os.close(fd)
# In a directory only on the lower branch: copied up first.
fd = tmpfile(u + "/low/sub", 0o666)
os.write(fd, b"lower dir data\n")
print("t2 open:", st(fd))
print("t2 link:", err(link_empty, fd, u + "/low/sub/t2"), st(fd))
print("t2 again:", err(link_proc, fd, u + "/low/sub/t2"))
os.close(fd)
# O_EXCL: never linkable.
fd = tmpfile(u + "/up", 0o600, excl=True)
os.write(fd, b"excl\n")
print("excl link:", err(link_proc, fd, u + "/up/excl"), err(link_empty, fd, u + "/up/excl"))
os.close(fd)
# Closed without a name, after 1 MiB of data.
fd = tmpfile(u + "/up", 0o600)
os.write(fd, b"x" * (1 << 20))
os.fsync(fd)
os.close(fd)
PY
) || fail "tmpfiles as root: $(echo "$out" | tail -n 1)"
echo "$out" | sed 's/^/# /'
expect_eq "t1 while open" "t1 open: nlink=0 mode=640 owner=0:0 size=11 listed: ['old']" "$(echo "$out" | grep '^t1 open:')"
expect_eq "t1 read back" "t1 read: b'upper data\n'" "$(echo "$out" | grep '^t1 read:')"
expect_eq "t1 linkat /proc/self/fd" "t1 link: OK nlink=1 mode=604 owner=0:0 size=11" "$(echo "$out" | grep '^t1 link:')"
expect_eq "t2 while open" "t2 open: nlink=0 mode=644 owner=0:0 size=15" "$(echo "$out" | grep '^t2 open:')"
expect_eq "t2 linkat AT_EMPTY_PATH" "t2 link: OK nlink=1 mode=644 owner=0:0 size=15" "$(echo "$out" | grep '^t2 link:')"
expect_eq "t2 linked again" "t2 again: EEXIST" "$(echo "$out" | grep '^t2 again:')"
expect_eq "O_EXCL tmpfile linkat" "excl link: ENOENT ENOENT" "$(echo "$out" | grep '^excl link:')"

# As uid 1234 in a lower-only 1777 directory.
out=$(setpriv --reuid=1234 --regid=1234 --clear-groups python3 - $u 2>&1 <<PY
$TMPFILE_PY
u = sys.argv[1]
fd = tmpfile(u + "/pub", 0o600)
os.write(fd, b"user data\n")
print("ut open:", st(fd))
print("ut link:", err(link_proc, fd, u + "/pub/ut"), st(fd))
os.close(fd)
PY
) || fail "tmpfile as uid 1234: $(echo "$out" | tail -n 1)"
echo "$out" | sed 's/^/# /'
expect_eq "uid 1234 tmpfile" "ut open: nlink=0 mode=600 owner=1234:1234 size=10" "$(echo "$out" | grep '^ut open:')"
expect_eq "uid 1234 linkat" "ut link: OK nlink=1 mode=600 owner=1234:1234 size=10" "$(echo "$out" | grep '^ut link:')"

# The union and the upper branch: the named files with their data.
expect_eq "t1 in the union" "upper data
more" "$(cat $u/up/t1)"
expect_eq "t2 in the union" "lower dir data" "$(cat $u/low/sub/t2)"
expect_eq "ut in the union" "user data" "$(cat $u/pub/ut)"
expect_eq "attributes in the union" "604 0:0 1|644 0:0 1|600 1234:1234 1" \
	"$(stat -c '%a %u:%g %h' $u/up/t1 $u/low/sub/t2 $u/pub/ut | tr '\n' '|' | sed 's/|$//')"
expect_eq "attributes in the upper branch" "604 0:0 1|644 0:0 1|600 1234:1234 1" \
	"$(stat -c '%a %u:%g %h' $b0/up/t1 $b0/low/sub/t2 $b0/pub/ut | tr '\n' '|' | sed 's/|$//')"
expect_eq "t1 in the upper branch" "upper data
more" "$(cat $b0/up/t1)"
expect_eq "t2 in the upper branch" "lower dir data" "$(cat $b0/low/sub/t2)"
for p in up/t1 low/sub/t2 pub/ut; do
	expect_eq "inode of $p" "$(uino 1 "$(ino $b0/$p)")" "$(ino $u/$p)"
done
expect_eq "up" "old t1" "$(union_ls $u/up)"
expect_eq "low/sub" "lfile t2" "$(union_ls $u/low/sub)"
expect_eq "pub" "ut" "$(union_ls $u/pub)"
# Nothing of the O_EXCL file or of the one closed unnamed.
expect_tree "upper branch" $b0 <<'EOF'
up d
up/old f
up/t1 f
low d
low/sub d
low/sub/t2 f
pub d
pub/ut f
EOF

# Read-only: EROFS, and nothing copied up for it.
mount -o remount,ro $u || fail "remount,ro"
expect_errno "O_TMPFILE in a ro union" EROFS "os.open('$u/up', os.O_TMPFILE | os.O_RDWR, 0o600)"
expect_errno "O_TMPFILE in a ro union, lower dir" EROFS "os.open('$u/low', os.O_TMPFILE | os.O_RDWR, 0o600)"
union_umount $u

snap after1 $b1
expect_same "lower branch $b1" "$lower1" "$after1"
for b in $b0 $b1; do assert_branch_clean $b; done
odf_check
odf_ns
expect_ns "after tmpfiles only" </dev/null
umount $b0 || fail "umount $b0"
e2fsck -fn "$(nth_disk 1)" >/dev/null 2>&1 || fail "e2fsck -fn of the upper branch: $(e2fsck -fn "$(nth_disk 1)" 2>&1 | tail -n 3)"
mount -t ext4 "$(nth_disk 1)" $b0 || fail "mount $b0 again"
expect_eq "t1 after remount" "upper data
more" "$(cat $b0/up/t1)"

# Read-only branches only: no upper, EROFS.
mkodf_dev "$ODF_DEV"
mount -t unionfs -o ro,odf="$ODF_DEV",dirs=$b1=ro none $u ||
	fail "mount of a ro-only union: $(dmesg | tail -n 1)"
expect_errno "O_TMPFILE in a union without an upper" EROFS "os.open('$u/low', os.O_TMPFILE | os.O_RDWR, 0o600)"
umount $u || fail "umount the ro-only union"

# An upper branch whose file system has no O_TMPFILE gives what that
# file system gives (overlayfs: EOPNOTSUPP up to 6.5, supported since).
ov=/mnt/ov
mkdir -p /mnt/ovs $ov
mount -t tmpfs tmpfs /mnt/ovs || fail "tmpfs for overlayfs"
mkdir -p /mnt/ovs/l /mnt/ovs/u /mnt/ovs/w
mount -t overlay overlay -o lowerdir=/mnt/ovs/l,upperdir=/mnt/ovs/u,workdir=/mnt/ovs/w $ov ||
	fail "mount overlayfs"
mkdir $ov/d
want=$(pyerr "os.close(os.open('$ov/d', os.O_TMPFILE | os.O_RDWR, 0o600))")
note "O_TMPFILE on overlayfs itself: $want"
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$ov=rw:$b1=ro"
expect_errno "O_TMPFILE over an upper of overlayfs" "$want" \
	"os.close(os.open('$u/d', os.O_TMPFILE | os.O_RDWR, 0o600))"
# (Python names errno 95, EOPNOTSUPP on Linux, ENOTSUP.)
if [ "$want" = ENOTSUP ]; then
	expect_errno "O_TMPFILE over an upper of overlayfs, lower dir" ENOTSUP \
		"os.open('$u/low', os.O_TMPFILE | os.O_RDWR, 0o600)"
	[ -e $ov/low ] && fail "a refused O_TMPFILE copied its directory up"
fi
union_umount $u
odf_check
umount $ov
