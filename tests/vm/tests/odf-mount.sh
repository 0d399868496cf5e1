#!/bin/bash
# The module reads the ODF volume at mount: what is not an ODF, a damaged
# or newer one, one with errors recorded, and one formatted for other
# branches are refused with the right errno and one log line; branch ids
# come from the branch table; the ODF device is used exclusively.
. "$SRC/tests/vm/lib.sh"

ODFEDIT=$SRC/tests/unit/odfedit
[ -x "$ODFEDIT" ] || fail "tests/unit/odfedit is not built"
br=/mnt/b0 u=/mnt/u
mkfs_branch ext4 "$(nth_disk 1)" $br
rmdir $br/lost+found
echo data >$br/file
mkdir -p $u /mnt/plain /mnt/odfm
mkfs_branch tmpfs none /mnt/t

# try ERRNO OPTIONS TEXT [FLAGS]: the mount fails with ERRNO and one
# unionfs line in the kernel log containing TEXT.
try() {
	local got log
	klog_mark
	got=$(sysmount mount none $u unionfs "${4:-ro}" "$2")
	log=$(klog_new | grep 'unionfs:')
	[ "$got" = "$1" ] || fail "$2: expected $1, got $got (log: $log)"
	[ "$1" = OK ] && return 0
	case $log in *"$3"*) ;; *) fail "$2: log '$log' lacks '$3'" ;; esac
	[ "$(echo "$log" | wc -l)" = 1 ] || fail "$2: more than one log line: $log"
}
good() { try OK "odf=$ODF_DEV,dirs=$br=ro" ""; umount $u || fail "umount"; }

# Not an ODF at all.
try EINVAL "odf=$ODF_DEV,dirs=$br=ro" "cannot mount ODF device '$ODF_DEV' as ext4"
mkfs.ext4 -q -F "$ODF_DEV"
try EINVAL "odf=$ODF_DEV,dirs=$br=ro" "is not an ODF volume (no /superblock)"
try EINVAL "odf=/mnt/plain,dirs=$br=ro" "'/mnt/plain' is not an ODF volume"

# A fresh ODF, by device and by the directory where it is mounted.
mkodf_dev "$ODF_DEV"
good
mount "$ODF_DEV" /mnt/odfm
try EBUSY "odf=$ODF_DEV,dirs=$br=ro" "is mounted elsewhere"
mount -o remount,ro /mnt/odfm
try EBUSY "odf=$ODF_DEV,dirs=$br=ro" "is mounted elsewhere"
mount -o remount,rw /mnt/odfm
try OK "odf=/mnt/odfm,dirs=$br=ro" ""
expect_eq "through a mounted ODF" data "$(cat $u/file)"
# The union holds a private clone: the directory can go, the union stays.
umount /mnt/odfm || fail "umount of the ODF mount point"
expect_eq "after the ODF mount point went" data "$(cat $u/file)"
umount $u || fail "umount"

# Damaged or newer superblocks.
"$ODFEDIT" "$ODF_DEV" sb-set magic 0x12345678
try EINVAL "odf=$ODF_DEV,dirs=$br=ro" "is not an ODF volume (bad superblock magic)"
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" sb-set mnt_count 7 nocsum
try EUCLEAN "odf=$ODF_DEV,dirs=$br=ro" "superblock checksum mismatch: run odfck"
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" sb-set version 3
try EINVAL "odf=$ODF_DEV,dirs=$br=ro" "has format version 3, this module reads version 2"
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" sb-set version 1
try EINVAL "odf=$ODF_DEV,dirs=$br=ro" "has format 1 (namespace by union path): convert it with 'odfck --convert"
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" sb-set feature_incompat 0x80
try EINVAL "odf=$ODF_DEV,dirs=$br=ro" "unsupported incompatible features 0x80"
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" sb-set feature_ro_compat 0x40
try EROFS "odf=$ODF_DEV,dirs=$br=rw" "can only be mounted read-only" none
try OK "odf=$ODF_DEV,dirs=$br=ro" "" ro
umount $u || fail "umount"
"$ODFEDIT" "$ODF_DEV" sb-set feature_compat 0x20
try OK "odf=$ODF_DEV,dirs=$br=ro" "" ro
umount $u || fail "umount"
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" sb-set state 5
try EUCLEAN "odf=$ODF_DEV,dirs=$br=ro" "has errors recorded: run odfck"
# A crash leaves "mounted": the union still mounts.
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" sb-set state 2
klog_mark
good
klog_new | grep -q "was not unmounted cleanly" || fail "no note about the unclean ODF"

# Branch table: ids come from it; other branches are refused.
mkodf_dev "$ODF_DEV"
"$ODFEDIT" "$ODF_DEV" branch-add /old ro	# id 1, will be removed
"$ODFEDIT" "$ODF_DEV" branch-add $br ro	# id 2, ext4 root
"$ODFEDIT" "$ODF_DEV" branch-set 0 flags 2
"$ODFEDIT" "$ODF_DEV" branch-set 1 order 0
try OK "odf=$ODF_DEV,dirs=$br=ro" ""
expect_eq "inode number under branch id 2" $(( (2 << 48) + $(stat -c %i $br/file) )) "$(stat -c %i $u/file)"
umount $u || fail "umount"
try EINVAL "odf=$ODF_DEV,dirs=/mnt/t=ro" "was formatted for other branches: '/mnt/t' is not one of them"
try EINVAL "odf=$ODF_DEV,dirs=$br=ro:/mnt/t=ro" "'/mnt/t' is not one of them"
"$ODFEDIT" "$ODF_DEV" branch-add /mnt/x ro	# a second present branch
try EINVAL "odf=$ODF_DEV,dirs=$br=ro" "records 2 branches, dirs= names 1"
"$ODFEDIT" "$ODF_DEV" branch-set 1 root_ino 99 nocsum
try EUCLEAN "odf=$ODF_DEV,dirs=$br=ro" "branch table slot 1 is damaged: run odfck"

# A read-only union wrote nothing: ext4 was not even mounted writable,
# the ODF superblock file is as it was, odfck finds the volume clean.
mkodf_dev "$ODF_DEV"
state() {
	dumpe2fs -h "$ODF_DEV" 2>/dev/null | grep -E '^(Mount count|Last mount time|Last write time):'
	debugfs -R 'cat /superblock' "$ODF_DEV" 2>/dev/null | md5sum
}
before=$(state)
good
expect_eq "ODF after a read-only union" "$before" "$(state)"
"$ODFCK" -fn "$ODF_DEV" >/tmp/odfck.out 2>&1 || fail "odfck -fn: $(cat /tmp/odfck.out)"
