#!/bin/bash
# An fd's union dentry can stop being its name's dentry: the name was
# renamed or removed through another dentry, which a lookup made when
# the fd's one failed revalidation.  A change through the fd that copies
# the object looks the name up again first (union-renamed-fd has the
# cases of a file renamed in place); here:
#  A. fd of e3/rc (e3 also on the upper branch, so the rename copies the
#     file up); mv e3/rc e3/rc2; rm e3/rc2; l1 made read-only;
#     fchmod(fd) changes the removed copy, as on ext4, and nothing comes
#     back;
#  B. hard links h/a and h/b of a read-only branch, h not on the upper;
#     fd of h/a; chmod h/b copies the file up; a lookup of h/a replaces
#     the fd's dentry; fchmod(fd) links up/h/a to the copy and changes
#     it (one file, two names);
#  C. a copy to a writable lower branch at a name the fd left: x on l1
#     and l2, y only on l2; fd of x/p (on l2); mv x/p y/p2 in place on
#     l2; l2 made read-only; fchmod(fd) copies to up/y/p2 (bug: the copy
#     went to l1/x/p2 and showed as x/p2 in the union);
#  D. an fd kept across 18 branch changes that each give its dentry a new
#     info (a tmpfs l3 with e4/ added above l1 and removed again, the
#     name stat'ed after each), then renamed in place on l1, l1 made
#     read-only: fchmod(fd) copies up (bug: the cap of 16 infos a
#     dentry keeps for copies counted the branch changes' too: ESTALE).
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch ext4 "$(nth_disk 3)" $l2
mkbranch tmpfs none /mnt/l3
mkdir -p $up/e3 $l1/e3 $l2/h $l1/x $l2/x $l2/y $l1/e4 /mnt/l3/e4
echo e4 >$l1/e4/p
echo rc >$l1/e3/rc
echo h >$l2/h/a
ln $l2/h/a $l2/h/b
echo xp >$l2/x/p
chmod 644 $l1/e3/rc $l2/h/a $l2/x/p $l1/e4/p
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=rw"
ino_h=$(ino $u/h/a)
ino_p=$(ino $u/x/p)

out=$(python3 - "$u" "$l1" "$l2" <<'PY'
import os, sys, errno, subprocess
u, l1, l2 = sys.argv[1:4]

sys.path.insert(0, os.environ["SRC"] + "/tests/vm/prog")
from errname import err

def remount(br, mode):
    subprocess.run(["mount", "-o", "remount,mode=%s=%s" % (br, mode), u],
                   check=True)

for a, b in (("e3/rc", "e3/rc2"),):
    fd = os.open("%s/%s" % (u, a), os.O_RDONLY)
    os.rename("%s/%s" % (u, a), "%s/%s" % (u, b))
    os.unlink("%s/%s" % (u, b))
    remount(l1, "ro")
    print(a.split("/")[1], err(lambda: os.fchmod(fd, 0o640)))
    remount(l1, "rw")
    os.close(fd)

remount(l2, "ro")
fd = os.open(u + "/h/a", os.O_RDONLY)
os.chmod(u + "/h/b", 0o600)
os.stat(u + "/h/a")
gone = os.readlink("/proc/self/fd/%d" % fd).endswith(" (deleted)")
print("a", err(lambda: os.fchmod(fd, 0o640)), oct(os.fstat(fd).st_mode & 0o777),
      "replaced" if gone else "not-replaced")
os.close(fd)
remount(l2, "rw")

fd = os.open(u + "/x/p", os.O_RDONLY)
os.rename(u + "/x/p", u + "/y/p2")
remount(l2, "ro")
print("xp", err(lambda: os.fchmod(fd, 0o640)), oct(os.fstat(fd).st_mode & 0o777))
remount(l2, "rw")
os.close(fd)

def remount_opt(opt):
    subprocess.run(["mount", "-o", "remount," + opt, u], check=True)

fd = os.open(u + "/e4/p", os.O_RDONLY)
for i in range(9):
    remount_opt("add=1:/mnt/l3=ro")
    os.stat(u + "/e4/p")
    remount_opt("del=/mnt/l3")
    os.stat(u + "/e4/p")
os.rename(u + "/e4/p", u + "/e4/q")
remount(l1, "ro")
print("q", err(lambda: os.fchmod(fd, 0o640)), oct(os.fstat(fd).st_mode & 0o777))
remount(l1, "rw")
os.close(fd)
PY
) || fail "python: $out"
echo "$out"
line() { echo "$out" | sed -n "${1}p"; }

# A
expect_eq "A: fchmod through the fd of a copied-up file removed since" "rc OK" "$(line 1)"
expect_eq "A: union e3/ and up/e3/ (the removed copy not back)" "|" "$(union_ls $u/e3)|$(ls $up/e3)"
expect_eq "A: l1/e3/rc unchanged (whited out)" "644 rc" "$(stat -c %a $l1/e3/rc) $(cat $l1/e3/rc)"

# B
expect_eq "B: fchmod through the replaced fd of a hard link" "a OK 0o640 replaced" "$(line 2)"
expect_eq "B: up/h/a and up/h/b: one file, mode 640" "640 2 h|640 2 h" \
	"$(stat -c '%a %h' $up/h/a) $(cat $up/h/a)|$(stat -c '%a %h' $up/h/b) $(cat $up/h/b)"
[ "$(stat -c %i $up/h/a)" = "$(stat -c %i $up/h/b)" ] || fail "B: up/h/a and up/h/b are two files"
expect_eq "B: union h/a and h/b keep their number" "$ino_h $ino_h" "$(ino $u/h/a) $(ino $u/h/b)"
expect_eq "B: l2/h/a unchanged" "644 2" "$(stat -c '%a %h' $l2/h/a)"

# C
expect_eq "C: fchmod through the fd of a file renamed in place" "xp OK 0o640" "$(line 3)"
expect_eq "C: up/y/p2 (the copy, at the file's name)" "640 xp" "$(stat -c %a $up/y/p2) $(cat $up/y/p2)"
[ -e $l1/x/p2 ] && fail "C: the copy went to l1/x/p2, a name the file never had there"
expect_eq "C: union x/ and y/" "|p2" "$(union_ls $u/x)|$(union_ls $u/y)"
expect_eq "C: union y/p2 keeps its number and shows the copy" "$ino_p 640" "$(ino $u/y/p2) $(stat -c %a $u/y/p2)"
expect_eq "C: l2/y/p2 unchanged" "644 xp" "$(stat -c %a $l2/y/p2) $(cat $l2/y/p2)"

# D
expect_eq "D: fchmod through an fd kept across 18 branch changes" "q OK 0o640" "$(line 4)"
expect_eq "D: up/e4/q (the copy) and l1/e4/q unchanged" "640 e4|644 e4" \
	"$(stat -c %a $up/e4/q) $(cat $up/e4/q)|$(stat -c %a $l1/e4/q) $(cat $l1/e4/q)"
expect_eq "D: union e4/" "q" "$(union_ls $u/e4)"

union_umount $u
"$ODFCK" -fn "$ODF_DEV" >$TMP/fsck.out 2>&1 || { cat $TMP/fsck.out; fail "odfck -fn"; }
exit 0
