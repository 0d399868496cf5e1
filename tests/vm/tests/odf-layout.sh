#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# odf-layout: a volume made by mkodf, on a real block device in the VM,
# mounts as ext4 with the kernel driver and shows the layout of
# docs/odf-format.md; odfck refuses it while mounted and finds it clean
# after the kernel has mounted and unmounted it.
#
# Runs inside the VM as root.  Environment: $SRC (project tree, read-only),
# $ODF_DEV (empty scratch block device), $TMP (writable scratch dir).
# Exit 0 pass, 1 fail, 77 skip.
#
set -u
MKODF=$SRC/tools/mkodf/mkodf
ODFCK=$SRC/tools/odfck/odfck
ODFEDIT=$SRC/tests/unit/odfedit
MNT=$TMP/odf-layout.mnt
UUID=6f646675-6e69-6f6e-6673-0000000000aa

fail() { echo "FAIL: $*"; mountpoint -q "$MNT" && umount "$MNT"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root"
if [ ! -x "$MKODF" ] || [ ! -x "$ODFCK" ]; then
	skip "tools not built (make -C tools)"
fi
[ -b "$ODF_DEV" ] || skip "\$ODF_DEV=$ODF_DEV is not a block device"
command -v e2fsck >/dev/null || skip "e2fsprogs missing"
grep -qw ext4 /proc/filesystems || modprobe ext4 2>/dev/null ||
	skip "no ext4 in this kernel"

# 1. format the device (it is empty: no -f needed)
"$MKODF" -q -L vm-layout -U "$UUID" "$ODF_DEV" || fail "mkodf $ODF_DEV"
e2fsck -fn "$ODF_DEV" >"$TMP/e2fsck.out" 2>&1 ||
	fail "fresh volume fails e2fsck -fn: $(cat "$TMP/e2fsck.out")"
"$ODFCK" -fn "$ODF_DEV" >"$TMP/odfck.out" 2>&1 ||
	fail "fresh volume fails odfck -fn: $(cat "$TMP/odfck.out")"
"$MKODF" -q "$ODF_DEV" >/dev/null 2>&1 &&
	fail "mkodf overwrote an ODF volume without -f"

# 2. some metadata, the way the module lays it out (if the helper is built)
populated=0
if [ -x "$ODFEDIT" ]; then
	for cmd in "branch-add /srv/upper rw" "branch-add /media/dvd ro" \
		   "whiteout 0x2000000000064 c" "node-make 0x2000000000065 opaque 77 1" \
		   "copyup 2 100 1 500" \
		   "rd-build 2 alpha beta gamma"; do
		# shellcheck disable=SC2086	# cmd is a word list
		"$ODFEDIT" "$ODF_DEV" $cmd || fail "odfedit $cmd"
	done
	populated=1
fi

# 3. the kernel mounts it as ext4 and sees the layout
mkdir -p "$MNT"
mount -t ext4 "$ODF_DEV" "$MNT" || fail "mount -t ext4 $ODF_DEV"
[ "$(findmnt -n -o FSTYPE "$MNT")" = ext4 ] || fail "not mounted as ext4"

check_file() {	# path size
	[ -f "$MNT/$1" ] || fail "/$1 is not a regular file"
	[ "$(stat -c %s "$MNT/$1")" = "$2" ] ||
		fail "/$1 has size $(stat -c %s "$MNT/$1"), expected $2"
}
check_magic() {	# path offset ascii
	local got
	got=$(dd if="$MNT/$1" bs=1 skip="$2" count=4 status=none)
	[ "$got" = "$3" ] || fail "/$1 at $2: magic '$got', expected '$3'"
}
for d in ns imap readdir reclaim lost+found; do
	[ -d "$MNT/$d" ] || fail "/$d is not a directory"
done
check_file superblock 40960
check_magic superblock 0 ODFS
check_magic superblock 36864 ODFS	# backup header
check_file imap/forward 69632
check_file imap/reverse 69632
check_magic imap/forward 0 ODFM
check_magic imap/reverse 0 ODFM
# label and UUID as written by -L / -U
label=$(dd if="$MNT/superblock" bs=1 skip=48 count=9 status=none)
[ "$label" = vm-layout ] || fail "ODF label '$label', expected vm-layout"
[ "$(blkid -o value -s UUID "$ODF_DEV" 2>/dev/null)" = "$UUID" ] ||
	[ "$(findmnt -n -o UUID "$MNT")" = "$UUID" ] ||
	fail "ext4 UUID is not the -U value"

if [ "$populated" = 1 ]; then
	# Format 2: nodes named by union inode number, whiteouts inside.
	[ -f "$MNT/ns/0002000000000064/c" ] || fail "whiteout /ns/0002000000000064/c missing"
	[ -d "$MNT/ns/0002000000000065" ] || fail "opaque node /ns/0002000000000065 missing"
	check_file readdir/0000000000000002 12288
	check_magic readdir/0000000000000002 0 ODFR
	if command -v getfattr >/dev/null; then
		v=$(getfattr --absolute-names -n trusted.odf -e hex \
			"$MNT/ns/0002000000000065" 2>/dev/null | sed -n 's/^trusted.odf=//p')
		case "$v" in
		0x4f44464e*) ;;
		*) fail "trusted.odf on a node reads '$v' via the kernel" ;;
		esac
	fi
fi

# 4. odfck must refuse to repair a mounted volume
"$ODFCK" -fy "$ODF_DEV" >"$TMP/odfck.out" 2>&1
rc=$?
[ "$rc" = 8 ] || fail "odfck -fy on a mounted volume: exit $rc, expected 8"
grep -q mounted "$TMP/odfck.out" || fail "odfck did not say it is mounted"

# the kernel writes to it (journal, lazy inode table init) ...
touch "$MNT/reclaim/kernel-was-here" || fail "cannot write as ext4"
rm "$MNT/reclaim/kernel-was-here"
umount "$MNT" || fail "umount"

# 5. ... and the tools still find it clean afterwards
e2fsck -fn "$ODF_DEV" >"$TMP/e2fsck.out" 2>&1 ||
	fail "after a kernel mount, e2fsck -fn: $(cat "$TMP/e2fsck.out")"
"$ODFCK" -fn "$ODF_DEV" >"$TMP/odfck.out" 2>&1 ||
	fail "after a kernel mount, odfck -fn: $(cat "$TMP/odfck.out")"
echo "PASS: mkodf volume mounts as ext4 with the ODF layout"
exit 0
