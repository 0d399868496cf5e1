#!/bin/bash
# timeout: 400
# Directories listed through their one branch directory, with no readdir
# state (docs/odf-format.md section 7): a directory that has one part (a
# lower-only directory, an upper-only one) and never had a state.
# - a read-only walk (ls -lR) of lower-only and upper-only directories
#   writes no state file: only the merged directory gets one;
# - their listings are right (d_ino == st_ino, d_type, each name once)
#   and their offsets are the branch directory's own (a seek to one
#   resumes there, also after reopen and remount);
# - the directory becomes merged (an unlink of a lower name copies it
#   up): its next listing is from a new state, names right, st_ino kept;
#   a stream opened before goes on without error, and after rewinddir
#   lists the merged view;
# - del= of a lower branch is EBUSY while one of its directories is open
#   through the union (the stream reads that directory);
# - a directory that had a state keeps listing from it when it has one
#   part again (del= of its lower branch): offsets of the names left
#   stay valid.
# - an upper-only directory holding copies of lower files (entries whose
#   number an inode map record gives, handed on after the branch read;
#   the others go straight from the branch's listing) lists each name
#   once with d_ino == st_ino with every getdents64 buffer size, a seek
#   to any of its offsets resumes at the right name, and it gets no
#   state; the same on a tmpfs upper branch, which resumes a listing at
#   its cursor (a listing with small buffers lost entries there: at
#   every batch boundary before 3cf09b8, a copy that did not fit the
#   buffer in 3cf09b8).
# odfck finds the ODF clean after each part.
. "$SRC/tests/vm/lib.sh"

DL=$SRC/tests/vm/prog/dirlist
b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch xfs "$(nth_disk 2)" $b1
mkbranch ext4 "$(nth_disk 3)" $b2
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"

mkdir -p $b1/lo/sub $b2/lo2 $b0/up $b0/m $b2/m
for i in $(seq -w 0 299); do echo $i >$b1/lo/f$i; echo $i >$b2/lo2/g$i; done
for i in $(seq -w 0 49); do : >$b1/lo/sub/s$i; : >$b0/up/u$i; : >$b0/m/mu$i; : >$b2/m/ml$i; done
mkdir $b1/lo/dir && ln -s f000 $b1/lo/link && mkfifo $b1/lo/fifo

# state_list: the names in the ODF's /readdir (union unmounted).
state_list() {
	debugfs -R "ls -l /readdir" "$ODF_DEV" 2>/dev/null |
		awk '{ print $NF }' | grep -E '^[0-9a-f]{16}$' | sort
}
# offsets DIR: "D_OFF NAME" per entry (one getdents64 call).
offsets() { "$DL" -b 1048576 "$1" | awk '$1 != "end" { print $1, $4 }'; }

union_mount $u "$opts"
M=$(printf '%016x' "$(ino $u/m)") R=$(printf '%016x' "$(ino $u)")
ino_lo=$(ino $u/lo)
ls -lR $u >/dev/null || fail "ls -lR of the union"
for d in lo lo/sub lo2 up m; do union_ls $u/$d >/dev/null; done
expect_eq "lo/ lists" 304 "$(union_ls $u/lo | wc -w)"
# The branch's own offsets: the union lists lo/ as xfs does.
offsets $b1/lo >$TMP/b1lo
offsets $u/lo >$TMP/ulo
diff $TMP/b1lo $TMP/ulo >/dev/null ||
	fail "lo/ is not listed with its branch's offsets: $(diff $TMP/b1lo $TMP/ulo | head -n 4 | tr '\n' ' ')"
# A seek to an offset from the middle resumes at the next name.
off150=$(sed -n 150p $TMP/ulo | cut -d' ' -f1)
want=$(sed -n 151p $TMP/ulo | cut -d' ' -f2)
expect_eq "seek in lo/ to the 150th offset" "$want" "$("$DL" -s "$off150" -n 1 $u/lo | awk 'NR == 1 { print $4 }')"
union_umount $u
expect_eq "states after ls -lR: the merged / and m/ only" \
	"$(printf '%s\n' "$R" "$M" | sort | tr '\n' ' ')" "$(state_list | tr '\n' ' ')"
odf_check

# ---- offsets survive remount; the directory becomes merged ----
union_mount $u "$opts"
expect_eq "seek in lo/ after remount" "$want" "$("$DL" -s "$off150" -n 1 $u/lo | awk 'NR == 1 { print $4 }')"
rm $u/lo/f000 || fail "rm lo/f000"
[ -d $b0/lo ] || fail "rm of a lower name did not copy lo/ up"
expect_eq "lo/ after rm f000" 303 "$(union_ls $u/lo | wc -w)"
union_ls $u/lo | grep -qw f000 && fail "lo/f000 still listed after rm"
expect_eq "st_ino of lo/ once merged" "$ino_lo" "$(ino $u/lo)"
LO=$(printf '%016x' "$ino_lo")

# A stream of lo2/ opened before it becomes merged, rewound after.
python3 "$SRC/tests/vm/prog/halfdir.py" $u/lo2 100 $TMP/ready $TMP/go $TMP/half rewind &
half_pid=$!
for i in $(seq 100); do [ -e $TMP/ready ] && break; sleep 0.2; done
[ -e $TMP/ready ] || fail "halfdir did not read the first part of lo2/"
# del= of b2 while lo2/ (only on b2) is open: EBUSY.
klog_mark
expect_eq "del= with lo2/ open" EBUSY "$(sysmount remount $u none "del=$b2")"
rm $u/lo2/g299 && touch $u/lo2/new || fail "rm lo2/g299, touch lo2/new"
touch $TMP/go
wait $half_pid || fail "reading on in lo2/ after it was merged: $(grep error $TMP/half)"
python3 - $TMP/half <<'PY' || fail "the listing of lo2/ across its merge is wrong"
import sys
lines = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
first = [n for p, n in lines if p in ("1", "2")]
again = [n for p, n in lines if p == "3"]
want = {"g%03d" % i for i in range(299)} | {"new"}
bad = []
if len(first) != len(set(first)) or not {"g%03d" % i for i in range(299)} <= set(first):
    bad.append("first listing: %d names, %d distinct" % (len(first), len(set(first))))
if sorted(again) != sorted(want):
    bad.append("after rewinddir: %d names, missing %s, extra %s" % (
        len(again), sorted(want - set(again))[:3], sorted(set(again) - want)[:3]))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
union_ls $u/lo2 >/dev/null
union_umount $u
state_list >$TMP/states
grep -qx "$LO" $TMP/states || fail "no state for lo/ once merged and listed"
odf_check

# ---- a directory that had a state keeps it with one part ----
union_mount $u "$opts"
offsets $u/m >$TMP/m0
mount -o remount,del=$b2 $u || fail "remount del=$b2: $(dmesg | grep unionfs: | tail -n 1)"
offsets $u/m >$TMP/m1
expect_eq "m/ after del= of b2" 50 "$(grep -c ' mu' $TMP/m1)"
grep -q ' ml' $TMP/m1 && fail "names of the removed branch still listed in m/"
# d_off of an entry read from a state is its ordinal + 1: kept if the
# ordinal is (but for the last entry listed, whose d_off is the end).
python3 - $TMP/m0 $TMP/m1 <<'PY' || fail "offsets in m/ changed when it lost its lower part"
import sys
def load(p):
    lines = [l.split() for l in open(p)][:-1]
    return {n: off for off, n in lines if n.startswith("mu")}
a, b = load(sys.argv[1]), load(sys.argv[2])
bad = ["%s %s -> %s" % (n, a.get(n), b[n]) for n in b if a.get(n) != b[n]]
print("# m/: %d names compared, %d moved %s" % (len(b), len(bad), bad[:3]))
sys.exit(1 if bad or len(b) < 49 else 0)
PY
union_ls $u/m >/dev/null
union_umount $u
odf_check

# ---- an upper-only directory holding copies ----
# mix_check DIR TOTAL COPIES: DIR lists TOTAL names, COPIES of them
# copies (c*), each once with d_ino == st_ino (union_ls), the same with
# 200-, 700- and 3000-byte getdents64 buffers, and a seek to every 20th
# offset resumes at the next entry.
mix_check() {
	local d=$1 total=$2 copies=$3 names n k off b
	names=$(union_ls $d) || fail "$names"
	expect_eq "$d lists" "$total" "$(echo $names | wc -w)"
	"$DL" $d | awk '$1 != "end"' >$TMP/mix
	expect_eq "copies listed in $d" "$copies" "$(grep -c ' c[0-9]*$' $TMP/mix)"
	for b in 200 700 3000; do
		"$DL" -b $b $d | awk '$1 != "end"' >$TMP/mixb
		diff $TMP/mix $TMP/mixb >/dev/null ||
			fail "$d listed with a $b-byte buffer differs: $(diff $TMP/mix $TMP/mixb | head -n 4 | tr '\n' ' ')"
	done
	n=$(wc -l <$TMP/mix)
	for k in $(seq 1 20 $((n - 1))); do
		off=$(sed -n ${k}p $TMP/mix | awk '{ print $1 }')
		expect_eq "$d: seek to the offset of entry $k" "$(sed -n $((k + 1))p $TMP/mix)" \
			"$("$DL" -s "$off" -n 1 $d | head -n 1)"
	done
	note "$d: $total names ($copies copies) listed with 4 buffer sizes, $(( (n + 18) / 20 )) seeks"
}
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1=ro"
mkdir $u/mix || fail "mkdir mix"
for i in $(seq -w 0 199); do : >$u/mix/p$i; done
for i in $(seq -w 100 139); do
	want=$(ino $u/lo/f$i)
	echo more >>$u/lo/f$i && mv $u/lo/f$i $u/mix/c$i || fail "copy up and move lo/f$i"
	expect_eq "st_ino of mix/c$i (its origin's)" "$want" "$(ino $u/mix/c$i)"
done
[ -e $b1/mix ] && fail "mix/ made on a lower branch"
MIX=$(printf '%016x' "$(ino $u/mix)")
mix_check $u/mix 240 40
union_umount $u
state_list | grep -qx "$MIX" && fail "the upper-only mix/ got a readdir state"
odf_check

# The same on a tmpfs upper branch, which resumes a listing at its
# cursor (only a seek moves it, not a store of the position): a copy
# handed on after the branch read that did not fit the caller's buffer
# must be listed by the next read.
t0=/mnt/t0 odf2=$(nth_disk 4)
mkbranch tmpfs none $t0
mkodf_dev $odf2
mkdir $b2/tl && for i in $(seq -w 0 29); do : >$b2/tl/f$i; done
union_mount $u "odf=$odf2,dirs=$t0=rw:$b2=ro"
mkdir $u/mix || fail "mkdir mix on tmpfs"
for i in $(seq -w 0 99); do : >$u/mix/p$i; done
for i in $(seq -w 0 29); do
	echo more >>$u/tl/f$i && mv $u/tl/f$i $u/mix/c$i || fail "copy up and move tl/f$i"
done
mix_check $u/mix 130 30
union_umount $u
out=$("$ODFCK" -fn "$odf2" 2>&1) || fail "odfck -fn $odf2: $(echo "$out" | grep -v '^Pass [0-9]' | head -n 8 | tr '\n' ' ')"
