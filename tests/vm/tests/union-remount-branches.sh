#!/bin/bash
# timeout: 500
# Branch changes of a mounted union (issue 11): remount add=, del=,
# mode= and a new dirs=, through mount(8) (which passes the mounted
# dirs= back with them) and through mount(2).  After each change: the
# added branch's names appear, the removed branch's vanish, a whiteout
# still hides a name the added branch has, st_ino and merged-directory
# offsets of the other names do not change, /proc/mounts shows the new
# set.  A remount with one bad change changes nothing; del= of a branch
# with a file open through the union is EBUSY.  The ODF records the new
# set: the union mounts again with it (and not with the old one), and
# odfck is clean.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 b3=/mnt/b3 u=/mnt/u
DL=$SRC/tests/vm/prog/dirlist
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch xfs "$(nth_disk 3)" $b2
mkbranch tmpfs none $b3
mkodf_dev "$ODF_DEV"
mkdir -p $b1/d $b1/big $b2/d $b2/big $b3/d
echo a1 >$b1/d/a; echo b1 >$b1/d/b; echo w1 >$b1/d/w
echo a2 >$b2/d/a; echo c2 >$b2/d/c; echo w2 >$b2/d/w
echo a3 >$b3/d/a; echo e3 >$b3/d/e; echo w3 >$b3/d/w
for i in $(seq -w 0 299); do : >$b1/big/l$i; : >$b2/big/m$i; done

union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
rm $u/d/w || fail "rm d/w"
echo up >$u/d/up || fail "create d/up"
: >$u/big/u1 || fail "create big/u1"
ino_d=$(ino $u/d) ino_a=$(ino $u/d/a) ino_b=$(ino $u/d/b) ino_up=$(ino $u/d/up)

# dirs_now: the dirs= of /proc/mounts.
dirs_now() { awk -v m=$u '$2 == m { print $4 }' /proc/mounts | tr ',' '\n' | sed -n 's/^dirs=//p'; }
# offs FILE: records big/'s listing (telldir offsets, rdseek record) in
# FILE and "NAME D_INO" of every entry in FILE.ino.
RS=$SRC/tests/vm/prog/rdseek
offs() {
	"$RS" record --strict $u/big "$1" || fail "rdseek record $1"
	"$DL" $u/big | awk '$1 != "end" && $4 != "." && $4 != ".." { print $4, $2 }' | sort >"$1.ino"
}
# same_offs OLD NEW WHAT: the listing recorded in OLD holds now (names
# that stay keep their order and offsets, seekdir to any recorded offset
# resumes at the right name, new names come after), and every name in
# both has the same inode number.
same_offs() {
	local bad
	"$RS" verify --strict --samples 60 $u/big "$1" >$TMP/verify 2>&1 ||
		fail "$3: the listing recorded before does not hold: $(head -n 5 $TMP/verify)"
	bad=$(join "$1.ino" "$2.ino" | awk '$2 != $3' | head -n 3)
	[ -z "$bad" ] || fail "$3: inode numbers changed: $bad"
}
view() {
	(cd $u/d && for f in $(ls | sort); do
		if [ -d "$f" ]; then printf '%s/ ' "$f"; else printf '%s=%s ' "$f" "$(cat "$f")"; fi
	done)
}

# A mount on a directory inside the union (and on one below a merged
# directory) must outlive branch changes.
mkdir -p $u/mp $u/d/mp2 || fail "mkdir mp"
mount -t tmpfs tmpfs $u/mp && mount -t tmpfs tmpfs $u/d/mp2 || fail "mount tmpfs inside the union"
echo inmp >$u/mp/x && echo inmp2 >$u/d/mp2/x
mounts_kept() {
	mountpoint -q $u/mp && mountpoint -q $u/d/mp2 ||
		fail "$1: a mount inside the union was detached"
	expect_eq "$1: file on the mount inside" "inmp inmp2" "$(cat $u/mp/x $u/d/mp2/x | paste -sd' ')"
}
offs $TMP/o0
expect_eq "big/ before" 301 "$(wc -l <$TMP/o0.ino)"

# ---- add= at a position (below b1), through mount(8) ----
mount -o remount,add=2:$b2=ro $u || fail "remount add=2:$b2: $(dmesg | grep unionfs: | tail -n 1)"
expect_eq "dirs= after add=2:" "$b0=rw:$b1=ro:$b2=ro" "$(dirs_now)"
expect_eq "d/ after add of b2 below b1" "a=a1 b=b1 c=c2 mp2/ up=up " "$(view)"
mounts_kept "add of b2"
[ -e $u/d/w ] && fail "the whiteout of d/w no longer hides it once b2 (which has d/w) is added"
expect_eq "st_ino of d" "$ino_d" "$(ino $u/d)"
expect_eq "st_ino of d/a" "$ino_a" "$(ino $u/d/a)"
expect_eq "st_ino of d/up" "$ino_up" "$(ino $u/d/up)"
offs $TMP/o1
expect_eq "big/ after add of b2" 601 "$(wc -l <$TMP/o1.ino)"
same_offs $TMP/o0 $TMP/o1 "add of b2"

# ---- add= with the default position: the top lower branch ----
ino_c=$(ino $u/d/c)
mount -o remount,add=$b3 $u || fail "remount add=$b3: $(dmesg | grep unionfs: | tail -n 1)"
expect_eq "dirs= after add= (default position)" "$b0=rw:$b3=ro:$b1=ro:$b2=ro" "$(dirs_now)"
expect_eq "d/ after add of b3 on top of the lower branches" "a=a3 b=b1 c=c2 e=e3 mp2/ up=up " "$(view)"
mounts_kept "add of b3"
expect_eq "st_ino of d/b" "$ino_b" "$(ino $u/d/b)"
expect_eq "st_ino of d/c" "$ino_c" "$(ino $u/d/c)"

# ---- a remount with one bad change changes nothing ----
klog_mark
expect_eq "del= with a bad add=" ENOENT "$(sysmount remount $u none "del=$b1,add=/mnt/nonexistent=ro")"
expect_eq "dirs= after the failed remount" "$b0=rw:$b3=ro:$b1=ro:$b2=ro" "$(dirs_now)"
expect_eq "d/b after the failed remount" b1 "$(cat $u/d/b)"
expect_eq "mode=rw of a lower branch with a bad del=" EINVAL "$(sysmount remount $u none "mode=$b3=rw,del=/mnt/nonexistent")"
klog_new | grep -q "unionfs: del=/mnt/nonexistent: not a branch of this union" ||
	fail "mode=$b3=rw,del=/mnt/nonexistent: no log line"
expect_eq "del= of the upper branch" EINVAL "$(sysmount remount $u none "del=$b0")"
expect_eq "add= of a branch already in" EINVAL "$(sysmount remount $u none "add=$b1")"
expect_eq "add= of a branch inside another" EINVAL "$(sysmount remount $u none "add=$b1/d")"
expect_eq "add= of the union itself" EINVAL "$(sysmount remount $u none "add=$u/d")"
expect_eq "add= with remount,ro" EINVAL "$(sysmount remount $u ro "add=/tmp")"
expect_eq "dirs= after the refused remounts" "$b0=rw:$b3=ro:$b1=ro:$b2=ro" "$(dirs_now)"

# ---- del=: EBUSY while a file of the branch is open through the union ----
exec 7<$u/d/b
klog_mark
expect_eq "del= with d/b open" EBUSY "$(sysmount remount $u none "del=$b1")"
klog_new | grep -q "unionfs: cannot remove branch '$b1': files of it are open" ||
	fail "del= EBUSY: no log line"
expect_eq "open file of b1 still reads" b1 "$(cat <&7)"
exec 7<&-
offs $TMP/o2
(cd $u/d && sleep 30) &
cwd_pid=$!
# A listing of big/ half read on one open fd across the del=.
python3 "$SRC/tests/vm/prog/halfdir.py" $u/big 200 $TMP/ready $TMP/go $TMP/half &
half_pid=$!
for i in $(seq 100); do [ -e $TMP/ready ] && break; sleep 0.2; done
[ -e $TMP/ready ] || fail "halfdir did not read the first half of big/"
mount -o remount,del=$b1 $u || fail "remount del=$b1: $(dmesg | grep unionfs: | tail -n 1)"
ls $u/big >/dev/null || fail "ls big/ after del="
touch $TMP/go
wait $half_pid || fail "reading on in big/ after del=: $(grep error $TMP/half)"
python3 - $TMP/half <<'PY' || fail "the listing across del= is wrong"
import sys
lines = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
names = [x[1] for x in lines]
second = [x[1] for x in lines if x[0] == "2"]
want = {"m%03d" % i for i in range(300)} | {"u1"}
dups = len(names) - len(set(names))
missing = want - set(names)
removed = [n for n in second if n.startswith("l")]
print("# across del=: %d names before, %d after; %d twice, %d missing, %d of the removed branch after"
      % (len(names) - len(second), len(second), dups, len(missing), len(removed)))
sys.exit(1 if dups or missing or removed else 0)
PY
expect_eq "dirs= after del=" "$b0=rw:$b3=ro:$b2=ro" "$(dirs_now)"
expect_eq "d/ after del of b1" "a=a3 c=c2 e=e3 mp2/ up=up " "$(view)"
mounts_kept "del of b1"
[ -e $u/d/b ] && fail "d/b (only on b1) still shown after del=$b1"
expect_eq "st_ino of d/c after del" "$ino_c" "$(ino $u/d/c)"
expect_eq "st_ino of d/up after del" "$ino_up" "$(ino $u/d/up)"
offs $TMP/o3
expect_eq "big/ after del of b1" 301 "$(wc -l <$TMP/o3.ino)"
grep -q '^l' $TMP/o3.ino && fail "names of the removed branch still listed in big/"
same_offs $TMP/o2 $TMP/o3 "del of b1"
kill $cwd_pid 2>/dev/null; wait $cwd_pid 2>/dev/null

# ---- from a working directory nobody looked up since the change ----
# A rename from it into its parent makes the VFS lock it and then
# revalidate it (a refresh must not wait for that lock), and a name of
# a removed branch below it must not be opened.
mkdir $u/A && echo x >$u/A/x || fail "setup A/"
python3 - $u/A $TMP/Aready $TMP/Ago >$TMP/Aout <<'PY' &
import errno, os, sys, time
os.chdir(sys.argv[1])
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.1)
for what, f in (("rename", lambda: os.rename("x", "../A")),
                ("read", lambda: open("../d/c").read().strip())):
    try:
        print(what, f())
    except OSError as e:
        print(what, errno.errorcode[e.errno])
PY
A_pid=$!
for i in $(seq 100); do [ -e $TMP/Aready ] && break; sleep 0.1; done
mount -o remount,add=$b1=ro $u || fail "remount add=$b1 (for A/): $(dmesg | grep unionfs: | tail -n 1)"
touch $TMP/Ago
for i in $(seq 100); do kill -0 $A_pid 2>/dev/null || break; sleep 0.2; done
kill -0 $A_pid 2>/dev/null && fail "rename from a working directory after a branch change hangs"
wait $A_pid
expect_eq "rename and read from a working directory after add=" "rename ENOTEMPTY|read c2" "$(paste -sd'|' $TMP/Aout)"
mount -o remount,del=$b1 $u || fail "remount del=$b1 again"

# ---- a new dirs=: b1 back (a new branch id), b3 out, b2 above b1 ----
sysmount remount $u none "dirs=$b0=rw:$b2=ro:$b1=ro" >$TMP/r
expect_eq "remount dirs=" OK "$(cat $TMP/r)"
expect_eq "dirs= after dirs=" "$b0=rw:$b2=ro:$b1=ro" "$(dirs_now)"
expect_eq "d/ after dirs=" "a=a2 b=b1 c=c2 mp2/ up=up " "$(view)"
mounts_kept "dirs="
umount $u/d/mp2 $u/mp || fail "umount the mounts inside the union"
expect_eq "st_ino of d/c after dirs=" "$ino_c" "$(ino $u/d/c)"
[ "$(ino $u/d/b)" = "$ino_b" ] &&
	fail "d/b kept its number although b1 came back as a new branch (new id)"
offs $TMP/o4
expect_eq "big/ after dirs=" 601 "$(wc -l <$TMP/o4.ino)"
same_offs $TMP/o3 $TMP/o4 "dirs="

# ---- the ODF has the new set: mount again with it, not with the old ----
union_umount $u
odf_check
klog_mark
expect_eq "mount with the old dirs=" EINVAL \
	"$(sysmount mount none $u unionfs none "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro")"
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b2=ro:$b1=ro"
expect_eq "d/ after mounting again" "a=a2 b=b1 c=c2 mp2/ up=up " "$(view)"
expect_eq "st_ino of d/c after mounting again" "$ino_c" "$(ino $u/d/c)"
offs $TMP/o5
same_offs $TMP/o4 $TMP/o5 "mount again"
union_umount $u
odf_check
