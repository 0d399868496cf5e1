# SPDX-License-Identifier: GPL-2.0
#
# Helpers for VM tests.  A test is a bash script run as root inside the VM
# with the module loaded and these variables set:
#   SRC          the project tree (read-only)
#   TMP          a fresh writable directory (tmpfs), also the cwd
#   DISKS        all scratch block devices, wiped before each test
#   ODF_DEV      the first scratch device, BRANCH_DEVS the others
#   MODULE       unionfs.ko; MKODF, ODFCK the tools
# Exit 0 = pass, 1 = fail (the last line says why), 77 = skip.
#
# Header lines a test may carry (read by run.sh):
#   # timeout: SECONDS    default 300
#   # vm: reboot          run in a VM of its own

set -u

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# need_powercut: skip unless dm-log-writes, dm-snapshot (modules on
# Debian's kernel, built in on the debug kernel), dmsetup and six
# scratch disks are there (the power-cut tests).
need_powercut() {
	command -v dmsetup >/dev/null || skip "dmsetup is not installed (make deps)"
	local t
	for t in log-writes snapshot; do
		dmsetup targets 2>/dev/null | grep -q "^$t " || modprobe "dm_${t//-/_}" 2>/dev/null ||
			skip "no dm-$t in this kernel"
	done
	[ "$(echo $BRANCH_DEVS | wc -w)" -ge 5 ] || skip "needs 6 scratch disks"
}
note() { echo "# $*"; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# Numbered checks that all run: check N WHAT EXPECTED ACTUAL prints
# "ok N" or "not ok N" and remembers the failures; checks_done fails the
# test at the end with their list.  (Tests with a check() of their own
# define it after this file.)
FAILED=
check() {
	if [ "$3" = "$4" ]; then
		echo "ok $1 - $2"
	else
		echo "not ok $1 - $2: expected '$3', got '$4'"
		FAILED="$FAILED $1"
	fi
}
checks_done() { [ -z "$FAILED" ] || fail "checks failed:$FAILED"; }
sysmount() { "$SRC/tests/vm/prog/sysmount" "$@"; }

# Kernel log lines written since the last klog_mark.
klog_mark() {
	KLOG_MARK="odftest-mark-$RANDOM$RANDOM"
	echo "$KLOG_MARK" >/dev/kmsg
}
klog_new() {
	dmesg | awk -v m="$KLOG_MARK" 'index($0, m) { on = 1; next } on'
}

# mkfs_branch FSTYPE DEVICE MOUNTPOINT: a fresh branch filesystem.
# tmpfs ignores DEVICE.
mkfs_branch() {
	local fs=$1 dev=$2 mnt=$3
	mkdir -p "$mnt"
	case $fs in
	ext4) mkfs.ext4 -q -F "$dev" && mount -t ext4 "$dev" "$mnt" ;;
	xfs) mkfs.xfs -q -f "$dev" && mount -t xfs "$dev" "$mnt" ;;
	tmpfs) mount -t tmpfs tmpfs "$mnt" ;;
	*) fail "mkfs_branch: unknown filesystem $fs" ;;
	esac || fail "cannot make $fs branch on $dev"
}

# mkodf_dev DEVICE: a fresh ODF volume.
mkodf_dev() {
	"$MKODF" -q -f "$1" >/dev/null || fail "mkodf $1 failed"
}

# nth_disk N: the Nth branch device (1-based).
nth_disk() { echo "$BRANCH_DEVS" | tr ' ' '\n' | sed -n "${1}p"; }

# ---- Read-write unions (tests/vm/tests/union-rw-*.sh) ----

# mkbranch FSTYPE DEVICE MOUNTPOINT: mkfs_branch without lost+found, so
# a branch holds only what the test puts there.
mkbranch() {
	mkfs_branch "$@"
	rmdir "$3/lost+found" 2>/dev/null
	return 0
}

# uino BRANCH_ID LOWER_INO: the union inode number of a branch object
# (docs/odf-format.md section 4); ino PATH: st_ino.
uino() { echo $(( ($1 << 48) | $2 )); }
ino() { stat -c %i "$1"; }

# union_mount MNT OPTIONS: mount a union or fail the test with the
# kernel's reason; union_umount MNT.
union_mount() {
	mkdir -p "$1"
	klog_mark
	mount -t unionfs -o "$2" none "$1" 2>/dev/null ||
		fail "mount -o $2 $1: $(klog_new | grep 'unionfs:' | tail -n 1 | sed 's/^\[[ 0-9.]*\] //')"
}
union_umount() {
	odf_dirmap "$1"
	umount "$1" || fail "umount $1 failed"
}
# odf_dirmap MNT: remember the union inode number of every directory of
# the union at MNT (odf_ns names ODF nodes by them; the newest wins).
odf_dirmap() {
	find "$1" -xdev -type d -printf '%i /%P\n' >>/tmp/odf-dirmap 2>/dev/null
	return 0
}

# Python helpers for errno checks: creat(p), wr(p, data), rd(p),
# renameat2(old, new, flags) with NOREPLACE / EXCHANGE, and run(code):
# OK or the errno name of the OSError the statements raised.
PY_ERRNO_LIB='
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
NOREPLACE, EXCHANGE = 1, 2
def renameat2(a, b, flags):
    # x86_64 renameat2 is syscall 316
    if libc.syscall(ctypes.c_long(316), ctypes.c_long(-100), a.encode(),
                    ctypes.c_long(-100), b.encode(), ctypes.c_long(flags)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def creat(p, mode=0o644):
    os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode))
def wr(p, data, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    fd = os.open(p, flags, 0o644)
    try:
        os.write(fd, data.encode() if isinstance(data, str) else data)
    finally:
        os.close(fd)
def rd(p):
    with open(p, "rb") as f:
        return f.read()
def run(code):
    try:
        exec(code, globals())
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, "E%d" % e.errno)
'
# pyerr 'PYTHON': runs the statements, prints OK or the errno name.
pyerr() {
	python3 -c "$PY_ERRNO_LIB
print(run(sys.argv[1]))" "$1"
}
# expect_errnos WHAT <<EOF ... EOF: lines "ERRNO|OK PYTHON", run in
# order in one process; each must give its ERRNO.
expect_errnos() {
	python3 -c "$PY_ERRNO_LIB
bad = 0
for line in sys.stdin:
    line = line.strip()
    if not line or line.startswith('#'):
        continue
    want, code = line.split(None, 1)
    got = run(code)
    if got != want:
        print('%s: expected %s, got %s' % (code, want, got))
        bad += 1
sys.exit(1 if bad else 0)" || fail "$1: wrong results (above)"
}
# expect_errno WHAT ERRNO|OK 'PYTHON'
expect_errno() {
	expect_eq "$1" "$2" "$(pyerr "$3")"
}
# renameat2 OLD NEW FLAGS: prints OK or the errno name.
renameat2() {
	pyerr "renameat2('$1', '$2', $3)"
}

# lines_diff A B: the lines only in A ("missing:") or only in B
# ("unexpected:").  (No process substitution: the guest has no /dev/fd.)
lines_diff() {
	local f
	for f in a b; do
		if [ -n "$1" ]; then printf '%s\n' "$1"; fi >"$TMP/.diff.$f"
		shift
	done
	diff "$TMP/.diff.a" "$TMP/.diff.b" | grep '^[<>]' | head -n 20 |
		sed 's/^</missing:/; s/^>/unexpected:/'
}

# tree DIR: every name below DIR with its type (find's %y), sorted.
tree() {
	(cd "$1" && find . -mindepth 1 -printf '%P %y\n' | LC_ALL=C sort)
}
# expect_tree WHAT DIR <<EOF ... EOF: DIR holds exactly these objects
# ("PATH TYPE" lines, any order).
expect_tree() {
	local want got
	want=$(grep -v '^[[:space:]]*$' | sed 's/^[[:space:]]*//' | LC_ALL=C sort)
	got=$(tree "$2")
	[ "$want" = "$got" ] ||
		fail "$1: $2 holds other objects than expected:
$(lines_diff "$want" "$got")"
}

# snapshot DIR: one line per object below DIR (and DIR itself) with
# everything a change would alter except atime: type, mode, owner, size,
# links, inode, mtime, ctime, device number, symlink target, xattrs and
# a hash of the content (data ranges found with SEEK_DATA, so a sparse
# file costs what its data costs; zero blocks hash like holes).
snapshot() {
	python3 - "$1" <<'PY'
import errno, hashlib, os, stat, sys
root = sys.argv[1]
CH = 65536
ZERO = bytes(CH)
def content(path, size):
    h = hashlib.md5()
    fd = os.open(path, os.O_RDONLY)
    try:
        off = 0
        while off < size:
            try:
                d = os.lseek(fd, off, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:
                    break
                raise
            end = os.lseek(fd, d, os.SEEK_HOLE)
            pos = d - d % CH
            while pos < end:
                b = os.pread(fd, CH, pos)
                if not b:
                    break
                if b != ZERO[:len(b)]:
                    h.update(b"%d:" % pos + b)
                pos += CH
            off = max(end, pos)
    finally:
        os.close(fd)
    return h.hexdigest()[:12]
def xattrs(path):
    try:
        names = sorted(os.listxattr(path, follow_symlinks=False))
    except OSError:
        return "-"
    out = []
    for n in names:
        try:
            v = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            v = b"<%d>" % e.errno
        out.append(n + "=" + hashlib.md5(v).hexdigest()[:8])
    return ",".join(out) or "-"
def line(rel, path):
    st = os.lstat(path)
    m = st.st_mode
    extra = "-"
    if stat.S_ISREG(m):
        extra = content(path, st.st_size)
    elif stat.S_ISLNK(m):
        extra = "->" + os.readlink(path)
    elif stat.S_ISCHR(m) or stat.S_ISBLK(m):
        extra = "%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    print(rel, oct(m), "%d:%d" % (st.st_uid, st.st_gid), st.st_size if not stat.S_ISDIR(m) else "-",
          st.st_nlink, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, extra, xattrs(path))
line(".", root)
for d, dirs, files in os.walk(root):
    dirs.sort()
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        line(os.path.relpath(p, root), p)
PY
}
# snap VAR DIR: VAR=$(snapshot DIR), failing the test if that fails.
snap() {
	local s
	s=$(snapshot "$2") || fail "snapshot of $2 failed: $s"
	printf -v "$1" '%s' "$s"
}
# expect_same WHAT BEFORE AFTER: two snapshots are equal, else fail
# with the lines that differ.
expect_same() {
	[ "$2" = "$3" ] ||
		fail "$1 changed:
$(lines_diff "$2" "$3" | sed 's/^missing:/before:/; s/^unexpected:/after: /')"
}

# assert_branch_clean DIR [XATTR_REGEX]: no union metadata in a branch:
# no .wh.* names, no 0/0 character devices, no trusted.* attributes
# (except those matching XATTR_REGEX, set by the test itself).
assert_branch_clean() {
	python3 - "$1" "${2:-}" <<'PY' || fail "branch $1 holds union metadata"
import os, re, stat, sys
root, allow = sys.argv[1], sys.argv[2]
bad = []
for d, dirs, files in os.walk(root):
    for n in dirs + files:
        p = os.path.join(d, n)
        st = os.lstat(p)
        if n.startswith(".wh."):
            bad.append(p + ": whiteout name")
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
            bad.append(p + ": 0/0 character device")
        try:
            names = os.listxattr(p, follow_symlinks=False)
        except OSError:
            names = []
        for x in names:
            if x.startswith("trusted.") and not (allow and re.fullmatch(allow, x)):
                bad.append(p + ": xattr " + x)
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
PY
}

# odf_check: odfck -fn finds the ODF clean (the union must be unmounted).
odf_check() {
	local out
	out=$("$ODFCK" -fn "$ODF_DEV" 2>&1) ||
		fail "odfck -fn $ODF_DEV: exit $?: $(echo "$out" | grep -v '^Pass [0-9]' | grep . | head -n 12 | tr '\n' ' ')"
}

# odf_ns: sets NS to the markers in the ODF's /ns, one per line, sorted
# (the union must be unmounted with union_umount, which notes the
# directories' inode numbers; the ODF is mounted read-only as ext4
# meanwhile).  Nodes are keyed by union inode number (docs/odf-format.md
# section 5); a directory the union never showed is "?<016x number>":
#   W /PATH           whiteout of a name (a regular file in its parent's node)
#   O /PATH           opaque directory
#   R /PATH ID:/LOWER[ ID:/LOWER...]   renamed directory: where its lower
#                     parts are, per branch id
#   BAD /PATH WHY     anything that is not valid in /ns
odf_ns() {
	local m=/mnt/odf-ns
	mkdir -p $m
	mount -t ext4 -o ro,noload "$ODF_DEV" $m ||
		fail "cannot mount the ODF read-only as ext4"
	NS=$(python3 - $m/ns /tmp/odf-dirmap <<'PY'
import os, stat, struct, sys
root, mapfile = sys.argv[1], sys.argv[2]
paths = {2: ""}
try:
    for line in open(mapfile, errors="replace"):
        i, _, p = line.rstrip("\n").partition(" ")
        paths[int(i)] = p.rstrip("/") if p != "/" else ""
except FileNotFoundError:
    pass
def dpath(u):
    return paths.get(u, "?%016x" % u)
out = []
for n in sorted(os.listdir(root)):
    p = os.path.join(root, n)
    st = os.lstat(p)
    try:
        u = int(n, 16)
        assert len(n) == 16 and n == n.lower()
    except (ValueError, AssertionError):
        out.append("BAD /ns/%s name" % n)
        continue
    P = dpath(u)
    if not stat.S_ISDIR(st.st_mode):
        out.append("BAD %s node of mode %o" % (P or "/", st.st_mode))
        continue
    for c in sorted(os.listdir(p)):
        cs = os.lstat(os.path.join(p, c))
        if not stat.S_ISREG(cs.st_mode):
            out.append("BAD %s/%s mode %o" % (P, c, cs.st_mode))
        elif cs.st_size:
            out.append("BAD %s/%s whiteout of size %d" % (P, c, cs.st_size))
        else:
            out.append("W %s/%s" % (P, c))
    try:
        v = os.getxattr(p, "trusted.odf", follow_symlinks=False)
    except OSError:
        out.append("BAD %s no record" % (P or "/"))
        continue
    if len(v) < 48 or struct.unpack_from("<I", v, 0)[0] != 0x4e46444f:
        out.append("BAD %s record" % (P or "/"))
        continue
    ver, typ, nr, size = struct.unpack_from("<HHHH", v, 8)
    nu = struct.unpack_from("<Q", v, 24)[0]
    if ver != 2 or size != len(v) or nu != u:
        out.append("BAD %s record fields" % (P or "/"))
        continue
    if typ & 4:
        ents, off = [], 48
        for k in range(nr):
            bid, rl = struct.unpack_from("<HH", v, off)
            ents.append("%d:%s" % (bid, v[off + 4:off + 4 + rl].decode(errors="replace")))
            off += (4 + rl + 3) // 4 * 4
        out.append("R %s %s" % (P or "/", " ".join(ents)))
    elif typ & 2:
        out.append("O " + (P or "/"))
print("\n".join(sorted(out)))
PY
	) || fail "cannot read the ODF's /ns: $NS"
	umount $m || fail "cannot unmount the ODF"
}
# ns_has LINE...: each LINE is in $NS (odf_ns); ns_lacks LINE...: none is.
ns_has() {
	local l
	for l in "$@"; do
		grep -qxF "$l" <<<"$NS" || fail "ODF /ns lacks '$l'; it holds: $(echo $NS)"
	done
}
ns_lacks() {
	local l
	for l in "$@"; do
		grep -qxF "$l" <<<"$NS" && fail "ODF /ns holds '$l'; it holds: $(echo $NS)"
	done
	return 0
}
# expect_ns WHAT <<EOF ... EOF: $NS holds exactly these markers.
expect_ns() {
	local want
	want=$(grep -v '^[[:space:]]*$' | sed 's/^[[:space:]]*//' | LC_ALL=C sort)
	[ "$want" = "$NS" ] ||
		fail "$1: ODF /ns markers differ:
$(lines_diff "$want" "$NS")"
}

# union_ls DIR: the names of a union directory (without . and ..),
# sorted, one line, after checking its getdents64 listing: each name
# once, d_type matches lstat, d_ino == st_ino, and a listing one entry
# per call is the same.
union_ls() {
	python3 - "$1" "$SRC/tests/vm/prog/dirlist" <<'PY' || fail "readdir of $1 is wrong"
import os, stat, subprocess, sys
d, prog = sys.argv[1], sys.argv[2]
def listing(*opts):
    r = subprocess.run([prog, *opts, d], capture_output=True, text=True)
    if r.returncode:
        print("dirlist %s: %s" % (d, r.stderr.strip()))
        sys.exit(1)
    return [l.split(" ", 3) for l in r.stdout.splitlines() if not l.startswith("end ")]
ents = listing()
types = {stat.S_IFREG: "reg", stat.S_IFDIR: "dir", stat.S_IFLNK: "lnk",
         stat.S_IFIFO: "fifo", stat.S_IFSOCK: "sock", stat.S_IFCHR: "chr",
         stat.S_IFBLK: "blk"}
bad, names = [], [e[3] for e in ents]
for n in set(names):
    if names.count(n) != 1:
        bad.append("%s listed %d times" % (n, names.count(n)))
for off, dino, dtype, n in ents:
    if n == "..":
        continue
    try:
        st = os.lstat(os.path.join(d, n))
    except OSError as e:
        bad.append("%s listed but lstat fails: %s" % (n, e))
        continue
    if types.get(stat.S_IFMT(st.st_mode)) != dtype:
        bad.append("%s: d_type %s, lstat says %s" % (n, dtype, types.get(stat.S_IFMT(st.st_mode))))
    if int(dino) != st.st_ino:
        bad.append("%s: d_ino %s, st_ino %d" % (n, dino, st.st_ino))
if "." not in names or ".." not in names:
    bad.append(". or .. missing")
small = listing("-b", "64")
if [e[3] for e in small] != names:
    bad.append("one entry per call lists %s" % [e[3] for e in small])
for b in bad[:10]:
    print(d + ": " + b)
if bad:
    sys.exit(1)
print(" ".join(sorted(n for n in names if n not in (".", ".."))))
PY
}
