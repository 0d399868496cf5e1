#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Random-corruption stress of odfck on whole volumes: damage a few
# bytes of one ODF file of a populated volume, then require
#   - odfck -fn changes no byte and does not crash,
#   - odfck -fy exits 0 or 1 (one damaged spot is always repairable),
#   - a second odfck -fy exits 0 (repairs are complete and idempotent),
#   - e2fsck -fn still passes.
# Usage: corrupt.sh TOPDIR SECONDS [SEED]; failing images are kept in
# artifacts/corrupt-*.img with the command that made them.
#
set -u
TOPDIR=$1
SECONDS_BUDGET=$2
RANDOM=${3:-$$}
MKODF=$TOPDIR/tools/mkodf/mkodf
ODFCK=$TOPDIR/tools/odfck/odfck
E=$TOPDIR/tests/unit/odfedit
T=$(mktemp -d /tmp/odf-corrupt.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p artifacts

IMG=$T/base.img
"$MKODF" -q -U 6f646675-6e69-6f6e-6673-0000000000cc "$IMG" 32M
# shellcheck disable=SC1091
. "$TOPDIR/tests/unit/base.sh"
"$E" "$IMG" populate 300 >/dev/null
"$E" "$IMG" rd-build 3 one two three four five >/dev/null
"$E" "$IMG" reclaim-add 99 >/dev/null
"$E" "$IMG" intent-add 5 0x1000000000014 a 0x1000000000014 b 77 1 /x /x >/dev/null
"$ODFCK" -fy "$IMG" >/dev/null 2>&1	# finish the reclaim entry
"$ODFCK" -fn "$IMG" >/dev/null 2>&1 || { echo "base volume not clean"; exit 1; }

size_of() { debugfs -R "stat $1" "$IMG" 2>/dev/null | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -1; }
files=(/superblock /imap/forward /imap/reverse /readdir/0000000000000002
       /readdir/0000000000000003 /reclaim/intent-0000000000000005)
declare -A sizes
for f in "${files[@]}"; do sizes[$f]=$(size_of "$f"); done

rnd_uino() {
	case $((RANDOM % 4)) in
	0) echo $(( (RANDOM % 3) << 48 | RANDOM % 400 )) ;;
	1) echo $(( 16 + RANDOM % 4 )) ;;
	2) echo $(( 1 << 48 | 500 )) ;;
	*) echo $(( RANDOM * RANDOM )) ;;
	esac
}
semantic() {
	local b=$((RANDOM % 4)) i=$((RANDOM % 600)) tb=$((RANDOM % 4))
	local ti=$((RANDOM % 600)) u
	u=$(rnd_uino)
	case $((RANDOM % 10)) in
	0) echo "map-add fwd $((1 + RANDOM % 3)) $b $i $u $tb $ti" ;;
	1) echo "map-add rev reverse 0 $u $u $tb $ti" ;;
	2) echo "map-del fwd 1 $((1000000 + RANDOM % 300))" ;;
	3) echo "map-del rev 0 $(( 2 << 48 | (1 + RANDOM % 300) ))" ;;
	4) echo "node-set $(( 1 << 48 | (1000 + RANDOM % 3) )) $(shuf -n1 -e type uino owner_ino owner_gen nredirect) $((RANDOM % 9))" ;;
	5) echo "node-make $(( 1 << 48 | (1000 + RANDOM % 3) )) $((RANDOM % 9)) $((RANDOM % 3)):/r" ;;
	6) echo "sb-set next_ino $((RANDOM % 40))" ;;
	7) echo "sb-set state $((RANDOM % 9))" ;;
	8) echo "branch-set $((RANDOM % 3)) $(shuf -n1 -e id order mode flags) $((RANDOM % 5))" ;;
	*) echo "map-del fwd 2 $((1 + RANDOM % 300))" ;;
	esac
}

end=$((SECONDS + SECONDS_BUDGET))
n=0 bad=0 repaired=0
while [ $SECONDS -lt $end ]; do
	n=$((n + 1))
	f=${files[RANDOM % ${#files[@]}]}
	sz=${sizes[$f]}
	# biased towards headers: half the time the first block
	if [ $((RANDOM % 2)) = 0 ] || [ "$sz" -le 4096 ]; then
		lim=$(( sz < 4096 ? sz : 4096 ))
	else
		lim=$sz
	fi
	off=$(( (RANDOM * 32768 + RANDOM) % lim ))
	len=$(( 1 + RANDOM % 8 ))
	hex=$(head -c "$len" /dev/urandom | od -An -tx1 | tr -d ' \n')
	cp --sparse=always "$IMG" "$T/w.img"
	if [ $((RANDOM % 3)) != 0 ]; then
		what="odfedit w.img poke $f $off $hex"
		"$E" "$T/w.img" poke "$f" "$off" "$hex" >/dev/null 2>&1 ||
			continue
	else
		# semantic damage: records and markers with valid checksums
		cmd=$(semantic)
		what="odfedit w.img $cmd"
		# shellcheck disable=SC2086	# cmd is a word list
		"$E" "$T/w.img" $cmd >/dev/null 2>&1 || continue
	fi
	cp --sparse=always "$T/w.img" "$T/before.img"
	"$ODFCK" -fn "$T/w.img" >"$T/n.out" 2>&1
	rcn=$?
	why=
	if ! cmp -s "$T/w.img" "$T/before.img"; then
		why="odfck -fn modified the image"
	elif [ $rcn -ge 8 ]; then
		why="odfck -fn exit $rcn"
	else
		"$ODFCK" -fy "$T/w.img" >"$T/y1.out" 2>&1
		rc1=$?
		"$ODFCK" -fy "$T/w.img" >"$T/y2.out" 2>&1
		rc2=$?
		[ $rc1 = 1 ] && repaired=$((repaired + 1))
		if [ $rc1 -gt 1 ]; then
			why="first odfck -fy exit $rc1"
		elif [ $rc2 -ne 0 ]; then
			why="second odfck -fy exit $rc2"
		elif ! e2fsck -fn "$T/w.img" >/dev/null 2>&1; then
			why="e2fsck -fn fails after repair"
		fi
	fi
	if [ -n "$why" ]; then
		bad=$((bad + 1))
		echo "FINDING: $why after: $what"
		cp --sparse=always "$T/before.img" "artifacts/corrupt-$n.img"
		{ echo "$what"; echo "$why"; cat "$T/n.out" "$T/y1.out" "$T/y2.out" 2>/dev/null; } \
			>"artifacts/corrupt-$n.txt"
	fi
done
echo "corrupt: $n damaged volumes in ${SECONDS_BUDGET}s ($repaired needed repairs), $bad finding(s)"
[ $bad = 0 ]
