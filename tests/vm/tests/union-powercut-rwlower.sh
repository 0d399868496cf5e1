#!/bin/bash
# timeout: 600
# Power cuts with a writable lower branch (issue 11 item 3): the upper
# branch and a writable lower branch are two directories of one ext4 on
# a dm-log-writes target, the ODF on another, a read-only lower on a
# plain disk.  Objects of the writable lower are written, chmodded,
# fsync'ed, unlinked and removed in place (with and without a copy on
# the read-only branch, which the whiteout must hide before the
# branch's unlink is durable: docs/odf-format.md 9.4), renamed (copied
# up), and a name is created over a whiteout; files of the read-only
# branch are copied to the writable lower (records before the link,
# 9.6), written there, and one is unlinked.  Each replayed state must
# pass the checks of tests/vm/powercut.py (mode rwlower): no deleted
# name back, no name of the read-only branch showing that never showed,
# fsync'ed data intact, st_ino unchanged, odfck clean.  At most
# PC_MAX_STATES (200) states within PC_BUDGET (300) seconds.
. "$SRC/tests/vm/lib.sh"

need_powercut

python3 "$SRC/tests/vm/powercut.py" rwlower
rc=$?
dmsetup remove_all 2>/dev/null
[ $rc = 0 ] || fail "power-cut states show violations (above) or the test broke (rc $rc)"
exit 0
