#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the guest side (run by tests/bench/run.sh through the VM
# harness, with the module loaded and scratch disks attached): readdir of
# merged directories on unionfs, on overlayfs over the same branch
# directories, and of one plain ext4 directory ("bare") with as many
# entries, all in this one VM run.  Writes one raw line per measurement
# to $OUT/bench-raw.txt (tests/bench/report.py turns them into tables)
# and shows progress on stdout.  Measures and reports only: nothing here
# judges a number.
#
# Settings (environment; run.sh passes them on):
#   BENCH_SIZES       entries per merged directory (default "1000 10000 100000")
#   BENCH_LAYOUTS     branch counts (default "2 3")
#   BENCH_REPS        repeated (warm) listings per directory (default 5),
#                     times min(10, 100000 / entries) below 100000 entries
#   BENCH_COLD_REPS   first (cold) listings per directory (default 5), in
#                     an order rotated each time (bare, overlayfs, union)
#   BENCH_SEEKS       seek+read pairs per directory (default 1000; fresh-open
#                     seeks: times 10000 / entries above 10000, at least 100)
#   BENCH_SEEK_BUF    getdents64 buffer of the lseek+getdents64 measure
#                     (default 1024 bytes: a few entries)
#   BENCH_MEM_REPS    kernel memory measurements (default 3)
#   BENCH_PARTS       what to measure (default "readdir walk work"):
#                     readdir = listings, seeks and memory of merged
#                     directories; walk = find over a tree of
#                     BENCH_WALK_FILES files; work = everyday workloads
#                     (a source tree, stat by name, copy-up, churn,
#                     unlink; see "Workloads" below)
#   BENCH_WALK_FILES  files of the walk tree (default 100000)
#   BENCH_WALK_REPS   walks per filesystem, cold and warm (default 5)
#   BENCH_WALK_FS     what the walk runs on (default "bare ovl union";
#                     add union-none for the union with udba=none: the
#                     cost of the direct-edit check, issue 11)
#   BENCH_WORK_REPS   repeats of each workload per filesystem (default 5)
#   BENCH_BIG_MB      size of the file copied up (default 1024)
#   BENCH_SPARSE_GB   size of the sparse file copied up, 1 MiB of data
#                     in its middle (default 64)
#   BENCH_CHURN       files created then unlinked (default 10000)
#   BENCH_UNLINK      lower files unlinked (default 5000)
#   BENCH_UNION_COLD  how the union loses its readdir state before a
#                     first listing: "rmstate" (default: unmount, delete
#                     /readdir/* on the ODF mounted as ext4, remount) or
#                     "mkodf" (a freshly made ODF each time)
set -u
. "$SRC/tests/vm/lib.sh"

RDB=$SRC/tests/bench/rdbench
[ -x "$RDB" ] || fail "$RDB not built (make bench builds it)"

sizes=$(echo "${BENCH_SIZES:-1000 10000 100000}" | tr ',' ' ')
layouts=$(echo "${BENCH_LAYOUTS:-2 3}" | tr ',' ' ')
reps=${BENCH_REPS:-5}
cold_reps=${BENCH_COLD_REPS:-5}
seeks=${BENCH_SEEKS:-1000}
seek_buf=${BENCH_SEEK_BUF:-1024}
mem_reps=${BENCH_MEM_REPS:-3}
union_cold=${BENCH_UNION_COLD:-rmstate}
parts=$(echo "${BENCH_PARTS:-readdir walk work}" | tr ',' ' ')
work_reps=${BENCH_WORK_REPS:-5}
big_mb=${BENCH_BIG_MB:-1024}
sparse_gb=${BENCH_SPARSE_GB:-64}
churn=${BENCH_CHURN:-10000}
unlink_n=${BENCH_UNLINK:-5000}
walk_files=${BENCH_WALK_FILES:-100000}
walk_reps=${BENCH_WALK_REPS:-5}
walk_fs=$(echo "${BENCH_WALK_FS:-bare ovl union}" | tr ',' ' ')
for fs in $walk_fs; do
	case $fs in
	bare | ovl | union | union-none) ;;
	*) fail "BENCH_WALK_FS: '$fs' is not bare, ovl, union or union-none" ;;
	esac
done
part() { [[ " $parts " == *" $1 "* ]]; }
raw=$OUT/bench-raw.txt
: >"$raw"

t_start=$(date +%s)
elapsed() { echo "$(($(date +%s) - t_start))s"; }
say() { echo "[$(elapsed)] $*"; }

# record KIND FS LAYOUT SIZE RDBENCH-ARGS...: runs rdbench, keeps its
# line in the raw file.
record() {
	local kind=$1 fs=$2 layout=$3 size=$4 out
	shift 4
	out=$("$RDB" "$@") || fail "rdbench $* failed"
	echo "$kind $fs $layout $size $out" >>"$raw"
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# ---- Disks: the ODF, three branch filesystems, the bare filesystem ----
# Branches and the bare directory are ext4 on virtio disks of their own,
# made on the host with what the walk and work parts measure
# (tests/bench/mkimages.sh): upper /data/walk, lower 1 /data/walk,
# /data/src, big, sparse, churn and del, bare the same at its root.
# Mounted with noinit_itable so no background inode-table zeroing runs
# during the measurements.
up=/mnt/up l1=/mnt/l1 l2=/mnt/l2 bare=/mnt/bare
U=/mnt/union O=/mnt/ovl odfraw=/mnt/odfraw
i=1
for m in $up $l1 $l2 $bare; do
	dev=$(nth_disk $i)
	mkdir -p $m
	mount -t ext4 -o noinit_itable "$dev" $m ||
		fail "cannot mount $dev (run.sh gives the branch images: tests/bench/mkimages.sh)"
	i=$((i + 1))
done
mkdir -p $U $O $odfraw
[ -d $up/data ] && [ -d $up/work ] && [ -d $l1/data ] && [ -d $l2/data ] ||
	fail "the branch images have no /data (tests/bench/mkimages.sh)"
# Every inode table zeroed now (-z): otherwise ext4's lazy init writes
# hundreds of MB to the ODF in the background while the union, and only
# the union, is mounted.
bench_mkodf() { "$MKODF" -q -f -z "$ODF_DEV" >/dev/null || fail "mkodf -z $ODF_DEV failed"; }
bench_mkodf

union_opts="odf=$ODF_DEV,dirs=$up/data=rw:$l1/data=ro:$l2/data=ro"
ovl_opts="lowerdir=$l1/data:$l2/data,upperdir=$up/data,workdir=$up/work"

union_up() { union_mount $U "$union_opts"; }
union_down() { umount $U || fail "umount $U"; }
ovl_up() { mount -t overlay -o "$ovl_opts" overlay $O || fail "mount overlay -o $ovl_opts"; }
ovl_down() { umount $O || fail "umount $O"; }

# The union's readdir state goes (see BENCH_UNION_COLD); the union is
# unmounted meanwhile.
union_forget() {
	case $union_cold in
	mkodf) bench_mkodf ;;
	rmstate)
		mount -t ext4 "$ODF_DEV" $odfraw || fail "cannot mount the ODF as ext4"
		if [ -d $odfraw/readdir ]; then
			find $odfraw/readdir -mindepth 1 -delete || fail "cannot empty /readdir on the ODF"
		fi
		umount $odfraw || fail "cannot unmount the ODF"
		;;
	*) fail "BENCH_UNION_COLD=$union_cold: rmstate or mkodf" ;;
	esac
}

# ---- Directories ----
# Merged directory of N entries (names entry-0000000 ...):
#   3 branches: upper 20% [0, .2N), lower1 50% [.2N, .7N), lower2 30%
#     [.7N, N); duplicates: lower1 also holds [.15N, .2N) (hidden by the
#     upper), lower2 also [.65N, .7N) (hidden by lower1): 10% in all.
#   2 branches: upper 30% [0, .3N), lower1 70% [.3N, N); duplicates:
#     lower1 also holds [.2N, .3N) (10%).
# Bare: one ext4 directory with entries [0, N).
dname() { echo "d$1-$2"; }	# LAYOUT SIZE
# Three jobs at a time (2 vCPUs): one per filesystem group.
make_dirs() {
	local n=$1 d3 d2 pids= p rc=0
	d3=$(dname 3 "$n") d2=$(dname 2 "$n")
	mkdir $up/data/$d3 $l1/data/$d3 $l2/data/$d3 $up/data/$d2 $l1/data/$d2 \
		$bare/d-"$n" || fail "mkdir for $n entries"
	"$RDB" create $l1/data/$d3 $((n * 15 / 100)):$((n * 7 / 10)) &&
		"$RDB" create $l1/data/$d2 $((n / 5)):"$n" &
	pids="$pids $!"
	"$RDB" create $up/data/$d3 0:$((n / 5)) &&
		"$RDB" create $up/data/$d2 0:$((n * 3 / 10)) &&
		"$RDB" create $l2/data/$d3 $((n * 65 / 100)):"$n" &
	pids="$pids $!"
	"$RDB" create $bare/d-"$n" 0:"$n" &
	pids="$pids $!"
	for p in $pids; do
		wait "$p" || rc=1
	done
	[ $rc = 0 ] || fail "cannot create the directories of $n entries"
}

say "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo) RAM"
echo "info kernel $(uname -r)" >>"$raw"
echo "info settings sizes=$(echo $sizes | tr ' ' ,) layouts=$(echo $layouts | tr ' ' ,)" \
	"reps=$reps cold_reps=$cold_reps seeks=$seeks seek_buf=$seek_buf mem_reps=$mem_reps" \
	"union_cold=$union_cold parts=$(echo $parts | tr ' ' ,) walk_files=$walk_files" \
	"walk_reps=$walk_reps walk_fs=$(echo $walk_fs | tr ' ' ,) work_reps=$work_reps big_mb=$big_mb sparse_gb=$sparse_gb" \
	"churn=$churn unlink=$unlink_n" >>"$raw"

# ---- Walk: find over a tree, every name lstat'ed (issue 11 item 4) ----
# A lower tree of walk_files files in directories of 100; a quarter of
# the directories also exist on the upper branch with 20 files of their
# own (merged).  bare = the union's view copied to one ext4 directory.
# Each repeat walks every filesystem once, in a rotated order: cold
# (unmounted and mounted again, caches dropped) and warm (right after).
# union = udba=reval (the default: each cached name checks its branches
# for direct edits), union-none = udba=none (no check).
walk_tree() {	# ROOT: find, lstat of every name; prints microseconds
	local t0 t1
	t0=$(date +%s%N)
	find "$1" -printf '%s\n' >/dev/null || fail "find $1"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))
}
# The walk tree is on the images (tests/bench/mkimages.sh).
have_walk_tree() {
	[ -d $l1/data/walk ] && [ -d $up/data/walk ] && [ -d $bare/walk ] ||
		fail "the walk tree is not on the branch images (tests/bench/mkimages.sh)"
}
# walkmem FS BEFORE AFTER: the Slab and SUnreclaim a cold walk grew
# (rdbench meminfo lines taken around it), as a walkmem line.
walkmem() {
	python3 - "$1" "$2" "$3" >>"$raw" <<'PYEND'
import sys
fs, b, a = sys.argv[1], sys.argv[2].split()[1:], sys.argv[3].split()[1:]
b = dict(x.split("=") for x in b)
a = dict(x.split("=") for x in a)
print("walkmem %s 0 0 run %s" % (fs, " ".join(
    "%s=%d" % (k, int(a[k]) - int(b[k])) for k in ("slab_kb", "sunreclaim_kb"))))
PYEND
}
if part walk; then
	have_walk_tree
	union_up
	ovl_up
	want=$(find $bare/walk | wc -l)
	for m in $U/walk $O/walk; do
		expect_eq "names in $m" "$want" "$(find $m | wc -l)"
	done
	ovl_down
	union_down
	walk_up() {
		case $1 in
		bare) mount -o remount $bare 2>/dev/null; root=$bare/walk ;;
		ovl) ovl_up; root=$O/walk ;;
		union) union_up; root=$U/walk ;;
		union-none) union_mount $U "$union_opts,udba=none"; root=$U/walk ;;
		esac
	}
	walk_down() {
		case $1 in
		ovl) ovl_down ;;
		union | union-none) union_down ;;
		esac
	}
	order=$walk_fs
	for r in $(seq "$walk_reps"); do
		say "walk: repeat $r of $walk_reps ($order)"
		for fs in $order; do
			walk_up $fs
			drop_caches
			before=$("$RDB" meminfo)
			us=$(walk_tree $root)
			after=$("$RDB" meminfo)
			echo "walkcold $fs 0 $walk_files find us=$us" >>"$raw"
			walkmem $fs "$before" "$after"
			us=$(walk_tree $root)
			echo "walkwarm $fs 0 $walk_files find us=$us" >>"$raw"
			walk_down $fs
		done
		order="${order#* } ${order%% *}"
	done
fi

# ---- Workloads (issue 15): what people run on unions ----
# A part of Debian's linux-source-6.1 tree (run.sh unpacks the
# directories of BENCH_TREE_DIRS into build/bench/srctree.tar,
# mkimages.sh puts it on the images) on the lower branch and on the bare filesystem; the union and overlayfs show
# it from the lower branch.  Every repeat runs each workload on each
# filesystem, in a rotated order, from a fresh mount:
#   statcold/statwarm  find -printf %s of the tree (lstat of every name),
#                      caches dropped / right after
#   du                 du -s of the tree, caches dropped
#   lsR                ls -lR of the tree, caches dropped
#   tar                tar -cf - . | wc -c of the tree (reads every
#                      file), caches dropped
#   gscold/gswarm      lstat by name of the walk tree's lower files in
#                      a list (git status), caches dropped / right after
#   copyup             open for append of a BENCH_BIG_MB file of the
#                      lower branch (union, ovl: the copy-up with its
#                      fsync); bare: cp of the file and sync of the copy
#   sparse             the same for a BENCH_SPARSE_GB sparse file with
#                      1 MiB of data
#   churn              BENCH_CHURN files created then unlinked in a
#                      lower directory
#   unlink             BENCH_UNLINK lower files unlinked (whiteouts)
# For the union, each line also carries odf_kb: what the ODF's disk
# wrote during the workload (/sys/block/DEV/stat, after a sync).  The
# changing workloads start from a fresh ODF and upper directory (not
# timed).
odf_sectors() { awk '{ print $7 }' "/sys/block/$(basename "$ODF_DEV")/stat"; }
# timed FS KIND CMD...: runs CMD, records its time (and the ODF's writes
# for the union).
timed() {
	local fs=$1 kind=$2 t0 t1 s0 s1 odf=
	shift 2
	sync
	s0=$(odf_sectors)
	t0=$(date +%s%N)
	"$@" >/dev/null || fail "$kind on $fs: $*"
	t1=$(date +%s%N)
	sync
	s1=$(odf_sectors)
	[ "$fs" = union ] && odf=" odf_kb=$(((s1 - s0) / 2))"
	echo "work$kind $fs 0 0 run us=$(((t1 - t0) / 1000))$odf" >>"$raw"
}
if part work; then
	have_walk_tree
	for r in $l1/data $bare; do
		[ -d $r/src ] && [ -f $r/big ] && [ -f $r/sparse ] && [ -d $r/churn ] &&
			[ -e $r/del/entry-0000000 ] ||
			fail "the workload files are not on the images in $r (tests/bench/mkimages.sh)"
	done
	srcfiles=$(find $bare/src -type f | wc -l)
	(cd $l1/data && find walk -type f -name 'f*') >/tmp/gs.lst
	echo "info work srcfiles=$srcfiles gsfiles=$(wc -l </tmp/gs.lst)" >>"$raw"
	work_up() {
		case $1 in
		bare) root=$bare ;;
		ovl) ovl_up; root=$O ;;
		union) union_up; root=$U ;;
		esac
	}
	work_down() {
		case $1 in
		ovl) ovl_down ;;
		union) union_down ;;
		esac
	}
	# Back to the state before the changing workloads (not timed): the
	# union and overlayfs share the upper directory.
	work_reset() {
		rm -rf $up/data/big $up/data/sparse $up/data/churn $up/data/del \
			$bare/big.copy $bare/sparse.copy
		find $up/work -mindepth 1 -delete 2>/dev/null
		[ -e $bare/del/entry-0000000 ] || "$RDB" create $bare/del 0:"$unlink_n"
		[ "${1:-union}" = union ] && bench_mkodf
	}
	copy_bare() { cp --sparse=always "$1" "$1.copy" && sync "$1.copy"; }
	stat_tree() { find "$1" -printf '%s\n'; }
	du_tree() { du -s "$1"; }
	ls_tree() { ls -lR "$1"; }
	tar_tree() { (cd "$1" && tar -cf - . | wc -c); }
	order="bare ovl union"
	for r in $(seq "$work_reps"); do
		say "work: repeat $r of $work_reps ($order)"
		for fs in $order; do
			work_reset $fs
			work_up $fs
			drop_caches
			timed $fs statcold stat_tree $root/src
			timed $fs statwarm stat_tree $root/src
			drop_caches
			timed $fs du du_tree $root/src
			drop_caches
			timed $fs lsR ls_tree $root/src
			drop_caches
			timed $fs tar tar_tree $root/src
			drop_caches
			(cd $root && timed $fs gscold "$RDB" statlist /tmp/gs.lst) || exit 1
			(cd $root && timed $fs gswarm "$RDB" statlist /tmp/gs.lst) || exit 1
			drop_caches
			if [ $fs = bare ]; then
				timed $fs copyup copy_bare $root/big
				timed $fs sparse copy_bare $root/sparse
			else
				timed $fs copyup sh -c ": >>$root/big"
				timed $fs sparse sh -c ": >>$root/sparse"
			fi
			timed $fs churn "$RDB" churn $root/churn "$churn"
			timed $fs unlink "$RDB" unlink $root/del 0:"$unlink_n"
			work_down $fs
		done
		order="${order#* } ${order%% *}"
	done
	work_reset
fi

part readdir || { echo "info guest_seconds $(($(date +%s) - t_start))" >>"$raw"; say "done"; exit 0; }
for n in $sizes; do
	say "creating the directories of $n entries"
	make_dirs "$n"
done
sync

# Sanity: each merged directory lists N names plus . and .. on both.
union_up
ovl_up
for n in $sizes; do
	for l in $layouts; do
		d=$(dname "$l" "$n")
		for m in $U $O; do
			c=$("$RDB" list $m/$d | sed 's/.*entries=\([0-9]*\).*/\1/')
			expect_eq "entries of $m/$d" $((n + 2)) "$c"
		done
	done
done
ovl_down
union_down

# ---- Listings ----
for n in $sizes; do
	for l in $layouts; do
		d=$(dname "$l" "$n")
		say "listing: $l branches, $n entries"
		order="bare ovl union"
		for r in $(seq "$cold_reps"); do
			for fs in $order; do
				case $fs in
				bare)
					drop_caches
					record cold bare "$l" "$n" list $bare/d-"$n"
					;;
				ovl)
					ovl_up
					drop_caches
					record cold ovl "$l" "$n" list $O/$d
					ovl_down
					;;
				union)
					union_forget
					union_up
					drop_caches
					record cold union "$l" "$n" list $U/$d
					union_down
					# again from a fresh mount and cold caches,
					# with the state the listing above left
					union_up
					drop_caches
					record cold-state union "$l" "$n" list $U/$d
					union_down
					;;
				esac
			done
			order="${order#* } ${order%% *}"
		done

		# each repeated listing follows one unmeasured listing; small
		# directories are listed more often (the host is shared: a
		# median of more listings is steadier)
		wreps=$((100000 / n))
		[ $wreps -gt 10 ] && wreps=10
		[ $wreps -lt 1 ] && wreps=1
		wreps=$((reps * wreps))
		# a fresh-open seek costs overlayfs a listing of the directory
		# (0.4 s at 100k): fewer of them above 10k entries, at least 100
		oseeks=$seeks
		if [ "$n" -gt 10000 ]; then
			oseeks=$((seeks * 10000 / n))
			[ $oseeks -lt 100 ] && oseeks=100
			[ $oseeks -gt "$seeks" ] && oseeks=$seeks
		fi
		"$RDB" list $bare/d-"$n" >/dev/null
		record warm bare "$l" "$n" list -r "$wreps" $bare/d-"$n"
		record seek bare "$l" "$n" seek -n "$seeks" -b "$seek_buf" $bare/d-"$n"
		record seekl bare "$l" "$n" seek -n "$seeks" -l $bare/d-"$n"
		record seeko bare "$l" "$n" seek -n "$oseeks" -o -b "$seek_buf" $bare/d-"$n"
		ovl_up
		"$RDB" list $O/$d >/dev/null
		record warm ovl "$l" "$n" list -r "$wreps" $O/$d
		record seek ovl "$l" "$n" seek -n "$seeks" -b "$seek_buf" $O/$d
		record seekl ovl "$l" "$n" seek -n "$seeks" -l $O/$d
		record seeko ovl "$l" "$n" seek -n "$oseeks" -o -b "$seek_buf" $O/$d
		ovl_down
		union_up
		"$RDB" list $U/$d >/dev/null
		record warm union "$l" "$n" list -r "$wreps" $U/$d
		record seek union "$l" "$n" seek -n "$seeks" -b "$seek_buf" $U/$d
		record seekl union "$l" "$n" seek -n "$seeks" -l $U/$d
		record seeko union "$l" "$n" seek -n "$oseeks" -o -b "$seek_buf" $U/$d
		union_down
	done
done

# ---- Kernel memory: the largest merged directory, open and listed ----
n=$(echo $sizes | tr ' ' '\n' | sort -n | tail -n 1)
l=$(echo $layouts | tr ' ' '\n' | sort -n | tail -n 1)
d=$(dname "$l" "$n")
say "kernel memory: $l branches, $n entries"
for r in $(seq "$mem_reps"); do
	"$RDB" list $bare/d-"$n" >/dev/null
	record mem bare "$l" "$n" mem $bare/d-"$n"
	ovl_up
	"$RDB" list $O/$d >/dev/null
	record mem ovl "$l" "$n" mem $O/$d
	ovl_down
	union_up
	"$RDB" list $U/$d >/dev/null
	record mem union "$l" "$n" mem $U/$d
	union_down
done

echo "info guest_seconds $(($(date +%s) - t_start))" >>"$raw"
say "done"
