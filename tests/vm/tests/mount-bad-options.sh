#!/bin/bash
# Every bad mount input fails with the right errno and exactly one kernel
# log line that names the problem; nothing stays mounted.
. "$SRC/tests/vm/lib.sh"

br=/mnt/b0 u=/mnt/u
mkdir -p $br/sub $u /mnt/u2
echo data >$br/file
mkodf_dev "$ODF_DEV"
echo x >/tmp/notadir

long=$(for i in $(seq 1 65); do printf '/mnt/b0:'; done)
long=${long%:}

# errno | options | text the log line must contain
cases="EINVAL|odf=$ODF_DEV,dirs=$br=ro,bogus=1|unknown mount option 'bogus'
EINVAL|odf=$ODF_DEV,dirs=$br=ro,noway|unknown mount option 'noway'
EINVAL|odf=$ODF_DEV,dirs=$br=rw,udba=notify|udba= takes reval or none
EINVAL|odf=$ODF_DEV,dirs=$br=rw,udba|udba= takes reval or none
EINVAL|dirs=$br=ro|missing odf=
EINVAL|odf=$ODF_DEV|missing dirs=
EINVAL|odf=,dirs=$br=ro|option odf= needs a value
EINVAL|odf=$ODF_DEV,dirs=|option dirs= needs a value
EINVAL|odf=$ODF_DEV,dirs=$br=rx|bad mode 'rx' for branch '$br'
EINVAL|odf=$ODF_DEV,dirs=$br=ro:|empty branch path
EINVAL|odf=$ODF_DEV,dirs=mnt/b0=ro|is not an absolute path
EINVAL|odf=$ODF_DEV,dirs=$br=ro,dirs=$br=ro|dirs= given twice
EINVAL|odf=$ODF_DEV,odf=$ODF_DEV,dirs=$br=ro|odf= given twice
EINVAL|odf=$ODF_DEV,dirs=$long|names 65 branches, at most 64
EINVAL|odf=$ODF_DEV,dirs=$br=rw:/mnt=ro|branches '$br' and '/mnt' overlap
EINVAL|odf=$ODF_DEV,dirs=$br/sub=rw:$br=ro|branches '$br/sub' and '$br' overlap
EINVAL|odf=$ODF_DEV,dirs=$br=rw:$br=ro|branches '$br' and '$br' overlap
EINVAL|odf=$br/sub,dirs=$br=rw|ODF '$br/sub' and branch '$br' overlap
EINVAL|odf=$ODF_DEV,dirs=$br=ro:/tmp=rw|the first branch '$br' must be rw
EINVAL|odf=$ODF_DEV,dirs=$br=ro|the first branch '$br' must be rw
EROFS|odf=$ODF_DEV,dirs=$br/sub=rw:$SRC=rw|branch '$SRC' is marked =rw but is read-only
ENOENT|odf=$ODF_DEV,dirs=/mnt/nonexistent=rw|cannot find branch '/mnt/nonexistent' (error -2)
ENOTDIR|odf=$ODF_DEV,dirs=$br/file=rw|branch '$br/file' is not a directory
ENOENT|odf=/dev/nonexistent,dirs=$br=rw|cannot find ODF '/dev/nonexistent'
EINVAL|odf=/tmp/notadir,dirs=$br=rw|is neither a block device nor a directory"

n=0
while IFS='|' read -r want opts text; do
	n=$((n + 1))
	klog_mark
	got=$(sysmount mount none $u unionfs none "$opts")
	log=$(klog_new | grep 'unionfs:')
	[ "$got" = "$want" ] || fail "case $n ($opts): expected $want, got $got"
	case $log in
	*"$text"*) ;;
	*) fail "case $n ($opts): log '$log' lacks '$text'" ;;
	esac
	[ "$(echo "$log" | wc -l)" = 1 ] || fail "case $n: more than one log line: $log"
	grep -q " $u " /proc/mounts && fail "case $n: left mounted"
done <<<"$cases"

# A good mount still works after all that, and a read-only mount may name
# the branch rw (the union is read-only anyway).
got=$(sysmount mount none $u unionfs ro "odf=$ODF_DEV,dirs=$br")
expect_eq "ro mount of an rw branch" OK "$got"
expect_eq "content" data "$(cat $u/file)"

# Remount: ro stays allowed; a union mounted ro cannot become rw (it has
# no upper branch session on the ODF), and branch changes are refused.
expect_eq "remount ro" OK "$(sysmount remount $u ro)"
# mount(8) passes the options /proc/mounts shows (odf=, dirs=) again.
mount -o remount,ro $u || fail "mount -o remount,ro: $(dmesg | grep unionfs | tail -n 1)"
klog_mark
expect_eq "remount rw" EINVAL "$(sysmount remount $u none)"
klog_new | grep -q 'unionfs: a union mounted read-only cannot be remounted read-write' ||
	fail "remount rw: no log line"
# Branch changes (tests/vm/tests/union-remount-branches.sh for the ones
# that work): a read-only union cannot record them on its ODF.
while IFS='|' read -r o text; do
	klog_mark
	expect_eq "remount $o" EINVAL "$(sysmount remount $u ro "$o")"
	klog_new | grep 'unionfs:' | grep -qF "$text" ||
		fail "remount $o: no log line with '$text': $(klog_new | grep unionfs:)"
done <<EOF
dirs=$br=ro|a read-only union cannot change its branches
add=/tmp=ro|a read-only union cannot change its branches
del=$br|the first branch '$br' cannot be removed or moved by remount
mode=$br=ro|a read-only union cannot change its branches
add=0:/tmp=ro|a new first branch (rotating the writable branch) is not supported yet
del=/tmp|del=/tmp: not a branch of this union
del=/tmp=ro|del=/tmp=ro: give the branch only, no mode
add=x:/tmp|bad position 'x'
mode=/tmp|give the branch and its mode
EOF
klog_mark
expect_eq "mount with add=" EINVAL "$(sysmount mount none /mnt/u2 unionfs none "odf=$ODF_DEV,dirs=$br=rw,add=/tmp")"
klog_new | grep -q 'unionfs: option add= changes the branches of a mounted union: use it with remount' ||
	fail "mount with add=: no log line"
expect_eq "still readable" data "$(cat $u/file)"
expect_eq "umount" OK "$(sysmount umount $u)"
note "$n bad-option cases checked"
