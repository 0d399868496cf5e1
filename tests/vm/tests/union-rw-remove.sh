#!/bin/bash
# timeout: 300
# Unlink and rmdir in a union of ext4 rw over xfs and tmpfs: a removed
# lower name is gone from the union (also when it exists in two lower
# branches, or in the upper branch too) and stays in its branch,
# whited out in the ODF's /ns; a merged directory can be removed once
# every lower entry is whited out, not while a name shows (ENOTEMPTY);
# a name made again (by create, link, symlink, mkfifo or rename) never
# shows the old object, nor after it is removed again or a remount; a
# directory made over a removed lower directory is opaque (the lower
# children stay hidden, also after remount); the ODF records exactly
# these markers and is clean; a removed directory with hundreds of
# whiteouts leaves none of them behind.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkbranch tmpfs none $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

# b0 (ext4, upper)   b1 (xfs)              b2 (tmpfs)
# uf, both, m/x0     lf, both, ld/{a,b}    lf, sym, fifo
#                    m/x1                  m/x2, deep/1/2/3/file
#                    ld2/ (empty)          keep/{k1,k2}
#                    rl, rf, rn            rs, rf
echo uf >$b0/uf
echo both-upper >$b0/both
mkdir -p $b0/m $b1/m $b2/m $b1/ld $b1/ld2 $b2/deep/1/2/3 $b2/keep
echo x0 >$b0/m/x0
echo lf1 >$b1/lf
echo both-lower >$b1/both
echo a >$b1/ld/a
echo b >$b1/ld/b
echo x1 >$b1/m/x1
echo lf2 >$b2/lf
ln -s lf $b2/sym
mkfifo $b2/fifo
echo x2 >$b2/m/x2
echo deep >$b2/deep/1/2/3/file
echo k1 >$b2/keep/k1
echo k2 >$b2/keep/k2
for f in rl rf rn; do echo $f >$b1/$f; done
for f in rs rf; do echo $f >$b2/$f; done
snap lower1 $b1
snap lower2 $b2

union_mount $u "$opts"

# 1. Files: in two lower branches, in upper and lower, in upper only,
# and special files.
rm $u/lf || fail "unlink lf"
rm $u/both || fail "unlink both"
rm $u/uf || fail "unlink uf"
rm $u/sym $u/fifo || fail "unlink sym, fifo"
rm $u/keep/k1 || fail "unlink keep/k1"
expect_errnos "removed names" <<EOF
ENOENT os.lstat('$u/lf')
ENOENT os.lstat('$u/both')
ENOENT os.lstat('$u/uf')
ENOENT os.lstat('$u/sym')
ENOENT os.lstat('$u/fifo')
ENOENT os.lstat('$u/keep/k1')
ENOENT os.unlink('$u/lf')
ENOENT open('$u/lf')
EOF
expect_eq "lower lf kept" "lf1 lf2" "$(cat $b1/lf $b2/lf | tr '\n' ' ' | sed 's/ $//')"
expect_eq "keep" "k2" "$(union_ls $u/keep)"

# 2. A lower directory: ENOTEMPTY while it has entries, then gone.
expect_errno "rmdir ld with entries" ENOTEMPTY "os.rmdir('$u/ld')"
rm $u/ld/a $u/ld/b || fail "unlink ld/a ld/b"
expect_eq "ld is empty" "" "$(union_ls $u/ld)"
rmdir $u/ld || fail "rmdir ld after its entries went"
rmdir $u/ld2 || fail "rmdir of an empty lower directory"
expect_errnos "removed directories" <<EOF
ENOENT os.lstat('$u/ld')
ENOENT os.lstat('$u/ld/a')
ENOENT os.lstat('$u/ld2')
ENOENT os.rmdir('$u/ld')
EOF

# 3. A directory merged from three branches: not empty while any name
# shows, removable once the lower ones are whited out and the upper one
# is gone.
rm $u/m/x1 $u/m/x2 || fail "unlink m/x1 m/x2"
expect_eq "m" "x0" "$(union_ls $u/m)"
expect_errno "rmdir m with x0" ENOTEMPTY "os.rmdir('$u/m')"
rm $u/m/x0 || fail "unlink m/x0"
rmdir $u/m || fail "rmdir of a merged directory whose lower entries are whited out"
[ -e $u/m ] && fail "m still shows"

# 4. A deep lower-only tree, bottom up.
rm $u/deep/1/2/3/file || fail "unlink deep/1/2/3/file"
rmdir $u/deep/1/2/3 $u/deep/1/2 $u/deep/1 $u/deep || fail "rmdir of the deep tree"

expect_eq "root after removals" "keep rf rl rn rs" "$(union_ls $u)"

# 5. Recreate over whiteouts: new content only, never the old one.
echo new-lf >$u/lf || fail "recreate lf"
expect_eq "recreated lf" new-lf "$(cat $u/lf)"
echo new-both >$u/both || fail "recreate both"
mkdir $u/ld || fail "mkdir over the removed lower directory ld"
expect_eq "new ld is empty" "" "$(union_ls $u/ld)"
expect_errno "old ld/a" ENOENT "os.lstat('$u/ld/a')"
echo new-a >$u/ld/a || fail "create ld/a"
expect_eq "new ld/a" new-a "$(cat $u/ld/a)"
mkdir $u/m || fail "mkdir m again"
expect_eq "new m is empty" "" "$(union_ls $u/m)"
mkdir -p $u/deep/1/2/3 || fail "mkdir -p deep/1/2/3"
expect_eq "new deep" "1" "$(union_ls $u/deep)"
expect_eq "new deep/1" "2" "$(union_ls $u/deep/1)"
expect_eq "new deep/1/2" "3" "$(union_ls $u/deep/1/2)"
expect_eq "new deep/1/2/3" "" "$(union_ls $u/deep/1/2/3)"
# A removed file comes back as a directory, a removed directory as a file.
mkdir $u/sym || fail "mkdir over the removed symlink"
echo now-a-file >$u/ld2 || fail "create a file over the removed directory ld2"
expect_eq "sym is a directory" directory "$(stat -c %F $u/sym)"
expect_eq "ld2 is a file" now-a-file "$(cat $u/ld2)"
# Remove the recreated file again: the lower one stays hidden.
rm $u/both || fail "unlink the recreated both"
[ -e $u/both ] && fail "both shows after its second unlink"
# The same for names made again by link, symlink, mkfifo and rename.
rm $u/rl $u/rs $u/rf $u/rn || fail "unlink rl rs rf rn"
ln $u/ld/a $u/rl || fail "link over a whiteout"
ln -s nowhere $u/rs || fail "symlink over a whiteout"
mkfifo $u/rf || fail "mkfifo over a whiteout"
echo moved >$u/tmpf || fail "create tmpf"
expect_errno "rename over a whiteout" OK "os.rename('$u/tmpf', '$u/rn')"
expect_eq "made again" "regular file 2|symbolic link 1|fifo 1|regular file 1" \
	"$(stat -c '%F %h' $u/rl $u/rs $u/rf $u/rn | tr '\n' '|' | sed 's/|$//')"
expect_eq "contents made again" "new-a moved" "$(cat $u/rl $u/rn | tr '\n' ' ' | sed 's/ $//')"
rm $u/rl $u/rs $u/rf $u/rn || fail "unlink rl rs rf rn again"
expect_errnos "removed twice, the lower names stay hidden" <<EOF
ENOENT os.lstat('$u/rl')
ENOENT os.lstat('$u/rs')
ENOENT os.lstat('$u/rf')
ENOENT os.lstat('$u/rn')
EOF
expect_eq "ld/a after its link went" "new-a 1" "$(cat $u/ld/a) $(stat -c %h $u/ld/a)"

# 6. Wrong types.
expect_errnos "wrong types" <<EOF
ENOTDIR os.rmdir('$u/lf')
ENOTDIR os.rmdir('$u/keep/k2')
EISDIR os.unlink('$u/keep')
EISDIR os.unlink('$u/ld')
ENOENT os.rmdir('$u/nothing')
ENOTEMPTY os.rmdir('$u/keep')
EOF

expect_eq "root at the end" "deep keep ld ld2 lf m sym" "$(union_ls $u)"
expect_eq "deep/1/2 at the end" "3" "$(union_ls $u/deep/1/2)"
# keep/ is there because k1 was removed from it: a removal in a
# lower-only directory copies the directory up (spec 9.4).
expect_tree "upper branch" $b0 <<'EOF'
lf f
keep d
ld d
ld/a f
ld2 f
m d
sym d
deep d
deep/1 d
deep/1/2 d
deep/1/2/3 d
EOF
snap view $u
union_umount $u

snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1" "$lower1" "$after1"
expect_same "lower branch $b2" "$lower2" "$after2"
for b in $b0 $b1 $b2; do assert_branch_clean $b; done
odf_check
# Whiteouts for what is gone and exists below; opaque markers for the
# directories made over removed lower ones; nothing for lf, ld2 (files
# again: the upper file hides the lower name), nothing below a
# whiteout or an opaque directory.
odf_ns
ns_has "W /both" "W /fifo" "W /keep/k1" "O /ld" "O /m" "O /deep" "O /sym" \
	"W /rl" "W /rs" "W /rf" "W /rn"
ns_lacks "W /lf" "W /ld2" "W /uf" "W /ld/a" "W /ld/b" "W /m/x1" "W /m/x2" \
	"W /deep/1/2/3/file" "W /sym"
grep -q '^BAD' <<<"$NS" && fail "ODF /ns: $(grep '^BAD' <<<"$NS" | head -n 2)"

union_mount $u "$opts"
snap view2 $u
expect_same "union after remount" "$view" "$view2"
expect_eq "lf after remount" new-lf "$(cat $u/lf)"
expect_eq "ld after remount" "a" "$(union_ls $u/ld)"
expect_eq "ld/a after remount" new-a "$(cat $u/ld/a)"
expect_eq "m after remount" "" "$(union_ls $u/m)"
expect_eq "deep/1/2/3 after remount" "" "$(union_ls $u/deep/1/2/3)"
[ -e $u/both ] && fail "both is back after remount"
[ -e $u/keep/k1 ] && fail "keep/k1 is back after remount"
# Removing the new ones brings nothing old back.
rm $u/lf $u/ld/a || fail "unlink lf, ld/a"
rmdir $u/ld $u/m || fail "rmdir ld, m"
expect_eq "root after removing again" "deep keep ld2 sym" "$(union_ls $u)"
union_umount $u
odf_check
odf_ns
ns_has "W /lf" "W /ld" "W /m"

union_mount $u "$opts"
expect_eq "root after a second remount" "deep keep ld2 sym" "$(union_ls $u)"
union_umount $u
odf_check

# A removed directory whose node holds hundreds of whiteouts (the ODF
# deletes a node 16 names at a time, reading on where it stopped) goes
# whole: its name is whited out, none of its whiteouts stay in /ns and
# nothing is left in /reclaim.
mkdir $b1/many
for i in $(seq 1 300); do : >$b1/many/f$i; done
union_mount $u "$opts"
rm -r $u/many || fail "rm -r many"
[ -e $u/many ] && fail "many still shows after rm -r"
union_umount $u
odf_check
odf_ns
ns_has "W /many"
grep -q '^W /many/' <<<"$NS" && fail "whiteouts below many/ stay in /ns: $(grep -c '^W /many/' <<<"$NS")"
mkdir -p /mnt/odf-r
mount -o ro -t ext4 "$ODF_DEV" /mnt/odf-r || fail "mount the ODF read-only"
left=$(ls -A /mnt/odf-r/reclaim)
umount /mnt/odf-r
expect_eq "ODF /reclaim after rm -r many" "" "$left"
