#!/bin/bash
# timeout: 300
# Merged readdir after changes, in a union of ext4 rw over xfs and
# tmpfs: a 350-name directory merged from three branches with a third
# of its names removed, names renamed and created; names whose type
# changed (file -> directory, directory -> file, fifo -> socket);
# names hidden below a file or directory of the other type.  Each name
# is listed once, whiteouts never, d_type is the type the union shows,
# d_ino == st_ino (copied-up, renamed and new names included), one
# entry per getdents64 call lists the same; the same after a remount;
# the ODF holds exactly the whiteouts needed and is clean.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkbranch tmpfs none $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

# big/: f000-f199 in b1, f100-f299 in b2, f250-f349 in b0.
# mixed/: b0 file0; b1 file1, dir1/inner1, link1 -> file1, fifo1;
#         b2 file2, dir2/, dir1/inner2.
# typed/: b1 t_file (file), t_dir/ (dir); b2 t_file/ (dir), t_dir (file).
mkdir -p $b0/big $b1/big $b2/big $b0/mixed $b1/mixed/dir1 $b2/mixed/dir1 \
	$b2/mixed/dir2 $b1/typed/t_dir $b2/typed/t_file
for i in $(seq 0 199); do printf -v n 'f%03d' $i; echo b1 >$b1/big/$n; done
for i in $(seq 100 299); do printf -v n 'f%03d' $i; echo b2 >$b2/big/$n; done
for i in $(seq 250 349); do printf -v n 'f%03d' $i; echo b0 >$b0/big/$n; done
echo f004 >$b1/big/f004
echo file0 >$b0/mixed/file0
echo file1 >$b1/mixed/file1
echo inner1 >$b1/mixed/dir1/inner1
ln -s file1 $b1/mixed/link1
mkfifo $b1/mixed/fifo1
echo file2 >$b2/mixed/file2
echo inner2 >$b2/mixed/dir1/inner2
echo t_file >$b1/typed/t_file
echo t_dir >$b2/typed/t_dir
echo shadow >$b1/shadow
snap lower1 $b1
snap lower2 $b2

union_mount $u "$opts"

# names FROM TO [EXCEPT_REGEX]: fNNN names, sorted, one line.
names() {
	local i n out=
	for i in $(seq "$1" "$2"); do
		printf -v n 'f%03d' $i
		[ -n "${3:-}" ] && [[ $n =~ $3 ]] && continue
		out="$out $n"
	done
	echo "${out# }"
}
expect_eq "big before" "$(names 0 349)" "$(union_ls $u/big)"
expect_eq "typed before: the top branch's types" "t_dir t_file" "$(union_ls $u/typed)"
expect_eq "typed/t_file is b1's file" "reg" \
	"$("$SRC/tests/vm/prog/dirlist" $u/typed | awk '$4 == "t_file" { print $3 }')"

# big: remove every third name (from every branch), rename two lower
# names (one over another lower name), create fifty, make a directory.
rmlist='' wlist=''
for i in $(seq 0 3 349); do
	printf -v n 'f%03d' $i
	rmlist="$rmlist $u/big/$n"
	[ $i -lt 300 ] && wlist="$wlist
W /big/$n"
done
rm $rmlist || fail "unlink every third name of big"
expect_errno "rename f001" OK "os.rename('$u/big/f001', '$u/big/r001')"
expect_errno "rename f004 over f005" OK "os.rename('$u/big/f004', '$u/big/f005')"
for i in $(seq 0 49); do printf -v n 'g%03d' $i; echo new >$u/big/$n || fail "create big/$n"; done
mkdir $u/big/newdir || fail "mkdir big/newdir"
want=$(for i in $(seq 0 349); do
		printf -v n 'f%03d' $i
		[ $((i % 3)) = 0 ] || [ $i = 1 ] || [ $i = 4 ] || echo $n
	done
	for i in $(seq 0 49); do printf 'g%03d\n' $i; done
	echo newdir; echo r001)
want=$(echo "$want" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
expect_eq "big after changes" "$want" "$(union_ls $u/big)"
expect_eq "f005 is f004's" f004 "$(cat $u/big/f005)"

# mixed: type changes, a new symlink, a copy-up, a merged directory
# renamed and changed.
rm $u/mixed/file1 && mkdir $u/mixed/file1 || fail "file1 -> directory"
rmdir $u/mixed/dir2 && echo now-a-file >$u/mixed/dir2 || fail "dir2 -> file"
rm $u/mixed/link1 && ln -s file2 $u/mixed/link1 || fail "new link1"
rm $u/mixed/fifo1 || fail "unlink fifo1"
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$u/mixed/fifo1')" || fail "fifo1 -> socket"
echo more >>$u/mixed/file2 || fail "copy-up of file2"
expect_errno "rename of the merged dir1" OK "os.rename('$u/mixed/dir1', '$u/mixed/dir1r')"
rm $u/mixed/dir1r/inner2 || fail "unlink dir1r/inner2"
chmod 0600 $u/shadow || fail "copy-up of shadow"

# typed: removing the top name hides the other type below it as well.
rm $u/typed/t_file || fail "unlink typed/t_file"
rmdir $u/typed/t_dir || fail "rmdir typed/t_dir"

# check: every listing and the types the union shows.
check() {
	expect_eq "$1: root" "big mixed shadow typed" "$(union_ls $u)"
	expect_eq "$1: big" "$want" "$(union_ls $u/big)"
	expect_eq "$1: mixed" "dir1r dir2 fifo1 file0 file1 file2 link1" "$(union_ls $u/mixed)"
	expect_eq "$1: mixed d_types" "dir1r dir|dir2 reg|fifo1 sock|file0 reg|file1 dir|file2 reg|link1 lnk" \
		"$("$SRC/tests/vm/prog/dirlist" $u/mixed | awk '$1 != "end" && $4 !~ /^\.\.?$/ { print $4, $3 }' |
			LC_ALL=C sort | tr '\n' '|' | sed 's/|$//')"
	expect_eq "$1: mixed/dir1r" "inner1" "$(union_ls $u/mixed/dir1r)"
	expect_eq "$1: mixed/file1" "" "$(union_ls $u/mixed/file1)"
	expect_eq "$1: typed" "" "$(union_ls $u/typed)"
	expect_eq "$1: big/newdir" "" "$(union_ls $u/big/newdir)"
	expect_eq "$1: link1" "file2 more" "$(cat $u/mixed/link1 | tr '\n' ' ' | sed 's/ $//')"
}
check "after changes"
snap view $u
union_umount $u

snap after1 $b1
snap after2 $b2
expect_same "lower branch $b1" "$lower1" "$after1"
expect_same "lower branch $b2" "$lower2" "$after2"
for b in $b0 $b1 $b2; do assert_branch_clean $b; done
odf_check
# Whiteouts in big/ for exactly the removed names that exist below;
# none where an object was made again over a whiteout.
odf_ns
ns_all=$NS
NS=$(grep ' /big/' <<<"$ns_all")
expect_ns "markers in big" <<EOF
$(printf '%s\n' "$wlist" | grep .)
W /big/f001
W /big/f004
EOF
NS=$ns_all
ns_has "W /typed/t_file" "W /typed/t_dir" "W /mixed/dir1" "R /mixed/dir1r 2:/mixed/dir1 3:/mixed/dir1" \
	"W /mixed/dir1r/inner2" "O /mixed/file1"
ns_lacks "W /mixed/link1" "W /mixed/dir2" "W /mixed/fifo1" "W /mixed/file2"
grep -q '^BAD' <<<"$NS" && fail "ODF /ns: $(grep '^BAD' <<<"$NS" | head -n 2)"

union_mount $u "$opts"
check "after remount"
snap view2 $u
expect_same "union after remount" "$view" "$view2"
union_umount $u
odf_check
