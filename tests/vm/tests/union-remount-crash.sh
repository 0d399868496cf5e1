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

command -v dmsetup >/dev/null || skip "dmsetup is not installed (make deps)"
have_target() { dmsetup targets 2>/dev/null | grep -q "^$1 " || modprobe "dm_${1//-/_}" 2>/dev/null; }
have_target log-writes && have_target snapshot ||
	skip "no dm-log-writes / dm-snapshot in this kernel"
[ "$(echo $BRANCH_DEVS | wc -w)" -ge 5 ] || skip "needs 6 scratch disks"

python3 "$SRC/tests/vm/remountcut.py"
rc=$?
dmsetup remove_all 2>/dev/null
[ $rc = 0 ] || fail "branch changes cut by a power failure show violations (above) or the test broke (rc $rc)"
exit 0
