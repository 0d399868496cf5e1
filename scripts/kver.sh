#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel release the module is built for and tested on: the
# newest installed Debian linux-headers-*-amd64 that has a matching
# /boot/vmlinuz-* (the guest kernel).  Prints nothing when there is none.
#
# The one place that decides this: the Makefile and scripts/check.sh both
# call it, and only when they need the value, so that on a fresh machine
# it runs after "make deps" has installed the headers.
for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
	v=${d#/usr/src/linux-headers-}
	if [ -e "/boot/vmlinuz-$v" ]; then
		echo "$v"
		exit 0
	fi
done
exit 0
