#!/bin/bash
# timeout: 5400
# The power-cut test of tests/vm/tests/union-powercut.sh at length (make
# check-long): six rounds of the operations with bigger files (8 MiB
# copied up), instants written every millisecond, and every state the
# two logs give checked -- each mark, each unambiguous FLUSH/FUA point of
# either log -- with no cap.  See docs/odf-format.md 9.10.
. "$SRC/tests/vm/lib.sh"

need_powercut

python3 "$SRC/tests/vm/powercut.py" long
rc=$?
dmsetup remove_all 2>/dev/null
[ $rc = 0 ] || fail "power-cut states show violations (above) or the test broke (rc $rc)"
exit 0
