#!/bin/bash
# timeout: 600
# Direct edits of a lower branch while processes work through the union
# (issue 11, item 4): for DIRECT_SECONDS (default 60) one process
# creates, removes and renames files and directories in the lower branch
# directly, and replaces files by directories and back, while three
# work through the union: lookups and reads of the names the editor
# changes, listings, and creates, renames and removals of their own
# names in the directories the editor renames.  Errors the races explain
# (ENOENT, ENOTDIR, EISDIR, ENOTEMPTY, ESTALE for a name that just went
# or changed type) are counted; any other fails the test.  Then: no kernel warning (the harness), the union's view, with
# its caches as they are, equals a fresh mount's (names, types, inode
# numbers), and odfck is clean.  On an ext4 and on a tmpfs lower branch.
. "$SRC/tests/vm/lib.sh"

secs=${DIRECT_SECONDS:-60}
b0=/mnt/b0 u=/mnt/u

snapshot() {	# ROOT: every name with its type and inode number, sorted
	(cd "$1" && find . -printf '%p %y %i\n' | sort)
}

for fs in ext4 tmpfs; do
	l=/mnt/l$fs
	mkbranch ext4 "$(nth_disk 1)" $b0
	if [ $fs = tmpfs ]; then mkbranch tmpfs none $l; else mkbranch ext4 "$(nth_disk 2)" $l; fi
	mkodf_dev "$ODF_DEV"
	for d in 0 1 2 3; do
		mkdir -p $l/d$d/sub
		for f in 0 1 2 3 4 5 6 7; do echo "$d$f" >$l/d$d/f$f; done
		echo s >$l/d$d/sub/s
	done
	union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$l=ro"
	stop=$TMP/stop
	rm -f $stop

	# The editor, directly in the lower branch, and three workers
	# through the union (Python: under TCG an exec per step would leave
	# a few hundred steps a minute).
	python3 - $l $TMP/edits $stop <<'PYEND' &
import os, shutil, sys
l, out, stop = sys.argv[1:]
def q(f, *a):
    try:
        f(*a)
    except OSError:
        pass
def wr(p, s):
    with open(p, "w") as f:
        f.write(s)
n = 0
while not os.path.exists(stop):
    d, f = n % 4, n % 8
    D = "%s/d%d" % (l, d)
    k = n % 6
    if k == 0:
        q(os.rename, D, "%s/e%d" % (l, d)); q(os.rename, "%s/e%d" % (l, d), D)
    elif k == 1:
        q(os.unlink, "%s/f%d" % (D, f)); q(wr, "%s/f%d" % (D, f), "new%d" % n)
    elif k == 2:
        q(os.unlink, D + "/x"); q(os.mkdir, D + "/x")
    elif k == 3:
        q(shutil.rmtree, D + "/x"); q(wr, D + "/x", "file")
    elif k == 4:
        q(os.rename, "%s/f%d" % (D, f), "%s/g%d" % (D, f)); q(os.rename, "%s/g%d" % (D, f), "%s/f%d" % (D, f))
    else:
        o = "%s/d%d/sub%d" % (l, (d + 1) % 4, d)
        q(os.rename, D + "/sub", o); q(os.rename, o, D + "/sub")
    n += 1
wr(out, "%d" % n)
PYEND
	editor=$!
	workers=
	for w in 1 2 3; do
		python3 - $u $w $TMP/worker$w $stop <<'PYEND' &
import errno, os, sys
u, w, out, stop = sys.argv[1:]
ok = (errno.ENOENT, errno.ENOTDIR, errno.ESTALE, errno.EISDIR, errno.ENOTEMPTY)
n = errs = 0
def q(f, *a):
    global errs
    try:
        return f(*a)
    except OSError as e:
        if e.errno not in ok:
            raise
        errs += 1
def rd(p):
    with open(p) as f:
        return f.read()
def wr(p, s):
    with open(p, "w") as f:
        f.write(s)
while not os.path.exists(stop):
    d = n % 4
    D = "%s/d%d" % (u, d)
    for p in ("%s/f%d" % (D, n % 8), D + "/x", D + "/sub/s"):
        q(rd, p)
    q(os.listdir, D)
    q(os.listdir, D + "/x")
    q(os.lstat, "%s/e%d" % (u, d))
    q(os.lstat, "%s/g%d" % (D, n % 8))
    if q(wr, "%s/w%s" % (D, w), "%s.%d" % (w, n)) is None and os.path.exists("%s/w%s" % (D, w)):
        q(os.rename, "%s/w%s" % (D, w), "%s/v%s" % (D, w))
        q(os.unlink, "%s/v%s" % (D, w))
    if n % 10 == 0:
        for root, dirs, files in os.walk(u):
            pass
    n += 1
wr(out, "%d %d" % (n, errs))
PYEND
		workers="$workers $!"
	done
	sleep "$secs"
	touch $stop
	for p in $editor $workers; do
		wait $p || fail "$fs: a worker or the editor failed (an errno the races do not explain: above)"
	done
	note "$fs: $(cat $TMP/edits) direct edits; workers (rounds, errors): $(cat $TMP/worker1), $(cat $TMP/worker2), $(cat $TMP/worker3)"

	# Converged: the live union shows what a fresh mount shows.
	snapshot $u >$TMP/live || fail "$fs: find in the live union"
	union_umount $u
	odf_check
	union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$l=ro"
	snapshot $u >$TMP/fresh || fail "$fs: find in the fresh union"
	diff $TMP/live $TMP/fresh >$TMP/diff ||
		fail "$fs: the live union differs from a fresh mount: $(head -n 10 $TMP/diff | tr '\n' ' ')"
	# And the lower branch's own names all show (none of them was
	# removed through the union: the workers remove only their own).
	(cd $l && find . -printf '%p %y\n' | sort) >$TMP/lower
	(cd $u && find . -printf '%p %y\n' | sort) | grep -v '/[wv][123] ' >$TMP/union
	diff $TMP/lower $TMP/union >$TMP/diff2 ||
		fail "$fs: the union's names are not the lower branch's: $(head -n 10 $TMP/diff2 | tr '\n' ' ')"
	union_umount $u
	odf_check
	umount $l $b0
done
exit 0
