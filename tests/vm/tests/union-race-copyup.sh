#!/bin/bash
# Copy-up racing unlink and rename of the same name (issue 10, item 1):
# a big lower file opened for append in the background (its copy-up takes
# a while) while another process removes or renames the name.  Whatever
# wins, a removed name never comes back: after both finish the name is
# gone from the union and from the upper branch; a renamed file is at its
# new name only, whole.  And a listing of the directory is not blocked for
# the whole data copy (the parent's readdir state is not held across it).
# timeout: 600
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkodf_dev "$ODF_DEV"
mkdir -p $b1/d
rounds=6
for i in $(seq 1 $rounds); do
	# Data, not holes: the copy must take time.
	head -c $((48 << 20)) /dev/urandom >$b1/d/rm$i
	cp $b1/d/rm$i $b1/d/mv$i
done
sum=$(md5sum <$b1/d/mv1 | cut -d' ' -f1)
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

bad=0
for i in $(seq 1 $rounds); do
	d=$((i * 50))	# ms between the open and the removal
	( exec 3>>$u/d/rm$i; echo x >&3 ) 2>/dev/null & p=$!
	sleep "0.$(printf %03d $d)"
	rm -f $u/d/rm$i
	wait $p
	if [ -e $u/d/rm$i ] || [ -e $b0/d/rm$i ]; then
		note "round $i: rm$i came back (union: $(ls $u/d/rm$i 2>&1), upper: $(ls $b0/d/rm$i 2>&1))"
		bad=$((bad + 1))
	fi
done
[ $bad -eq 0 ] || fail "$bad of $rounds removed files came back after a racing copy-up"

for i in $(seq 1 $rounds); do
	d=$((i * 50))
	( exec 3>>$u/d/mv$i ) 2>/dev/null & p=$!
	sleep "0.$(printf %03d $d)"
	mv $u/d/mv$i $u/d/moved$i || fail "round $i: mv failed"
	wait $p
	[ -e $u/d/mv$i ] && fail "round $i: the old name mv$i is back"
	[ -e $b0/d/mv$i ] && fail "round $i: the old name mv$i is in the upper branch"
	expect_eq "round $i: moved content" "$(md5sum <$b1/d/mv$i | cut -d' ' -f1)" \
		"$(md5sum <$u/d/moved$i | cut -d' ' -f1)"
done

# A listing while a big copy-up runs in the same directory does not wait
# for the copy.  The copy is held mid-data by freezing the upper branch
# (it waits for the thaw before its next chunk): the listing must still
# complete meanwhile.
head -c $((192 << 20)) /dev/urandom >$b1/d/big
( exec 3>>$u/d/big; echo y >&3 ) & p=$!
sleep 0.5
fsfreeze -f $b0 || fail "fsfreeze -f $b0"
if kill -0 $p 2>/dev/null; then
	timeout 30 ls $u/d >/dev/null || {
		fsfreeze -u $b0
		fail "the listing waited for the copy-up in the same directory"
	}
	note "listed while the copy-up waited on the frozen upper"
else
	note "the copy-up finished within 0.5 s: the listing check did not run"
fi
fsfreeze -u $b0 || fail "fsfreeze -u $b0"
wait $p || fail "append to big failed"

expect_eq "mv1 content" "$sum" "$(md5sum <$u/d/moved1 | cut -d' ' -f1)"
union_umount $u
odf_check
# What stays: the moved copies on the upper branch, the big file.
for i in $(seq 1 $rounds); do
	[ -e $b0/d/rm$i ] && fail "upper branch has rm$i after remount check"
	[ -f $b0/d/moved$i ] || fail "upper branch lacks moved$i"
done
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
for i in $(seq 1 $rounds); do
	[ -e $u/d/rm$i ] && fail "rm$i is back after remount"
	[ -e $u/d/mv$i ] && fail "mv$i is back after remount"
done
union_umount $u
exit 0
