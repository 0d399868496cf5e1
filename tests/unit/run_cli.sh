#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Command-line behaviour of mkodf and odfck: what an administrator and
# fsck(8)/mkfs(8) rely on.  One TAP line per test.
#
set -u
TOPDIR=${TOPDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
MKODF=$TOPDIR/tools/mkodf/mkodf
ODFCK=$TOPDIR/tools/odfck/odfck
E=$TOPDIR/tests/unit/odfedit
T=$(mktemp -d /tmp/odf-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT

pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; shift; printf '# %s\n' "$@"; }

# expect_rc NAME RC CMD...: run CMD, require exit status RC
expect_rc() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then
		pass "$name"
	else
		fail "$name" "exit status $rc, expected $want: $*" \
			"$(head -c 2000 "$T/out")"
	fi
}

# expect_out NAME REGEX: the last command's output matches
expect_out() {
	if grep -qE -- "$2" "$T/out"; then
		pass "$1"
	else
		fail "$1" "output lacks /$2/:" "$(head -c 2000 "$T/out")"
	fi
}

IMG=$T/a.img

# --- mkodf: a fresh volume --------------------------------------------
expect_rc "mkodf creates an image of the given size" 0 \
	"$MKODF" -q "$IMG" 64M
if [ "$(stat -c %s "$IMG")" = 67108864 ]; then
	pass "mkodf image has the requested size"
else
	fail "mkodf image has the requested size" "$(stat -c %s "$IMG")"
fi
expect_rc "fresh volume passes e2fsck -fn" 0 e2fsck -fn "$IMG"
expect_rc "fresh volume passes odfck -fn" 0 "$ODFCK" -fn "$IMG"
expect_rc "fresh volume passes odfck -fp" 0 "$ODFCK" -fp "$IMG"
expect_rc "clean volume: odfck -p is quick" 0 "$ODFCK" -p "$IMG"
expect_out "clean volume: odfck -p says clean" "a.img: clean, 0 branches"
expect_rc "fresh volume has a journal" 0 \
	sh -c "dumpe2fs -h '$IMG' 2>/dev/null | grep -q has_journal"
expect_rc "fresh volume has the spec layout" 0 \
	sh -c "debugfs -R 'ls -p /' '$IMG' 2>/dev/null | grep -q '/superblock/' &&
	       debugfs -R 'ls -p /imap' '$IMG' 2>/dev/null | grep -q '/forward/' &&
	       debugfs -R 'ls -p /imap' '$IMG' 2>/dev/null | grep -q '/reverse/' &&
	       debugfs -R 'stat /ns' '$IMG' 2>/dev/null | grep -q 'Type: directory' &&
	       debugfs -R 'stat /readdir' '$IMG' 2>/dev/null | grep -q 'Type: directory' &&
	       debugfs -R 'stat /reclaim' '$IMG' 2>/dev/null | grep -q 'Type: directory'"

# --- refusing to overwrite ----------------------------------------------
expect_rc "mkodf refuses an existing ODF without -f" 1 "$MKODF" -q "$IMG"
expect_out "mkodf names the ODF it found" "contains an ODF volume"
rm -f "$T/e.img"
truncate -s 32M "$T/e.img"
mke2fs -q -F -t ext4 "$T/e.img" >/dev/null 2>&1
expect_rc "mkodf refuses an existing ext4 without -f" 1 "$MKODF" -q "$T/e.img"
expect_out "mkodf names the ext4 it found" "contains an ext2/ext3/ext4 file system"
expect_out "mkodf suggests -f" "Use -f to overwrite"
expect_rc "mkodf -f overwrites ext4" 0 "$MKODF" -q -f "$T/e.img"
expect_rc "overwritten volume passes odfck -fn" 0 "$ODFCK" -fn "$T/e.img"
rm -f "$T/x.img"
truncate -s 32M "$T/x.img"
printf 'XFSB' | dd of="$T/x.img" conv=notrunc status=none
expect_rc "mkodf refuses an XFS signature without -f" 1 "$MKODF" -q "$T/x.img"
expect_rc "mkodf -f wipes the XFS signature" 0 \
	sh -c "'$MKODF' -q -f '$T/x.img' && ! head -c 4 '$T/x.img' | grep -q XFSB"

# --- -L -U -N -b -n ------------------------------------------------------
rm -f "$IMG"
expect_rc "mkodf -L -U -N -b" 0 "$MKODF" -q -L "union-meta" \
	-U 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 -N 5000 -b 2048 "$IMG" 48M
"$E" "$IMG" dump >"$T/out" 2>&1
expect_out "-L sets the ODF label" 'label "union-meta"'
dumpe2fs -h "$IMG" >"$T/out" 2>/dev/null
expect_out "-U sets the volume UUID" "UUID: +0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
expect_out "-L sets the ext4 volume name" "volume name: +union-meta"
expect_out "-b sets the block size" "Block size: +2048"
inodes=$(awk -F: '/^Inode count/ {print $2+0}' "$T/out")
if [ "${inodes:-0}" -ge 5000 ] && [ "$inodes" -lt 6000 ]; then
	pass "-N sets the inode count"
else
	fail "-N sets the inode count" "got ${inodes:-none}"
fi
od -An -tx1 -j 32 -N 16 <(debugfs -R "cat /superblock" "$IMG" 2>/dev/null) \
	| tr -d ' \n' >"$T/out"
expect_out "-U sets the ODF superblock UUID" "^0f1e2d3c4b5a69788796a5b4c3d2e1f0$"
cp "$IMG" "$T/before.img"
expect_rc "mkodf -n -f exits 0" 0 "$MKODF" -n -f -L other "$IMG"
expect_out "mkodf -n shows the plan" "nothing written"
expect_rc "mkodf -n writes nothing" 0 cmp -s "$IMG" "$T/before.img"
expect_rc "mkodf -n does not create a missing image" 0 \
	sh -c "'$MKODF' -n '$T/none.img' 64M >/dev/null && [ ! -e '$T/none.img' ]"
truncate -s 16M "$T/small.img"
expect_rc "mkodf extends an image file to the given size" 0 \
	sh -c "'$MKODF' -q '$T/small.img' 40M && [ \$(stat -c %s '$T/small.img') = 41943040 ]"

# -z: every inode table zeroed and marked so (no lazy init by the kernel);
# without it none is marked.  e2fsck and odfck find both clean.
expect_rc "mkodf -z" 0 "$MKODF" -q -z "$T/z.img" 256M
expect_rc "mkodf -z marks every group ITABLE_ZEROED" 0 sh -c \
	"[ \$(dumpe2fs '$T/z.img' 2>/dev/null | grep -c ITABLE_ZEROED) = \$(dumpe2fs '$T/z.img' 2>/dev/null | grep -c '^Group [0-9]') ]"
expect_rc "mkodf without -z leaves the groups to lazy init" 0 sh -c \
	"'$MKODF' -q '$T/nz.img' 256M && ! dumpe2fs '$T/nz.img' 2>/dev/null | grep -q ITABLE_ZEROED"
expect_rc "mkodf -z: e2fsck -fn clean" 0 e2fsck -fn "$T/z.img"
expect_rc "mkodf -z: odfck -fn clean" 0 "$ODFCK" -fn "$T/z.img"

# --- bad arguments: usage and mke2fs/e2fsck exit codes -------------------
expect_rc "mkodf without a device: usage, exit 1" 1 "$MKODF"
expect_out "mkodf prints usage" "^Usage: mkodf"
expect_rc "mkodf unknown option: exit 1" 1 "$MKODF" -Z "$IMG"
expect_rc "mkodf bad block size: exit 1" 1 "$MKODF" -b 3000 "$T/b.img" 64M
expect_rc "mkodf bad size: exit 1" 1 "$MKODF" "$T/b.img" 64Q
expect_rc "mkodf too small: exit 1" 1 "$MKODF" "$T/b.img" 1M
expect_rc "mkodf bad UUID: exit 1" 1 "$MKODF" -U nonsense "$T/b.img" 64M
expect_rc "mkodf bad -N: exit 1" 1 "$MKODF" -N -5 "$T/b.img" 64M
expect_rc "mkodf label too long: exit 1" 1 "$MKODF" \
	-L "$(printf '%070d' 0)" "$T/b.img" 64M
expect_rc "mkodf missing image without size: exit 1" 1 "$MKODF" "$T/nope.img"
expect_rc "mkodf --help: exit 0" 0 "$MKODF" --help
expect_out "mkodf --help lists -L" "-L label"
expect_rc "mkodf -V: exit 0" 0 "$MKODF" -V
expect_out "mkodf -V prints the version" "^mkodf [0-9]"
expect_rc "odfck without a device: exit 16" 16 "$ODFCK"
expect_out "odfck prints usage" "^Usage: odfck"
expect_rc "odfck unknown option: exit 16" 16 "$ODFCK" -Z "$IMG"
expect_rc "odfck -n with -y: exit 16" 16 "$ODFCK" -n -y "$IMG"
expect_rc "odfck two devices: exit 16" 16 "$ODFCK" -n "$IMG" "$IMG"
expect_rc "odfck --help: exit 0" 0 "$ODFCK" --help
expect_rc "odfck -V: exit 0" 0 "$ODFCK" -V
expect_rc "odfck interactive without a terminal: exit 8" 8 \
	sh -c "'$ODFCK' '$IMG' </dev/null"
expect_rc "odfck on a missing device: exit 8" 8 "$ODFCK" -n "$T/nope.img"

# --- errors name the device and the cause (as e2fsck does) ---------------
expect_rc "odfck -fn on a missing device: exit 8" 8 "$ODFCK" -fn /nonexistent
expect_out "odfck says the device does not exist" \
	"^odfck: /nonexistent: the device does not exist \(No such file or directory\)$"
if [ "$(wc -l <"$T/out")" = 1 ] && ! grep -q e2fsck "$T/out"; then
	pass "odfck -fn on a missing device: one line, e2fsck not blamed"
else
	fail "odfck -fn on a missing device: one line, e2fsck not blamed" "$(cat "$T/out")"
fi
expect_rc "odfck -p on a missing device: exit 8" 8 "$ODFCK" -p "$T/nope.img"
expect_out "odfck -p says the device does not exist" \
	"^odfck: $T/nope.img: the device does not exist"
expect_rc "odfck on a directory: exit 8" 8 "$ODFCK" -fn "$T"
expect_out "odfck says a directory is not a device" \
	"^odfck: $T is a directory, not a block device or an ODF image file$"
expect_rc "odfck on a character device: exit 8" 8 "$ODFCK" -fn /dev/null
expect_out "odfck says /dev/null is not a block device" \
	"^odfck: /dev/null is not a block device or an ODF image file$"
expect_rc "odfck interactive without a terminal names the device" 8 \
	sh -c "'$ODFCK' '$IMG' </dev/null"
expect_out "odfck without a terminal suggests -p" \
	"^odfck: need terminal for interactive repairs of $IMG; use -p"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	cp "$IMG" "$T/ro.img"
	chmod 444 "$T/ro.img"
	chmod 755 "$T"
	expect_rc "odfck -p on a volume it cannot write: exit 8" 8 \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$ODFCK" -p "$T/ro.img"
	expect_out "odfck names the device and the cause" \
		"^odfck: Permission denied while opening $T/ro.img for repairs"
	expect_rc "mkodf on a volume it cannot write: exit 1" 1 \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MKODF" -q -f "$T/ro.img"
	expect_out "mkodf names the device and the cause" \
		"^mkodf: Permission denied while .* on $T/ro.img$"
	chmod 700 "$T"
else
	echo "ok - odfck/mkodf permission messages # SKIP needs root and setpriv"
fi
head -c 8M /dev/zero >"$T/zero8.img"
expect_rc "odfck -fn on a zeroed image: exit 8" 8 "$ODFCK" -fn "$T/zero8.img"
expect_out "odfck gives e2fsck's cause with the device" \
	"^odfck: Bad magic number in super-block while trying to open $T/zero8.img$"
expect_out "odfck says a volume without ext4 is not an ODF volume" \
	"^odfck: $T/zero8.img holds no ext4 file system, so it is not an ODF volume"
if ! grep -q "could not make the ext4 layer" "$T/out"; then
	pass "odfck on a zeroed image does not blame consistency"
else
	fail "odfck on a zeroed image does not blame consistency" "$(cat "$T/out")"
fi
mke2fs -q -F -t ext4 "$T/plain8.img" 16M >/dev/null 2>&1
expect_rc "odfck -fn on plain ext4: exit 8" 8 "$ODFCK" -fn "$T/plain8.img"
expect_out "odfck names the device that is not an ODF volume" \
	"^$T/plain8.img: no ODF superblock file /superblock: this is not an ODF volume"
expect_rc "mkodf on a directory: exit 1" 1 "$MKODF" "$T"
expect_out "mkodf says a directory is not a device" \
	"^mkodf: $T is a directory, not a block device or an image file$"
expect_rc "mkodf on a character device: exit 1" 1 "$MKODF" /dev/null
expect_out "mkodf says /dev/null is not a block device" \
	"^mkodf: /dev/null is not a block device or an image file$"
expect_rc "mkodf on a missing image without size: exit 1" 1 "$MKODF" "$T/nope.img"
expect_out "mkodf says the image does not exist" \
	"^mkodf: $T/nope.img does not exist; give a size"
expect_rc "mkodf in a missing directory: exit 1" 1 "$MKODF" "$T/no/dir.img" 64M
expect_out "mkodf names the path and the cause" \
	"^mkodf: cannot create $T/no/dir.img: No such file or directory$"

mke2fs -q -F -t ext4 "$T/plain.img" 32M >/dev/null 2>&1
expect_rc "odfck on ext4 without ODF: exit 8" 8 "$ODFCK" -fn "$T/plain.img"
expect_out "odfck says it is not an ODF volume" "not an ODF volume"
head -c 8M /dev/zero >"$T/zero.img"
expect_rc "odfck on garbage: exit 8" 8 "$ODFCK" -fn "$T/zero.img"

# --- installation names ---------------------------------------------------
D=$T/dest
if make -s -C "$TOPDIR/tools" install DESTDIR="$D" PREFIX=/usr >"$T/out" 2>&1 &&
   [ -x "$D/usr/sbin/mkfs.odf" ] && [ -x "$D/usr/sbin/fsck.odf" ] &&
   [ -f "$D/usr/share/man/man8/mkodf.8" ] && [ -f "$D/usr/share/man/man8/odfck.8" ] &&
   [ -f "$D/usr/share/man/man5/unionfs.5" ] &&
   [ -L "$D/usr/sbin/fsck.unionfs" ] && [ -x "$D/sbin/mount.unionfs" ] &&
   [ -f "$D/usr/share/man/man8/mount.unionfs.8" ]; then
	pass "install: mkfs.odf, fsck.odf, fsck.unionfs, mount.unionfs, man pages"
else
	fail "install: mkfs.odf, fsck.odf, fsck.unionfs, mount.unionfs, man pages" "$(cat "$T/out")"
fi
rm -f "$T/m.img"
expect_rc "mkfs.odf name works" 0 "$D/usr/sbin/mkfs.odf" -q "$T/m.img" 32M
expect_rc "fsck.odf name works" 0 "$D/usr/sbin/fsck.odf" -fn "$T/m.img"

# --- fsck(8) at boot: no terminal, -a / -p, and the fstab type ------------
# fsck(8) finds fsck.TYPE through PATH.  It takes the type from fstab, or
# else from blkid, which sees the ODF's ext4 layer (and then runs e2fsck,
# whatever -t says): boot runs "fsck -a DEVICE" (systemd-fsck) without a
# terminal, and the fstab line of the union names the ODF device with
# type unionfs (unionfs(5), FSTAB AND BOOT).
FPATH=$D/usr/sbin:$PATH
rm -f "$T/f.img"
"$MKODF" -q "$T/f.img" 32M
expect_rc "fsck.odf -a without a terminal: exit 0" 0 \
	env PATH="$FPATH" fsck.odf -a "$T/f.img" </dev/null
expect_out "fsck.odf -a says clean" "f.img: clean, 0 branches"
expect_rc "fsck.odf -p without a terminal: exit 0" 0 \
	env PATH="$FPATH" fsck.odf -p "$T/f.img" </dev/null
cat >"$T/fstab" <<FSTAB
$T/f.img /srv/pkgs unionfs dirs=/srv/upd=rw:/media/dvd=ro 0 2
FSTAB
"$E" "$T/f.img" sb-set state 2 >/dev/null 2>&1
expect_rc "boot: fsck -a DEVICE (type unionfs in fstab) repairs an unclean ODF: exit 1" 1 \
	env PATH="$FPATH" LIBMOUNT_FSTAB="$T/fstab" fsck -a -T "$T/f.img" </dev/null
expect_out "boot: fsck -a ran odfck on the ODF" "was not cleanly unmounted.*FIXED"
expect_rc "boot: fsck -A -a checks the fstab's unionfs ODF: clean now" 0 \
	env PATH="$FPATH" LIBMOUNT_FSTAB="$T/fstab" fsck -A -a -T </dev/null
expect_out "boot: fsck -A -a says clean" "f.img: clean, 0 branches"
expect_rc "fsck -t odf -p DEVICE in fstab: odfck, exit 0" 0 \
	env PATH="$FPATH" LIBMOUNT_FSTAB="$T/fstab" fsck -T -t odf -p "$T/f.img" </dev/null
expect_out "fsck -t odf -p ran odfck" "f.img: clean, 0 branches"
expect_rc "fsck without -a/-p/-n/-y and no terminal: exit 8" 8 \
	env PATH="$FPATH" LIBMOUNT_FSTAB="$T/fstab" fsck -T "$T/f.img" </dev/null
expect_out "fsck without a terminal: odfck names the device, suggests -p" \
	"^fsck.unionfs: need terminal for interactive repairs of $T/f.img; use -p"

# systemd turns the fstab line into a mount unit that needs the fsck of
# the ODF device (fsck.unionfs exists) and the mounts of the branches.
GEN=/lib/systemd/system-generators/systemd-fstab-generator
if [ -x "$GEN" ]; then
	mkdir -p "$T/gen"
	cat >"$T/fstab.boot" <<FSTAB
UUID=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 /srv/pkgs unionfs dirs=/srv/upd=rw:/media/dvd=ro,x-systemd.requires-mounts-for=/srv/upd,x-systemd.requires-mounts-for=/media/dvd 0 2
FSTAB
	env PATH="$FPATH" SYSTEMD_FSTAB="$T/fstab.boot" SYSTEMD_IN_INITRD=0 \
		SYSTEMD_PROC_CMDLINE= "$GEN" "$T/gen" "$T/gen" "$T/gen" >/dev/null 2>&1
	cp "$T/gen/srv-pkgs.mount" "$T/out" 2>/dev/null || : >"$T/out"
	expect_out "systemd: the union's mount unit needs the fsck of its ODF" \
		'^Requires=systemd-fsck@dev-disk-by\\x2duuid-0f1e2d3c\\x2d4b5a\\x2d6978\\x2d8796\\x2da5b4c3d2e1f0.service$'
	expect_out "systemd: the union mounts after its branches" \
		"^RequiresMountsFor=/srv/upd /media/dvd$"
	expect_out "systemd: the ODF device is the mount's source" \
		"^What=/dev/disk/by-uuid/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0$"
else
	echo "ok - systemd-fstab-generator ordering # SKIP systemd is not installed"
fi

# --- mount.unionfs: what reaches mount -i (a stand-in mount(8)) -----------
H=$D/sbin/mount.unionfs
mkdir -p "$T/fakebin"
printf '#!/bin/sh\necho "$@"\n' >"$T/fakebin/mount"
chmod +x "$T/fakebin/mount"
expect_rc "mount.unionfs without arguments: usage, exit 1" 1 "$H"
expect_out "mount.unionfs prints usage" "^Usage: mount.unionfs SOURCE TARGET"
expect_rc "mount.unionfs passes a device odf= through" 0 \
	env PATH="$T/fakebin:$PATH" "$H" none /srv/pkgs -n -o rw,odf=/dev/sdc1,dirs=/srv/upd=rw:/media/dvd=ro
expect_out "mount.unionfs runs mount -i -t unionfs with the options" \
	"^-i -t unionfs -n -o rw,odf=/dev/sdc1,dirs=/srv/upd=rw:/media/dvd=ro none /srv/pkgs$"
expect_rc "mount.unionfs takes the ODF from SOURCE without odf=" 0 \
	env PATH="$T/fakebin:$PATH" "$H" /dev/sdc1 /srv/pkgs -o dirs=/srv/upd
expect_out "SOURCE becomes odf=" "^-i -t unionfs -o dirs=/srv/upd,odf=/dev/sdc1 /dev/sdc1 /srv/pkgs$"
expect_rc "mount.unionfs: an unknown UUID fails with 32" 32 \
	env PATH="$T/fakebin:$PATH" "$H" none /srv/pkgs -o odf=UUID=0f1e2d3c-0000-4000-8000-00000000dead,dirs=/srv/upd
expect_out "mount.unionfs names the UUID it cannot find" \
	"^mount.unionfs: no ODF volume with UUID=0f1e2d3c-0000-4000-8000-00000000dead: blkid finds no such device"
expect_rc "mount.unionfs: an unknown LABEL fails with 32" 32 \
	env PATH="$T/fakebin:$PATH" "$H" none /srv/pkgs -o odf=LABEL=no-such-odf-label,dirs=/srv/upd
expect_out "mount.unionfs names the LABEL it cannot find" \
	"^mount.unionfs: no ODF volume with LABEL=no-such-odf-label"
