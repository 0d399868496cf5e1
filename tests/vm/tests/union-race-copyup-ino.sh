#!/bin/bash
# A directory, symlink or device node copied up while other processes
# look its name up keeps one inode number.  The copy is made at its name
# before its inode map records are written; a lookup in between used to
# judge the cached name changed, look it up again and make a second union
# inode with the upper object's own number: stat then said one number,
# readdir (which reads the records) another, and a remount a third time
# the first (the stress test's "d_ino != st_ino").  Checked: for every
# name, st_ino == d_ino after the race, and the same numbers after a
# remount; every directory's whiteouts (keyed by its number) survive the
# remount.
# timeout: 600
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
n=200
mkdir -p $b1/d
for i in $(seq 1 $n); do
	mkdir $b1/d/dir$i
	echo $i >$b1/d/dir$i/gone
	ln -s target$i $b1/d/link$i
done
for i in $(seq 1 20); do mknod $b1/d/node$i p; done
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
union_mount $u "$opts"

# d_ino and st_ino of every entry of $u/d, one "NAME D_INO ST_INO" a line.
numbers() {
	"$SRC/tests/vm/prog/dirlist" $u/d | awk '$1 != "end" && $4 !~ /^\.\.?$/ { print $4, $2 }' |
		sort | while read -r name dino; do
			echo "$name $dino $(stat -c %i $u/d/$name)"
		done
}

# Each name is copied up while two processes look it up in a loop
# (lstat, which revalidates the cached name): a directory's copy-up (a
# file created in it; a whiteout in it then goes to its node, keyed by
# its number), a symlink's and a node's (a timestamp change).
python3 - $u/d $n <<'PY' || fail "the copy-ups under lookups failed"
import multiprocessing as mp, os, sys
d, n = sys.argv[1], int(sys.argv[2])
cur = mp.RawValue("i", -1)
names = ["dir%d" % i for i in range(1, n + 1)] + \
	["link%d" % i for i in range(1, n + 1)] + \
	["node%d" % i for i in range(1, 21)]

def looker():
	while cur.value != -2:
		i = cur.value
		if i >= 0:
			try:
				os.lstat(os.path.join(d, names[i]))
			except OSError:
				pass

ps = [mp.Process(target=looker) for _ in range(2)]
for p in ps:
	p.start()
for i, name in enumerate(names):
	cur.value = i
	path = os.path.join(d, name)
	if name.startswith("dir"):
		open(os.path.join(path, "new"), "w").close()
		os.unlink(os.path.join(path, "gone"))
	else:
		os.utime(path, follow_symlinks=False)
cur.value = -2
for p in ps:
	p.join()
PY
before=$(numbers)
bad=$(awk '$2 != $3' <<<"$before")
[ -z "$bad" ] || fail "readdir and stat disagree on $(wc -l <<<"$bad") names (name d_ino st_ino): $(head -n 4 <<<"$bad" | tr '\n' ' ')"
for i in $(seq 1 $n); do
	[ -d $b0/d/dir$i ] || fail "dir$i was not copied up"
done
union_umount $u
odf_check
union_mount $u "$opts"
after=$(numbers)
if [ "$before" != "$after" ]; then
	diff <(echo "$before") <(echo "$after") | head -n 8
	fail "inode numbers changed across the remount"
fi
for i in $(seq 1 $n); do
	[ -e $u/d/dir$i/gone ] && fail "dir$i/gone is back after the remount"
done
note "$n directories, $n symlinks, 20 nodes copied up under lookups: one number each"
union_umount $u
exit 0
