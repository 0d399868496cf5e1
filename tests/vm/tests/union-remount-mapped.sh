#!/bin/bash
# timeout: 300
# A mapping outlives the file it was made with (issue 11 item 1: del= is
# EBUSY while files of the branch are "open or mapped through the
# union").  A process maps a union file and closes it:
#  - del= of that file's branch is EBUSY until the mapping is gone, then
#    works;
#  - mode=ro of a writable lower branch is EBUSY while a shared writable
#    mapping of its file is there (it writes the branch in place), not
#    for a private read-only one;
#  - a mapping made directly on a branch, not through the union, does
#    not hold the branch;
#  - a mapping that makes the union look for unmapped entries (the 65th
#    file mapped) is not dropped by that look;
#  - many files mapped and unmapped, and one the union still holds at
#    unmount, leave nothing behind (no busy inodes: the harness fails on
#    that kernel line).
. "$SRC/tests/vm/lib.sh"

up=/mnt/up ro=/mnt/ro rw=/mnt/rw u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $ro
mkbranch ext4 "$(nth_disk 3)" $rw
mkodf_dev "$ODF_DEV"
mkdir -p $ro/d $rw/d
head -c 8192 /dev/zero | tr '\0' r >$ro/d/lib
echo other >$ro/d/other
head -c 8192 /dev/zero | tr '\0' w >$rw/d/data
head -c 8192 /dev/zero | tr '\0' p >$rw/d/priv
for i in $(seq 1 264); do echo $i >$ro/d/many$i; done
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$rw=rw:$ro=ro"

# Holders left by a failure would keep the branches busy for the next
# tests.
trap 'for f in $TMP/*.pid; do [ -s "$f" ] && kill "$(cut -d" " -f1 "$f")"; done 2>/dev/null' EXIT

# holder NAME PATH KIND: a process that opens PATH, maps it (KIND
# private: read-only private; shared: shared writable, writes MAPPED at
# 0), closes the file and waits for $TMP/NAME.go; then (shared) writes
# LATE!! at 8 through the mapping, unmaps and exits.  Its pid is in
# $TMP/NAME.pid once the mapping is made and the file closed.
holder() {
	rm -f $TMP/$1.go $TMP/$1.pid
	python3 - "$2" "$3" "$TMP/$1" <<'PY' &
import ctypes, mmap, os, sys, time
# libc's mmap: Python's mmap module keeps a duplicate of the fd open.
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MS_SYNC = 4
path, kind, base = sys.argv[1:]
size = os.stat(path).st_size
shared = kind == "shared"
fd = os.open(path, os.O_RDWR if shared else os.O_RDONLY)
addr = libc.mmap(None, size,
                 mmap.PROT_READ | (mmap.PROT_WRITE if shared else 0),
                 mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE, fd, 0)
if addr in (None, ctypes.c_void_p(-1).value):
    sys.exit("mmap: " + os.strerror(ctypes.get_errno()))
os.close(fd)
if shared:
    ctypes.memmove(addr, b"MAPPED", 6)
    libc.msync(addr, size, MS_SYNC)
first = ctypes.string_at(addr, 6)
open(base + ".pid", "w").write("%d %s\n" % (os.getpid(), first.decode()))
while not os.path.exists(base + ".go"):
    time.sleep(0.05)
if shared:
    ctypes.memmove(addr + 8, b"LATE!!", 6)
    libc.msync(addr, size, MS_SYNC)
libc.munmap(addr, size)
PY
	for i in $(seq 200); do [ -s $TMP/$1.pid ] && break; sleep 0.05; done
	[ -s $TMP/$1.pid ] || fail "holder $1 of $2 did not map it"
}
# release NAME: let the holder unmap and exit, and wait for it.
release() {
	touch $TMP/$1.go
	wait "$(cut -d' ' -f1 $TMP/$1.pid)" || fail "holder $1 failed"
	rm -f $TMP/$1.pid
}
busy() { # WHAT OPTION LOGLINE: the remount is EBUSY with that log line
	klog_mark
	expect_eq "$1" EBUSY "$(sysmount remount $u none "$2")"
	klog_new | grep -q "unionfs: $3" || fail "$1: no log line '$3': $(klog_new | grep unionfs:)"
}

# map_files FIRST LAST: map and unmap d/manyFIRST..LAST through the union
# (libc's mmap; each file closed right after its mmap).
map_files() {
	python3 - $u/d "$1" "$2" <<'PY' || fail "mapping d/many$1..$2"
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
for i in range(int(sys.argv[2]), int(sys.argv[3]) + 1):
    fd = os.open("%s/many%d" % (sys.argv[1], i), os.O_RDONLY)
    addr = libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0)
    os.close(fd)
    assert ctypes.string_at(addr, len(str(i))) == str(i).encode()
    libc.munmap(addr, 4096)
PY
}

# ---- a private read-only mapping of a file of the ro branch ----
# 64 files mapped and unmapped first: d/lib is then the mapping that
# makes the table look for unmapped entries, which must not drop it.
map_files 1 64
holder lib $u/d/lib private
expect_eq "mapped d/lib reads" "rrrrrr" "$(cut -d' ' -f2 $TMP/lib.pid)"
grep -q "d/lib\$" /proc/$(cut -d' ' -f1 $TMP/lib.pid)/maps ||
	fail "the holder has no mapping of d/lib"
ls -l /proc/$(cut -d' ' -f1 $TMP/lib.pid)/fd | grep -q "d/lib" &&
	fail "the holder still has d/lib open: the test would not test a mapping alone"
holder direct $ro/d/other private	# on the branch itself, not the union
busy "del= of $ro while d/lib is mapped (file closed)" "del=$ro" \
	"cannot remove branch '$ro': files of it are open or mapped through the union"
expect_eq "dirs= after the refused del=" "$up=rw:$rw=rw:$ro=ro" \
	"$(awk -v m=$u '$2 == m { print $4 }' /proc/mounts | tr ',' '\n' | sed -n 's/^dirs=//p')"
release lib
# Many files mapped and unmapped: the table forgets them.
map_files 65 264
mount -o remount,del=$ro $u ||
	fail "del=$ro once d/lib is unmapped (a direct mapping of $ro/d/other is no union's): $(dmesg | grep unionfs: | tail -n 1)"
release direct
[ -e $u/d/lib ] && fail "d/lib still shows after del=$ro"

# ---- a shared writable mapping of a file of the rw lower branch ----
holder data $u/d/data shared
expect_eq "l1's d/data written through the mapping" MAPPED "$(head -c 6 $rw/d/data)"
[ -e $up/d/data ] && fail "d/data was copied up by a shared mapping"
busy "mode=ro of $rw while d/data is mapped shared and writable" "mode=$rw=ro" \
	"cannot make branch '$rw' read-only: files of it are open for writing, mapped shared and writable"
busy "del= of $rw while d/data is mapped" "del=$rw" \
	"cannot remove branch '$rw': files of it are open or mapped"
release data
expect_eq "d/data after the last write through the mapping" "MAPPEDwwLATE!!ww" "$(head -c 16 $rw/d/data)"

# ---- a private read-only one does not stop mode=ro, but stops del= ----
holder priv $u/d/priv private
mount -o remount,mode=$rw=ro $u ||
	fail "mode=$rw=ro with only a private read-only mapping: $(dmesg | grep unionfs: | tail -n 1)"
busy "del= of $rw while d/priv is mapped" "del=$rw" \
	"cannot remove branch '$rw': files of it are open or mapped"
release priv
# Mapped and unmapped just before: the union still holds the inode,
# which the del= passes over (mapped no more) and unmount lets go.
map_priv() {
	python3 -c "import mmap, os; fd = os.open('$u/d/priv', os.O_RDONLY); m = mmap.mmap(fd, 0, mmap.MAP_PRIVATE, mmap.PROT_READ); os.close(fd); m.close()"
}
map_priv || fail "map and unmap d/priv"
mount -o remount,del=$rw $u || fail "del=$rw once d/priv is unmapped: $(dmesg | grep unionfs: | tail -n 1)"
[ -e $u/d ] && fail "d/ still shows with the upper branch alone"
expect_eq "rw/d/data untouched since" "MAPPEDwwLATE!!ww" "$(head -c 16 $rw/d/data)"

union_umount $u
odf_check
# The union held the branch inodes it saw mapped; all are let go.
umount $ro && umount $rw && umount $up || fail "a branch would not unmount after the union"
