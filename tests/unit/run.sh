#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every unit test of the ODF tools and summarise:
#   libodf_test   round trips through tools/lib (check framework)
#   run_headers.sh include/odf in userland and in the kernel (compile only)
#   run_cli.sh    mkodf/odfck command-line behaviour
#   run_cases.sh  odfck corruption cases (cases/*)
#   run_convert.sh odfck --convert of a format 1 volume over host branches
# The last line is "SUITE-RESULT: unit <passed> <failed> <skipped>".
#
set -u
TOPDIR=${TOPDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export TOPDIR
HERE=$TOPDIR/tests/unit
LOG=$(mktemp /tmp/odf-unit.XXXXXX)
trap 'rm -f "$LOG"' EXIT

run() {
	local what=$1 rc
	shift
	"$@" 2>&1 | tee -a "$LOG"
	rc=${PIPESTATUS[0]}
	# a runner that dies without reporting is a failure of its own
	if [ "$rc" -gt 1 ]; then
		echo "not ok - $what runner exited with status $rc" | tee -a "$LOG"
	fi
}

if ! e2fsck -V >/dev/null 2>&1; then
	echo "ok - unit tests # SKIP e2fsck (e2fsprogs) is not installed" | tee -a "$LOG"
else
	run libodf "$HERE/libodf_test"
	run headers "$HERE/run_headers.sh"
	run cli "$HERE/run_cli.sh"
	run cases "$HERE/run_cases.sh"
	run convert "$HERE/run_convert.sh"
fi

skipped=$(grep -cE '^ok - .*# SKIP' "$LOG")
passed=$(( $(grep -cE '^ok - ' "$LOG") - skipped ))
failed=$(grep -cE '^not ok - ' "$LOG")
echo "SUITE-RESULT: unit $passed $failed $skipped"
[ "$failed" = 0 ]
