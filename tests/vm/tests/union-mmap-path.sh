#!/bin/bash
# timeout: 300
# Regular-file pass-through (issue 13): a file mapped through the union
# shows, in /proc/self/maps, the union path on 6.12 (the real file is a
# backing file that remembers the union file's path) and the branch path
# on 6.1 (the mapping is the branch file's, opened with dentry_open() on
# the module's private clone of the branch mount, which is in no mount
# namespace, so the path is the one inside the branch: /low for
# $b1/low): both asserted, so this test documents each kernel.  Data
# read through a mapping equals the file; a write through a shared
# mapping of a copied-up file reaches the upper branch after msync and
# leaves the lower one alone; read, write, pread, pwrite, splice in and
# out (sendfile, os.splice) and dd still work, and the union inode's
# size and mtime follow the upper file's; a write by a user who may not
# keep the set-id bits clears them.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

kver=$(uname -r)
case $kver in
6.1.*) union_path=no ;;
6.12.*) union_path=yes ;;
*) skip "no expectation for kernel $kver" ;;
esac
note "kernel $kver: maps shows the union path: $union_path"

head -c 65536 /dev/urandom >$b1/low	# read-only mapping of a lower file
head -c 65536 /dev/urandom >$b1/cu	# copied up at open, then mapped shared
head -c 65536 /dev/urandom >$b0/up	# an upper file, mapped shared
head -c 200000 /dev/urandom >$b1/io	# plain I/O, copied up by the first write
cp $b1/cu $TMP/cu.orig
printf 'setid\n' >$b0/sid
chmod 6777 $b0/sid

union_mount $u "$opts"

# maps_check UNION_PATH BRANCH_PATH MODE: maps the file (r: opened
# read-only, mapped private (copy-on-write, so ctypes can find its
# address); w: shared read-write, writes a marker at 4096 and msyncs),
# prints the path /proc/self/maps gives the mapping, then "same" if the
# mapped bytes (before the write) equal the branch file's.
maps_check() {
	python3 - "$1" "$2" "$3" <<'PY'
import mmap, os, sys, ctypes
upath, bpath, mode = sys.argv[1:]
with open(bpath, 'rb') as f:
    want = f.read()
fd = os.open(upath, os.O_RDONLY if mode == 'r' else os.O_RDWR)
if mode == 'r':
    m = mmap.mmap(fd, 0, access=mmap.ACCESS_COPY)
else:
    m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.close(fd)
got = m[:]
# The mapping's start address, to find its line in /proc/self/maps.
buf = (ctypes.c_char * len(m)).from_buffer(m)
addr = ctypes.addressof(buf)
del buf
path = None
with open('/proc/self/maps') as f:
    for line in f:
        fields = line.split(None, 5)
        lo, hi = (int(x, 16) for x in fields[0].split('-'))
        if lo <= addr < hi:
            path = fields[5].strip() if len(fields) > 5 else ''
print(path)
if mode == 'w':
    m[4096:4096 + 12] = b'mmap-written'
    m.flush()
m.close()
print('same' if got == want else 'differs')
PY
}

# 1. A lower file, mapped read-only: nothing is copied up.
out=$(maps_check $u/low $b1/low r) || fail "mmap of $u/low: $out"
if [ $union_path = yes ]; then want=$u/low; else want=/low; fi
expect_eq "maps path of lower file $u/low (6.12: union path, 6.1: path in the branch)" \
	"$want
same" "$out"
[ -e $b0/low ] && fail "a read-only mapping copied low up"

# 2. An upper file, mapped shared and written.
cp $b0/up $TMP/up.orig
out=$(maps_check $u/up $b0/up w) || fail "mmap of $u/up: $out"
if [ $union_path = yes ]; then want=$u/up; else want=/up; fi
expect_eq "maps path of upper file $u/up (6.12: union path, 6.1: path in the branch)" \
	"$want
same" "$out"

# 3. A lower file opened read-write (copied up), mapped shared, written.
out=$(maps_check $u/cu $b1/cu w) || fail "mmap of $u/cu: $out"
if [ $union_path = yes ]; then want=$u/cu; else want=/cu; fi
expect_eq "maps path of copied-up file $u/cu (6.12: union path, 6.1: path in the branch)" \
	"$want
same" "$out"
cmp -s $b1/cu $TMP/cu.orig || fail "the lower cu changed"

# The writes reached the upper branch, also from the disk.
sync
echo 3 >/proc/sys/vm/drop_caches
for f in up cu; do
	expect_eq "bytes 4096.. of $b0/$f after msync" mmap-written \
		"$(dd if=$b0/$f bs=1 skip=4096 count=12 status=none)"
	expect_eq "size of $b0/$f" 65536 "$(stat -c %s $b0/$f)"
	cmp -s $u/$f $b0/$f || fail "$u/$f differs from $b0/$f"
done
cmp -s $u/low $b1/low || fail "cat/cmp: $u/low differs from $b1/low"

# 4. read, write, pread, pwrite, splice and dd.
cat $u/io >$TMP/io.cat || fail "cat $u/io"
cmp -s $TMP/io.cat $b1/io || fail "cat $u/io differs from $b1/io"
cp $b1/io $TMP/io.want
printf 'dd-wrote' | dd of=$u/io bs=1 seek=1000 conv=notrunc status=none ||
	fail "dd into $u/io"
printf 'dd-wrote' | dd of=$TMP/io.want bs=1 seek=1000 conv=notrunc status=none
[ -e $b0/io ] || fail "writing $u/io did not copy it up"
python3 - $u/io $TMP/io.want $TMP <<'PY' || fail "python I/O on $u/io"
import os, sys
u, want, tmp = sys.argv[1:]
def check(what, a, b):
    if a != b:
        sys.exit('%s: expected %r, got %r' % (what, b[:40], a[:40]))
w = bytearray(open(want, 'rb').read())
fd = os.open(u, os.O_RDWR)
check('pread', os.pread(fd, 100, 990), bytes(w[990:1090]))
n = os.pwrite(fd, b'pwrite-here', 5000)
check('pwrite count', n, 11)
w[5000:5011] = b'pwrite-here'
os.lseek(fd, 0, os.SEEK_END)
check('write at end', os.write(fd, b'appended'), 8)
w += b'appended'
# splice out of the union file (sendfile to a regular file).
out = os.open(tmp + '/sendfile.out', os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
sent, off = 0, 0
while True:
    n = os.sendfile(out, fd, off, 65536)
    if not n:
        break
    off += n
os.close(out)
check('sendfile from union', open(tmp + '/sendfile.out', 'rb').read(), bytes(w))
# splice into the union file: sendfile from a regular file, and
# os.splice from a pipe.
src = os.open(tmp + '/src', os.O_RDWR | os.O_CREAT | os.O_TRUNC)
os.write(src, b'sendfile-into-union')
os.lseek(fd, 20000, os.SEEK_SET)
check('sendfile into union', os.sendfile(fd, src, 0, 19), 19)
w[20000:20019] = b'sendfile-into-union'
r, p = os.pipe()
os.write(p, b'spliced-from-pipe')
os.lseek(fd, 30000, os.SEEK_SET)
check('splice into union', os.splice(r, fd, 17), 17)
w[30000:30017] = b'spliced-from-pipe'
os.lseek(fd, 30000, os.SEEK_SET)
check('splice out of union', os.splice(fd, p, 17), 17)
check('spliced bytes', os.read(r, 17), b'spliced-from-pipe')
os.lseek(fd, 0, os.SEEK_SET)
got = b''
while True:
    b = os.read(fd, 70000)
    if not b:
        break
    got += b
check('read back', got, bytes(w))
os.close(fd)
open(want, 'wb').write(w)
PY
cmp -s $u/io $TMP/io.want || fail "$u/io is not what was written"
cmp -s $b0/io $TMP/io.want || fail "$b0/io is not what was written"
expect_eq "size of $u/io follows $b0/io" "$(stat -c %s $b0/io)" "$(stat -c %s $u/io)"
expect_eq "mtime of $u/io follows $b0/io" "$(stat -c %Y $b0/io)" "$(stat -c %Y $u/io)"

# 5. A user who may not keep set-id bits writes: they go.
setpriv --reuid=1234 --regid=1234 --clear-groups sh -c "echo more >>$u/sid" ||
	fail "user 1234 cannot write $u/sid"
expect_eq "mode of $u/sid after an unprivileged write" 777 "$(stat -c %a $u/sid)"
expect_eq "mode of $b0/sid after an unprivileged write" 777 "$(stat -c %a $b0/sid)"
expect_eq "content of $b0/sid" "setid
more" "$(cat $b0/sid)"

union_umount $u
odf_check
