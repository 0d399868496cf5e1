#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-all-kernels: make check once per kernel, in order, each in a
# make of its own (the module is rebuilt for each), and one line per
# kernel, then the total "N passed, N failed[, N skipped]".
#
# usage: check-all-kernels.sh KVER...   "default" is Debian's default
#        kernel (make check without KVER); otherwise a series (6.12) or a
#        release (6.12.118+deb12-amd64)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logs=$top/build/check-all
mkdir -p "$logs"

pass=0 fail=0 skip=0 lines=()
for k in "$@"; do
	arg=$k
	[ "$k" = default ] && arg=
	log=$logs/${k//\//_}.log
	echo "=== make check KVER=$arg"
	# The make that runs this script exports its own KVER and KDIR (the
	# default kernel's): each kernel's make must choose them afresh, and
	# "KVER=" on the command line would pin an empty one.
	if [ -n "$arg" ]; then
		env -u KVER -u KDIR make --no-print-directory check KVER="$arg"
	else
		env -u KVER -u KDIR make --no-print-directory check
	fi 2>&1 | tee "$log"
	line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		line="0 passed, 1 failed"
		lines+=("$k: make check ended without a result line (log: $log)")
	else
		lines+=("$k: $line")
	fi
	p=$(sed 's/ passed.*//' <<<"$line")
	f=$(sed 's/.* \([0-9]*\) failed.*/\1/' <<<"$line")
	s=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$line")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + ${s:-0}))
done

printf '%s\n' "${lines[@]}"
summary="$pass passed, $fail failed"
[ "$skip" -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ "$fail" -eq 0 ]
