#!/bin/bash
# A union mounts from fstab lines the way boot mounts them (mount -a),
# with the ODF named by UUID= or LABEL= (resolved by the mount.unionfs
# helper through libblkid), either in odf= or as the line's source; the
# source form has its ODF checked by "fsck -a" (fsck.unionfs, no
# terminal) first.  An unknown UUID fails with a message naming it.
# timeout: 300
. "$SRC/tests/vm/lib.sh"

UUID=0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0
LABEL=odf-fstab
ODFEDIT=$SRC/tests/unit/odfedit

# mount(8) runs /sbin/mount.unionfs; fsck(8) finds fsck.unionfs.  The
# guest's root is the host's, read-only: install them on a writable
# layer over /usr/sbin (/sbin is a link to it) for this test only.
mkdir -p "$TMP/sbin.up" "$TMP/sbin.work"
mount -t overlay overlay \
	-o lowerdir=/usr/sbin,upperdir="$TMP/sbin.up",workdir="$TMP/sbin.work" \
	/usr/sbin || fail "cannot layer /usr/sbin"
trap 'umount -l /usr/sbin' EXIT
cp "$SRC/tools/mount/mount.unionfs" /usr/sbin/mount.unionfs
ln -s "$ODFCK" /usr/sbin/fsck.unionfs

mkbranch ext4 "$(nth_disk 1)" /mnt/upd
mkbranch ext4 "$(nth_disk 2)" /mnt/dvd
echo lower >/mnt/dvd/pkg
"$MKODF" -q -f -U "$UUID" -L "$LABEL" "$ODF_DEV" >/dev/null || fail "mkodf failed"
expect_eq "blkid sees the ODF's UUID" "$ODF_DEV" "$(blkid -U "$UUID")"

# check_union MNT: mounted as unionfs on the resolved device, merged.
check_union() {
	local line
	line=$(awk -v m="$1" '$2 == m && $3 == "unionfs"' /proc/mounts)
	[ -n "$line" ] || fail "$1 is not a unionfs mount: $(grep " $1 " /proc/mounts)"
	case $line in
	*odf=$ODF_DEV,*|*odf=$ODF_DEV" "*) ;;
	*) fail "$1: the kernel did not get odf=$ODF_DEV: $line" ;;
	esac
	expect_eq "$1: lower file through the union" lower "$(cat "$1/pkg")"
}

# 1. odf=UUID=, source none, the systemd ordering option (not for the
#    kernel: mount(8) keeps x-* options to itself).
cat >"$TMP/fstab.uuid" <<EOF
none /mnt/u1 unionfs odf=UUID=$UUID,dirs=/mnt/upd=rw:/mnt/dvd=ro,x-systemd.requires-mounts-for=/mnt/upd 0 0
EOF
mkdir -p /mnt/u1
mount -a -T "$TMP/fstab.uuid" >"$TMP/out" 2>&1 ||
	fail "mount -a (odf=UUID=): $(cat "$TMP/out"); $(dmesg | grep unionfs: | tail -n 1)"
check_union /mnt/u1
echo new >/mnt/u1/new
expect_eq "a new file lands on the upper branch" new "$(cat /mnt/upd/new)"
umount /mnt/u1 || fail "umount /mnt/u1"

# 2. odf=LABEL=, mounted by its mount point as "mount /mnt/u2" would.
cat >"$TMP/fstab.label" <<EOF
none /mnt/u2 unionfs odf=LABEL=$LABEL,dirs=/mnt/upd=rw:/mnt/dvd=ro 0 0
EOF
mkdir -p /mnt/u2
mount -T "$TMP/fstab.label" /mnt/u2 >"$TMP/out" 2>&1 ||
	fail "mount /mnt/u2 (odf=LABEL=): $(cat "$TMP/out")"
check_union /mnt/u2
expect_eq "the file written through the first mount" new "$(cat /mnt/u2/new)"
umount /mnt/u2 || fail "umount /mnt/u2"

# 3. The boot form: the ODF is the source, with a pass number.  Boot
#    runs fsck -a on it without a terminal, then mounts.
cat >"$TMP/fstab.boot" <<EOF
UUID=$UUID /mnt/u3 unionfs dirs=/mnt/upd=rw:/mnt/dvd=ro,x-systemd.requires-mounts-for=/mnt/upd,x-systemd.requires-mounts-for=/mnt/dvd 0 2
EOF
"$ODFEDIT" "$ODF_DEV" sb-set state 2 >/dev/null || fail "odfedit sb-set failed"
LIBMOUNT_FSTAB=$TMP/fstab.boot fsck -A -a -T </dev/null >"$TMP/out" 2>&1
rc=$?
expect_eq "fsck -A -a repairs the unclean ODF [$(tr '\n' ' ' <"$TMP/out")]" 1 "$rc"
grep -q "not cleanly unmounted.*FIXED" "$TMP/out" ||
	fail "fsck -A -a did not run odfck: $(cat "$TMP/out")"
LIBMOUNT_FSTAB=$TMP/fstab.boot fsck -A -a -T </dev/null >"$TMP/out" 2>&1
expect_eq "fsck -A -a then finds it clean [$(tr '\n' ' ' <"$TMP/out")]" 0 $?
mkdir -p /mnt/u3
mount -a -T "$TMP/fstab.boot" >"$TMP/out" 2>&1 ||
	fail "mount -a (source UUID=): $(cat "$TMP/out"); $(dmesg | grep unionfs: | tail -n 1)"
check_union /mnt/u3
expect_eq "/proc/mounts names the ODF device as the source" "$ODF_DEV" \
	"$(awk '$2 == "/mnt/u3" { print $1 }' /proc/mounts)"
umount /mnt/u3 || fail "umount /mnt/u3"

# 4. An ODF that is not there: mount fails and says which.
cat >"$TMP/fstab.none" <<EOF
none /mnt/u4 unionfs odf=UUID=0f1e2d3c-0000-4000-8000-00000000dead,dirs=/mnt/upd=rw:/mnt/dvd=ro 0 0
EOF
mkdir -p /mnt/u4
mount -a -T "$TMP/fstab.none" >"$TMP/out" 2>&1 && fail "mount -a of a missing ODF succeeded"
grep -q "no ODF volume with UUID=0f1e2d3c-0000-4000-8000-00000000dead" "$TMP/out" ||
	fail "mount -a does not name the missing UUID: $(cat "$TMP/out")"
awk '$2 == "/mnt/u4"' /proc/mounts | grep -q . && fail "/mnt/u4 got mounted"
odf_check
exit 0
