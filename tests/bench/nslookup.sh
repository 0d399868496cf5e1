#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ODF work per union lookup, measured in the VM (a number to read, not an
# assertion; docs/benchmarks.md).  Run through the VM harness:
#
#   tests/vm/run.sh --kver KVER [--module OTHER.ko] \
#       --cmd "NSL_MKODF=/path/to/mkodf bash $PWD/tests/bench/nslookup.sh"
#
# (NSL_MKODF: the mkodf matching the module, for comparing with an older
# module; default the tree's.)  A lower xfs tree of depth 8, 100 files per
# level, one whiteout per level; the upper branch is tmpfs, so every
# ext4 function call below is the ODF's.  After a fresh mount and
# drop_caches, every file and directory is stat'ed once; the
# function_graph tracer, limited to unionfs_lookup, counts the dentry
# cache lookups (__d_lookup_rcu, __d_lookup) and the ext4 lookups (disk
# reads of ODF directories) made inside union lookups.  The branches'
# own lookups are the same for any module (one per branch and name), so
# the difference between modules is the ODF's.
. "$SRC/tests/vm/lib.sh"
MKODF=${NSL_MKODF:-$MKODF}

b0=/mnt/b0 b1=/mnt/b1 u=/mnt/u
mkdir -p $b0 $b1 $u
mount -t tmpfs none $b0
mkfs.xfs -q -f "$(nth_disk 1)" && mount "$(nth_disk 1)" $b1 || fail "xfs"
"$MKODF" -q -f "$ODF_DEV" >/dev/null || fail "mkodf"
d=$b1
for l in 1 2 3 4 5 6 7 8; do
	d=$d/level$l
	mkdir $d
	for i in $(seq 1 100); do : >$d/f$i; done
done
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
mount -t unionfs -o "$opts" none $u || fail "mount"
d=$u
for l in 1 2 3 4 5 6 7 8; do d=$d/level$l; rm $d/f100; done
umount $u
mount -t unionfs -o "$opts" none $u || fail "mount"
sync
echo 3 >/proc/sys/vm/drop_caches

t=/sys/kernel/tracing
[ -d $t/options ] || mount -t tracefs none $t
echo 0 >$t/tracing_on
echo function_graph >$t/current_tracer
echo unionfs_lookup >$t/set_graph_function
echo '__d_lookup_rcu __d_lookup ext4_lookup unionfs_lookup' >$t/set_ftrace_filter
echo 65536 >$t/buffer_size_kb
echo >$t/trace
echo 1 >$t/tracing_on
start=$(date +%s%N)
find $u -xdev -printf "%s\n" >/dev/null	# lstat of every name: a lookup each
names=$(find $u -xdev | wc -l)
echo 0 >$t/tracing_on
ms=$(( ($(date +%s%N) - start) / 1000000 ))
tr=$(cat $t/trace)
lookups=$(grep -c 'unionfs_lookup' <<<"$tr")
dc=$(grep -cE '__d_lookup(_rcu)?\(\)' <<<"$tr")
ext=$(grep -c 'ext4_lookup' <<<"$tr")
echo nop >$t/current_tracer
echo "RESULT module=$(modinfo -F srcversion $MODULE 2>/dev/null) names=$names union_lookups=$lookups dcache_lookups=$dc ext4_odf_lookups=$ext per_lookup_dcache=$(awk "BEGIN{printf \"%.2f\", $dc/$lookups}") per_lookup_ext4=$(awk "BEGIN{printf \"%.2f\", $ext/$lookups}") cold_find_ms=$ms"
umount $u
