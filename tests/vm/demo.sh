#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: what odf-unionfs does today, shown in the test VM.
set -u
say() { printf '\n\033[1m### %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; eval "$@"; }
disk() { echo "$BRANCH_DEVS" | cut -d' ' -f"$1"; }

say "The guest runs Debian's kernel $(uname -r) with unionfs loaded"
run "grep unionfs /proc/filesystems"

say "Two read-only branches: an ext4 'DVD' and an xfs 'update' disk"
mkdir -p /media/dvd /srv/upd /srv/pkgs
mkfs.ext4 -q -F "$(disk 1)" && mount "$(disk 1)" /media/dvd
mkfs.xfs -q -f "$(disk 2)" && mount "$(disk 2)" /srv/upd
mkdir -p /media/dvd/pool/main /srv/upd/pool/main
echo "Version: 1.0" >/media/dvd/pool/main/hello.dsc
echo "Version: 1.0" >/media/dvd/pool/main/world.dsc
echo "Version: 1.1 (update)" >/srv/upd/pool/main/hello.dsc
echo "security fix" >/srv/upd/pool/main/fix.dsc
mount -o remount,ro /media/dvd
run "find /media/dvd/pool /srv/upd/pool -type f"

say "Format a metadata volume (the ODF) and check it"
run "$MKODF -L pkgs $ODF_DEV"
run "$ODFCK -fn $ODF_DEV"

say "Mount the union: updates over the DVD (this version: read-only unions)"
run "mount -t unionfs -o ro,odf=$ODF_DEV,dirs=/srv/upd=ro:/media/dvd=ro none /srv/pkgs"
run "grep unionfs /proc/mounts"
run "ls -li /srv/pkgs/pool/main/"
run "cat /srv/pkgs/pool/main/hello.dsc"
run "stat -c '%n %i' /srv/pkgs/pool/main/*.dsc | awk '{ printf \"%s: inode %s, branch id %d\\n\", \$1, \$2, \$2 / 2^48 }'"

say "Read-only: writes fail with EROFS"
run "touch /srv/pkgs/new || true"

say "Bad input fails with a clear errno and one kernel-log line"
run "umount /srv/pkgs"
run "mount -t unionfs -o ro,odf=$ODF_DEV,dirs=/srv/upd=ro:/media/dvd=ro,bogus none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"
run "mount -t unionfs -o ro,odf=/srv/upd,dirs=/media/dvd=ro none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"
run "$SRC/tests/unit/odfedit $ODF_DEV sb-set mnt_count 9 nocsum"
run "mount -t unionfs -o ro,odf=$ODF_DEV,dirs=/srv/upd=ro:/media/dvd=ro none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"

say "odfck finds and repairs the damage"
run "$ODFCK -fy $ODF_DEV; echo \"odfck exit \$?\""
run "mount -t unionfs -o ro,odf=$ODF_DEV,dirs=/srv/upd=ro:/media/dvd=ro none /srv/pkgs && ls /srv/pkgs/pool/main"
run "umount /srv/pkgs"
