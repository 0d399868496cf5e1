#!/bin/bash
# Several writable branches (issue 11 item 3, unionfs(5) "Several
# writable branches"): an object of a lower branch marked =rw is changed
# in place there (data, truncate, attributes, extended attributes and
# ACLs, shared mmap), keeping its inode number and copying nothing up;
# an object of a read-only branch is copied to the nearest writable
# branch above it.  Unlink and rmdir of a name shown from a writable lower branch
# remove it there, and white out only copies on other branches.  A
# rename or link to a name that would be made on that branch too, with
# no whiteout needed, is made there (log rotation while the program
# writes); otherwise the file is copied up, and if it is open for
# writing that is EBUSY (a copy would leave the writer behind); mode=ro
# of the branch is EBUSY while
# such a file is open, and an open for writing that comes after it
# copies up again.  New names go to the highest-priority writable
# branch that has the parent: the upper one if the parent has an upper
# part, else a writable lower one, else the upper one (the parent copied
# up).  A lower branch marked =rw that is read-only is
# refused with EROFS, and changes of a frozen one wait for the thaw.
# Each is checked in the branches directly, in the
# ODF (/ns, odfck) and as an unprivileged user.
. "$SRC/tests/vm/lib.sh"

up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 u=/mnt/u
USR=4242
mkbranch ext4 "$(nth_disk 1)" $up
mkbranch ext4 "$(nth_disk 2)" $l1
mkbranch ext4 "$(nth_disk 3)" $l2
mkdir -p $l1/d $l2/d $l1/x $l1/e $l2/e $l1/pub $l1/only $l1/both $l2/both $l2/rodir
mkdir -p $l1/logs $l1/logs2 $l1/rot $l2/rot
echo l >$l1/logs/app.log
echo x >$l1/logs/x
echo r1 >$l1/rot/dup
echo r2 >$l2/rot/dup
echo a >$l1/d/a
echo b1 >$l1/d/b
echo b2 >$l2/d/b
echo c >$l2/d/c
echo h >$l1/d/h1
ln $l1/d/h1 $l1/d/h2
echo f >$l1/x/f
echo m >$l1/d/m
echo z >$l1/d/z
echo q1 >$l1/d/q
echo q2 >$l2/d/q
echo mine >$l1/pub/mine
echo theirs >$l1/pub/theirs
chmod 777 $l1/pub
chown $USR:$USR $l1/pub/mine
chmod 600 $l1/pub/theirs
mkodf_dev "$ODF_DEV"
rm -f /tmp/odf-dirmap

union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"
expect_eq "/proc/mounts" "$up=rw:$l1=rw:$l2=ro" \
	"$(awk -v m=$u '$2 == m { print $4 }' /proc/mounts | tr ',' '\n' | sed -n 's/^dirs=//p')"
ino_a=$(ino $u/d/a) ino_b=$(ino $u/d/b) ino_h=$(ino $u/d/h1) ino_m=$(ino $u/d/m)

# ---- changes in place ----
echo more >>$u/d/a || fail "append to d/a"
expect_eq "l1/d/a after an append through the union" "a
more" "$(cat $l1/d/a)"
echo new >$u/d/m || fail "O_TRUNC write of d/m"
expect_eq "l1/d/m after a truncating write" new "$(cat $l1/d/m)"
truncate -s 2 $u/d/b || fail "truncate d/b"
expect_eq "l1/d/b after truncate(2)" b1 "$(cat $l1/d/b)"
expect_eq "l1/d/b size" 2 "$(stat -c %s $l1/d/b)"
expect_eq "l2/d/b untouched" b2 "$(cat $l2/d/b)"
chmod 640 $u/d/b || fail "chmod d/b"
chown 7:8 $u/d/b || fail "chown d/b"
touch -d @1000000000 $u/d/b || fail "touch d/b"
expect_eq "l1/d/b attributes" "640 7 8 1000000000" "$(stat -c '%a %u %g %Y' $l1/d/b)"
expect_eq "union d/b attributes" "640 7 8 1000000000" "$(stat -c '%a %u %g %Y' $u/d/b)"
expect_eq "l2/d/b mode untouched" 644 "$(stat -c %a $l2/d/b)"
setfattr -n user.k -v v1 $u/d/a || fail "setfattr d/a"
expect_eq "l1/d/a user.k" v1 "$(getfattr --only-values -n user.k $l1/d/a 2>/dev/null)"
setfacl -m u:$USR:r $u/d/a || fail "setfacl d/a"
getfacl -c $l1/d/a 2>/dev/null | grep -qx "user:$USR:r--" || fail "l1/d/a has no ACL entry for $USR"
setfattr -x user.k $u/d/a || fail "setfattr -x d/a"
getfattr -n user.k $l1/d/a >/dev/null 2>&1 && fail "l1/d/a still has user.k"
echo linked >>$u/d/h1 || fail "append to d/h1"
expect_eq "d/h2 (a hard link on l1) sees the write" "h
linked" "$(cat $u/d/h2)"
expect_eq "st_nlink of d/h1" 2 "$(stat -c %h $u/d/h1)"
python3 - $u/d/m <<'PY' || fail "shared mmap write of d/m"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 3, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[0:3] = b"NEW"
m.flush()
m.close()
os.close(fd)
PY
expect_eq "l1/d/m after a shared mmap write" NEW "$(cat $l1/d/m)"
chmod 755 $u/x || fail "chmod of directory x"
expect_eq "l1/x mode" 755 "$(stat -c %a $l1/x)"
for n in a b h1 m; do
	[ -e $up/d/$n ] && fail "d/$n was copied up to the upper branch"
done
[ -e $up/x ] && fail "x was copied up to the upper branch"
expect_eq "st_ino of d/a" "$ino_a" "$(ino $u/d/a)"
expect_eq "st_ino of d/b" "$ino_b" "$(ino $u/d/b)"
expect_eq "st_ino of d/h1" "$ino_h" "$(ino $u/d/h1)"
expect_eq "st_ino of d/m" "$ino_m" "$(ino $u/d/m)"
expect_eq "st_ino of d/a is l1's object" "$(ino $u/d/h2)" "$(ino $u/d/h1)"

# A read-only branch's file is copied to the nearest writable branch
# above it, l1, which has d/ (more in union-rw-copyup-lower).
ino_c=$(ino $u/d/c)
echo more >>$u/d/c || fail "append to d/c"
expect_eq "l1/d/c (copied to l1)" "c
more" "$(cat $l1/d/c)"
[ -e $up/d/c ] && fail "d/c was copied up to the upper branch"
expect_eq "l2/d/c untouched" c "$(cat $l2/d/c)"
expect_eq "st_ino of d/c kept by its copy to l1" "$ino_c" "$(ino $u/d/c)"
# Removing the copy needs a whiteout (l2 has d/c): d/ gets an upper part
# (docs/odf-format.md 9.4 step 0), which the sections below rely on.
rm $u/d/c || fail "rm d/c"
[ -e $l1/d/c ] && fail "l1/d/c still there after rm d/c"
[ -d $up/d ] || fail "d/ has no upper part after rm d/c"
expect_eq "l2/d/c stays" c "$(cat $l2/d/c)"

# ---- another user: the union checks the caller, the branch the rest ----
as_user() { setpriv --reuid=$USR --regid=$USR --clear-groups "$@"; }
as_user sh -c "echo by-user >>$u/pub/mine" || fail "user append to pub/mine"
expect_eq "l1/pub/mine after the user's append" "mine
by-user" "$(cat $l1/pub/mine)"
expect_eq "user write to pub/theirs (0600 root)" EACCES \
	"$(as_user python3 -c "$PY_ERRNO_LIB
print(run('wr(\"$u/pub/theirs\", \"x\", os.O_WRONLY | os.O_APPEND)'))")"
expect_eq "user chmod of pub/theirs" EPERM \
	"$(as_user python3 -c "$PY_ERRNO_LIB
print(run('os.chmod(\"$u/pub/theirs\", 0o666)'))")"
expect_eq "l1/pub/theirs untouched" "theirs 600" "$(cat $l1/pub/theirs) $(stat -c %a $l1/pub/theirs)"
[ -e $up/pub ] && fail "pub was copied up to the upper branch"

# ---- a frozen writable lower branch: changes wait for the thaw ----
fsfreeze -f $l1 || fail "cannot freeze $l1"
(chmod 604 $u/d/z && echo thawed >>$u/d/z) &
pid=$!
sleep 3
kill -0 $pid 2>/dev/null || fail "a change of a frozen branch's file did not wait"
expect_eq "l1/d/z while $l1 is frozen" "z 644" "$(cat $l1/d/z) $(stat -c %a $l1/d/z)"
# The waiting chmod is a writer of the branch: mode=ro must wait for it.
expect_eq "mode=ro of l1 while a chmod of d/z waits for the thaw" EBUSY \
	"$(sysmount remount $u none "mode=$l1=ro")"
fsfreeze -u $l1 || fail "cannot thaw $l1"
wait $pid || fail "chmod/append of d/z failed after the thaw"
expect_eq "l1/d/z after the thaw" "z
thawed 604" "$(cat $l1/d/z) $(stat -c %a $l1/d/z)"
[ -e $up/d/z ] && fail "d/z was copied up to the upper branch"

# ---- rename of a file open for writing in place: EBUSY ----
exec 3>>$u/d/h1 || fail "open d/h1 for appending"
expect_eq "rename of d/h1 while open for writing" EBUSY "$(renameat2 $u/d/h1 $u/d/h3 0)"
expect_eq "link of d/h1 while open for writing" EBUSY "$(pyerr "os.link('$u/d/h1', '$u/d/h4')")"
klog_mark
expect_eq "mode=ro of l1 while d/h1 is open for writing" EBUSY \
	"$(sysmount remount $u none "mode=$l1=ro")"
klog_new | grep -q "unionfs: cannot make branch '$l1' read-only: files of it are open for writing" ||
	fail "mode=$l1=ro: no log line: $(klog_new | grep unionfs:)"
echo fd >&3
exec 3>&-
expect_eq "l1/d/h1 after the write through the held fd" "h
linked
fd" "$(cat $l1/d/h1)"

# ---- unlink and rmdir remove in place; whiteouts only for other copies ----
# An O_PATH fd and a working directory keep reading what they name.
expect_eq "fstat of an O_PATH fd of d/a after its unlink" "0 $ino_a" "$(python3 - $u/d/a <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_PATH)
os.unlink(sys.argv[1])
st = os.fstat(fd)
print(st.st_nlink, st.st_ino)
PY
)"
[ -e $l1/d/a ] && fail "l1/d/a still there after rm through the union"
rm $u/d/b || fail "rm d/b"
[ -e $l1/d/b ] && fail "l1/d/b still there after rm through the union"
expect_eq "l2/d/b (read-only branch) untouched" b2 "$(cat $l2/d/b)"
expect_eq "stat . in x after rmdir x from inside it" 0 \
	"$(cd $u/x && rm f && rmdir $u/x && stat -c %h .)"
[ -e $l1/x ] && fail "l1/x still there after rmdir through the union"
rmdir $u/e || fail "rmdir e (l1 and l2)"
[ -e $l1/e ] && fail "l1/e still there after rmdir through the union"
[ -d $l2/e ] || fail "l2/e (read-only branch) went"
expect_eq "union d/" "h1 h2 m q z" "$(union_ls $u/d)"
expect_eq "union /" "both d logs logs2 only pub rodir rot" "$(union_ls $u)"

# ---- new names: on the highest writable branch that has the parent ----
echo f >$u/only/f || fail "create only/f"
mkdir $u/only/sub || fail "mkdir only/sub"
ln -s tgt $u/only/sl || fail "symlink only/sl"
mkfifo $u/only/fifo || fail "mkfifo only/fifo"
expect_tree "l1/only after creates through the union" $l1/only <<EOF
f f
fifo p
sl l
sub d
EOF
[ -e $up/only ] && fail "only/ was copied up to the upper branch for a create"
expect_eq "l1/only/f" f "$(cat $l1/only/f)"
expect_eq "l1/only/sl" tgt "$(readlink $l1/only/sl)"
expect_eq "union only/" "f fifo sl sub" "$(union_ls $u/only)"
ino_of=$(ino $u/only/f) ino_os=$(ino $u/only/sub)
expect_eq "st_ino of only/f (l1's object)" "$(uino 2 "$(ino $l1/only/f)")" "$ino_of"
expect_eq "st_ino of only/sub (l1's object)" "$(uino 2 "$(ino $l1/only/sub)")" "$ino_os"
echo deeper >$u/only/sub/g || fail "create only/sub/g"
expect_eq "l1/only/sub/g" deeper "$(cat $l1/only/sub/g)"
echo n >$u/both/f || fail "create both/f"
expect_eq "l1/both/f (l1 before l2)" n "$(cat $l1/both/f)"
[ -e $l2/both/f ] || [ -e $up/both ] && fail "both/f went elsewhere too"
echo n >$u/rodir/f || fail "create rodir/f"
expect_eq "up/rodir/f (the parent only on read-only l2)" n "$(cat $up/rodir/f)"
[ -e $l2/rodir/f ] && fail "rodir/f was made on the read-only branch"
echo n >$u/d/newf || fail "create d/newf"
expect_eq "up/d/newf (d has an upper part)" n "$(cat $up/d/newf)"
[ -e $l1/d/newf ] && fail "d/newf was made on l1 though d has an upper part"
as_user sh -c "echo u >$u/pub/byuser" || fail "user create in pub/"
expect_eq "l1/pub/byuser owner" "$USR $USR" "$(stat -c '%u %g' $l1/pub/byuser)"
expect_eq "O_EXCL create of an existing name" EEXIST "$(pyerr "creat('$u/only/f')")"
rm $u/only/f || fail "rm only/f"
expect_eq "only/ after rm only/f" "fifo sl sub" "$(union_ls $u/only)"
[ -e $l1/only/f ] && fail "l1/only/f still there after rm"

# ---- rename in place: log rotation while the program writes ----
# A non-directory of a writable lower branch whose names need no
# whiteout, renamed within that branch's directories that have no upper
# part, is renamed there: no copy-up, a writer keeps writing the file.
ino_log=$(ino $u/logs/app.log)
exec 3>>$u/logs/app.log || fail "open logs/app.log for appending"
echo one >&3
mv $u/logs/app.log $u/logs/app.log.1 || fail "rename logs/app.log while a program writes it"
echo two >&3
exec 3>&-
expect_eq "l1/logs/app.log.1 (renamed in place; the writer followed it)" "l
one
two" "$(cat $l1/logs/app.log.1)"
[ -e $l1/logs/app.log ] && fail "l1/logs/app.log still there after the rename"
[ -e $up/logs ] && fail "logs/ was copied up for a rename in place"
expect_eq "st_ino of logs/app.log.1 (the same object)" "$ino_log" "$(ino $u/logs/app.log.1)"
echo new >$u/logs/app.log || fail "create logs/app.log again"
expect_eq "l1/logs/app.log made again in place" new "$(cat $l1/logs/app.log)"
ino_new=$(ino $u/logs/app.log)
mv $u/logs/app.log $u/logs/app.log.1 || fail "rename logs/app.log over logs/app.log.1"
expect_eq "l1/logs/app.log.1 replaced in place" new "$(cat $l1/logs/app.log.1)"
expect_eq "st_ino of logs/app.log.1 after the replacing rename" "$ino_new" "$(ino $u/logs/app.log.1)"
expect_eq "union logs/ after the renames" "app.log.1 x" "$(union_ls $u/logs)"
mv $u/logs/app.log.1 $u/logs2/old || fail "rename logs/app.log.1 to logs2/old"
expect_eq "l1/logs2/old (across directories, in place)" new "$(cat $l1/logs2/old)"
# link(2) likewise, while a program writes the file.
exec 3>>$u/logs2/old || fail "open logs2/old for appending"
ln $u/logs2/old $u/logs2/hard || fail "link logs2/old to logs2/hard while a program writes it"
echo via-fd >&3
exec 3>&-
expect_eq "l1/logs2/hard: a hard link of l1/logs2/old" "$(stat -c %i $l1/logs2/old) 2" \
	"$(stat -c '%i %h' $l1/logs2/hard)"
expect_eq "union logs2/hard: the same object, two links" "$ino_new 2 new via-fd" \
	"$(stat -c '%i %h' $u/logs2/hard) $(cat $u/logs2/hard | paste -sd' ')"
expect_eq "union logs2/old st_nlink" 2 "$(stat -c %h $u/logs2/old)"
as_user mv $u/pub/byuser $u/pub/byuser2 || fail "user rename in pub/"
expect_eq "l1/pub/byuser2 (a user's rename in place)" "u $USR" "$(cat $l1/pub/byuser2) $(stat -c %u $l1/pub/byuser2)"
[ -e $up/pub ] || [ -e $up/logs2 ] && fail "pub/ or logs2/ copied up by a rename in place"
expect_eq "user rename of root's pub/theirs onto pub/t2 in a 0777 dir" OK \
	"$(as_user python3 -c "$PY_ERRNO_LIB
print(run('os.rename(\"$u/pub/theirs\", \"$u/pub/t2\")'))")"
mv $u/pub/t2 $u/pub/theirs || fail "rename pub/t2 back"
# A name also on another branch needs a whiteout: copied up as before.
mv $u/rot/dup $u/rot/dup2 || fail "rename rot/dup (also on l2)"
expect_eq "up/rot/dup2 (copied up: l2 has rot/dup)" r1 "$(cat $up/rot/dup2)"
[ -e $u/rot/dup ] && fail "rot/dup shows after its rename"
expect_eq "l1/rot/dup and l2/rot/dup stay" "r1 r2" "$(cat $l1/rot/dup $l2/rot/dup | paste -sd' ')"
# A target directory with an upper part: copied up as before.
mv $u/logs/x $u/d/x || fail "rename logs/x to d/x (d has an upper part)"
expect_eq "up/d/x (copied up to the upper branch)" x "$(cat $up/d/x)"
[ -e $u/logs/x ] && fail "logs/x shows after its rename"

# ---- the branch's file system read-only: rm fails and writes nothing ----
mount -o remount,ro $l1 || fail "cannot make $l1 read-only"
expect_eq "rm d/q (a copy on l2) with $l1 read-only" EROFS "$(pyerr "os.unlink('$u/d/q')")"
mount -o remount,rw $l1 || fail "cannot make $l1 writable"
expect_eq "d/q after the refused rm" q1 "$(cat $u/d/q)"

# ---- mode=ro: writes copy up again; mode=rw back ----
mount -o remount,mode=$l1=ro $u || fail "remount mode=$l1=ro"
echo ro >>$u/d/m || fail "append to d/m with l1 read-only"
expect_eq "up/d/m (copied up once l1 is ro)" "NEW
ro" "$(cat $up/d/m)"
expect_eq "l1/d/m untouched once ro" NEW "$(cat $l1/d/m)"
expect_eq "st_ino of d/m kept by the copy-up" "$ino_m" "$(ino $u/d/m)"
mount -o remount,mode=$l1=rw $u || fail "remount mode=$l1=rw"
echo rw >>$u/d/h2 || fail "append to d/h2 with l1 rw again"
expect_eq "l1/d/h2 written in place again" "h
linked
fd
rw" "$(cat $l1/d/h2)"
union_umount $u

odf_ns
ns_has "W /d/b" "W /e" "W /d/c"
ns_lacks "W /d/a" "W /x" "W /x/f" "W /d/q" "W /only/f" "W /logs/app.log" \
	"W /logs/app.log.1" "W /pub/byuser" "W /pub/t2" "W /logs2/hard"
ns_has "W /rot/dup" "W /logs/x"
odf_check

# ---- the same view after a new mount ----
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro"
expect_eq "union d/ after a new mount" "h1 h2 m newf q x z" "$(union_ls $u/d)"
expect_eq "union only/ after a new mount" "fifo sl sub" "$(union_ls $u/only)"
expect_eq "union logs/ and logs2/ after a new mount" " | hard old" "$(union_ls $u/logs) | $(union_ls $u/logs2)"
expect_eq "st_ino of logs2/old after a new mount" "$ino_new" "$(ino $u/logs2/old)"
expect_eq "st_ino of only/sub after a new mount" "$ino_os" "$(ino $u/only/sub)"
expect_eq "st_ino of d/h1 after a new mount" "$ino_h" "$(ino $u/d/h1)"
expect_eq "st_ino of d/m after a new mount" "$ino_m" "$(ino $u/d/m)"
union_umount $u

# ---- a read-only branch marked =rw: EROFS ----
mount -o remount,ro $l1 || fail "cannot make $l1 read-only"
klog_mark
expect_eq "mount with a read-only lower marked =rw" EROFS \
	"$(sysmount mount none $u unionfs none "odf=$ODF_DEV,dirs=$up=rw:$l1=rw:$l2=ro")"
klog_new | grep -q "unionfs: branch '$l1' is marked =rw but is read-only" ||
	fail "no log line for the read-only =rw branch: $(klog_new | grep unionfs:)"
union_mount $u "odf=$ODF_DEV,dirs=$up=rw:$l1=ro:$l2=ro"
klog_mark
expect_eq "mode=rw of a read-only lower" EROFS "$(sysmount remount $u none "mode=$l1=rw")"
klog_new | grep -q "unionfs: branch '$l1' is marked =rw but is read-only" ||
	fail "mode=$l1=rw: no log line: $(klog_new | grep unionfs:)"
union_umount $u
mount -o remount,rw $l1 || fail "cannot make $l1 writable"
odf_check
echo "ok"
