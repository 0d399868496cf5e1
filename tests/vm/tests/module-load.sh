#!/bin/bash
# The module is loaded by the harness: the filesystem type is registered,
# and the module says what it is.
. "$SRC/tests/vm/lib.sh"

grep -qE '^nodev[[:space:]]+unionfs$' /proc/filesystems ||
	fail "unionfs missing from /proc/filesystems: $(cat /proc/filesystems | tr '\n' ' ')"
grep -q '^unionfs ' /proc/modules || fail "unionfs not in /proc/modules"
lic=$(modinfo -F license "$MODULE")
expect_eq "module license" "GPL" "$lic"
modinfo -F alias "$MODULE" | grep -qx 'fs-unionfs' || fail "no fs-unionfs alias"
