#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-dkms / make check-deb, run inside the fresh Debian 12 root of
# check-fresh.sh (FRESH_CMD): install what the project needs, build, hand
# the module to DKMS, then boot the VM and check that modprobe loads the
# DKMS build and that it works (tests/vm/dkms/).  Never on a developer's
# host: it writes /usr/src and /lib/modules.  Ends "N passed, N failed".
#
#   check-dkms.sh         DKMS from the tree: make dkms-install
#   check-dkms.sh --deb   the way an administrator installs it: make deb,
#                         then apt-get install of odf-tools and unionfs-dkms
#                         (whose postinst has DKMS build the module)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -e /etc/odf-fresh-root ] ||
	{ echo "check-dkms: run through make check-dkms (a throw-away root)" >&2; exit 2; }
scripts/deps.sh
make --no-print-directory all
kver=$(scripts/kver.sh)
extra=0 extra_ok=0
if [ "${1:-}" = --deb ]; then
	make --no-print-directory deb
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		./build/deb/odf-tools_*.deb ./build/deb/unionfs-dkms_*.deb
	# What the packages put where mount(8), fsck(8) and mkfs(8) look.
	for f in /sbin/mount.unionfs /usr/sbin/fsck.unionfs /usr/sbin/fsck.odf \
		/usr/sbin/mkfs.odf /usr/sbin/odfck /usr/sbin/mkodf; do
		if [ -x "$f" ]; then
			echo "ok - odf-tools installs $f"
			extra_ok=$((extra_ok + 1))
		else
			echo "not ok - odf-tools installs $f"
			extra=$((extra + 1))
		fi
	done
	dkms status -m unionfs -k "$kver"
else
	make --no-print-directory dkms-install
fi
mkdir -p build
set +e
tests/vm/run.sh --kver "$kver" --out "$top/build/vm-dkms" tests/vm/dkms/*.sh | tee build/dkms.log
set -e
line=$(grep -a '^SUITE-RESULT: ' build/dkms.log | tail -n 1)
[ -n "$line" ] || { echo "$extra_ok passed, $((1 + extra)) failed"; exit 1; }
set -- $line
echo "$(($3 + extra_ok)) passed, $(($4 + extra)) failed"
[ "$4" = 0 ] && [ "$extra" = 0 ]
