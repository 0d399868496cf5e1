#!/bin/bash
# The module DKMS built and installed for the guest's kernel (make
# dkms-install) is the one modprobe loads, and it works: a union mounts,
# merges and takes a write.  Run by make check-dkms, on a root where
# dkms-install ran (never on a developer's host).
. "$SRC/tests/vm/lib.sh"

kver=$(uname -r)
ko=$(ls /lib/modules/"$kver"/updates/dkms/unionfs.ko* 2>/dev/null | head -n 1)
[ -n "$ko" ] || fail "no DKMS-built unionfs.ko for $kver in /lib/modules/$kver/updates/dkms"
expect_eq "modprobe resolves unionfs to the DKMS module" "$ko" "$(modinfo -n unionfs)"

# The harness loaded the tree's build; replace it with the DKMS one.
rmmod unionfs || fail "rmmod of the tree's module failed"
modprobe unionfs || fail "modprobe unionfs (DKMS) failed: $(dmesg | tail -n 3)"
expect_eq "the loaded module is the DKMS build (srcversion)" \
	"$(modinfo -F srcversion "$ko")" "$(cat /sys/module/unionfs/srcversion)"
expect_eq "vermagic matches the running kernel" "$kver" \
	"$(modinfo -F vermagic "$ko" | cut -d' ' -f1)"

mkbranch ext4 "$(nth_disk 1)" /mnt/upd
mkbranch ext4 "$(nth_disk 2)" /mnt/dvd
echo lower >/mnt/dvd/pkg
mkodf_dev "$ODF_DEV"
union_mount /mnt/u "odf=$ODF_DEV,dirs=/mnt/upd=rw:/mnt/dvd=ro"
expect_eq "lower file through the DKMS module" lower "$(cat /mnt/u/pkg)"
echo new >/mnt/u/pkg
expect_eq "copy-up to the upper branch" new "$(cat /mnt/upd/pkg)"
expect_eq "lower branch unchanged" lower "$(cat /mnt/dvd/pkg)"
union_umount /mnt/u
odf_check
