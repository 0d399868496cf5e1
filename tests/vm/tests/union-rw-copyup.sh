#!/bin/bash
# timeout: 300
# Copy-up, two ext4 branches rw over ro plus an xfs one: writing to a
# lower file, truncate, chmod, chown, utimes, setxattr and removexattr
# copy it to the upper branch first, with its data, mode, owner, times,
# xattrs and ACL, and with the parents it needs (their modes and
# owners); the union inode number stays; reading, stat and getxattr
# copy nothing; a shared writable mmap of a copied-up file is seen by
# read(); the lower branches do not change; the ODF records the copies
# (docs/odf-format.md 6.3, 9.6) and odfck finds it clean; everything is
# the same after a remount.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch xfs "$(nth_disk 3)" $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

# b1 (ext4)                               b2 (xfs)
# f 0640 1000:1001, xattrs, ACL, old mtime   f (hidden by b1's)
# deep/ 0750 1200:1200 / a/ 0705 / b/ 0711    x/ 0700 2000:2000 / y/ 0755
#   deep/a/b/file                             x/y/z 0600 2001:2001
# t_trunc t_chmod t_chown t_utimes t_setx     xf (user.a), big 256 KiB
# t_rmx ronly mm (64 KiB)
printf 'lower f\n' >$b1/f
chown 1000:1001 $b1/f
chmod 0640 $b1/f
setfattr -n user.color -v red $b1/f
setfattr -n trusted.tag -v t1 $b1/f
setfacl -m u:1234:r $b1/f
echo hidden >$b2/f
mkdir -p $b1/deep/a/b
echo 'deep file' >$b1/deep/a/b/file
chown 1200:1200 $b1/deep; chmod 0750 $b1/deep
chown 1201:1201 $b1/deep/a; chmod 0705 $b1/deep/a
chown 1202:1202 $b1/deep/a/b; chmod 0711 $b1/deep/a/b
chown 1203:1203 $b1/deep/a/b/file; chmod 0604 $b1/deep/a/b/file
for t in t_trunc t_chmod t_chown t_utimes t_setx t_rmx ronly; do
	printf '%s content line\n' $t >$b1/$t
	chown 1300:1301 $b1/$t
	chmod 0644 $b1/$t
	setfattr -n user.old -v "$t" $b1/$t
done
head -c 65536 /dev/urandom >$b1/mm
mkdir -p $b2/x/y
echo 'from xfs' >$b2/x/y/z
chown 2000:2000 $b2/x; chmod 0700 $b2/x
chown 2001:2001 $b2/x/y/z; chmod 0600 $b2/x/y/z
echo xf >$b2/xf
setfattr -n user.a -v xfs-attr $b2/xf
head -c 262144 /dev/urandom >$b2/big
# Old times, so a copy that takes the current time shows.
for f in $b1/f $b1/t_* $b1/ronly $b1/deep/a/b/file $b2/x/y/z $b2/xf $b2/big; do
	touch -m -d '2001-02-03 04:05:06.123456789 UTC' "$f"
done

snap lower1 $b1
snap lower2 $b2

union_mount $u "$opts"

# Inode numbers before any copy-up (branch ids 1, 2, 3 on a fresh ODF).
for p in f deep deep/a deep/a/b deep/a/b/file t_trunc t_chmod t_chown \
	t_utimes t_setx t_rmx ronly mm; do
	expect_eq "inode of $p" "$(uino 2 "$(ino $b1/$p)")" "$(ino $u/$p)"
done
for p in x x/y x/y/z xf big; do
	expect_eq "inode of $p" "$(uino 3 "$(ino $b2/$p)")" "$(ino $u/$p)"
done
ino_f=$(ino $u/f) ino_deep=$(ino $u/deep) ino_deepa=$(ino $u/deep/a)
ino_deepab=$(ino $u/deep/a/b) ino_file=$(ino $u/deep/a/b/file)
ino_x=$(ino $u/x) ino_xy=$(ino $u/x/y) ino_z=$(ino $u/x/y/z)
ino_mm=$(ino $u/mm) ino_big=$(ino $u/big)
declare -A ino_t
for t in t_trunc t_chmod t_chown t_utimes t_setx t_rmx; do ino_t[$t]=$(ino $u/$t); done

# Reading, stat, getxattr, listxattr, readdir, open O_RDONLY copy nothing.
expect_eq "read" "lower f" "$(cat $u/f)"
expect_eq "read ronly" "ronly content line" "$(cat $u/ronly)"
getfattr --absolute-names -d -m - $u/ronly >/dev/null 2>&1
ls -lR $u >/dev/null
stat $u/x/y/z >/dev/null
expect_tree "upper after reads" $b0 </dev/null

# 1. Append to a lower file: data, mode, owner, xattrs, ACL come along.
printf 'more\n' >>$u/f || fail "append to a lower file"
expect_eq "appended content" "$(printf 'lower f\nmore')" "$(cat $u/f)"
expect_eq "upper copy content" "$(printf 'lower f\nmore')" "$(cat $b0/f)"
expect_eq "mode, owner after copy-up" "640 1000:1001" "$(stat -c '%a %u:%g' $u/f)"
expect_eq "upper mode, owner" "640 1000:1001" "$(stat -c '%a %u:%g' $b0/f)"
expect_eq "user xattr copied" red "$(getfattr --absolute-names --only-values -n user.color $b0/f)"
expect_eq "trusted xattr copied" t1 "$(getfattr --absolute-names --only-values -n trusted.tag $b0/f)"
expect_eq "user xattr through the union" red "$(getfattr --absolute-names --only-values -n user.color $u/f)"
expect_eq "ACL copied" "$(getfacl -c $b1/f 2>/dev/null)" "$(getfacl -c $b0/f 2>/dev/null)"
expect_eq "ACL through the union" "$(getfacl -c $b1/f 2>/dev/null)" "$(getfacl -c $u/f 2>/dev/null)"
expect_eq "inode of f kept" "$ino_f" "$(ino $u/f)"
expect_eq "lower f unchanged" "lower f" "$(cat $b1/f)"

# 2. Overwrite a file three lower directories down: the parents are
# copied with their modes and owners, and keep their inode numbers.
echo 'new deep' >$u/deep/a/b/file || fail "write deep/a/b/file"
expect_eq "deep content" "new deep" "$(cat $u/deep/a/b/file)"
expect_eq "upper deep" "750 1200:1200" "$(stat -c '%a %u:%g' $b0/deep)"
expect_eq "upper deep/a" "705 1201:1201" "$(stat -c '%a %u:%g' $b0/deep/a)"
expect_eq "upper deep/a/b" "711 1202:1202" "$(stat -c '%a %u:%g' $b0/deep/a/b)"
expect_eq "upper file" "604 1203:1203" "$(stat -c '%a %u:%g' $b0/deep/a/b/file)"
expect_eq "inode of deep" "$ino_deep" "$(ino $u/deep)"
expect_eq "inode of deep/a" "$ino_deepa" "$(ino $u/deep/a)"
expect_eq "inode of deep/a/b" "$ino_deepab" "$(ino $u/deep/a/b)"
expect_eq "inode of deep/a/b/file" "$ino_file" "$(ino $u/deep/a/b/file)"

# 3. Each attribute change copies up; what it does not change is kept,
# the mtime to the nanosecond.
truncate -s 7 $u/t_trunc || fail "truncate"
expect_eq "truncated" "t_trunc" "$(cat $u/t_trunc)"
expect_eq "truncated size" 7 "$(stat -c %s $b0/t_trunc)"
chmod 0604 $u/t_chmod || fail "chmod"
chown 1500:1501 $u/t_chown || fail "chown"
touch -m -d '2010-01-01 00:00:00.5 UTC' $u/t_utimes || fail "utimes"
setfattr -n user.new -v 1 $u/t_setx || fail "setxattr"
setfattr -x user.old $u/t_rmx || fail "removexattr"
expect_eq "chmod" "604 1300:1301" "$(stat -c '%a %u:%g' $u/t_chmod)"
expect_eq "chown" "644 1500:1501" "$(stat -c '%a %u:%g' $u/t_chown)"
expect_eq "utimes" "2010-01-01 00:00:00.500000000 +0000" "$(TZ=UTC stat -c %y $u/t_utimes)"
expect_eq "setxattr: both" "user.new user.old" \
	"$(getfattr --absolute-names -d $u/t_setx 2>/dev/null | sed -n 's/=.*//p' | sort | tr '\n' ' ' | sed 's/ $//')"
getfattr --absolute-names -n user.old $u/t_rmx >/dev/null 2>&1 && fail "removed xattr still shows"
getfattr --absolute-names -n user.old $b0/t_rmx >/dev/null 2>&1 && fail "removed xattr in the upper copy"
for t in t_chmod t_chown t_setx t_rmx; do
	expect_eq "$t: content kept" "$t content line" "$(cat $u/$t)"
	expect_eq "$t: mtime kept" "2001-02-03 04:05:06.123456789 +0000" "$(TZ=UTC stat -c %y $b0/$t)"
done
for t in t_chmod t_chown t_utimes t_setx t_trunc; do
	expect_eq "$t: user.old copied" "$t" "$(getfattr --absolute-names --only-values -n user.old $b0/$t)"
done
for t in "${!ino_t[@]}"; do
	expect_eq "inode of $t kept" "${ino_t[$t]}" "$(ino $u/$t)"
done

# 4. From xfs to ext4, two directories down; the lower-lower f never
# shows (the copy is of the topmost lower object).
printf 'again\n' >>$u/x/y/z || fail "append to x/y/z"
expect_eq "x/y/z" "$(printf 'from xfs\nagain')" "$(cat $u/x/y/z)"
expect_eq "upper x" "700 2000:2000" "$(stat -c '%a %u:%g' $b0/x)"
expect_eq "upper x/y/z" "600 2001:2001" "$(stat -c '%a %u:%g' $b0/x/y/z)"
expect_eq "inodes of x, x/y, x/y/z" "$ino_x $ino_xy $ino_z" "$(stat -c %i $u/x $u/x/y $u/x/y/z | tr '\n' ' ' | sed 's/ $//')"
setfattr -n user.b -v 2 $u/xf || fail "setxattr on an xfs file"
expect_eq "xfs xattr copied" xfs-attr "$(getfattr --absolute-names --only-values -n user.a $b0/xf)"
# A partial overwrite in the middle of a bigger file keeps the rest.
printf 'XYZ' | dd of=$u/big bs=1 seek=100000 conv=notrunc status=none || fail "dd into big"
python3 - $u/big $b2/big <<'PY' || fail "big: partial overwrite"
import sys
a, b = open(sys.argv[1], "rb").read(), bytearray(open(sys.argv[2], "rb").read())
b[100000:100003] = b"XYZ"
sys.exit(0 if a == bytes(b) else 1)
PY
expect_eq "inode of big kept" "$ino_big" "$(ino $u/big)"

# 5. A shared writable mmap after copy-up: the copy is made at open for
# writing; stores through the map are seen by read() on another
# descriptor at once, and by a new open after munmap.
python3 - $u/mm $b1/mm <<'PY' || fail "shared writable mmap"
import mmap, os, sys
path, lower = sys.argv[1], sys.argv[2]
orig = open(lower, "rb").read()
want = bytearray(orig)
with open(path, "r+b") as f:
    m = mmap.mmap(f.fileno(), 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    for off in (0, 4095, 4096, 30000, 65535):
        m[off] = ord("M")
        want[off] = ord("M")
    fd = os.open(path, os.O_RDONLY)
    got = os.pread(fd, 65536, 0)
    os.close(fd)
    if got != bytes(want):
        print("read() after stores through the map differs")
        sys.exit(1)
    m.flush()
    m.close()
if open(path, "rb").read() != bytes(want):
    print("content after munmap differs")
    sys.exit(1)
if open(lower, "rb").read() != orig:
    print("the lower file changed")
    sys.exit(1)
PY
expect_eq "inode of mm kept" "$ino_mm" "$(ino $u/mm)"
cp $u/mm $TMP/mm.expected

expect_tree "upper branch" $b0 <<'EOF'
f f
deep d
deep/a d
deep/a/b d
deep/a/b/file f
t_trunc f
t_chmod f
t_chown f
t_utimes f
t_setx f
t_rmx f
mm f
x d
x/y d
x/y/z f
xf f
big f
EOF

snap view $u
union_umount $u

# Branches: lower ones unchanged, no union metadata anywhere (trusted.tag
# is the test's own, copied with f).
snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1" "$lower1" "$after1"
expect_same "lower branch $b2" "$lower2" "$after2"
for b in $b0 $b1 $b2; do assert_branch_clean $b 'trusted\.tag'; done

# ODF: clean, no namespace markers (nothing was removed).
odf_check
odf_ns
expect_ns "after copy-ups" </dev/null

# Remount: the same view, inode numbers included.
union_mount $u "$opts"
snap view2 $u
expect_same "union after remount" "$view" "$view2"
cmp $u/mm $TMP/mm.expected || fail "mm after remount"
expect_eq "f after remount" "$(printf 'lower f\nmore')" "$(cat $u/f)"
union_umount $u
odf_check

# The copy of f is recorded: COPIED (2, lower) -> U, (1, upper) and
# UPPER (1, upper) -> U.
dump=$("$SRC/tests/unit/odfedit" "$ODF_DEV" dump) || fail "odfedit dump"
lf=$(ino $b1/f) uf=$(ino $b0/f)
printf -v hexf '0x%x' "$ino_f"
grep -qxF "fwd kind=2 key=(2,$lf) uino=$hexf tgt=(1,$uf)" <<<"$dump" ||
	fail "no COPIED record for f: $(grep fwd <<<"$dump" | head -n 4 | tr '\n' ' ')"
grep -qxF "fwd kind=1 key=(1,$uf) uino=$hexf tgt=(2,$lf)" <<<"$dump" ||
	fail "no UPPER record for f"
