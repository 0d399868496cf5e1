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
# BENCH_WALK_FILES, BENCH_WALK_REPS (see guest.sh).
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
	BENCH_WALK_FILES BENCH_WALK_REPS; do
	val=${!v:-}
	[ -n "$val" ] || continue
	if ! [[ $val =~ ^[A-Za-z0-9,\ ]+$ ]]; then
		echo "run.sh: $v='$val': letters, digits, commas and spaces only" >&2
		exit 2
	fi
	env="$env $v='$val'"
done

t0=$(date +%s)
"$top/tests/vm/run.sh" --kver "$kver" --out "$out/vm" \
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
python3 "$top/tests/bench/report.py" "$out/raw.txt" \
	--note "Module $rev; QEMU $accel, $(nproc) host CPUs; whole run ${secs} s." \
	>"$out/results.md" || exit 1
echo
cat "$out/results.md"
echo
echo "bench: tables in $out/results.md, raw numbers in $out/raw.txt"
if [ "$rc" != 0 ]; then
	echo "bench: the VM run ended with status $rc: the numbers above may be incomplete"
fi
exit "$rc"
