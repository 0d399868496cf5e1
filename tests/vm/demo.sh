#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: what odf-unionfs does today, shown in the test VM.
set -u
say() { printf '\n\033[1m### %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; eval "$@"; }

say "The guest runs Debian's kernel $(uname -r) with unionfs loaded"
run "grep unionfs /proc/filesystems"

say "A read-only branch: an ext4 filesystem with some files"
mkdir -p /mnt/dvd /srv/pkgs
mkfs.ext4 -q -F "$(echo $BRANCH_DEVS | cut -d' ' -f1)"
mount "$(echo $BRANCH_DEVS | cut -d' ' -f1)" /mnt/dvd
mkdir -p /mnt/dvd/pool/main
echo "Package: hello" >/mnt/dvd/pool/main/hello.dsc
ln -s pool/main /mnt/dvd/main
mount -o remount,ro /mnt/dvd
run "ls -l /mnt/dvd"

say "Format a metadata volume (the ODF) and check it"
run "$MKODF -L demo $ODF_DEV"
run "$ODFCK -fn $ODF_DEV"

say "Mount it as a union (this version: one read-only branch, pass-through)"
run "mount -t unionfs -o odf=$ODF_DEV,dirs=/mnt/dvd=ro none /srv/pkgs"
run "grep unionfs /proc/mounts"
run "ls -li /srv/pkgs /srv/pkgs/main/"
run "cat /srv/pkgs/main/hello.dsc"
run "stat -f -c 'type %T (0x%t), %b blocks' /srv/pkgs"

say "The union is read-only: writes fail with EROFS, the branch is untouched"
run "touch /srv/pkgs/new || true"

say "Bad mount options fail with EINVAL and one kernel-log line"
run "mount -t unionfs -o odf=$ODF_DEV,dirs=/mnt/dvd=ro,bogus none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"
run "mount -t unionfs -o odf=$ODF_DEV,dirs=/mnt/nowhere=ro none /srv/pkgs || true"
run "dmesg | grep 'unionfs:' | tail -n 1"

say "Unmount"
run "umount /srv/pkgs"
