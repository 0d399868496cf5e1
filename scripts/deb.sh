#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build the Debian packages odf-tools and unionfs-dkms from the
# tree with dpkg-buildpackage (debian/), in a copy under build/deb/ so
# that nothing is written next to the tree, then run lintian on them: an
# error fails the build.  The packages end up in build/deb/.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/src/odf-unionfs-$version

rm -rf "$out"
mkdir -p "$src"
# The tree's sources (tracked, or new and not ignored), no build outputs.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		cpio -0 -pdm --quiet "$src")
else
	(cd "$top" && tar --exclude=./build -cf - .) | tar -C "$src" -xf -
fi

cd "$src"
dpkg-buildpackage -us -uc -b
cd "$out/src"
mv ./*.deb ./*.changes ./*.buildinfo "$out/"
cd "$out"
echo "deb: built $(ls ./*.deb | tr '\n' ' ')"
# lintian exits non-zero on errors (--fail-on error is its default).
lintian --info --display-info ./*.changes
echo "deb: lintian found no errors"
