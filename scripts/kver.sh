#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel release the module is built for and tested on by
# default: the one Debian's linux-image-amd64 metapackage depends on
# (Debian 12: 6.1), when its headers and image are installed; otherwise
# the newest installed linux-headers-*-amd64 that has a matching
# /boot/vmlinuz-* (the guest kernel).  Other kernels (6.12) are tested
# with KVER=.  Prints nothing when there is none.
#
# The one place that decides this: the Makefile and scripts/check.sh both
# call it, and only when they need the value, so that on a fresh machine
# it runs after "make deps" has installed the headers.
meta=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	sed -n 's/.*linux-image-\([^ ,]*-amd64\).*/\1/p')
if [ -n "$meta" ] && [ -d "/usr/src/linux-headers-$meta" ] &&
	[ -e "/boot/vmlinuz-$meta" ]; then
	echo "$meta"
	exit 0
fi
for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
	v=${d#/usr/src/linux-headers-}
	if [ -e "/boot/vmlinuz-$v" ]; then
		echo "$v"
		exit 0
	fi
done
exit 0
