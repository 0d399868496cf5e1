# SPDX-License-Identifier: GPL-2.0
#
# The guest side of the VM harness, sourced by guest-run.sh (PID 1).
# Loads the module, runs each test of the job in a fresh state with its
# own timeout, checks the kernel log after each one, unloads the module.
#
# Job variables (written by run.sh into $OUT/job):
#   JOB_MODE     tests | cmd
#   JOB_TESTS    test scripts, paths relative to $SRC, one per line,
#                each "PATH TIMEOUT"
#   JOB_CMD      the command (cmd mode)
#   JOB_MODULE   absolute path of unionfs.ko
#   JOB_BOOT     boot number, names the per-boot checks
#   JOB_ENV      NAME=VALUE words exported to every test (VM_TEST_ENV on
#                the host: the tests' own knobs, e.g. STRESS_SECONDS)
#   JOB_KEEP_DISKS numbers of the scratch disks the host filled from an
#                image (run.sh --disk): never wiped

# A kernel log line matching this fails the test that produced it.
KLOG_BAD='WARNING:|BUG:|Oops|Busy inodes|general protection fault|KASAN|UBSAN|'\
'possible circular locking|inconsistent lock state|possible recursive locking|'\
'suspicious RCU usage|rcu_sched self-detected stall|rcu: INFO:|detected stalls|'\
'blocked for more than|hung_task|Kernel panic|kernel BUG|refcount_t:|'\
'list_add corruption|list_del corruption|sleeping function called from invalid context|'\
'lock held when returning to user space|workqueue lockup|soft lockup|hard LOCKUP'

result() { echo "$*" >>"$OUT/results"; }
console() { echo "vm: $*" >/dev/console; }
kmsg() { echo "odftest: $*" >/dev/kmsg; }

# Unmount what a test left mounted under the scratch areas (its branch
# filesystems, normally), deepest first.  Prints the unions among them: a
# test must unmount the unions it made, since a union that cannot be
# unmounted is a bug.
unmount_leftovers() {
	local left
	awk '$3 == "unionfs" { print $2 }' /proc/self/mounts
	left=$(awk -v src="$SRC" '($2 ~ "^/(mnt|media|srv|tmp)/" && $2 != src) ||
		$3 == "unionfs" { print $2 }' /proc/self/mounts | sort -r)
	for m in $left; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
}

# Fresh scratch disks: discard everything (the host file becomes a hole
# again), or zero the start if discard is not available.  The disks the
# host filled from an image (run.sh --disk; JOB_KEEP_DISKS, numbers from
# 1) are left as they are.
wipe_disks() {
	local d i=0
	for d in $DISKS; do
		i=$((i + 1))
		[[ " ${JOB_KEEP_DISKS:-} " == *" $i "* ]] && continue
		blkdiscard -f "$d" 2>/dev/null ||
			dd if=/dev/zero of="$d" bs=1M count=32 conv=fsync status=none
	done
}

# Empty a scratch directory, except the way to the project tree if it was
# bound back inside it (see guest-run.sh).
clean_dir() {
	local e
	for e in "$1"/* "$1"/.[!.]*; do
		[ -e "$e" ] || continue
		case $SRC/ in "$e"/*) continue ;; esac
		rm -rf "$e"
	done
}

fresh_state() {
	unmount_leftovers >/dev/null
	wipe_disks
	clean_dir /tmp
	clean_dir /mnt
	echo 3 >/proc/sys/vm/drop_caches
}

# Kernel log lines between the markers of test number $1.
klog_since() {
	dmesg | awk -v m="odftest: begin #$1 " 'index($0, m) { on = 1; next } on'
}

setup_guest() {
	local d
	DISKS=
	for d in /dev/vd[a-z]; do
		[ -b "$d" ] && DISKS="$DISKS $d"
	done
	DISKS=${DISKS# }
	ODF_DEV=${DISKS%% *}
	BRANCH_DEVS=${DISKS#* }
	export DISKS ODF_DEV BRANCH_DEVS
	export MODULE=$JOB_MODULE
	export MKODF=$SRC/tools/mkodf/mkodf ODFCK=$SRC/tools/odfck/odfck
	sysctl -qw kernel.hung_task_timeout_secs=60 2>/dev/null
	for fs in ext4 xfs overlay; do
		grep -qw "$fs" /proc/filesystems || modprobe "$fs"
	done
	grep -q '^loop ' /proc/modules || modprobe loop 2>/dev/null
}

load_module() {
	local out bad dep
	kmsg "begin #0 module-load"
	# insmod does not resolve dependencies (crc32c); modprobe them first.
	for dep in $(modinfo -F depends "$MODULE" | tr ',' ' '); do
		grep -q "^$dep " /proc/modules || modprobe "$dep" 2>/dev/null
	done
	if ! out=$(insmod "$MODULE" 2>&1); then
		result "not ok boot$JOB_BOOT: module loads: insmod: $out"
		return 1
	fi
	if ! grep -qw unionfs /proc/filesystems; then
		result "not ok boot$JOB_BOOT: module loads: unionfs not in /proc/filesystems"
		return 1
	fi
	bad=$(klog_since 0 | grep -E "$KLOG_BAD")
	if [ -n "$bad" ]; then
		result "not ok boot$JOB_BOOT: module loads: kernel log: $(echo "$bad" | head -2 | tr '\n' ' ')"
		return 1
	fi
	return 0
}

unload_module() {
	local out bad dep bad
	unmount_leftovers >/dev/null
	kmsg "begin #99999 module-unload"
	if grep -q '^unionfs ' /proc/modules; then
		if ! out=$(rmmod unionfs 2>&1); then
			result "not ok boot$JOB_BOOT: module unloads: rmmod: $out"
			return
		fi
	fi
	# Give RCU callbacks and workqueues a moment to complain.
	sleep 1
	bad=$(dmesg | grep -E "$KLOG_BAD" | grep -v 'odftest:')
	if [ -n "$bad" ]; then
		result "not ok boot$JOB_BOOT: module unloads, kernel log clean: $(echo "$bad" | head -3 | tr '\n' ' ')"
		return
	fi
	result "ok boot$JOB_BOOT: module unloads, kernel log clean"
}

# Each user process: pid, state, wait channel, command line; the kernel
# stack of those running or in uninterruptible sleep.
hang_snapshot() {
	local pid st
	ps -eo pid=,stat=,wchan:32=,args= --sort=pid | grep -v '\[.*\]$' | cut -c1-200
	ps -eo pid=,stat= | while read -r pid st; do
		case $st in
		D*|R*) echo "--- stack of $pid ($st):"; cat "/proc/$pid/stack" 2>/dev/null ;;
		esac
	done
}

# run_one SEQ PATH TIMEOUT
run_one() {
	local seq=$1 path=$2 tmo=$3 name rc bad left log t0
	name=${path##*/}	# tests/vm/tests/X.sh and tests/vm/long/X.sh are X
	name=${name%.sh}
	log=$OUT/logs/$name.log
	mkdir -p "$OUT/logs"
	fresh_state
	mkdir -p /tmp/t
	echo "begin $name" >>"$OUT/progress"
	console "begin $name"
	kmsg "begin #$seq $name"
	t0=$(date +%s)
	# Shortly before the timeout, what every process is doing, so that
	# a test that hangs says where.
	(sleep $((tmo > 10 ? tmo - 5 : tmo)); hang_snapshot >"$log.hang" 2>&1) &
	local snap=$!
	(cd /tmp/t && TMP=/tmp/t TEST_NAME=$name \
		timeout -k 10 "$tmo" bash "$SRC/$path") >"$log" 2>&1
	rc=$?
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		wait $snap 2>/dev/null
		{ echo "--- processes shortly before the timeout:"; cat "$log.hang"; } >>"$log"
	fi
	pkill -P $snap 2>/dev/null
	kill $snap 2>/dev/null
	wait $snap 2>/dev/null
	rm -f "$log.hang"
	kmsg "end #$seq $name rc=$rc"
	result "time $name $(($(date +%s) - t0))"
	left=$(unmount_leftovers)
	bad=$(klog_since "$seq" | grep -E "$KLOG_BAD")
	if [ -n "$bad" ]; then
		{ echo "--- kernel log:"; klog_since "$seq"; } >>"$log"
		result "not ok $name: kernel log: $(echo "$bad" | head -2 | tr '\n' ' ')"
		# The kernel is not trustworthy any more: the host reboots
		# the VM for the remaining tests.
		result "reboot"
		return 1
	fi
	case $rc in
	0)
		if [ -n "$left" ]; then
			result "not ok $name: left mounted: $(echo $left)"
		else
			result "ok $name"
		fi ;;
	77) result "skip $name: $(tail -n 1 "$log")" ;;
	124|137) result "not ok $name: timed out after ${tmo}s" ;;
	*) result "not ok $name: exit $rc: $(tail -n 1 "$log")" ;;
	esac
	return 0
}

guest_main() {
	local seq=0 path tmo
	setup_guest
	for kv in ${JOB_ENV:-}; do
		case $kv in
		[A-Z_]*=*) export "$kv" ;;
		esac
	done
	if ! load_module; then
		return
	fi
	case $JOB_MODE in
	tests)
		while read -r path tmo; do
			[ -n "$path" ] || continue
			seq=$((seq + 1))
			run_one "$seq" "$path" "$tmo" || return
		done <<<"$JOB_TESTS"
		;;
	cmd)
		fresh_state
		mkdir -p /tmp/t
		console "running: $JOB_CMD"
		(cd /tmp/t && TMP=/tmp/t bash -c "$JOB_CMD") >"$OUT/cmd.log" 2>&1
		echo "$?" >"$OUT/cmd.rc"
		unmount_leftovers >/dev/null
		;;
	esac
	unload_module
}
