#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the seed corpus of odf_fuzz from a volume populated the way the
# odfck tests populate it.  Usage: make_seeds.sh TOPDIR OUTDIR
set -eu
TOPDIR=$1
OUT=$2
T=$(mktemp -d /tmp/odf-seeds.XXXXXX)
trap 'rm -rf "$T"' EXIT
make -s -C "$TOPDIR/tools" >/dev/null
make -s -C "$TOPDIR/tests/unit" odfedit >/dev/null
IMG=$T/seed.img
E=$TOPDIR/tests/unit/odfedit
"$TOPDIR/tools/mkodf/mkodf" -q "$IMG" 32M
. "$TOPDIR/tests/unit/base.sh"
"$E" "$IMG" intent-add 7 0x1000000000014 old 0x1000000000014 new 19 8 /x /x
mkdir -p "$OUT"
get() { debugfs -R "dump $1 $T/f" "$IMG" >/dev/null 2>&1; }
seed() {	# selector file name
	for s in "$1" "$(( $1 | 8 ))"; do
		{ printf "\\x$(printf %02x "$s")"; cat "$2"; } >"$OUT/$3-$s"
	done
}
get /superblock; seed 0 "$T/f" super
get /imap/forward; seed 1 "$T/f" fwd
get /imap/reverse; seed 2 "$T/f" rev
get /readdir/0000000000000002; seed 4 "$T/f" readdir
get /reclaim/intent-0000000000000007; seed 5 "$T/f" intent
printf '/x/old\0/y' >"$T/f"; seed 7 "$T/f" encode
# a namespace record: the xattr value of a redirected directory's node
debugfs -R "ea_get -f $T/f /ns/0001000000000013 trusted.odf" "$IMG" \
	>/dev/null 2>&1 || true
[ -s "$T/f" ] && seed 3 "$T/f" node
# format 1: a record and an intent, as odfck --convert reads them
"$E" "$IMG" v1-redirect /x/new /x/old
debugfs -R "ea_get -f $T/f /ns/x/new trusted.odf" "$IMG" >/dev/null 2>&1 || true
[ -s "$T/f" ] && seed 6 "$T/f" node-v1
"$E" "$IMG" v1-intent-add 9 /x/old /x/new
get /reclaim/intent-0000000000000009; seed 6 "$T/f" intent-v1
ls "$OUT" | wc -l
