#!/bin/bash
# timeout: 300
# A format 1 ODF (namespace keyed by union path) end to end: the module
# refuses it with one log line naming odfck --convert; odfck --convert
# with the branches converts it; the module then shows the same union
# the format 1 volume described: whiteouts (deep ones too), an opaque
# directory, a renamed lower directory (redirect) whose old name is
# hidden, and nothing deleted comes back; odfck -fn is clean.
. "$SRC/tests/vm/lib.sh"
ODFEDIT=$SRC/tests/unit/odfedit
[ -x "$ODFEDIT" ] || fail "tests/unit/odfedit is not built"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
# Lower: gone, keep, d/{a,b}, o/{x}, t/{x, sub/y}; upper: o/ (opaque
# since made over a deleted lower o), t2/ (t renamed), d/ (copied up).
mkdir -p $b1/d $b1/o $b1/t/sub $b0/o $b0/t2 $b0/d
for f in gone keep d/a d/b o/x t/x t/sub/y; do echo "$f" >$b1/$f; done
echo u-new >$b0/o/new

mkodf_dev "$ODF_DEV"
e() { "$ODFEDIT" "$ODF_DEV" "$@" >/dev/null || fail "odfedit $*"; }
e branch-add $b0 rw stat
e branch-add $b1 ro stat
e v1-format
e v1-whiteout /gone
e v1-whiteout /d/a
e v1-opaque /o
e v1-redirect /t2 /t
e v1-whiteout /t
e v1-whiteout /t2/sub/y
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

mkdir -p $u
klog_mark
expect_eq "mount of a format 1 ODF" EINVAL "$(sysmount mount none $u unionfs none "$opts")"
log=$(klog_new | grep 'unionfs:')
case $log in *"format 1"*"odfck --convert"*) ;; *) fail "no log line naming odfck --convert: $log" ;; esac
[ "$(echo "$log" | wc -l)" = 1 ] || fail "more than one log line: $log"

out=$("$ODFCK" --convert -p --dirs=$b0:$b1 "$ODF_DEV" 2>&1)
rc=$?
[ $rc -le 1 ] || fail "odfck --convert: exit $rc: $out"
out=$("$ODFCK" -fn "$ODF_DEV" 2>&1) || fail "odfck -fn after the conversion: $out"
grep -q 'ODF format 2' <<<"$out" || fail "odfck does not say format 2: $out"

union_mount $u "$opts"
expect_eq "root" "d keep o t2" "$(union_ls $u)"
expect_eq "d" "b" "$(union_ls $u/d)"
expect_eq "o (opaque)" "new" "$(union_ls $u/o)"
expect_eq "t2 (renamed t)" "sub x" "$(union_ls $u/t2)"
expect_eq "t2/sub" "" "$(union_ls $u/t2/sub)"
expect_eq "t2/x" t/x "$(cat $u/t2/x)"
# The converted union keeps working: remove, rename, create.
rm $u/t2/x || fail "rm t2/x"
mv $u/t2 $u/t3 || fail "mv t2 t3"
mkdir $u/t || fail "mkdir t"
expect_eq "new t is empty" "" "$(union_ls $u/t)"
union_umount $u
union_mount $u "$opts"
expect_eq "root after a remount" "d keep o t t3" "$(union_ls $u)"
expect_eq "t3 after a remount" "sub" "$(union_ls $u/t3)"
union_umount $u
odf_check
