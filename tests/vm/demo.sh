#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: what odf-unionfs does today, shown in the test VM.
set -u
say() { printf '\n\033[1m### %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; eval "$@"; }
disk() { echo "$BRANCH_DEVS" | cut -d' ' -f"$1"; }

say "The guest runs Debian's kernel $(uname -r) with unionfs loaded"
run "grep unionfs /proc/filesystems"

say "Branches: an ext4 'DVD' (read-only), an xfs 'update' disk, an ext4 upper branch"
mkdir -p /media/dvd /srv/upd /srv/rw /srv/pkgs
mkfs.ext4 -q -F "$(disk 1)" && mount "$(disk 1)" /media/dvd
mkfs.xfs -q -f "$(disk 2)" && mount "$(disk 2)" /srv/upd
mkfs.ext4 -q -F "$(disk 3)" && mount "$(disk 3)" /srv/rw && rmdir /srv/rw/lost+found
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

say "Mount the union: a writable branch over the updates over the DVD"
run "mount -t unionfs -o odf=$ODF_DEV,dirs=/srv/rw=rw:/srv/upd=ro:/media/dvd=ro none /srv/pkgs"
run "grep unionfs /proc/mounts"
run "ls -li /srv/pkgs/pool/main/"
run "cat /srv/pkgs/pool/main/hello.dsc"

say "Writes: copy-up keeps the inode number; deletions are whiteouts on the ODF"
run "stat -c '%n inode %i' /srv/pkgs/pool/main/world.dsc"
run "echo 'patched' >>/srv/pkgs/pool/main/world.dsc"
run "stat -c '%n inode %i' /srv/pkgs/pool/main/world.dsc"
run "rm /srv/pkgs/pool/main/fix.dsc && mv /srv/pkgs/pool /srv/pkgs/archive"
run "ls -R /srv/pkgs"
run "find /srv/rw /srv/upd /media/dvd -type f | sort   # branches: user data only"

say "Unmount: the ODF is clean and holds the union's metadata"
run "umount /srv/pkgs"
run "$ODFCK -fn $ODF_DEV"
run "mount -t unionfs -o odf=$ODF_DEV,dirs=/srv/rw=rw:/srv/upd=ro:/media/dvd=ro none /srv/pkgs && ls -R /srv/pkgs"
run "umount /srv/pkgs"

say "Bad input fails with a clear errno and one kernel-log line"
run "mount -t unionfs -o odf=$ODF_DEV,dirs=/srv/rw=rw:/srv/upd=ro:/media/dvd=ro,bogus none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"
run "mount -t unionfs -o odf=$ODF_DEV,dirs=/srv/upd=ro:/media/dvd=ro none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"
run "$SRC/tests/unit/odfedit $ODF_DEV sb-set mnt_count 9 nocsum"
run "mount -t unionfs -o ro,odf=$ODF_DEV,dirs=/srv/rw=rw:/srv/upd=ro:/media/dvd=ro none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"

say "odfck finds and repairs the damage"
run "$ODFCK -fy $ODF_DEV; echo \"odfck exit \$?\""
run "mount -t unionfs -o ro,odf=$ODF_DEV,dirs=/srv/rw=rw:/srv/upd=ro:/media/dvd=ro none /srv/pkgs && ls /srv/pkgs/archive/main"
run "umount /srv/pkgs"
