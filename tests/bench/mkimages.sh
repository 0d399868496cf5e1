#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the host side's disk images: the four branch filesystems
# (upper, lower 1, lower 2, bare) as ext4 images made with `mke2fs -d`
# from a staging directory, holding what the walk and the work parts
# measure (tests/bench/guest.sh says what each holds).  Under TCG,
# making these ~250,000 files inside the guest took about 220 s of every
# run; here it takes about 30 s, and the images are kept between runs
# (build/bench/img, remade when a setting they depend on or this script
# changes).  The readdir part's directories are still made in the guest
# (mke2fs -d adds names to a directory one at a time in a linear scan:
# a directory of 100,000 names would take many minutes).
#
# usage: mkimages.sh OUTDIR PARTS WALK_FILES BIG_MB SPARSE_GB UNLINK SRCTAR
# Prints the image paths, upper lower1 lower2 bare, on one line.
set -u
[ $# = 7 ] || { echo "usage: mkimages.sh OUTDIR PARTS WALK_FILES BIG_MB SPARSE_GB UNLINK SRCTAR" >&2; exit 2; }
out=$1 parts=" ${2//,/ } " walk_files=$3 big_mb=$4 sparse_gb=$5 unlink_n=$6 srctar=$7
here=$(cd "$(dirname "$0")" && pwd)
rdb=$here/rdbench
[ -x "$rdb" ] || { echo "mkimages.sh: $rdb not built" >&2; exit 2; }

walk=0 work=0
[[ $parts == *" walk "* || $parts == *" work "* ]] && walk=1
[[ $parts == *" work "* ]] && work=1
stamp="v1 walk=$walk work=$work files=$walk_files big=$big_mb sparse=$sparse_gb"
stamp="$stamp unlink=$unlink_n script=$(md5sum <"$0" | cut -c1-12)"
[ $work = 1 ] && stamp="$stamp src=$(stat -c '%s %Y' "$srctar")"
imgs="$out/up.img $out/l1.img $out/l2.img $out/bare.img"
if [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo $imgs
	exit 0
fi

echo "bench: making the branch images in $out" >&2
rm -rf "$out" && mkdir -p "$out" || exit 1
stage=$out/stage
mkdir -p "$stage/up/data" "$stage/up/work" "$stage/l1/data" "$stage/l2/data" \
	"$stage/bare" || exit 1

# The walk tree: walk_files files in directories of 100 on lower 1; a
# quarter of the directories also on the upper with 20 files of their
# own; bare holds the union's view of it.
if [ $walk = 1 ]; then
	python3 - "$stage/l1/data/walk" "$stage/up/data/walk" "$stage/bare/walk" \
		$((walk_files / 100)) <<'PYEND' || { echo "mkimages.sh: walk tree" >&2; exit 1; }
import os, sys
low, upp, bare, nd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for d in range(nd):
    name = "d%05d" % d
    trees = [(low, 100, "f"), (bare, 100, "f")]
    if d % 4 == 0:
        trees += [(upp, 20, "u"), (bare, 20, "u")]
    for root, n, p in trees:
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(n):
            open(os.path.join(root, name, "%s%03d" % (p, i)), "w").close()
PYEND
fi

# The work part: the source tree, a big file, a sparse file with 1 MiB
# of data in its middle, a directory for the churn and one of files to
# unlink, on lower 1 and on bare.  The data is not zeros: mke2fs -d
# leaves zero blocks out, which would make both files holes.
if [ $work = 1 ]; then
	for r in "$stage/l1/data" "$stage/bare"; do
		mkdir -p "$r/src" "$r/churn" "$r/del" &&
			tar -xf "$srctar" -C "$r/src" &&
			head -c $((big_mb * 1048576)) /dev/zero | tr '\0' 'b' >"$r/big" &&
			truncate -s "${sparse_gb}G" "$r/sparse" &&
			head -c 1048576 /dev/zero | tr '\0' 's' |
			dd of="$r/sparse" bs=1M count=1 conv=notrunc status=none \
				seek=$((sparse_gb * 512)) &&
			"$rdb" create "$r/del" 0:"$unlink_n" >/dev/null ||
			{ echo "mkimages.sh: cannot make the workload files in $r" >&2; exit 1; }
	done
fi

# One image per filesystem, made in parallel; e2fsck -D indexes the
# directories mke2fs -d left linear (as ext4 in the guest would have
# made them).  e2fsck exits 1 when it changed something.
pids=
for fs in up l1 l2 bare; do
	(mke2fs -q -F -t ext4 -d "$stage/$fs" "$out/$fs.img" 16G >/dev/null 2>&1 &&
		{ e2fsck -fyD "$out/$fs.img" >/dev/null 2>&1; [ $? -le 1 ]; } &&
		e2fsck -fn "$out/$fs.img" >/dev/null 2>&1) ||
		{ echo "mkimages.sh: cannot make $out/$fs.img" >&2; exit 1; } &
	pids="$pids $!"
done
rc=0
for p in $pids; do
	wait "$p" || rc=1
done
rm -rf "$stage"
[ $rc = 0 ] || exit 1
echo "$stamp" >"$out/stamp"
echo $imgs
