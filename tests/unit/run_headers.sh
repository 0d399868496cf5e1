#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# include/odf/ must compile in userland (C11, pedantic) and in the
# kernel (Kbuild against the Debian 6.1 headers, W=1), with every size
# assertion holding.  The kernel build is compile-only; nothing is
# loaded.  One TAP line per test.
#
set -u
TOPDIR=${TOPDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/odf-hdr.XXXXXX)
trap 'rm -rf "$T"' EXIT

cat >"$T/u.c" <<'C'
#include <odf/odf_format.h>
int main(void) { return sizeof(struct odf_super) != 1024; }
C
if cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$TOPDIR/include" \
	-o "$T/u" "$T/u.c" >"$T/out" 2>&1 && "$T/u"; then
	echo "ok - headers compile in userland (C11 pedantic)"
else
	echo "not ok - headers compile in userland (C11 pedantic)"
	sed 's/^/# /' "$T/out"
fi

KDIR=
for d in /lib/modules/*/build; do
	case "$d" in */6.1.*) [ -f "$d/Makefile" ] && KDIR=$d ;; esac
done
if [ -z "$KDIR" ]; then
	echo "ok - headers compile in the kernel # SKIP no Linux 6.1 headers"
	exit 0
fi
mkdir -p "$T/k"
cat >"$T/k/odfhdr.c" <<'C'
// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include <odf/odf_format.h>
static int __init odfhdr_init(void)
{
	return sizeof(struct odf_super) + sizeof(struct odf_branch) +
	       sizeof(struct odf_map_header) + sizeof(struct odf_map_rec) +
	       sizeof(struct odf_node) + sizeof(struct odf_rd_header) +
	       sizeof(struct odf_rd_ent) + sizeof(struct odf_rdix_bucket) +
	       sizeof(struct odf_intent) + sizeof(struct odf_fh) == 0;
}
module_init(odfhdr_init);
MODULE_LICENSE("GPL");
C
printf 'obj-m := odfhdr.o\nccflags-y := -I%s/include\n' "$TOPDIR" >"$T/k/Kbuild"
if make -s -C "$KDIR" M="$T/k" W=1 modules >"$T/out" 2>&1 &&
   [ -f "$T/k/odfhdr.ko" ] && ! grep -q -i 'warning:' "$T/out"; then
	echo "ok - headers compile in the kernel ($(basename "$(dirname "$KDIR")"), W=1)"
else
	echo "not ok - headers compile in the kernel"
	sed 's/^/# /' "$T/out"
fi
