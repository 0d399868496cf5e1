#!/bin/bash
# timeout: 1800
# NFS export of a union (issue 14), knfsd and the NFS client in the same
# VM over loopback, NFSv3 and NFSv4.2.  What a user relies on:
#  - read, write (copy-up), create, rename and unlink through the client
#    land in the right branch and in the ODF (whiteouts);
#  - a file open on the client survives a copy-up and a rename done on
#    the server, also after "exportfs -f" and dropping every cache (the
#    handles are then decoded from scratch);
#  - a file removed on the server gives ESTALE on the client;
#  - the union unexported, unmounted, mounted and exported again: a
#    10,000-entry merged directory, half read on the client before that,
#    reads on with no name twice and none missing (READDIR cookies are
#    the readdir-state offsets, valid across remount).
# It also times a cold 10,000-entry listing over NFS for the union and
# for overlayfs (nfs_export=on) in the same run, as notes (not asserted).
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 ob=/mnt/ob u=/mnt/u o=/mnt/o
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch ext4 "$(nth_disk 3)" $ob
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
N=5000	# names per branch in the merged directory big/
mkdir -p $b0/d $b1/d $b1/e $b0/big $b1/big $ob/lower/big $ob/upper/big $ob/work
for v in 3 4; do
	for n in rd wr del surv xmv gone; do echo "$n$v" >$b1/d/$n$v; done
done
python3 - $N $b1/big $b0/big $ob/lower/big $ob/upper/big <<'PY' || fail "cannot fill big/"
import sys
n = int(sys.argv[1])
for d, p in zip(sys.argv[2:], ["l", "u", "l", "u"]):
    for i in range(n):
        open("%s/%s%05d" % (d, p, i), "w").close()
PY
union_mount $u "$opts"
mkdir -p $o
mount -t overlay overlay -o lowerdir=$ob/lower,upperdir=$ob/upper,workdir=$ob/work,index=on,nfs_export=on $o ||
	fail "cannot mount overlayfs with nfs_export=on"

# ---- the NFS server: knfsd, rpcbind, mountd (the root is read-only;
# /run and /var/lib/nfs are tmpfs in the VM) ----
ip link set lo up || fail "ip link set lo up"
mkdir -p /run/rpcbind /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs
: >/var/lib/nfs/etab
: >/var/lib/nfs/rmtab
rpcbind -w || fail "rpcbind does not start"
# Built in on the debug kernel (make check-debug), a module otherwise.
grep -qw nfsd /proc/filesystems || modprobe nfsd || fail "modprobe nfsd"
mount -t nfsd nfsd /proc/fs/nfsd || fail "mount the nfsd filesystem"
# The v4 grace period blocks OPEN; shortest allowed.
echo 10 >/proc/fs/nfsd/nfsv4gracetime
echo 10 >/proc/fs/nfsd/nfsv4leasetime
rpc.nfsd 4 || fail "rpc.nfsd"
rpc.mountd || fail "rpc.mountd"
xopts=rw,no_root_squash,no_subtree_check,sync
export_all() {
	exportfs -o $xopts,fsid=0 localhost:/mnt &&
	exportfs -o $xopts,fsid=101 localhost:$u &&
	exportfs -o $xopts,fsid=102 localhost:$o || fail "exportfs"
}
export_all
mkdir -p /mnt/c3 /mnt/c4 /mnt/o3 /mnt/o4
mount -t nfs -o vers=3,nolock,noac localhost:$u /mnt/c3 || fail "NFSv3 mount of the union"
mount -t nfs -o vers=4.2,noac localhost:/u /mnt/c4 || fail "NFSv4.2 mount of the union"
mount -t nfs -o vers=3,nolock,noac localhost:$o /mnt/o3 || fail "NFSv3 mount of overlayfs"
mount -t nfs -o vers=4.2,noac localhost:/o /mnt/o4 || fail "NFSv4.2 mount of overlayfs"
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# flush_server: forget every export cache entry and every cached
# dentry and inode, so the next request decodes its handle from scratch.
# knfsd's cache of open files lets an NFSv3 file go after two idle
# passes of 2 s; an NFSv4 file with an open stateid stays open there.
flush_server() {
	exportfs -f || fail "exportfs -f"
	sleep 5
	note "knfsd open-file cache before drop_caches: $(grep -iE 'total (inodes|entries)' /proc/fs/nfsd/filecache 2>/dev/null | tr -s ' ')"
	cold
}

for v in 3 4; do
	c=/mnt/c$v
	expect_eq "v$v: read a lower file" "rd$v" "$(cat $c/d/rd$v)"
	echo w >>$c/d/wr$v || fail "v$v: append to a lower file"
	expect_eq "v$v: the copy on the upper branch" "wr$v w" "$(cat $b0/d/wr$v | paste -sd' ')"
	expect_eq "v$v: the lower original" "wr$v" "$(cat $b1/d/wr$v)"
	echo n >$c/d/new$v || fail "v$v: create"
	[ -f $b0/d/new$v ] && [ ! -e $b1/d/new$v ] || fail "v$v: created file not on the upper branch only"
	mv $c/d/new$v $c/d/newr$v || fail "v$v: rename"
	[ -f $b0/d/newr$v ] && [ ! -e $b0/d/new$v ] || fail "v$v: rename not done on the upper branch"
	expect_eq "v$v: renamed file through the union" n "$(cat $u/d/newr$v)"
	rm $c/d/del$v || fail "v$v: unlink a lower file"
	[ -e $u/d/del$v ] && fail "v$v: unlinked file still in the union"
	[ -f $b1/d/del$v ] || fail "v$v: the lower branch lost d/del$v"

	# A file open on the client while the server copies it up and
	# renames it: the client's handle names the lower file.
	exec 8>>$c/d/surv$v || fail "v$v: open d/surv$v"
	echo srv >>$u/d/surv$v && mv $u/d/surv$v $u/d/survr$v || fail "v$v: server copy-up and rename"
	echo cli >&8 || fail "v$v: write through the open file after the server's copy-up and rename"
	sync
	expect_eq "v$v: open file after copy-up and rename" "surv$v srv cli" "$(paste -sd' ' $u/d/survr$v)"
	flush_server
	echo cli2 >&8 || fail "v$v: write through the open file after exportfs -f and drop_caches"
	sync
	exec 8>&-
	expect_eq "v$v: open file after exportfs -f" "surv$v srv cli cli2" "$(paste -sd' ' $u/d/survr$v)"
	[ "$(cat $b1/d/surv$v)" = "surv$v" ] || fail "v$v: the lower original changed"
	expect_eq "v$v: a name looked up before exportfs -f" "rd$v" "$(cat $c/d/rd$v)"

	# The same, moved into another directory on the server: with every
	# cache dropped, the client's handle (of the lower file) decodes to
	# a disconnected dentry of the upper copy.
	exec 8>>$c/d/xmv$v || fail "v$v: open d/xmv$v"
	echo srv >>$u/d/xmv$v && mv $u/d/xmv$v $u/e/xmv$v || fail "v$v: server copy-up and move to e/"
	flush_server
	echo cli >&8 || fail "v$v: write through the open file after a move to another directory and exportfs -f"
	sync
	exec 8>&-
	expect_eq "v$v: open file moved to another directory, after exportfs -f" \
		"xmv$v srv cli" "$(paste -sd' ' $u/e/xmv$v)"
	expect_eq "v$v: the moved file through the client" "xmv$v srv cli" "$(paste -sd' ' $c/e/xmv$v)"
	expect_eq "v$v: the directory listed after exportfs -f" \
		"gone$v newr$v rd$v survr$v wr$v" "$(ls $c/d | grep "$v\$" | paste -sd' ')"

	# A file removed on the server: ESTALE for the client that has it open.
	python3 - $c/d/gone$v $TMP/ready$v $TMP/go$v >$TMP/gone$v.out <<'PY' &
import errno, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
print(os.read(fd, 100).decode().strip())
sys.stdout.flush()
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.1)
try:
    print(os.pread(fd, 100, 0).decode().strip())
except OSError as e:
    print(errno.errorcode[e.errno])
PY
	pid=$!
	for i in $(seq 100); do [ -e $TMP/ready$v ] && break; sleep 0.2; done
	rm $u/d/gone$v || fail "v$v: server unlink"
	flush_server
	touch $TMP/go$v
	wait $pid
	expect_eq "v$v: read of a file removed on the server" "gone$v ESTALE" "$(paste -sd' ' $TMP/gone$v.out)"
done

# ---- Server remount in the middle of a listing ----
# Both clients read half of big/ (small getdents64 calls on one open
# directory), the server restarts with the union remounted, every cache
# is dropped, the clients read on from their cookies.
rm -f $TMP/ready* $TMP/go
for v in 3 4; do
	python3 "$SRC/tests/vm/prog/halfdir.py" /mnt/c$v/big $N $TMP/ready$v $TMP/go $TMP/half$v &
	eval pid$v=$!
done
for v in 3 4; do
	for i in $(seq 300); do [ -e $TMP/ready$v ] && break; sleep 0.2; done
	[ -e $TMP/ready$v ] || fail "v$v: the first half of big/ was not read"
done
# A server restart: knfsd stops (dropping its open files and NFSv4
# state, which would keep the union busy on 6.1), the union is
# unexported, unmounted, mounted and exported again, knfsd starts.
rpc.nfsd 0 || fail "rpc.nfsd 0"
exportfs -u localhost:$u || fail "exportfs -u"
exportfs -f
union_umount $u
union_mount $u "$opts"
exportfs -o $xopts,fsid=101 localhost:$u || fail "exportfs again"
cold
rpc.nfsd 4 || fail "rpc.nfsd 4 after the remount"
# READDIR calls the server answers (v3 READDIR + READDIRPLUS, v4 READDIR):
# the second halves must come from the server, from the saved cookies.
readdirs() {
	awk '$1 == "proc3" { v3 = $19 + $20 } $1 == "proc4ops" { v4 = $29 }
	     END { print v3 + 0, v4 + 0 }' /proc/net/rpc/nfsd
}
before=$(readdirs)
touch $TMP/go
for v in 3 4; do
	eval wait \$pid$v || fail "v$v: reading on after the remount: $(grep error $TMP/half$v)"
	python3 - $TMP/half$v $N <<'PY' || fail "v$v: listing across the server remount is wrong"
import sys
lines = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
n = int(sys.argv[2])
names = [x[1] for x in lines]
first = sum(1 for x in lines if x[0] == "1")
want = {"%s%05d" % (p, i) for p in "lu" for i in range(n)}
dups = len(names) - len(set(names))
missing = want - set(names)
extra = set(names) - want
print("# %d names before the remount, %d after; %d twice, %d missing, %d unknown"
      % (first, len(names) - first, dups, len(missing), len(extra)))
sys.exit(1 if dups or missing or extra or first < n or first == len(names) else 0)
PY
done

after=$(readdirs)
note "server READDIR calls (v3 v4) before the clients read on: $before, after: $after"
[ "${after% *}" -gt "${before% *}" ] && [ "${after#* }" -gt "${before#* }" ] ||
	fail "the clients read on without asking the server (READDIR calls $before -> $after)"

# ---- Timing: a cold listing of the 10,000-entry merged directory ----
for fs in c o; do
	for v in 3 4; do
		for run in 1 2; do
			cold
			t0=$(date +%s%N)
			got=$(ls -f /mnt/$fs$v/big | wc -l)
			t1=$(date +%s%N)
			expect_eq "entries of /mnt/$fs$v/big" $((2 * N + 2)) "$got"
			note "timing: $([ $fs = c ] && echo unionfs || echo overlayfs) NFSv$v cold ls -f of $((2 * N)) entries, run $run: $(( (t1 - t0) / 1000000 )) ms"
		done
	done
done

# ---- Stop everything; the ODF holds the whiteouts of the unlinks ----
umount /mnt/c3 /mnt/c4 /mnt/o3 /mnt/o4 || fail "umount the NFS clients"
exportfs -ua
rpc.nfsd 0
exportfs -f
umount $o
union_umount $u
odf_ns
ns_has "W /d/del3" "W /d/del4" "W /d/gone3" "W /d/gone4"
odf_check
assert_branch_clean $b0
