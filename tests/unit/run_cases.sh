#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# odfck corruption cases, in the style of e2fsprogs' tests/f_*:
#
#   cases/<name>/script    shell fragment that damages the fresh volume
#                          ($E is odfedit, $IMG the image)
#   cases/<name>/opts1     options of the first run (default -fy); words,
#                          @BR@ stands for $BR, a scratch directory of the
#                          case for branch directories (odfck --convert)
#   cases/<name>/expect.1  output and exit status of the first run
#   cases/<name>/expect.2  output of the second run (-fy): clean
#   cases/<name>/expect.3  optional third run (-fy)
#
# Every case also proves that "odfck -fn" changes no byte of the image,
# and that the ext4 layer passes "e2fsck -fn" after the repairs.
# Set ODF_UPDATE_EXPECT=1 to rewrite expect files from actual output.
#
set -u
TOPDIR=${TOPDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
HERE=$TOPDIR/tests/unit
MKODF=$TOPDIR/tools/mkodf/mkodf
ODFCK=$TOPDIR/tools/odfck/odfck
# shellcheck disable=SC2034	# used by the sourced case scripts
E=$HERE/odfedit
TMPD=$(mktemp -d /tmp/odfck-cases.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT
UUID=6f646675-6e69-6f6e-6673-000000000001

only=${1:-}
# every problem odfck reports goes to this log, to check the table's
# coverage at the end
export ODFCK_PROBLEM_LOG=$TMPD/problems.log
: >"$ODFCK_PROBLEM_LOG"

run_odfck() {	# opts img out
	local rc
	# shellcheck disable=SC2086	# opts are words
	"$ODFCK" ${1//@BR@/$BR} "$2" >"$3.raw" 2>&1
	rc=$?
	sed -e "s#$2#test.img#g" -e "s#$BR#BR#g" "$3.raw" >"$3"
	echo "Exit status is $rc" >>"$3"
}

for dir in "$HERE"/cases/*/; do
	name=$(basename "$dir")
	[ -n "$only" ] && [ "$name" != "$only" ] && continue
	IMG=$TMPD/$name.img
	BR=$TMPD/$name.br
	export BR
	why=
	rm -f "$IMG"
	if ! "$MKODF" -q -U "$UUID" -L test "$IMG" 32M >"$TMPD/mkodf.out" 2>&1
	then
		why="mkodf failed: $(cat "$TMPD/mkodf.out")"
	elif ! (cd "$TMPD" && . "$HERE/base.sh" && . "$dir/script") \
		>"$TMPD/script.out" 2>&1; then
		why="case script failed: $(cat "$TMPD/script.out")"
	fi
	if [ -z "$why" ]; then
		cp --sparse=always "$IMG" "$IMG.before"
		"$ODFCK" -fn "$IMG" >/dev/null 2>&1	# also on format 1
		if ! cmp -s "$IMG" "$IMG.before"; then
			why="odfck -fn modified the image"
		fi
	fi
	if [ -z "$why" ]; then
		opts1=-fy
		[ -f "$dir/opts1" ] && opts1=$(cat "$dir/opts1")
		run_odfck "$opts1" "$IMG" "$TMPD/out.1"
		run_odfck -fy "$IMG" "$TMPD/out.2"
		runs="1 2"
		if [ -f "$dir/expect.3" ]; then
			run_odfck -fy "$IMG" "$TMPD/out.3"
			runs="1 2 3"
		fi
		for n in $runs; do
			if [ "${ODF_UPDATE_EXPECT:-}" = 1 ]; then
				cp "$TMPD/out.$n" "$dir/expect.$n"
			elif ! cmp -s "$TMPD/out.$n" "$dir/expect.$n"; then
				why="run $n output differs:
$(diff -u "$dir/expect.$n" "$TMPD/out.$n" | sed 's/^/#   /')"
				break
			fi
		done
	fi
	if [ -z "$why" ] && ! e2fsck -fn "$IMG" >"$TMPD/e2fsck.out" 2>&1; then
		why="ext4 layer inconsistent after repair:
$(sed 's/^/#   /' "$TMPD/e2fsck.out")"
	fi
	if [ -z "$why" ]; then
		echo "ok - odfck case $name"
	else
		echo "not ok - odfck case $name"
		echo "$why" | sed 's/^/# /'
	fi
	rm -rf "$IMG" "$IMG.before" "$BR"
done

# Every problem in odfck's table is produced by some case, except those
# that need a volume too large or too deep to build here.
if [ -z "$only" ]; then
	untestable="0x1001 0x3012"	# no /superblock; size
	missing=
	for code in $("$ODFCK" --list-problems | cut -f1); do
		case " $untestable " in *" $code "*) continue ;; esac
		grep -qx "$code" "$ODFCK_PROBLEM_LOG" || missing="$missing $code"
	done
	if [ -z "$missing" ]; then
		echo "ok - every odfck problem code is exercised by a case"
	else
		echo "not ok - every odfck problem code is exercised by a case"
		for code in $missing; do
			"$ODFCK" --list-problems | grep "^$code" |
				sed 's/^/# missing: /'
		done
	fi
fi
