#!/bin/bash
# timeout: 900
# Permissions as on the branch (issue 10 D).  A rw union (ext4 upper
# over an ext4 and an xfs lower branch); uid 1234 (no groups, no
# capabilities) works through it.  What a branch's mode bits or POSIX
# ACLs deny is denied through the union with the branch's errno, and a
# refused operation copies nothing up and writes nothing to the branches
# or the ODF; what an ACL grants works and the copy keeps owner, mode
# and ACL; trusted.* and ACL changes need the rights they need on ext4;
# writing or chowning a set-id file clears the bits as ext4 does; files
# and directories made through the union get the mode and ACL that ext4
# gives (umask, default ACLs), compared with the same operations on a
# plain ext4 directory.
#
# Every numbered check runs; the test fails at the end with the list of
# the checks that failed.
. "$SRC/tests/vm/lib.sh"

b0=/mnt/b0 b1=/mnt/b1 b2=/mnt/b2 u=/mnt/u plain=/mnt/plain
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkbranch xfs "$(nth_disk 3)" $b2
mkbranch ext4 "$(nth_disk 4)" $plain
mkodf_dev "$ODF_DEV"
opts="odf=$ODF_DEV,dirs=$b0=rw:$b1=ro:$b2=ro"
umask 022

USR=1234
as_user() { setpriv --reuid=$USR --regid=$USR --clear-groups "$@"; }
# uerr 'PYTHON': as uid 1234, OK or the errno name (lib.sh's pyerr).
uerr() {
	as_user python3 -c "$PY_ERRNO_LIB
print(run(sys.argv[1]))" "$1"
}
acl() { getfacl -cp "$1" 2>&1; }
mode() { stat -c %a "$1" 2>&1; }
owner_mode() { stat -c '%u:%g %a' "$1" 2>&1; }

# absent N WHAT PATH: PATH does not exist (nothing was copied up).
absent() {
	if [ -e "$3" ] || [ -L "$3" ]; then
		check "$1" "$2" "no $3" "$3 exists"
	else
		check "$1" "$2" x x
	fi
}

# Each lower branch (e = ext4 on b1, x = xfs on b2) holds, in a
# directory named after it, owned by root:
#   ro_*    0666, ACL user:1234:r     uid 1234 may read, not write
#   noread  0644, ACL user:1234:---   uid 1234 may not read
#   secret  0600                      mode bits deny uid 1234
#   rw      0600, ACL user:1234:rw    uid 1234 may read and write
#   lk_*/   0777, ACL user:1234:r-x   no create/remove by uid 1234
#           lk_*/victim 0666
#   closed/ 0755                      mode bits deny creating
#   suid    04777, sgid 02777, tsuid 04777: uid 1234 may write
#   own     04755, gown 02755         root chowns them
#   defacl/ 0755, default ACL user:1234:rwx
#           defacl/inh 0664, no ACL
# Each refused operation gets objects of its own: a copy-up made by one
# would otherwise decide the next one.
RO="ro_w ro_a ro_t ro_rd ro_x ro_acl ro_chmod"
LK="lk_c lk_m lk_s lk_u lk_r lk_o"
for L in e:$b1 x:$b2; do
	n=${L%%:*} b=${L#*:}
	d=$b/$n
	mkdir -p $d/closed $d/defacl $d/plaind
	for f in $RO noread secret rw suid sgid tsuid own gown; do
		echo "$n $f" >$d/$f
	done
	for k in $LK; do
		mkdir $d/$k
		echo victim >$d/$k/victim
		chmod 0666 $d/$k/victim
		chmod 0777 $d/$k
		setfacl -m u:$USR:rx $d/$k
	done
	for f in $RO; do
		chmod 0666 $d/$f
		setfacl -m u:$USR:r $d/$f
	done
	chmod 0644 $d/noread
	chmod 0600 $d/secret $d/rw
	chmod 04777 $d/suid $d/tsuid
	chmod 02777 $d/sgid
	chmod 04755 $d/own
	chmod 02755 $d/gown
	setfacl -m u:$USR:- $d/noread
	setfacl -m u:$USR:rw $d/rw
	# defacl/inh: made before the default ACL, so it has no ACL.
	echo inh >$d/defacl/inh
	chmod 0664 $d/defacl/inh
	setfacl -d -m u:$USR:rwx $d/defacl
done
# An upper-only directory with a default ACL, and the plain ext4
# directories the union is compared with.
mkdir -p $b0/updefacl $plain/defacl $plain/plaind
setfacl -d -m u:$USR:rwx $b0/updefacl $plain/defacl
for f in suid sgid tsuid own gown; do
	echo p >$plain/$f
done
chmod 04777 $plain/suid $plain/tsuid
chmod 02777 $plain/sgid
chmod 04755 $plain/own
chmod 02755 $plain/gown

snap lower1 $b1
snap lower2 $b2
union_mount $u "$opts"
snap upper_before $b0

# --- Refused: nothing may change anywhere. ---
for n in e x; do
	c=$([ $n = e ] && echo 0 || echo 100)
	d=$u/$n
	# Sanity: the branch itself refuses the same operations.
	b=$([ $n = e ] && echo $b1 || echo $b2)/$n
	check $((c + 1)) "$n: branch refuses write to ro_w" EACCES \
		"$(uerr "wr('$b/ro_w', 'x', os.O_WRONLY)")"
	check $((c + 2)) "$n: write to ro_w (ACL user:$USR:r)" EACCES \
		"$(uerr "wr('$d/ro_w', 'x', os.O_WRONLY)")"
	check $((c + 3)) "$n: append to ro_a" EACCES \
		"$(uerr "wr('$d/ro_a', 'x', os.O_WRONLY | os.O_APPEND)")"
	check $((c + 4)) "$n: truncate ro_t" EACCES \
		"$(uerr "os.truncate('$d/ro_t', 0)")"
	check $((c + 5)) "$n: ro_rd is readable" "$n ro_rd" "$(as_user cat $d/ro_rd 2>&1)"
	check $((c + 6)) "$n: read noread (ACL user:$USR:---)" EACCES \
		"$(uerr "rd('$d/noread')")"
	check $((c + 7)) "$n: read secret (0600)" EACCES \
		"$(uerr "rd('$d/secret')")"
	check $((c + 8)) "$n: create in lk_c (ACL user:$USR:r-x)" EACCES \
		"$(uerr "creat('$d/lk_c/new')")"
	check $((c + 9)) "$n: mkdir in lk_m" EACCES \
		"$(uerr "os.mkdir('$d/lk_m/newdir')")"
	check $((c + 10)) "$n: symlink in lk_s" EACCES \
		"$(uerr "os.symlink('victim', '$d/lk_s/sym')")"
	check $((c + 11)) "$n: unlink lk_u/victim" EACCES \
		"$(uerr "os.unlink('$d/lk_u/victim')")"
	check $((c + 12)) "$n: rename lk_r/victim" EACCES \
		"$(uerr "os.rename('$d/lk_r/victim', '$d/lk_r/v2')")"
	check $((c + 13)) "$n: O_CREAT open in lk_o" EACCES \
		"$(uerr "wr('$d/lk_o/new', 'x')")"
	check $((c + 14)) "$n: create in closed (0755)" EACCES \
		"$(uerr "creat('$d/closed/new')")"
	check $((c + 15)) "$n: trusted.* by uid $USR" EPERM \
		"$(uerr "os.setxattr('$d/ro_x', 'trusted.x', b'1')")"
	check $((c + 16)) "$n: setfacl on a file uid $USR does not own" EPERM \
		"$(as_user setfacl -m u:99:r $d/ro_acl 2>&1 | grep -q 'not permitted' && echo EPERM || echo 'not EPERM')"
	check $((c + 17)) "$n: chmod by uid $USR" EPERM \
		"$(uerr "os.chmod('$d/ro_chmod', 0o666)")"
	k=20
	for f in $RO; do
		k=$((k + 1))
		absent $((c + k)) "$n: $f not copied up" $b0/$n/$f
	done
	for f in $LK closed; do
		k=$((k + 1))
		absent $((c + k)) "$n: $f not copied up" $b0/$n/$f
	done
	k=40
	for f in $LK; do
		k=$((k + 1))
		check $((c + k)) "$n: $f holds victim only" victim "$(ls $d/$f 2>&1 | tr '\n' ' ' | sed 's/ $//')"
	done
done
snap upper_after $b0
check 201 "upper branch unchanged by the refused operations" "$upper_before" "$upper_after"

# --- Granted by an ACL: works, and the copy keeps owner, mode, ACL. ---
for n in e x; do
	c=$([ $n = e ] && echo 300 || echo 400)
	b=$([ $n = e ] && echo $b1 || echo $b2)/$n
	check $((c + 1)) "$n: uid $USR writes rw (0600, ACL user:$USR:rw)" OK \
		"$(uerr "wr('$u/$n/rw', 'more\n', os.O_WRONLY | os.O_APPEND)")"
	check $((c + 2)) "$n: rw content" "$(printf '%s\nmore' "$n rw")" "$(cat $u/$n/rw 2>&1)"
	check $((c + 3)) "$n: rw copied up" "$(printf '%s\nmore' "$n rw")" "$(cat $b0/$n/rw 2>&1)"
	check $((c + 4)) "$n: copy's owner and mode" "$(owner_mode $b/rw)" "$(owner_mode $b0/$n/rw)"
	check $((c + 5)) "$n: copy's ACL" "$(acl $b/rw)" "$(acl $b0/$n/rw)"
	check $((c + 6)) "$n: union shows the ACL" "$(acl $b/rw)" "$(acl $u/$n/rw)"
	# Still refused after the copy-up (the upper inode is checked now).
	check $((c + 7)) "$n: uid $USR cannot chmod its copy" EPERM \
		"$(uerr "os.chmod('$u/$n/rw', 0o666)")"
done

# --- Set-id bits: cleared by an unprivileged write and by chown. ---
as_user sh -c "echo w >>$plain/suid; echo w >>$plain/sgid; echo t >$plain/tsuid"
chown $USR $plain/own $plain/gown
for n in e x; do
	c=$([ $n = e ] && echo 500 || echo 600)
	check $((c + 1)) "$n: uid $USR writes suid (04777)" OK \
		"$(uerr "wr('$u/$n/suid', 'w\n', os.O_WRONLY | os.O_APPEND)")"
	check $((c + 2)) "$n: suid mode after write, union" "$(mode $plain/suid)" "$(mode $u/$n/suid)"
	check $((c + 3)) "$n: suid mode after write, upper" "$(mode $plain/suid)" "$(mode $b0/$n/suid)"
	check $((c + 4)) "$n: uid $USR writes sgid (02777)" OK \
		"$(uerr "wr('$u/$n/sgid', 'w\n', os.O_WRONLY | os.O_APPEND)")"
	check $((c + 5)) "$n: sgid mode after write" "$(mode $plain/sgid)" "$(mode $b0/$n/sgid)"
	check $((c + 9)) "$n: uid $USR truncates tsuid (04777)" OK \
		"$(uerr "wr('$u/$n/tsuid', 't\n')")"
	check $((c + 10)) "$n: tsuid mode after O_TRUNC" "$(mode $plain/tsuid)" "$(mode $b0/$n/tsuid)"
	chown $USR $u/$n/own $u/$n/gown
	check $((c + 6)) "$n: own after chown, union" "$(owner_mode $plain/own)" "$(owner_mode $u/$n/own)"
	check $((c + 7)) "$n: own after chown, upper" "$(owner_mode $plain/own)" "$(owner_mode $b0/$n/own)"
	check $((c + 8)) "$n: gown after chown" "$(owner_mode $plain/gown)" "$(owner_mode $b0/$n/gown)"
done

# --- Creation: umask and default ACLs as on ext4. ---
# $1 = directory; makes f (open 0666), d (mkdir 0777), p (mkfifo 0666).
mkobjs() {
	python3 -c "import os, sys
d = sys.argv[1]
os.close(os.open(d + '/f', os.O_CREAT | os.O_WRONLY, 0o666))
os.mkdir(d + '/d', 0o777)
os.mkfifo(d + '/p', 0o666)" "$1"
}
mkobjs $plain/plaind
mkobjs $plain/defacl
c=700
for dir in e/plaind x/plaind e/defacl x/defacl updefacl; do
	ref=$plain/$(basename $dir | sed 's/^up//')
	mkobjs $u/$dir || fail "cannot create in $u/$dir"
	for o in f d p; do
		c=$((c + 1))
		check $c "$dir/$o: mode" "$(mode $ref/$o)" "$(mode $u/$dir/$o)"
		c=$((c + 1))
		check $c "$dir/$o: ACL" "$(acl $ref/$o)" "$(acl $b0/$dir/$o)"
	done
done

# A copy-up into a directory with a default ACL: the copy must not
# inherit an ACL the lower file does not have (it would let uid 1234
# write a file it may not write).
for n in e x; do
	c=$((c + 1))
	b=$([ $n = e ] && echo $b1 || echo $b2)/$n
	echo more >>$u/$n/defacl/inh || fail "cannot write $u/$n/defacl/inh"
	check $c "$n: defacl/inh copy's ACL" "$(acl $b/defacl/inh)" "$(acl $b0/$n/defacl/inh)"
	c=$((c + 1))
	check $c "$n: defacl/inh copy's mode" "$(owner_mode $b/defacl/inh)" "$(owner_mode $b0/$n/defacl/inh)"
	c=$((c + 1))
	check $c "$n: uid $USR writes defacl/inh" EACCES \
		"$(uerr "wr('$u/$n/defacl/inh', 'x', os.O_WRONLY)")"
done

union_umount $u
snap lower1_after $b1
snap lower2_after $b2
check 801 "ext4 lower branch unchanged" "$lower1" "$lower1_after"
check 802 "xfs lower branch unchanged" "$lower2" "$lower2_after"
odf_ns
check 803 "no ODF markers (nothing was removed)" "" "$NS"
odf_check
assert_branch_clean $b0

checks_done
