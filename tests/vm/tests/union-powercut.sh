#!/bin/bash
# timeout: 900
# Power cuts (issue 10 E): the upper branch (ext4) and the ODF each on a
# dm-log-writes target with its own log disk, the lower branch on a
# plain disk.  Three rounds of union operations run through the union
# (renames of lower files into other directories and of lower directory
# trees, copy-up of a big and of a sparse file, unlink and create over
# whiteouts, a hard link, listings of merged directories between
# changes, fsync and sync), with instants marked in both logs after each
# operation and every few milliseconds.  Both logs are replayed
# (tests/vm/prog/logreplay) to each instant and to each FLUSH/FUA point
# of either log whose order against the other log is known, at most
# PC_MAX_STATES (300) distinct states within PC_BUDGET (540) seconds of
# checking (a loaded machine checks fewer); each gets odfck -p, a union
# mount and the checks of tests/vm/powercut.py: fsync'ed files present
# and intact, a renamed object at its old or its new name (never
# neither, never both), no half copied-up content, no deleted and synced
# name back, st_ino unchanged, readdir agrees with lookup, odfck -fn
# clean after umount.  Every violation is counted; the test fails if there is
# any (docs/odf-format.md 9.10).
. "$SRC/tests/vm/lib.sh"

need_powercut

python3 "$SRC/tests/vm/powercut.py" quick
rc=$?
dmsetup remove_all 2>/dev/null
[ $rc = 0 ] || fail "power-cut states show violations (above) or the test broke (rc $rc)"
exit 0
