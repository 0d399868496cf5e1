#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Which kernel release (KVER) the module is built for and tested on.
#
# usage: kver.sh            Debian's default kernel: the release the
#                           linux-image-amd64 (or linux-headers-amd64)
#                           metapackage depends on (6.1 on Debian 12), if
#                           its headers and /boot/vmlinuz-* are installed;
#                           else the newest installed release that has
#                           both; nothing if there is none (make deps
#                           installs them, then make asks again)
#        kver.sh SERIES     a series such as 6.12: the newest installed
#                           release of it with headers and image, else the
#                           newest one Debian's archive has for amd64
#        kver.sh KVER       a full release (6.12.118+deb12-amd64): itself
set -u

installed() { # VERSION: headers and the guest kernel image are there
	[ -d "/usr/src/linux-headers-$1" ] && [ -e "/boot/vmlinuz-$1" ]
}

case ${1:-} in
"")
	for meta in image headers; do
		v=$(dpkg-query -W -f='${Depends}' "linux-$meta-amd64" 2>/dev/null |
			tr ',' '\n' | sed -n "s/^ *linux-$meta-\([^ ]*-amd64\).*/\1/p" |
			head -n 1)
		if [ -n "$v" ] && installed "$v"; then
			echo "$v"
			exit 0
		fi
	done
	# No metapackage (a hand-installed kernel): the newest installed.
	for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
		v=${d#/usr/src/linux-headers-}
		if installed "$v"; then
			echo "$v"
			exit 0
		fi
	done
	;;
*-amd64)
	echo "$1"
	;;
[0-9]*.[0-9]*)
	series=${1//./\\.}
	# Plain flavour only (not -cloud-amd64 or -rt-amd64).
	pat="^${series}\.[0-9][-.0-9a-z+]*-amd64\$"
	for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
		v=${d#/usr/src/linux-headers-}
		if grep -qE "$pat" <<<"$v" && ! grep -qE -- '-(cloud|rt)-amd64$' <<<"$v" &&
			installed "$v"; then
			echo "$v"
			exit 0
		fi
	done
	# Not installed: the newest release with both packages in the archive.
	heads=$(apt-cache pkgnames linux-headers- 2>/dev/null |
		sed -n 's/^linux-headers-//p' | grep -E "$pat" |
		grep -vE -- '-(cloud|rt)-amd64$' | sort -V -r)
	for v in $heads; do
		if apt-cache show "linux-image-$v" >/dev/null 2>&1; then
			echo "$v"
			exit 0
		fi
	done
	echo "kver.sh: no Debian amd64 kernel $1 installed or in the archive (apt-get update?)" >&2
	exit 1
	;;
*)
	echo "kver.sh: '$1' is neither a series (6.12) nor a release (6.12.118+deb12-amd64)" >&2
	exit 2
	;;
esac
