#!/bin/bash
# Three read-only branches on ext4, xfs and tmpfs, with names at different
# levels: priority, directory merging, file/directory conflicts, merged
# readdir (each name once, d_type, d_ino == st_ino), offsets within an
# open directory, and changes made in a branch behind the union's back.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkfs_branch ext4 "$(nth_disk 1)" $b0
mkfs_branch xfs "$(nth_disk 2)" $b1
mkfs_branch tmpfs none $b2
mkodf_dev "$ODF_DEV"
mkdir -p $u

# b0 (highest)        b1                     b2
# common=b0           common=b1              common=b2
# d/only0             d/only1, d/both        d/only2, d/both
# x (file)            x/ (dir, hidden)       -
# y/ (dir) y/in0      y (file, hidden)       y/in2 (hidden: y in b1 is a file)
# -                   deep/a/b/c             deep/a/z
rmdir $b0/lost+found
for b in $b0 $b1 $b2; do echo "${b##*/}" >$b/common; mkdir -p $b/d; done
touch $b0/d/only0 $b1/d/only1 $b2/d/only2
echo b1 >$b1/d/both; echo b2 >$b2/d/both
echo file >$b0/x; mkdir $b1/x; touch $b1/x/hidden
mkdir $b0/y; touch $b0/y/in0; echo file >$b1/y; mkdir -p $b2/y; touch $b2/y/in2
mkdir -p $b1/deep/a/b $b2/deep/a; echo c >$b1/deep/a/b/c; echo z >$b2/deep/a/z
ln -s common $b2/link2
mkfifo $b1/fifo1

mount -t unionfs -o ro,odf="$ODF_DEV",dirs=$b0=ro:$b1=ro:$b2=ro none $u ||
	fail "mount: $(dmesg | tail -n 1)"

expect_eq "priority" b0 "$(cat $u/common)"
expect_eq "lower priority in a merged dir" b1 "$(cat $u/d/both)"
expect_eq "file over dir" file "$(cat $u/x)"
[ -e $u/x/hidden ] && fail "a directory below a file shows through"
expect_eq "dir over file" "in0" "$(ls $u/y | tr '\n' ' ' | sed 's/ $//')"
expect_eq "deep merge" "c z" "$(cat $u/deep/a/b/c $u/deep/a/z | tr '\n' ' ' | sed 's/ $//')"
expect_eq "symlink from b2" b0 "$(cat $u/link2)"

# Merged readdir: each name once, with the right type, d_ino == st_ino.
list() { "$SRC/tests/vm/prog/dirlist" "$@"; }
expect_eq "root names" ". .. common d deep fifo1 link2 x y" \
	"$(list $u | awk '$1 != "end" { print $4 }' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "d names" ". .. both only0 only1 only2" \
	"$(list $u/d | awk '$1 != "end" { print $4 }' | sort | tr '\n' ' ' | sed 's/ $//')"
list $u | while read -r off ino type name; do
	[ "$off" = end ] && continue
	[ "$name" = .. ] && continue	# crosses the mount point
	st=$(stat -c '%i %F' "$u/$name")
	case ${st#* } in
	"regular file"|"regular empty file") want=reg ;;
	directory) want=dir ;; "symbolic link") want=lnk ;; fifo) want=fifo ;;
	*) want=? ;;
	esac
	[ "$type" = "$want" ] || { echo "FAIL: $name: d_type $type, stat says $want"; exit 1; }
	[ "$ino" = "${st%% *}" ] || { echo "FAIL: $name: d_ino $ino, st_ino ${st%% *}"; exit 1; }
done || exit 1
expect_eq "x is a regular file" reg "$(list $u | awk '$4 == "x" { print $3 }')"
expect_eq "y is a directory" dir "$(list $u | awk '$4 == "y" { print $3 }')"

# Inode numbers: distinct objects, distinct numbers; each from its branch.
n=$(find $u -printf '%i\n' | sort | uniq -d | wc -l)
expect_eq "duplicate inode numbers" 0 "$n"
expect_eq "d/only2 inode" $(( (3 << 48) + $(stat -c %i $b2/d/only2) )) "$(stat -c %i $u/d/only2)"
expect_eq "d/only1 inode" $(( (2 << 48) + $(stat -c %i $b1/d/only1) )) "$(stat -c %i $u/d/only1)"
expect_eq "merged dir nlink" 1 "$(stat -c %h $u/d)"

# One entry per getdents64 call gives the same listing, and every d_off
# resumes after its entry.
full=$(list $u/d | grep -v '^end')
expect_eq "small buffer" "$full" "$(list -b 64 $u/d | grep -v '^end')"
while read -r off ino type name; do
	want=$(echo "$full" | awk -v o="$off" 'found { print $4 } $1 == o { found = 1 }' | tr '\n' ' ')
	got=$(list -s "$off" $u/d | awk '$1 != "end" { print $4 }' | tr '\n' ' ')
	[ "$want" = "$got" ] || fail "resume after $name (d_off $off): want '$want', got '$got'"
done <<<"$full"

# Behind the union's back: new names appear, removed ones go.
mount -o remount,rw $b1
echo new >$b1/d/new1
rm $b1/d/only1
echo late >$b1/common2
expect_eq "new lower file" new "$(cat $u/d/new1)"
[ -e $u/d/only1 ] && fail "a name removed from its branch still shows"
expect_eq "listing after change" ". .. both new1 only0 only2" \
	"$(list $u/d | awk '$1 != "end" { print $4 }' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "new top-level name" late "$(cat $u/common2)"

umount $u || fail "umount"
