#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: the VM suite on a kernel built the way filesystem
# developers test: KASAN, lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP,
# list and refcount debugging.  Built once from Debian's
# linux-source-$DEBUG_KSERIES (6.1 by default; DEBUG_KSERIES=6.12 builds
# the 6.12 LTS from linux-source-6.12) into $DEBUG_CACHE (outside the
# source tree) and reused; the module is built against it in
# build/debug/ (build/debug-SERIES/ for another series).
#
# usage: debug-kernel.sh build    build the kernel unless it is current
#        debug-kernel.sh check    build the module for it, run the VM suite
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${DEBUG_CACHE:-/var/cache/odf-unionfs}
series=${DEBUG_KSERIES:-6.1}
tarball=$(ls "/usr/src/linux-source-$series.tar.xz" 2>/dev/null || true)
srcdir=$cache/linux-source-$series
# 6.1 keeps the directories it always had, so an existing build is reused.
if [ "$series" = 6.1 ]; then
	objdir=$cache/obj suffix=
else
	objdir=$cache/obj-$series suffix=-$series
fi
stamp=$objdir/.odf-config-stamp

# Options on top of x86_64_defconfig + kvm_guest.config.  Everything the
# tests mount is built in: the debug kernel has no module tree on the host.
options="
KASAN=y KASAN_GENERIC=y KASAN_INLINE=y
PROVE_LOCKING=y DEBUG_ATOMIC_SLEEP=y DEBUG_LIST=y DEBUG_OBJECTS=n
DETECT_HUNG_TASK=y SOFTLOCKUP_DETECTOR=y
MODULES=y MODULE_UNLOAD=y MODULE_SIG=n
DEBUG_INFO_NONE=y DEBUG_INFO_BTF=n
BLK_DEV_INITRD=y RD_GZIP=y DEVTMPFS=y TMPFS=y TMPFS_POSIX_ACL=y TMPFS_XATTR=y
VIRTIO_PCI=y VIRTIO_BLK=y VIRTIO_CONSOLE=y
NET_9P=y NET_9P_VIRTIO=y 9P_FS=y 9P_FS_POSIX_ACL=y
EXT4_FS=y EXT4_FS_POSIX_ACL=y EXT4_FS_SECURITY=y
XFS_FS=y XFS_POSIX_ACL=y OVERLAY_FS=y BLK_DEV_LOOP=y
FS_POSIX_ACL=y FANOTIFY=y INOTIFY_USER=y
MD=y BLK_DEV_DM=y DM_LOG_WRITES=y DM_FLAKEY=y DM_SNAPSHOT=y
NFSD=y NFSD_V4=y NFS_FS=y NFS_V3=y NFS_V4=y NFS_V4_1=y NFS_V4_2=y
NAMESPACES=y USER_NS=y
CRYPTO_CRC32C=y LIBCRC32C=y
"

kernel_image() { echo "$objdir/arch/x86/boot/bzImage"; }

do_build() {
	[ -n "$tarball" ] || { echo "debug-kernel: linux-source-$series is not installed (make deps)" >&2; exit 1; }
	want=$(echo "$tarball $(stat -c %Y "$tarball") $options" | md5sum | cut -d' ' -f1)
	if [ -f "$(kernel_image)" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		echo "debug-kernel: $(kernel_image) is current"
		return
	fi
	mkdir -p "$cache"
	if [ ! -f "$srcdir/Makefile" ]; then
		echo "debug-kernel: unpacking $tarball into $cache"
		rm -rf "$srcdir"
		tar -xJf "$tarball" -C "$cache"
	fi
	mkdir -p "$objdir"
	echo "debug-kernel: configuring in $objdir"
	make -s -C "$srcdir" O="$objdir" x86_64_defconfig
	make -s -C "$srcdir" O="$objdir" kvm_guest.config
	args=()
	for o in $options; do
		k=${o%%=*} v=${o#*=}
		case $v in
		y) args+=(--enable "$k") ;;
		n) args+=(--disable "$k") ;;
		*) args+=(--set-val "$k" "$v") ;;
		esac
	done
	"$srcdir"/scripts/config --file "$objdir/.config" "${args[@]}"
	make -s -C "$srcdir" O="$objdir" olddefconfig
	for o in $options; do
		k=${o%%=*} v=${o#*=}
		if [ "$v" = y ] && ! grep -q "^CONFIG_$k=y" "$objdir/.config"; then
			echo "debug-kernel: CONFIG_$k=y did not stick" >&2
			exit 1
		fi
	done
	echo "debug-kernel: building (about 15-25 minutes on 2 cores)"
	start=$(date +%s)
	make -s -C "$srcdir" O="$objdir" -j"$(nproc)" bzImage modules
	echo "debug-kernel: built in $(( $(date +%s) - start ))s"
	echo "$want" >"$stamp"
}

do_check() {
	[ -f "$(kernel_image)" ] || { echo "debug-kernel: build it first" >&2; exit 1; }
	kver=$(make -s -C "$srcdir" O="$objdir" kernelrelease)
	out=$top/build/debug$suffix
	rm -rf "$out/kernel" "$out/include"
	mkdir -p "$out"
	cp -r "$top/kernel" "$top/include" "$out/"
	make -C "$out/kernel" KDIR="$objdir"
	# The guest runs the tree's mkodf, odfck and test programs: on a
	# fresh clone nothing else has built them.
	make -s -C "$top" tools testprogs
	VM_OUT=$top/build/vm-debug$suffix
	# The debug kernel runs the suite 4-6 times slower than Debian's
	# under TCG, so by default its long tests run shorter loops (the
	# same checks, fewer rounds; make check runs them at full length)
	# and the tests are spread over DEBUG_JOBS VMs (default 2: one per
	# core of the machines here).  VM_TEST_ENV= (empty) keeps the full
	# lengths.
	export VM_TEST_ENV=${VM_TEST_ENV-"STRESS_SECONDS=40 DAMAGE_SECONDS=60 RACE_ROUNDS=5 REMOUNT_ROUNDS=6 DIRECT_SECONDS=20 PC_MAX_STATES=120 PC_BUDGET=900"}
	export VM_TIMEOUT_SCALE=${VM_TIMEOUT_SCALE:-4}
	jobs=${DEBUG_JOBS:-2}
	if [ -n "${VM_TESTS:-}" ]; then
		read -r -a all <<<"$VM_TESTS"
	else
		all=("$top"/tests/vm/tests/*.sh)
	fi
	[ "$jobs" -ge 1 ] && [ "$jobs" -le "${#all[@]}" ] || jobs=1
	echo "debug-kernel: ${#all[@]} tests in $jobs VMs, test knobs: ${VM_TEST_ENV:-full length}"
	pids=()
	rm -f "$out"/check.log "$out"/check-vm*.log
	for j in $(seq 1 "$jobs"); do
		part=()
		for i in "${!all[@]}"; do
			[ $((i % jobs + 1)) = "$j" ] && part+=("${all[$i]}")
		done
		vout=$VM_OUT log=$out/check.log
		[ "$jobs" = 1 ] || vout=$VM_OUT/vm$j log=$out/check-vm$j.log
		: >"$log"	# before tail -f below looks for it
		"$top"/tests/vm/run.sh --kver "$kver" --kernel "$(kernel_image)" \
			--modroot none --module "$out/kernel/unionfs.ko" \
			--out "$vout" "${part[@]}" >"$log" 2>&1 &
		pids+=($!)
	done
	if [ "$jobs" = 1 ]; then
		tail -n +1 -f --pid="${pids[0]}" "$out/check.log" || true
	else
		tail -n +1 -f --pid="${pids[-1]}" "$out"/check-vm*.log &
	fi
	for p in "${pids[@]}"; do wait "$p" || true; done
	sleep 1
	total_p=0 total_f=0 total_s=0 logs=("$out/check.log")
	[ "$jobs" = 1 ] || logs=("$out"/check-vm*.log)
	for l in "${logs[@]}"; do
		line=$(grep '^SUITE-RESULT: ' "$l" | tail -n 1)
		if [ -z "$line" ]; then
			echo "debug-kernel: $l has no SUITE-RESULT line: that VM run broke" >&2
			total_f=$((total_f + 1))
			continue
		fi
		set -- $line
		total_p=$((total_p + $3)) total_f=$((total_f + $4)) total_s=$((total_s + $5))
	done
	[ "$jobs" = 1 ] || grep -h '^not ok' "${logs[@]}" || true
	summary="$total_p passed, $total_f failed"
	[ "$total_s" -gt 0 ] && summary="$summary, $total_s skipped"
	echo "$summary"
	[ "$total_f" -eq 0 ]
}

case ${1:-} in
build) do_build ;;
check) do_check ;;
*) echo "usage: $0 build|check" >&2; exit 2 ;;
esac
