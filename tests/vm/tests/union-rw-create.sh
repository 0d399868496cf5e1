#!/bin/bash
# timeout: 300
# Creating objects in a union of three branches on different file
# systems (xfs rw over ext4 and tmpfs) with names at different levels:
# regular files, directories, a fifo, a socket, a character device, a
# symlink and a hard link, at the root and inside lower-only and merged
# directories; each has its type, mode, owner (the creator's), device
# number and the union inode number of its upper object; the lower
# directories it needed are copied up, keeping their inode numbers; a
# name that exists below gives EEXIST; nothing changes in the lower
# branches, the ODF has no markers and is clean; the same after remount.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch xfs "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch tmpfs none $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

# b0 (xfs)          b1 (ext4)             b2 (tmpfs)
# top               d1/ d1/e/ d1/old      d1/e/f/ d1/e/f/old2
#                   pub/ (1777)           d2/g/ (only here)
#                   lfile lsym->lfile     lfifo ldir/
mkdir -p $b1/d1/e $b1/pub $b2/d1/e/f $b2/d2/g $b2/ldir
echo top >$b0/top
echo old >$b1/d1/old
echo old2 >$b2/d1/e/f/old2
chmod 1777 $b1/pub
chmod 0751 $b2/d2/g
echo lfile >$b1/lfile
ln -s lfile $b1/lsym
mkfifo $b2/lfifo
snap lower1 $b1
snap lower2 $b2

union_mount $u "$opts"
ino_d1=$(ino $u/d1) ino_e=$(ino $u/d1/e) ino_f=$(ino $u/d1/e/f)
ino_d2=$(ino $u/d2) ino_g=$(ino $u/d2/g) ino_pub=$(ino $u/pub)
expect_eq "inode of d1/e/f (from tmpfs)" "$(uino 3 "$(ino $b2/d1/e/f)")" "$ino_f"

umask 022
echo new >$u/newfile || fail "create at the root"
echo in-d1 >$u/d1/file1 || fail "create in d1 (ext4 only)"
echo in-g >$u/d2/g/newfile || fail "create in d2/g (tmpfs only)"
echo in-f >$u/d1/e/f/newfile || fail "create in d1/e/f (merged, tmpfs below)"
mkdir $u/d1/e/f/newdir || fail "mkdir"
mkdir -m 0700 $u/d2/g/private || fail "mkdir -m 0700"
mkfifo $u/d1/fifo || fail "mkfifo"
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$u/d2/sock')" || fail "bind a socket"
mknod $u/d1/e/chr c 1 3 || fail "mknod c 1 3"
ln -s ../../d1/file1 $u/d2/g/link || fail "symlink"
ln $u/newfile $u/d1/e/f/hl || fail "link"
setpriv --reuid=1234 --regid=1234 --clear-groups sh -c "echo user >$u/pub/userfile" ||
	fail "create as uid 1234 in a 1777 lower directory"
setpriv --reuid=1234 --regid=1234 --clear-groups mkdir $u/pub/userdir ||
	fail "mkdir as uid 1234"

# What the union shows.
expect_eq "newfile" new "$(cat $u/newfile)"
expect_eq "d2/g/newfile" in-g "$(cat $u/d2/g/newfile)"
expect_eq "old names still there" "old old2" "$(cat $u/d1/old $u/d1/e/f/old2 | tr '\n' ' ' | sed 's/ $//')"
expect_eq "types and modes" \
	"regular file 644 0:0|directory 755 0:0|directory 700 0:0|fifo 644 0:0|socket|character special file 644 0:0|symbolic link|regular file 644 1234:1234|directory 755 1234:1234" \
	"$(stat -c '%F %a %u:%g' $u/newfile $u/d1/e/f/newdir $u/d2/g/private $u/d1/fifo \
		$u/d2/sock $u/d1/e/chr $u/d2/g/link $u/pub/userfile $u/pub/userdir |
		sed 's/^socket .*/socket/; s/^symbolic link .*/symbolic link/' | tr '\n' '|' | sed 's/|$//')"
expect_eq "device number" "1,3" "$(stat -c '%Hr,%Lr' $u/d1/e/chr)"
expect_eq "device works" "" "$(head -c 10 $u/d1/e/chr)"
expect_eq "readlink" "../../d1/file1" "$(readlink $u/d2/g/link)"
expect_eq "through the symlink" in-d1 "$(cat $u/d2/g/link)"
expect_eq "hard link" "$(stat -c '%i 2' $u/newfile)" "$(stat -c '%i %h' $u/d1/e/f/hl)"
python3 - $u/d1/fifo <<'PY' || fail "the fifo does not work"
import os, sys
r = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
w = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
os.write(w, b"ping")
sys.exit(0 if os.read(r, 4) == b"ping" else 1)
PY
python3 - $u/d2/sock <<'PY' || fail "cannot connect to the socket through the union"
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except ConnectionRefusedError:
    pass	# the socket exists; nobody listens any more
PY

# New objects carry the upper branch's inode under branch id 1; the
# directories copied up keep theirs.
for p in newfile d1/file1 d2/g/newfile d1/e/f/newfile d1/e/f/newdir \
	d2/g/private d1/fifo d2/sock d1/e/chr d2/g/link pub/userfile pub/userdir; do
	expect_eq "inode of new $p" "$(uino 1 "$(ino $b0/$p)")" "$(ino $u/$p)"
done
expect_eq "inodes of copied-up directories" "$ino_d1 $ino_e $ino_f $ino_d2 $ino_g $ino_pub" \
	"$(stat -c %i $u/d1 $u/d1/e $u/d1/e/f $u/d2 $u/d2/g $u/pub | tr '\n' ' ' | sed 's/ $//')"
expect_eq "copied-up modes" "751 1777" "$(stat -c %a $b0/d2/g $b0/pub | tr '\n' ' ' | sed 's/ $//')"

# A name that exists in any branch, of any type: EEXIST.
cases=$(for p in top lfile lsym lfifo ldir d1 d1/old d1/e/f/old2 d2/g newfile; do
	echo "EEXIST creat('$u/$p')"
	echo "EEXIST os.mkdir('$u/$p')"
	echo "EEXIST os.mkfifo('$u/$p')"
	echo "EEXIST os.symlink('x', '$u/$p')"
	echo "EEXIST os.link('$u/top', '$u/$p')"
done)
expect_errnos "create over an existing name" <<<"$cases"
expect_errnos "create where it cannot be" <<EOF
ENOENT creat('$u/nodir/x')
ENOTDIR creat('$u/lfile/x')
ENOTDIR os.mkdir('$u/lsym/x')
EOF
# O_CREAT without O_EXCL opens a lower file and changes nothing.
expect_eq "O_CREAT of a lower file" "lfile" \
	"$(python3 -c "import os; fd = os.open('$u/lfile', os.O_RDONLY | os.O_CREAT); print(os.read(fd, 9).decode().strip())")"

expect_eq "root" "d1 d2 ldir lfifo lfile lsym newfile pub top" "$(union_ls $u)"
expect_eq "d1" "e fifo file1 old" "$(union_ls $u/d1)"
expect_eq "d1/e" "chr f" "$(union_ls $u/d1/e)"
expect_eq "d1/e/f" "hl newdir newfile old2" "$(union_ls $u/d1/e/f)"
expect_eq "d2" "g sock" "$(union_ls $u/d2)"
expect_eq "d2/g" "link newfile private" "$(union_ls $u/d2/g)"

expect_tree "upper branch" $b0 <<'EOF'
top f
newfile f
d1 d
d1/file1 f
d1/fifo p
d1/e d
d1/e/chr c
d1/e/f d
d1/e/f/newfile f
d1/e/f/newdir d
d1/e/f/hl f
d2 d
d2/sock s
d2/g d
d2/g/newfile f
d2/g/private d
d2/g/link l
pub d
pub/userfile f
pub/userdir d
EOF
snap view $u
union_umount $u

snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1" "$lower1" "$after1"
expect_same "lower branch $b2" "$lower2" "$after2"
for b in $b0 $b1 $b2; do assert_branch_clean $b; done
odf_check
odf_ns
expect_ns "after creating only" </dev/null

union_mount $u "$opts"
snap view2 $u
expect_same "union after remount" "$view" "$view2"
union_umount $u
odf_check
