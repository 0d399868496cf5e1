#!/bin/bash
# timeout: 400
# Branch changes while processes work through the union (issue 11):
# remount add= and del= of a lower branch, round after round, while
# workers walk, list, read, create, rename and unlink in it and hold a
# working directory inside.  No oops, no lockdep report, no kernel
# warning (the harness checks the log), no worker error other than a
# name of the removed branch going away: ENOENT, or ESTALE for a file
# of it opened while the remount removes it (unionfs(5)); afterwards the
# view is what the branches and the ODF say, and odfck is clean.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
rounds=${REMOUNT_ROUNDS:-15}
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch ext4 "$(nth_disk 3)" $b2
mkodf_dev "$ODF_DEV"
for d in a b c; do
	mkdir -p $b1/$d/sub $b2/$d/sub $b2/only2/$d
	for i in $(seq 20); do
		echo "1$d$i" >$b1/$d/f$i
		echo "2$d$i" >$b2/$d/g$i
		echo "2$d$i" >$b2/only2/$d/h$i
	done
done
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"

stop=$TMP/stop
worker() {
	local w=$1 n=0
	cd $u/$w || exit 1
	while [ ! -e $stop ]; do
		n=$((n + 1))
		ls -lR $u >/dev/null 2>>$TMP/err$w
		cat $u/*/f* $u/*/g* >/dev/null 2>>$TMP/err$w
		echo "$n" >$u/$w/new$n || echo "create $w/new$n failed" >>$TMP/hard$w
		mv $u/$w/new$n $u/$w/moved$n || echo "rename $w/new$n failed" >>$TMP/hard$w
		ls . sub >/dev/null 2>>$TMP/err$w
		rm $u/$w/moved$n || echo "unlink $w/moved$n failed" >>$TMP/hard$w
		find $u -name 'h1*' >/dev/null 2>>$TMP/err$w
	done
}
for w in a b c; do worker $w & done
for r in $(seq $rounds); do
	mount -o remount,add=$b2=ro $u || fail "round $r: remount add=: $(dmesg | grep unionfs: | tail -n 1)"
	sleep 0.5
	# del= may meet a worker's open file of b2 (cat): EBUSY, then retry.
	for t in $(seq 50); do
		mount -o remount,del=$b2 $u 2>/dev/null && break
		sleep 0.1
	done
	[ "$t" = 50 ] && fail "round $r: del= still refused after 50 tries: $(dmesg | grep unionfs: | tail -n 1)"
	sleep 0.3
done
touch $stop
wait
cat $TMP/hard* 2>/dev/null | head -n 5 | grep . && fail "workers' own files failed (above)"
# Names only the removed branch has: g* and only2/.
bad=$(cat $TMP/err* 2>/dev/null | grep -v 'No such file or directory' |
	grep -v -E "($u/[abc]/g[0-9]+|$u/only2[^:]*): Stale file handle" | head -n 5)
[ -z "$bad" ] || fail "worker errors other than the removed branch's names going away: $bad"
note "errors of names of the removed branch going away: $(cat $TMP/err* 2>/dev/null | grep -c 'No such file') ENOENT, $(cat $TMP/err* 2>/dev/null | grep -c 'Stale file') ESTALE"

expect_eq "dirs= at the end" "$b0=rw:$b1=ro" \
	"$(awk -v m=$u '$2 == m { print $4 }' /proc/mounts | tr ',' '\n' | sed -n 's/^dirs=//p')"
[ -e $u/only2 ] && fail "only2/ of the removed branch still shown"
expect_eq "a/f1 at the end" 1a1 "$(cat $u/a/f1)"
expect_eq "names of a/ at the end" "$(ls $b1/a | sort | paste -sd' ')" "$(ls $u/a | sort | paste -sd' ')"
union_umount $u
odf_check
