# SPDX-License-Identifier: GPL-2.0
#
# Helpers for VM tests.  A test is a bash script run as root inside the VM
# with the module loaded and these variables set:
#   SRC          the project tree (read-only)
#   TMP          a fresh writable directory (tmpfs), also the cwd
#   DISKS        all scratch block devices, wiped before each test
#   ODF_DEV      the first scratch device, BRANCH_DEVS the others
#   MODULE       unionfs.ko; MKODF, ODFCK the tools
# Exit 0 = pass, 1 = fail (the last line says why), 77 = skip.
#
# Header lines a test may carry (read by run.sh):
#   # timeout: SECONDS    default 300
#   # vm: reboot          run in a VM of its own

set -u

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "# $*"; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

sysmount() { "$SRC/tests/vm/prog/sysmount" "$@"; }

# Kernel log lines written since the last klog_mark.
klog_mark() {
	KLOG_MARK="odftest-mark-$RANDOM$RANDOM"
	echo "$KLOG_MARK" >/dev/kmsg
}
klog_new() {
	dmesg | awk -v m="$KLOG_MARK" 'index($0, m) { on = 1; next } on'
}

# mkfs_branch FSTYPE DEVICE MOUNTPOINT: a fresh branch filesystem.
# tmpfs ignores DEVICE.
mkfs_branch() {
	local fs=$1 dev=$2 mnt=$3
	mkdir -p "$mnt"
	case $fs in
	ext4) mkfs.ext4 -q -F "$dev" && mount -t ext4 "$dev" "$mnt" ;;
	xfs) mkfs.xfs -q -f "$dev" && mount -t xfs "$dev" "$mnt" ;;
	tmpfs) mount -t tmpfs tmpfs "$mnt" ;;
	*) fail "mkfs_branch: unknown filesystem $fs" ;;
	esac || fail "cannot make $fs branch on $dev"
}

# mkodf_dev DEVICE: a fresh ODF volume.
mkodf_dev() {
	"$MKODF" -q -f "$1" >/dev/null || fail "mkodf $1 failed"
}

# nth_disk N: the Nth branch device (1-based).
nth_disk() { echo "$BRANCH_DEVS" | tr ' ' '\n' | sed -n "${1}p"; }
