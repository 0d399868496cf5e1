#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of the VM harness: boots the test kernel in QEMU with the host
# root read-only over 9p, scratch disks as virtio-blk, and runs tests or
# one command inside it with the module loaded.
#
# usage: run.sh [options] [TEST.sh ...]     run tests (default: all)
#        run.sh [options] --cmd 'COMMAND'   run one command, show its output
#        run.sh [options] --script FILE     run one script, show its output
# options:
#   --kver KVER        kernel release (default: the Makefile's choice)
#   --kernel FILE      kernel image (default /boot/vmlinuz-KVER)
#   --modroot DIR      root holding lib/modules/KVER, or "none" (default /)
#   --module FILE      unionfs.ko (default kernel/unionfs.ko)
#   --out DIR          where logs go (default build/vm)
#   --mem MB           guest memory (default 3072)
#   --disk N=FILE      scratch disk N (1 = the ODF) starts as a copy of the
#                      image FILE (sparse copy, grown to the disk size)
#                      instead of empty; make bench gives its branch
#                      filesystems this way, made on the host
#
# Prints one TAP line per test and, last, "SUITE-RESULT: vm P F S".
# A test script may carry header lines:
#   # timeout: SECONDS   (default 300; times VM_TIMEOUT_SCALE, default 1,
#                         which make check-debug sets to 4 for its slow kernel)
#   # vm: reboot         (run it in a VM of its own)
# VM_TEST_ENV="NAME=VALUE ..." is exported to every test in the guest: the
# tests' own knobs (STRESS_SECONDS, PC_MAX_STATES, ...).
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
kver= kernel= modroot=/ module=$src/kernel/unionfs.ko out=$src/build/vm
mem=3072 mode=tests cmd= tests=()
ndisks=6 disk_size=16G
declare -A disk_from=()

while [ $# -gt 0 ]; do
	case $1 in
	--kver) kver=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--modroot) modroot=$2; shift ;;
	--module) module=$2; shift ;;
	--out) out=$2; shift ;;
	--mem) mem=$2; shift ;;
	--disk)
		n=${2%%=*} f=${2#*=}
		if ! [[ $n =~ ^[1-9]$ ]] || [ "$n" -gt $ndisks ] || [ ! -r "$f" ]; then
			echo "run.sh: --disk $2: N=FILE, N from 1 to $ndisks, FILE readable" >&2
			exit 2
		fi
		disk_from[$n]=$(realpath "$f"); shift ;;
	--cmd) mode=cmd; cmd=$2; shift ;;
	--script) mode=cmd; cmd="bash $(realpath "$2")"; shift ;;
	-h|--help) sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) tests+=("$1") ;;
	esac
	shift
done

[ -n "$kver" ] || { echo "run.sh: --kver is required" >&2; exit 2; }
[ -n "$kernel" ] || kernel=/boot/vmlinuz-$kver
for f in "$kernel" "$module"; do
	[ -r "$f" ] || { echo "run.sh: $f not found (run make first)" >&2; exit 2; }
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
initrd=$out/initramfs-$kver.cpio.gz
if [ ! -s "$initrd" ] || [ "$here/init" -nt "$initrd" ] ||
	[ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	"$here/mkinitramfs.sh" "$kver" "$initrd" "$modroot" || exit 2
fi

# KVM is used only when it really runs a guest: /dev/kvm can exist and
# still hang (no nested virtualisation).  The answer is cached.
accel_file=$out/accel
if [ ! -s "$accel_file" ]; then
	accel=tcg
	if [ -w /dev/kvm ] && timeout 20 qemu-system-x86_64 -accel kvm -m 256 \
		-display none -monitor none -serial stdio -no-reboot \
		-kernel "$kernel" -append "console=ttyS0 panic=-1" </dev/null 2>&1 |
		grep -q 'Kernel panic'; then
		accel=kvm
	fi
	echo "$accel" >"$accel_file"
fi
accel=$(cat "$accel_file")

test_header() { # FILE KEY DEFAULT
	local v
	v=$(sed -n "s/^# $2: *//p" "$1" | head -n 1)
	echo "${v:-$3}"
}

if [ "$mode" = tests ] && [ ${#tests[@]} -eq 0 ]; then
	mapfile -t tests < <(ls "$src"/tests/vm/tests/*.sh)
fi

boot=0 boot_retries=0 npass=0 nfail=0 nskip=0 ntap=0 failed_logs=()

tap() { # ok|not ok|skip, NAME, WHY
	ntap=$((ntap + 1))
	case $1 in
	ok) npass=$((npass + 1)); echo "ok $ntap - $2" ;;
	skip) nskip=$((nskip + 1)); echo "ok $ntap - $2 # SKIP $3" ;;
	*) nfail=$((nfail + 1)); echo "not ok $ntap - $2${3:+: $3}" ;;
	esac
}

# boot_vm TEST...: one VM run over the given tests (or the command).
# Leaves the run directory in $rundir.  Returns nothing useful: the
# caller reads $rundir/results.
boot_vm() {
	local job t rel tmo qpid start now cur cur_start limit i
	boot=$((boot + 1))
	rundir=$out/boot$boot
	rm -rf "$rundir"
	mkdir -p "$rundir/disks"
	for i in $(seq 1 $ndisks); do
		if [ -n "${disk_from[$i]:-}" ]; then
			cp --sparse=always "${disk_from[$i]}" "$rundir/disks/d$i.img" || {
				echo "run.sh: cannot copy ${disk_from[$i]}" >&2
				exit 1
			}
		fi
		truncate -s ">$disk_size" "$rundir/disks/d$i.img"
	done
	job=$rundir/job
	{
		echo "JOB_MODE=$mode"
		echo "JOB_BOOT=$boot"
		printf 'JOB_MODULE=%q\n' "$module"
		printf 'JOB_CMD=%q\n' "$cmd"
		printf 'JOB_ENV=%q\n' "${VM_TEST_ENV:-}"
		printf 'JOB_KEEP_DISKS=%q\n' "${!disk_from[*]}"
		printf 'JOB_TESTS=%q\n' "$(for t in "$@"; do
			rel=$(realpath --relative-to="$src" "$t")
			echo "$rel $(( $(test_header "$t" timeout 300) * ${VM_TIMEOUT_SCALE:-1} ))"
		done)"
	} >"$job"
	: >"$rundir/results"
	: >"$rundir/progress"

	# The soft-lockup and RCU-stall detectors measure how long a vCPU
	# did not run: under TCG on a loaded host (two cores, other VMs) a
	# vCPU thread can be off the CPU for 20 s, which the default
	# thresholds (20 s, 21 s) report as a kernel bug.  The kernel
	# command line below raises them to 120 s; a real lockup still
	# shows, and a hung test still times out.
	local drives=()
	for i in $(seq 1 $ndisks); do
		drives+=(-drive "file=$rundir/disks/d$i.img,if=none,id=d$i,format=raw,cache=unsafe,discard=unmap"
			-device "virtio-blk-pci,drive=d$i,serial=odfscratch$i")
	done
	qemu-system-x86_64 -machine q35 -accel "$accel" -cpu max -smp 2 -m "$mem" \
		-display none -monitor none -no-reboot \
		-serial "file:$rundir/console.log" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 odfsrc=$src printk.devkmsg=on log_buf_len=16M panic=-1 nokaslr watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=120" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$rundir,mount_tag=odfout,security_model=none" \
		"${drives[@]}" </dev/null >"$rundir/qemu.log" 2>&1 &
	qpid=$!

	# Watchdog: boot must reach the first test in 240 s (times
	# VM_TIMEOUT_SCALE) and must not leave the console silent for 90 s
	# before it does; each test gets its own timeout plus a grace period
	# for cleanup (the guest kills the test itself; this catches a hung
	# kernel).
	local scale=${VM_TIMEOUT_SCALE:-1} csize=0 cnow cstill
	start=$(date +%s)
	cur= cur_start=$start limit=$((240 * scale)) cstill=$start
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 1
		now=$(date +%s)
		if [ -z "$cur" ] && [ "$mode" = tests ]; then
			cnow=$(stat -c %s "$rundir/console.log" 2>/dev/null || echo 0)
			if [ "$cnow" != "$csize" ]; then
				csize=$cnow cstill=$now
			elif [ $((now - cstill)) -gt $((90 * scale)) ]; then
				echo "# watchdog: boot stalled, no console output for $((now - cstill))s (after $((now - start))s), killing the VM" >>"$rundir/results.host"
				kill "$qpid" 2>/dev/null
				sleep 2
				kill -9 "$qpid" 2>/dev/null
				break
			fi
		fi
		t=$(tail -n 1 "$rundir/progress" 2>/dev/null)
		if [ -n "$t" ] && [ "$t" != "$cur" ]; then
			cur=$t cur_start=$now
			limit=$(awk -v n="${t#begin }" '{ p = $1; sub(".*/", "", p); sub("\\.sh$", "", p);
				if (p == n) print $2 + 60 }' <<<"$(. "$job"; echo "$JOB_TESTS")")
			limit=${limit:-360}
		fi
		if [ "$mode" = cmd ]; then
			limit=100000
		fi
		if [ $((now - cur_start)) -gt "$limit" ]; then
			echo "# watchdog: ${cur:-boot} exceeded ${limit}s, killing the VM" >>"$rundir/results.host"
			kill "$qpid" 2>/dev/null
			sleep 2
			kill -9 "$qpid" 2>/dev/null
			break
		fi
	done
	wait "$qpid" 2>/dev/null
}

# Kernel problems anywhere in the console log of the last boot.
console_problems() {
	grep -aE 'WARNING:|BUG:|Oops|general protection fault|KASAN|UBSAN|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|self-detected stall|rcu: INFO:|blocked for more than|Kernel panic|kernel BUG|refcount_t:|soft lockup|hard LOCKUP' \
		"$rundir/console.log" | head -3
}

keep_console() { # NAME: copy the console log somewhere stable, say where
	local dst=$out/failed/$1.console.log
	mkdir -p "$out/failed"
	cp "$rundir/console.log" "$dst"
	echo "#   console log: $dst"
	if [ -f "$rundir/logs/$1.log" ]; then
		echo "#   test output: $rundir/logs/$1.log, its end:"
		tail -n 40 "$rundir/logs/$1.log" | cut -c1-200 | sed 's/^/#   | /'
		failed_logs+=("$1: console $dst, output $rundir/logs/$1.log")
	else
		failed_logs+=("$1: console $dst")
	fi
}

# Logs of earlier runs go; a stale cmd.log would be streamed otherwise.
rm -rf "$out"/boot[0-9]* "$out/failed"

if [ "$mode" = cmd ]; then
	boot_vm &
	bpid=$!
	# Stream the command's output while it runs.
	while [ ! -f "$out/boot1/cmd.log" ] && kill -0 $bpid 2>/dev/null; do sleep 0.5; done
	tail -n +1 -f --pid=$bpid "$out/boot1/cmd.log" 2>/dev/null
	wait $bpid
	rundir=$out/boot1
	rc=$(cat "$rundir/cmd.rc" 2>/dev/null || echo 125)
	grep -a '^not ok' "$rundir/results" | sed 's/^/vm-run: /'
	p=$(console_problems)
	if [ -n "$p" ]; then
		echo "vm-run: kernel problems (console log $rundir/console.log):"
		echo "$p"
		[ "$rc" = 0 ] && rc=1
	fi
	if grep -aq '^not ok' "$rundir/results"; then
		[ "$rc" = 0 ] && rc=1
	fi
	echo "vm-run: exit status $rc (console log: $rundir/console.log)"
	exit "$rc"
fi

# Group the tests into boots: runs of ordinary tests share one VM, a test
# marked "vm: reboot" gets its own.
pending=("${tests[@]}")
while [ ${#pending[@]} -gt 0 ]; do
	batch=()
	if [ "$(test_header "${pending[0]}" vm '')" = reboot ]; then
		batch=("${pending[0]}")
	else
		for t in "${pending[@]}"; do
			[ "$(test_header "$t" vm '')" = reboot ] && break
			batch+=("$t")
		done
	fi
	pending=("${pending[@]:${#batch[@]}}")

	tstart=$(date +%s)
	boot_vm "${batch[@]}"
	echo "# boot $boot: ${#batch[@]} tests, $(( $(date +%s) - tstart ))s, accel $accel"

	done_names=()
	need_reboot=0
	while IFS= read -r line; do
		case $line in
		"ok "*) name=${line#ok }; tap ok "$name"; done_names+=("$name") ;;
		"skip "*) name=${line#skip }; why=${name#*: }; name=${name%%: *}
			tap skip "$name" "$why"; done_names+=("$name") ;;
		"not ok "*) name=${line#not ok }; why=${name#*: }; name=${name%%: *}
			tap "not ok" "$name" "$why"; done_names+=("$name")
			keep_console "${name//\//_}" ;;
		reboot) need_reboot=1 ;;
		"time "*) set -- $line; echo "#   $2: $3s" ;;
		esac
	done <"$rundir/results"
	[ -f "$rundir/results.host" ] && cat "$rundir/results.host"

	# Which tests of the batch never reported?  The first one that began
	# crashed the VM or hung it; the others are run again in a new VM.
	rest=() crashed=
	started=$(sed -n 's/^begin //p' "$rundir/progress")
	for t in "${batch[@]}"; do
		n=$(basename "$t" .sh)
		found=0
		for d in "${done_names[@]}"; do [ "$d" = "$n" ] && found=1; done
		[ $found = 1 ] && continue
		if [ -z "$crashed" ] && grep -qx "$n" <<<"$started"; then
			crashed=$n
			tap "not ok" "$n" "VM died or hung during the test ($(console_problems | head -1 | cut -c1-160))"
			keep_console "$n"
		else
			rest+=("$t")
		fi
	done
	if [ -z "$crashed" ] && [ ${#rest[@]} -gt 0 ] && [ $need_reboot = 0 ] &&
		[ ${#done_names[@]} -eq 0 ] && [ $boot_retries -lt 2 ]; then
		# The VM stopped before the first test began, so no test has
		# run: a stalled TCG boot (seen once in CI: the console stopped
		# at 2.4 s of kernel time for two minutes) is not a result.
		# Boot again, at most twice per run, and say so.
		boot_retries=$((boot_retries + 1))
		echo "# boot $boot stopped before its first test: $(tail -n 1 "$rundir/console.log" | tr -d '\r' | cut -c1-120)"
		echo "#   booting again (retry $boot_retries of 2); console log kept:"
		keep_console "boot$boot-stalled" >/dev/null
		echo "#   $out/failed/boot$boot-stalled.console.log"
		failed_logs=("${failed_logs[@]:0:${#failed_logs[@]}-1}")
		pending=("${rest[@]}" "${pending[@]}")
		continue
	fi
	if [ -z "$crashed" ] && [ ${#rest[@]} -gt 0 ] && [ $need_reboot = 0 ]; then
		# The VM stopped before any test began: boot failure.
		tap "not ok" "boot$boot: VM boots and starts the tests" "$(tail -n 3 "$rundir/console.log" | tr -d '\r' | tr '\n' ' ' | cut -c1-200)"
		keep_console "boot$boot"
		cat "$rundir/guest.log" 2>/dev/null | tail -5 | sed 's/^/#   guest: /'
		break
	fi
	p=$(console_problems)
	if [ -n "$p" ] && ! grep -q '^not ok' "$rundir/results" && [ -z "$crashed" ]; then
		tap "not ok" "boot$boot: console log clean" "$(echo "$p" | head -1)"
		keep_console "boot$boot"
	fi
	pending=("${rest[@]}" "${pending[@]}")
done

echo "1..$ntap"
if [ ${#failed_logs[@]} -gt 0 ]; then
	echo "# failed tests and their logs:"
	printf '#   %s\n' "${failed_logs[@]}"
fi
echo "SUITE-RESULT: vm $npass $nfail $nskip"
[ "$nfail" -eq 0 ]
