#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-dkms, run inside the fresh Debian 12 root of check-fresh.sh
# (FRESH_CMD): install what the project needs and dkms, build, install
# the module through DKMS for every installed kernel (make dkms-install),
# then boot the VM and check that modprobe loads the DKMS build and that
# it works (tests/vm/dkms/).  Never on a developer's host: dkms-install
# writes /usr/src and /lib/modules.  Ends with "N passed, N failed".
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -e /etc/odf-fresh-root ] ||
	{ echo "check-dkms: run through make check-dkms (a throw-away root)" >&2; exit 2; }
scripts/deps.sh
scripts/deps.sh --dkms
make --no-print-directory all
make --no-print-directory dkms-install
kver=$(scripts/kver.sh)
set +e
tests/vm/run.sh --kver "$kver" --out "$top/build/vm-dkms" tests/vm/dkms/*.sh | tee build/dkms.log
set -e
line=$(grep -a '^SUITE-RESULT: ' build/dkms.log | tail -n 1)
[ -n "$line" ] || { echo "0 passed, 1 failed"; exit 1; }
set -- $line
echo "$3 passed, $4 failed"
[ "$4" = 0 ]
