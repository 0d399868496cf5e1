#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, the host side: one VM run of tests/bench/guest.sh through
# the VM harness (tests/vm/run.sh), then the tables of
# tests/bench/report.py on stdout and in build/bench/results.md.  The raw
# measurements stay in build/bench/raw.txt, the VM's logs in
# build/bench/vm/.
#
# usage: run.sh --kver KVER
# Settings are taken from the environment and passed to the guest:
# BENCH_SIZES, BENCH_LAYOUTS, BENCH_REPS, BENCH_COLD_REPS, BENCH_SEEKS,
# BENCH_SEEK_BUF, BENCH_MEM_REPS, BENCH_UNION_COLD, BENCH_PARTS,
# BENCH_WALK_FILES, BENCH_WALK_REPS, BENCH_WALK_FS, BENCH_WORK_REPS, BENCH_BIG_MB,
# BENCH_SPARSE_GB, BENCH_CHURN, BENCH_UNLINK (see guest.sh), and here:
# BENCH_TREE_DIRS   the directories of linux-source-6.1 the work part's
#                   source tree holds (default "include fs net sound
#                   kernel lib mm security crypto block ipc init": about
#                   17,000 files), unpacked once into build/bench/srctree.tar
# The plot of listing and seek costs goes to build/bench/listing.png.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=
while [ $# -gt 0 ]; do
	case $1 in
	--kver) kver=$2; shift ;;
	*) echo "usage: run.sh --kver KVER" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$kver" ] || { echo "run.sh: --kver is required" >&2; exit 2; }

out=$top/build/bench
mkdir -p "$out"
rm -f "$out/raw.txt" "$out/results.md"

env=
for v in BENCH_SIZES BENCH_LAYOUTS BENCH_REPS BENCH_COLD_REPS BENCH_SEEKS \
	BENCH_SEEK_BUF BENCH_MEM_REPS BENCH_UNION_COLD BENCH_PARTS \
	BENCH_WALK_FILES BENCH_WALK_REPS BENCH_WALK_FS BENCH_WORK_REPS BENCH_BIG_MB \
	BENCH_SPARSE_GB BENCH_CHURN BENCH_UNLINK; do
	val=${!v:-}
	[ -n "$val" ] || continue
	if ! [[ $val =~ ^[-A-Za-z0-9,\ ]+$ ]]; then
		echo "run.sh: $v='$val': letters, digits, hyphens, commas and spaces only" >&2
		exit 2
	fi
	env="$env $v='$val'"
done

# The work part's source tree: a part of Debian's kernel source, made
# once (the guest unpacks a plain tar, which is quick under TCG).
parts=${BENCH_PARTS:-readdir walk work}
if [[ " ${parts//,/ } " == *" work "* ]]; then
	xz=/usr/src/linux-source-6.1.tar.xz
	dirs=${BENCH_TREE_DIRS:-include fs net sound kernel lib mm security crypto block ipc init}
	[ -s "$xz" ] || { echo "bench: $xz missing (make bench installs linux-source-6.1)" >&2; exit 2; }
	stamp="$xz $(stat -c %Y "$xz") $dirs"
	if [ ! -s "$out/srctree.tar" ] || [ "$(cat "$out/srctree.stamp" 2>/dev/null)" != "$stamp" ]; then
		echo "bench: unpacking $dirs of $xz into $out/srctree.tar"
		rm -rf "$out/srctree.tmp" && mkdir -p "$out/srctree.tmp" || exit 1
		tdir=$(basename "$xz" .tar.xz)
		# shellcheck disable=SC2046
		tar -xJf "$xz" -C "$out/srctree.tmp" $(for d in $dirs; do echo "$tdir/$d"; done) &&
			tar -cf "$out/srctree.tar" -C "$out/srctree.tmp/$tdir" . ||
			{ echo "bench: cannot make $out/srctree.tar" >&2; exit 1; }
		rm -rf "$out/srctree.tmp"
		echo "$stamp" >"$out/srctree.stamp"
	fi
fi

t0=$(date +%s)
# The branch filesystems, made on the host (tests/bench/mkimages.sh):
# disk 1 is the ODF, disks 2-5 the upper, the two lowers and bare.
imgs=$("$top/tests/bench/mkimages.sh" "$out/img" "$parts" "${BENCH_WALK_FILES:-100000}" \
	"${BENCH_BIG_MB:-1024}" "${BENCH_SPARSE_GB:-64}" "${BENCH_UNLINK:-5000}" \
	"$out/srctree.tar") || { echo "bench: cannot make the branch images" >&2; exit 1; }
disks=() i=2
for f in $imgs; do
	disks+=(--disk "$i=$f")
	i=$((i + 1))
done

"$top/tests/vm/run.sh" --kver "$kver" --out "$out/vm" "${disks[@]}" \
	--cmd "$env bash $top/tests/bench/guest.sh"
rc=$?
secs=$(($(date +%s) - t0))

raw=$out/vm/boot1/bench-raw.txt
if [ ! -s "$raw" ]; then
	echo "bench: no measurements (see $out/vm/boot1/cmd.log and console.log)"
	exit 1
fi
cp "$raw" "$out/raw.txt"
rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
accel=$(cat "$out/vm/accel" 2>/dev/null || echo '?')
# Debian's python3 has python3-matplotlib (a python3 earlier in PATH,
# e.g. pyenv's, may not).
py=/usr/bin/python3
[ -x $py ] || py=python3
$py "$top/tests/bench/report.py" "$out/raw.txt" \
	--note "Module $rev; QEMU $accel, $(nproc) host CPUs; whole run ${secs} s." \
	--plot "$out/listing.png" >"$out/results.md" || exit 1
echo
cat "$out/results.md"
echo
echo "bench: tables in $out/results.md, raw numbers in $out/raw.txt, plot in $out/listing.png"
if [ "$rc" != 0 ]; then
	echo "bench: the VM run ended with status $rc: the numbers above may be incomplete"
fi
exit "$rc"
