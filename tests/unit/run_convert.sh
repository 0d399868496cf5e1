#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# odfck --convert end to end: a format 1 volume (built with odfedit's
# v1-* commands) over branch directories on this host becomes format 2,
# and every node is named by the union inode number computed from the
# branches as section 4 says: (branch id << 48) | st_ino of the upper
# directory, of the first lower one when there is no upper, or the
# forward map's number after a copy-up.  One TAP line per check.
#
set -u
TOPDIR=${TOPDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
MKODF=$TOPDIR/tools/mkodf/mkodf
ODFCK=$TOPDIR/tools/odfck/odfck
E=$TOPDIR/tests/unit/odfedit
T=$(mktemp -d /tmp/odf-convert.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -n "${KEEP:-}" ] && trap - EXIT

pass() { echo "ok - convert: $1"; }
fail() { echo "not ok - convert: $1"; shift; printf '# %s\n' "$@"; }
check() {	# NAME CMD...
	local name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then pass "$name"; else
		fail "$name" "$(head -c 2000 "$T/check.out")"; fi
}
ino() { stat -c %i "$1"; }
det() { printf '%016x' $(( ($1 << 48) | $2 )); }
has() { grep -qxF -- "$1" "$T/dump" || { echo "missing: $1"; cat "$T/dump"; return 1; }; }

U=$T/upper L=$T/lower IMG=$T/odf.img
mkdir -p "$U/a/b" "$U/a/d" "$U/x/new" "$L/a/b" "$L/a/d" "$L/x/old" \
	"$L/lower/only" "$L/topgone"
touch "$L/a/b/c" "$L/x/old/g" "$L/lower/only/w"

"$MKODF" -q "$IMG" 32M || { fail "mkodf" "failed"; exit 0; }
$E "$IMG" branch-add "$U" rw stat
$E "$IMG" branch-add "$L" ro stat
$E "$IMG" v1-format
$E "$IMG" v1-whiteout /topgone
$E "$IMG" v1-whiteout /a/b/c
$E "$IMG" v1-opaque /a/d
$E "$IMG" v1-redirect /x/new /x/old
$E "$IMG" v1-whiteout /x/old
$E "$IMG" v1-whiteout /lower/only/w
$E "$IMG" v1-whiteout /nothere/w
$E "$IMG" v1-intent-add 7 /x/old /x/new
$E "$IMG" v1-intent-add 8 /q/a /q/b
# /a/b was copied up: its number is the lower one's
$E "$IMG" copyup 2 "$(ino "$L/a/b")" 1 "$(ino "$U/a/b")"

"$ODFCK" -fy "$IMG" >"$T/out" 2>&1
rc=$?
check "a format 1 volume is refused without --convert (exit 8)" \
	test "$rc" = 8
check "the refusal names odfck --convert" grep -q 'odfck --convert' "$T/out"
"$ODFCK" --convert -fn --dirs="$U:$L" "$IMG" >"$T/out" 2>&1
check "--convert with -n is a usage error" test $? = 16
"$ODFCK" --convert -fy --dirs="$L" "$IMG" >"$T/out" 2>&1
check "--convert needs every present branch" test $? = 8

"$ODFCK" --convert -fy --dirs="$U:$L" "$IMG" >"$T/out" 2>&1
rc=$?
check "conversion repairs and exits 1" test "$rc" = 1 -o "$rc" = 0
check "the vanished directory is reported" grep -q 'node /nothere names no directory' "$T/out"
check "the unconvertible intent is reported" grep -q 'intent-0000000000000008.*cannot be converted' "$T/out"
check "the summary says format 2" grep -q 'ODF format 2' "$T/out"
"$ODFCK" -fn "$IMG" >"$T/out2" 2>&1
check "the converted volume is clean (odfck -fn exits 0)" test $? = 0
$E "$IMG" dump >"$T/dump"
check "superblock version 2" grep -q '^superblock good version 2 ' "$T/dump"

gen() { ( cd "$1" && python3 -c 'import fcntl,struct,os,sys
fd=os.open(".",os.O_RDONLY)
try:
  print(struct.unpack("i",fcntl.ioctl(fd,0x80087601,b"\0"*8)[:4])[0] & 0xffffffff)
except OSError:
  print(0)' ); }
n=$(det 0 2)
check "root whiteout in node 2" has "ns $n/topgone whiteout"
check "root node owned by the upper root" \
	has "ns $n good type 0x0 uino 0x2 owner $(ino "$U")/$(gen "$U")"
n=$(det 2 "$(ino "$L/a/b")")
check "copied-up /a/b keeps the lower number" has "ns $n/c whiteout"
check "/a/b owner is its upper directory" \
	has "ns $n good type 0x0 uino 0x${n#000} owner $(ino "$U/a/b")/$(gen "$U/a/b")"
n=$(det 1 "$(ino "$U/a/d")")
check "opaque /a/d by its upper number" \
	has "ns $n good type 0x2 uino 0x${n#000} owner $(ino "$U/a/d")/$(gen "$U/a/d")"
n=$(det 1 "$(ino "$U/x/new")")
check "redirect of /x/new lists the lower branch" \
	has "ns $n good type 0x6 uino 0x${n#000} owner $(ino "$U/x/new")/$(gen "$U/x/new") 2:/x/old"
n=$(det 1 "$(ino "$U/x")")
check "whiteout of /x/old in /x" has "ns $n/old whiteout"
n=$(det 2 "$(ino "$L/lower/only")")
check "lower-only directory: lower number, owner 0" \
	has "ns $n good type 0x0 uino 0x${n#000} owner 0/0"
check "whiteout in the lower-only directory" has "ns $n/w whiteout"
check "nothing else in /ns" test "$(grep -c "^ns " "$T/dump")" = 10
check "no conversion leftovers" sh -c "! grep -q 'ns.v' '$T/dump'"
check "intent 7 kept in format 2" grep -q 'intent-0000000000000007 (rename of /x/old to /x/new) is pending' "$T/out2"
check "intent 8 dropped" sh -c "! grep -q intent-0000000000000008 '$T/out2'"
