#!/bin/bash
# timeout: 300
# Hard links, ext4 rw over xfs ro: a link to a lower file copies it up
# once and both names are one inode (content, st_ino, nlink); of three
# lower hard links, copying up one makes all three names show the copy
# (same content, st_ino, nlink), and writes or chmod through any name
# reach it; links to new files; link errors; the same after a remount;
# the lower branch does not change; the ODF holds one whiteout.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

# b1: solo; p, q, sub/r one inode (3 links); sub/ and other/ directories.
mkdir -p $b1/sub $b1/other
echo solo >$b1/solo
echo shared >$b1/p
ln $b1/p $b1/q
ln $b1/p $b1/sub/r
chmod 0640 $b1/p
snap lower $b1

union_mount $u "$opts"
lino_p=$(ino $b1/p)
ino_p=$(uino 2 "$lino_p") ino_solo=$(uino 2 "$(ino $b1/solo)")

# stat_all NAMES...: "ino nlink content" of each name, one line each.
stat_all() {
	local n
	for n in "$@"; do echo "$(stat -c '%i %h' $u/$n) $(cat $u/$n | tr '\n' '|')"; done
}
# same_inode WHAT INO NLINK CONTENT NAMES...: every name shows it.
same_inode() {
	local what=$1 i=$2 nl=$3 c=$4 n
	shift 4
	for n in "$@"; do
		expect_eq "$what: $n (inode nlink content)" "$i $nl $c" "$(stat_all $n)"
	done
}

same_inode "lower links" "$ino_p" 3 "shared|" p q sub/r

# 1. Copy up one of three lower links: the others show the copy.
echo more >>$u/q || fail "append through q"
same_inode "after copy-up of q" "$ino_p" 3 "shared|more|" p q sub/r
# Writes and chmod through another name reach the same inode; no second
# copy is made.
echo third >>$u/sub/r || fail "append through sub/r"
chmod 0604 $u/p || fail "chmod through p"
same_inode "after writes through every name" "$ino_p" 3 "shared|more|third|" p q sub/r
expect_eq "modes" "604 604 604" "$(stat -c %a $u/p $u/q $u/sub/r | tr '\n' ' ' | sed 's/ $//')"
expect_eq "lower p unchanged" "shared" "$(cat $b1/p)"
# The upper branch holds one inode for them, under the names it needs.
uppers=$(cd $b0 && for n in p q sub/r; do [ -e $n ] && stat -c %i $n; done | sort -u)
[ "$(echo "$uppers" | grep -c .)" = 1 ] ||
	fail "upper branch holds $(echo "$uppers" | grep -c .) inodes for p, q, sub/r"
expect_eq "upper copy" "$(printf 'shared\nmore\nthird')" \
	"$(for n in q p sub/r; do [ -e $b0/$n ] && cat $b0/$n && break; done)"

# 2. Link to a lower file, into a lower-only directory.
ln $u/solo $u/other/solo2 || fail "link to a lower file"
same_inode "link to a lower file" "$ino_solo" 2 "solo|" solo other/solo2
echo via2 >>$u/other/solo2
same_inode "write through the new link" "$ino_solo" 2 "solo|via2|" solo other/solo2
expect_eq "upper solo and other/solo2 are one inode" "$(ino $b0/solo) 2" "$(stat -c '%i %h' $b0/other/solo2)"

# 3. Links between new files.
echo new >$u/new || fail "create new"
ln $u/new $u/sub/new2 || fail "link to a new file"
ino_new=$(uino 1 "$(ino $b0/new)")
same_inode "link to a new file" "$ino_new" 2 "new|" new sub/new2

# 4. Errors: existing target (upper or lower), missing source, directory.
expect_errno "link over a lower name" EEXIST "os.link('$u/new', '$u/solo')"
expect_errno "link over an upper name" EEXIST "os.link('$u/solo', '$u/new')"
expect_errno "link of a missing name" ENOENT "os.link('$u/nothing', '$u/x')"
expect_errno "link of a lower directory" EPERM "os.link('$u/sub', '$u/sub3')"
expect_errno "link into a missing directory" ENOENT "os.link('$u/solo', '$u/nodir/x')"

# 5. Unlink one name of a copied-up lower link: the others stay, with the
# content; the name is whited out over the lower branch.
rm $u/q || fail "unlink q"
[ -e $u/q ] && fail "q still shows"
same_inode "after unlink of q" "$ino_p" 2 "shared|more|third|" p sub/r
rm $u/sub/new2 || fail "unlink sub/new2"
same_inode "after unlink of sub/new2" "$ino_new" 1 "new|" new

expect_eq "root" "new other p solo sub" "$(union_ls $u)"
expect_eq "sub" "r" "$(union_ls $u/sub)"
expect_eq "other" "solo2" "$(union_ls $u/other)"
snap view $u
union_umount $u

snap after $b1
expect_same "lower branch" "$lower" "$after"
assert_branch_clean $b0
assert_branch_clean $b1
odf_check
odf_ns
expect_ns "whiteouts" <<'EOF'
W /q
EOF

union_mount $u "$opts"
snap view2 $u
expect_same "union after remount" "$view" "$view2"
same_inode "after remount" "$ino_p" 2 "shared|more|third|" p sub/r
same_inode "after remount" "$ino_solo" 2 "solo|via2|" solo other/solo2
[ -e $u/q ] && fail "q is back after remount"
union_umount $u
odf_check
