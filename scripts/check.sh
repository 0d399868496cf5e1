#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: run every suite, keep each one's log under build/check/,
# and end with one line "N passed, N failed[, N skipped]".  Each suite
# prints "SUITE-RESULT: NAME PASSED FAILED SKIPPED" as its last line; a
# suite that dies without it counts as one failure.
# check.sh --long (make check-long) runs the long VM tests instead, all
# of tests/vm/long/ unless VM_TESTS names some.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logs=$top/build/check
# make exports KVER empty when the headers came with this run's make deps.
KVER=${KVER:-$(scripts/kver.sh)}
: "${KVER:?no kernel to test: run this through make check}"
mkdir -p "$logs"

suites=(unit vm)
if [ "${1:-}" = --long ]; then
	suites=(vm-long)
fi

pass=0 fail=0 skip=0
for s in "${suites[@]}"; do
	echo "=== suite $s"
	case $s in
	unit) make --no-print-directory -C tests/unit check ;;
	vm) tests/vm/run.sh --kver "$KVER" ${VM_TESTS:-} ;;
	vm-long) tests/vm/run.sh --kver "$KVER" --out "$top/build/vm-long" \
			${VM_TESTS:-tests/vm/long/*.sh} ;;
	esac 2>&1 | tee "$logs/$s.log"
	line=$(grep -a '^SUITE-RESULT: ' "$logs/$s.log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "suite $s ended without a result line (log: $logs/$s.log)"
		fail=$((fail + 1))
		continue
	fi
	set -- $line
	pass=$((pass + $3)) fail=$((fail + $4)) skip=$((skip + $5))
done

summary="$pass passed, $fail failed"
[ "$skip" -gt 0 ] && summary="$summary, $skip skipped"
echo "$summary"
[ "$fail" -eq 0 ]
