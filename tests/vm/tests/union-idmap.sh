#!/bin/bash
# Idmapped branch mounts (issue 13): a branch given as an idmapped bind
# mount (mount_setattr(MOUNT_ATTR_IDMAP), tests/vm/prog/idmount) is seen
# through the union as through that mount: owners, group owners and the
# ids in POSIX ACLs are the mapped ones, for stat, for permission checks
# of other users and for getfacl; a copy-up writes the mapped owner and
# ACL into the upper branch; an idmapped upper branch stores, for what the
# union creates or chowns, the ids the mount maps back to.
#
# Lower ext4 b1, mounted idmapped at /mnt/b1i: file system ids 1000-1999
# show as 5000-5999, 0-999 as themselves.  Upper ext4 b0; in part 2 it is
# idmapped too (/mnt/b0i: 2000-2999 show as 7000-7999, 0-999 as
# themselves).  Every numbered check runs; the test fails at the end
# with the list of those that failed.
. "$SRC/tests/vm/lib.sh"

IDMOUNT=$SRC/tests/vm/prog/idmount
b0=/mnt/b0 b1=/mnt/b1 b0i=/mnt/b0i b1i=/mnt/b1i u=/mnt/u
mkbranch ext4 "$(nth_disk 1)" $b0
mkbranch ext4 "$(nth_disk 2)" $b1
mkdir -p $b0i $b1i
umask 022

as() { local id=$1; shift; setpriv --reuid=$id --regid=$id --clear-groups "$@"; }
# uerr UID 'PYTHON': OK or the errno name, as uid UID (lib.sh's pyerr).
uerr() {
	as "$1" python3 -c "$PY_ERRNO_LIB
print(run(sys.argv[1]))" "$2"
}
owner() { stat -c '%u:%g' "$1" 2>&1; }
aclu() { getfacl -cpn "$1" 2>/dev/null | grep '^user:[0-9]' | tr '\n' ' ' | sed 's/ $//'; }

# The lower branch, in file system ids.
mkdir $b1/d
echo "secret of 1001" >$b1/d/own && chown 1001:1001 $b1/d/own && chmod 0600 $b1/d/own
echo "shared by ACL" >$b1/d/acl && chmod 0640 $b1/d/acl
setfacl -m u:1002:rw $b1/d/acl
echo "root's" >$b1/d/rootf && chmod 0644 $b1/d/rootf
mkdir $b1/d/sub && chown 1003:1003 $b1/d/sub && chmod 0755 $b1/d/sub
chmod 0777 $b1/d

"$IDMOUNT" $b1 $b1i 0:0:1000 1000:5000:1000 || fail "idmapped mount of the lower branch"
[ "$(owner $b1i/d/own)" = 5001:5001 ] || fail "the idmapped mount shows $(owner $b1i/d/own)"

# ---- part 1: idmapped lower, plain upper ----
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$b0=rw:$b1i=ro"

check 1 "owner as the idmapped mount shows it" "5001:5001" "$(owner $u/d/own)"
check 2 "directory owner" "5003:5003" "$(owner $u/d/sub)"
check 3 "unmapped-range owner unchanged" "0:0" "$(owner $u/d/rootf)"
check 4 "mapped owner reads a 0600 file" "OK" \
	"$(uerr 5001 "open('$u/d/own').read()")"
check 5 "the file system's id does not" "EACCES" \
	"$(uerr 1001 "open('$u/d/own').read()")"
check 6 "ACL entry shown mapped (getfacl)" "user:5002:rw-" "$(aclu $u/d/acl)"
check 7 "the ACL's mapped user may read" "OK" \
	"$(uerr 5002 "open('$u/d/acl').read()")"
check 8 "the ACL's file system id may not" "EACCES" \
	"$(uerr 1002 "open('$u/d/acl').read()")"
# Copy-ups by the mapped users: the upper copy has the ids the union
# showed (the upper branch is not idmapped: they are stored as they are).
check 9 "the ACL's user writes (copy-up)" "OK" \
	"$(uerr 5002 "open('$u/d/acl','a').write('x')")"
check 10 "copy keeps the owner" "0:0" "$(owner $b0/d/acl)"
check 11 "copy has the mapped ACL" "user:5002:rw-" "$(aclu $b0/d/acl)"
check 12 "the owner writes its file (copy-up)" "OK" \
	"$(uerr 5001 "open('$u/d/own','a').write('x')")"
check 13 "copy has the mapped owner" "5001:5001" "$(owner $b0/d/own)"
check 14 "union still shows it" "5001:5001" "$(owner $u/d/own)"
check 15 "the directory's owner creates in it" "OK" \
	"$(uerr 5003 "open('$u/d/sub/new','w').write('n')")"
check 16 "the copied-up directory's owner" "5003:5003" "$(owner $b0/d/sub)"
check 17 "the new file's owner" "5003:5003" "$(owner $b0/d/sub/new)"
check 18 "the file system's id may not create there" "EACCES" \
	"$(uerr 1003 "open('$u/d/sub/new2','w')")"
check 19 "the lower branch is untouched" "1001:1001 1003:1003" \
	"$(owner $b1/d/own) $(owner $b1/d/sub)"
umount $u

# ---- part 2: both branches idmapped ----
rm -rf "${b0:?}"/*
"$IDMOUNT" $b0 $b0i 0:0:1000 2000:7000:1000 || fail "idmapped mount of the upper branch"
mkodf_dev "$ODF_DEV"
union_mount $u "odf=$ODF_DEV,dirs=$b0i=rw:$b1i=ro"
# 5001 is not in the upper mount's map: the copy cannot be owned by it.
check 20 "a copy-up whose owner the upper mount cannot store" "EOVERFLOW" \
	"$(uerr 5001 "open('$u/d/own','a').write('x')")"
check 21 "and nothing was left on the upper branch" "no" \
	"$([ -e $b0/d/own ] && echo yes || echo no)"
check 22 "a user the upper mount maps creates a file" "OK" \
	"$(uerr 7005 "open('$u/d/made','w').write('m')")"
check 23 "stored as the file system id" "2005:2005" "$(owner $b0/d/made)"
check 24 "shown as the mapped id" "7005:7005" "$(owner $u/d/made)"
check 25 "chown through the union" "OK" \
	"$(chown 7006:7006 $u/d/made 2>&1 && echo OK)"
check 26 "stored mapped back" "2006:2006" "$(owner $b0/d/made)"
check 27 "setfacl through the union" "OK" \
	"$(setfacl -m u:7007:r $u/d/made 2>&1 && echo OK)"
check 28 "the ACL stored with the file system id" "user:2007:r--" "$(aclu $b0/d/made)"
check 29 "and shown mapped" "user:7007:r--" "$(aclu $u/d/made)"
check 30 "the ACL's user reads" "OK" "$(uerr 7007 "open('$u/d/made').read()")"
umount $u
umount $b0i $b1i

odf_check
checks_done
echo PASS
