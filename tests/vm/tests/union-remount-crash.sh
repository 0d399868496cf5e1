#!/bin/bash
# timeout: 600
# Power cuts during branch changes (issue 11; docs/odf-format.md 3.5,
# 9.11): the ODF on dm-log-writes, a union remounted with add= and then
# del=, the log replayed to every FLUSH/FUA entry and mark.  At each
# state exactly one branch set mounts, never an older one than at an
# earlier state, the one of a remount that had returned at its mark;
# the union shows that set's names, contents and inode numbers, the
# whiteout made before still hides the name the added branch has;
# odfck -p repairs and odfck -fn is clean after.  See
# tests/vm/remountcut.py.
. "$SRC/tests/vm/lib.sh"

need_powercut

python3 "$SRC/tests/vm/remountcut.py"
rc=$?
dmsetup remove_all 2>/dev/null
[ $rc = 0 ] || fail "branch changes cut by a power failure show violations (above) or the test broke (rc $rc)"
exit 0
