#!/bin/bash
# timeout: 600
# Copy-up of 1 GiB sparse files from an xfs branch to an ext4 upper
# branch keeps them sparse: the data extents (and what a write added)
# read back right, the holes stay holes (SEEK_DATA / SEEK_HOLE through
# the union and on the upper copy), the copy uses a few MiB of disk,
# sizes are exact whether the file ends in data or in a hole; the lower
# files do not change; the same after a remount.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
GiB=$((1 << 30)) MiB=$((1 << 20))

# s1: data at 0, 256 MiB, 700 MiB (1 MiB) and the last 64 KiB: ends in data.
# s2: one 4 KiB extent at 512 MiB: starts and ends in a hole.
# Extents are "OFFSET:LENGTH:SEED", the data a seeded pattern.
s1="0:65536:1 $((256 * MiB)):65536:2 $((700 * MiB)):$MiB:3 $((GiB - 65536)):65536:4"
s2="$((512 * MiB)):4096:5"

# sparse.py make|check FILE SIZE EXTENTS [WRITE]: make the file, or check
# that it holds exactly these extents (plus WRITE, "OFFSET:LENGTH:SEED",
# written through the union), zeros elsewhere.
cat >$TMP/sparse.py <<'PY'
import errno, os, random, sys
def pattern(length, seed):
    return random.Random(seed).randbytes(length)
def extents(spec):
    return [tuple(int(x) for x in e.split(":")) for e in spec.split()]
mode, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
exts = extents(sys.argv[4])
if mode == "make":
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for off, ln, seed in exts:
        os.pwrite(fd, pattern(ln, seed), off)
    os.ftruncate(fd, size)
    os.close(fd)
    sys.exit(0)
if len(sys.argv) > 5:
    exts += extents(sys.argv[5])
exts.sort()
fd = os.open(path, os.O_RDONLY)
st = os.fstat(fd)
bad = []
if st.st_size != size:
    bad.append("size %d, expected %d" % (st.st_size, size))
# Data ranges as lseek reports them.
ranges, off = [], 0
while off < size:
    try:
        d = os.lseek(fd, off, os.SEEK_DATA)
    except OSError as e:
        if e.errno != errno.ENXIO:
            raise
        break
    h = os.lseek(fd, d, os.SEEK_HOLE)
    ranges.append((d, h))
    off = h
total = sum(h - d for d, h in ranges)
want = sum(ln for off, ln, seed in exts)
# Every extent lies in a data range; the data ranges are little more than
# the extents (block rounding): the rest is holes.
for off, ln, seed in exts:
    if not any(d <= off and off + ln <= h for d, h in ranges):
        bad.append("extent %d+%d is not within a data range %s" % (off, ln, ranges))
if total > want + 2 * 1024 * 1024:
    bad.append("%d bytes of data ranges for %d bytes of data: holes were filled %s" % (total, want, ranges[:8]))
# Content: every data range reads as the extents, zeros elsewhere; a few
# points in the holes read as zeros.
expect = {}
for off, ln, seed in exts:
    expect[off] = pattern(ln, seed)
for d, h in ranges:
    got = os.pread(fd, h - d, d)
    ref = bytearray(h - d)
    for off, data in expect.items():
        lo, hi = max(off, d), min(off + len(data), h)
        if lo < hi:
            ref[lo - d:hi - d] = data[lo - off:hi - off]
    if got != bytes(ref):
        bad.append("data range %d-%d reads wrong" % (d, h))
for p in range(0, size, 64 * 1024 * 1024):
    if not any(d <= p < h for d, h in ranges) and os.pread(fd, 4096, p) != bytes(min(4096, size - p)):
        bad.append("hole at %d does not read as zeros" % p)
if len(sys.argv) > 6 and st.st_blocks * 512 > int(sys.argv[6]):
    bad.append("%d bytes allocated, at most %s expected" % (st.st_blocks * 512, sys.argv[6]))
os.close(fd)
for b in bad[:5]:
    print(path + ": " + b)
sys.exit(1 if bad else 0)
PY
sp() { python3 $TMP/sparse.py "$@"; }

sp make $b1/s1 $GiB "$s1" || fail "cannot make s1"
sp make $b1/s2 $GiB "$s2" || fail "cannot make s2"
sp check $b1/s1 $GiB "$s1" || fail "the lower s1 is not what the test made (xfs)"
sp check $b1/s2 $GiB "$s2" || fail "the lower s2 is not what the test made (xfs)"
chmod 0600 $b1/s2
snap lower $b1

union_mount $u "$opts"
ino1=$(ino $u/s1) ino2=$(ino $u/s2)
expect_eq "inode of s1" "$(uino 2 "$(ino $b1/s1)")" "$ino1"
sp check $u/s1 $GiB "$s1" || fail "s1 through the union, before copy-up"

# s1: a write into a hole copies it up; s2: chmod copies it up unchanged.
w="$((100 * MiB)):4096:9"
python3 - $u/s1 <<PY || fail "write into s1"
import os, random
fd = os.open("$u/s1", os.O_WRONLY)
os.pwrite(fd, random.Random(9).randbytes(4096), $((100 * MiB)))
os.close(fd)
PY
chmod 0644 $u/s2 || fail "chmod s2"
limit=$((8 * MiB))
sp check $u/s1 $GiB "$s1" "$w" || fail "s1 through the union after copy-up"
sp check $u/s2 $GiB "$s2" || fail "s2 through the union after copy-up"
sp check $b0/s1 $GiB "$s1" "$w" $limit || fail "upper copy of s1"
sp check $b0/s2 $GiB "$s2" "" $limit || fail "upper copy of s2"
expect_eq "mode of s2" 644 "$(stat -c %a $u/s2)"
kb=$(du -k $b0/s1 | cut -f1)
[ "$kb" -lt 8192 ] || fail "upper s1 uses $kb KiB"
expect_eq "inode of s1 after copy-up" "$ino1" "$(ino $u/s1)"
expect_eq "inode of s2 after copy-up" "$ino2" "$(ino $u/s2)"
expect_tree "upper branch" $b0 <<'EOF'
s1 f
s2 f
EOF
union_umount $u

snap after $b1
expect_same "lower branch" "$lower" "$after"
assert_branch_clean $b0
assert_branch_clean $b1
odf_check

union_mount $u "$opts"
sp check $u/s1 $GiB "$s1" "$w" || fail "s1 after remount"
sp check $u/s2 $GiB "$s2" || fail "s2 after remount"
expect_eq "inodes after remount" "$ino1 $ino2" "$(ino $u/s1) $(ino $u/s2)"
union_umount $u
odf_check
