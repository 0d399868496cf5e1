// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: inodes and their attribute operations.
 *
 * A union inode wraps the inode of the branch object it shows and mirrors
 * its attributes; permission checks are the branch's own, so owner, mode
 * and ACLs mean what they mean on the branch.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/cred.h>
#include <linux/fs_stack.h>
#include <linux/namei.h>
#include <linux/posix_acl.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "unionfs.h"

static struct kmem_cache *unionfs_inode_cachep;

static void unionfs_inode_init_once(void *obj)
{
	struct unionfs_inode_info *ui = obj;

	inode_init_once(&ui->vfs_inode);
	mutex_init(&ui->copyup_lock);
	spin_lock_init(&ui->ns_lock);
}

int unionfs_init_inode_cache(void)
{
	unionfs_inode_cachep = kmem_cache_create("unionfs_inode_cache",
						 sizeof(struct unionfs_inode_info), 0,
						 SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
						 unionfs_inode_init_once);
	return unionfs_inode_cachep ? 0 : -ENOMEM;
}

void unionfs_destroy_inode_cache(void)
{
	/* Inodes are freed after an RCU grace period. */
	rcu_barrier();
	kmem_cache_destroy(unionfs_inode_cachep);
}

struct inode *unionfs_alloc_inode(struct super_block *sb)
{
	struct unionfs_inode_info *ui;

	ui = alloc_inode_sb(sb, unionfs_inode_cachep, GFP_KERNEL);
	if (!ui)
		return NULL;
	ui->lower = NULL;
	ui->origin = NULL;
	ui->retired = NULL;
	ui->lower_links = 0;
	ui->rd = NULL;
	ui->ns = NULL;
	ui->ns_seq = 0;		/* nothing kept (the number starts at 1) */
	return &ui->vfs_inode;
}

void unionfs_free_inode(struct inode *inode)
{
	kmem_cache_free(unionfs_inode_cachep, UNIONFS_I(inode));
}

void unionfs_evict_inode(struct inode *inode)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);
	struct inode *lower = ui->lower, *origin = ui->origin;
	struct unionfs_retired *r, *next;

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	unionfs_rd_free(inode);
	unionfs_ns_forget(inode);
	ui->lower = NULL;
	ui->origin = NULL;
	iput(lower);
	iput(origin);
	for (r = ui->retired; r; r = next) {
		next = r->next;
		iput(r->inode);
		kfree(r);
	}
	ui->retired = NULL;
}

/*
 * Copy-up made @upper the object behind @inode; the lower one stays
 * referenced (as the origin) so lockless readers never see it freed.
 */
void unionfs_inode_copied_up(struct inode *inode, struct inode *upper)
{
	unionfs_inode_copied_lower(inode, upper, 0);
}

/*
 * The same for a copy made on the writable lower branch @bindex (of an
 * object of a read-only branch below it, copyup.c), or on the upper
 * branch (@bindex 0).  A copy of such a copy keeps the older origin
 * referenced until the inode goes, as the retired parts of a directory
 * (unionfs_inode_moved()): a reader may still use it.
 */
void unionfs_inode_copied_lower(struct inode *inode, struct inode *real,
				unsigned int bindex)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);
	struct unionfs_retired *r;

	if (ui->origin) {
		r = kmalloc(sizeof(*r), GFP_KERNEL | __GFP_NOFAIL);
		r->inode = ui->origin;
		r->next = ui->retired;
		ui->retired = r;
	}
	ui->origin = ui->lower;
	/* Lockless readers (permission in RCU walk) see origin set first. */
	smp_store_release(&ui->lower, igrab(real));
	/* They see the new inode once they see its branch. */
	smp_store_release(&ui->bindex, bindex);
}

/*
 * A branch change moved the top part of a directory shown from lower
 * branches only (a branch added above it, or its top part's branch
 * removed), and its number, made of its oldest part, stays: the inode
 * stays too and shows the new top part @real of branch @bindex.  A
 * second inode of the same number would split the directory's locks,
 * readdir state and watches, and a working directory in it would read
 * as deleted.  The caller holds the inode lock and copyup_lock, and
 * publishes the dentry info that shows @real only after this: a reader
 * of the old info looks the name up again first (its branch
 * generation is old), so none compares an info with the other part.
 */
int unionfs_inode_moved(struct inode *inode, struct inode *real,
			unsigned int bindex, const struct vfsmount *mnt)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);
	struct unionfs_retired *r;

	r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->inode = ui->lower;
	r->next = ui->retired;
	ui->retired = r;
	/* Lockless readers (permission, RCU walk) may still use the old. */
	ihold(real);	/* the new info holds its dentry */
	smp_store_release(&ui->lower, real);
	/* As after a copy-up: whoever sees @bindex sees @real. */
	smp_store_release(&ui->bindex, bindex);
	unionfs_copy_attr(inode, real, mnt);
	return 0;
}

/*
 * The inode flags of the real inode that decide what the VFS lets a
 * caller do on the union inode.  The others describe the branch inode
 * alone (S_NOSEC, S_DAX, S_PRIVATE, S_ENCRYPTED, S_AUTOMOUNT, ...) and
 * would be wrong, some of them dangerous, on the union inode.
 */
#define UNIONFS_COPY_I_FLAGS	(S_SYNC | S_NOATIME | S_APPEND | S_IMMUTABLE)

/*
 * The owner of @real as its branch mount @mnt shows it: an idmapped
 * branch mount (mount_setattr(MOUNT_ATTR_IDMAP)) maps the file system's
 * ids, and the union shows, checks and copies up what the branch mount
 * shows, as a program using that mount directly would see.
 */
static kuid_t unionfs_real_uid(const struct vfsmount *mnt,
			       const struct inode *real)
{
	return vfsuid_into_kuid(i_uid_into_vfsuid(unionfs_mnt_idmap(mnt),
						  real));
}

static kgid_t unionfs_real_gid(const struct vfsmount *mnt,
			       const struct inode *real)
{
	return vfsgid_into_kgid(i_gid_into_vfsgid(unionfs_mnt_idmap(mnt),
						  real));
}

/*
 * The mount of the branch behind @inode, whose real inode is @real: its
 * bindex, unless a copy changed the real inode since bindex was read:
 * then the copy's branch (bindex again: it is stored after the inode),
 * or the upper branch's while it is not stored yet.
 */
static struct vfsmount *unionfs_real_mnt(struct inode *inode,
					 const struct inode *real,
					 unsigned int bindex)
{
	struct vfsmount *mnt = unionfs_branch(inode->i_sb, bindex)->root.mnt;

	if (bindex && real->i_sb != mnt->mnt_sb) {
		/* Pairs with the release in unionfs_inode_copied_lower(). */
		bindex = smp_load_acquire(&UNIONFS_I(inode)->bindex);
		mnt = unionfs_branch(inode->i_sb, bindex)->root.mnt;
		if (real->i_sb != mnt->mnt_sb)
			mnt = unionfs_upper_mnt(inode->i_sb);
	}
	return mnt;
}

/*
 * Mirror the attributes of @real, the branch object behind @inode found
 * through branch mount @mnt: what fsstack_copy_attr_all() copies (owner
 * mapped as @mnt shows it), but only the inode flags above.
 */
void unionfs_copy_attr(struct inode *inode, const struct inode *real,
		       const struct vfsmount *mnt)
{
	inode->i_mode = real->i_mode;
	inode->i_uid = unionfs_real_uid(mnt, real);
	inode->i_gid = unionfs_real_gid(mnt, real);
	inode->i_rdev = real->i_rdev;
	unionfs_set_inode_atime(inode, unionfs_inode_atime(real));
	unionfs_set_inode_mtime(inode, unionfs_inode_mtime(real));
	unionfs_set_inode_ctime(inode, unionfs_inode_ctime(real));
	inode->i_blkbits = real->i_blkbits;
	set_nlink(inode, real->i_nlink);
	inode_set_flags(inode, real->i_flags & UNIONFS_COPY_I_FLAGS,
			UNIONFS_COPY_I_FLAGS);
}

/*
 * A uino for a readdir entry that is a copy (of the upper branch or a
 * writable lower one): maps, no generation.
 */
static int unionfs_uino_copy(struct super_block *sb, unsigned int bindex,
			     u64 lower_ino, u64 *uino)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	u16 bid = sbi->branches[bindex].id;
	struct odf_map_rec *rec;
	int err;

	if (!unionfs_imap_may_hold(sbi, bid, lower_ino))
		return -ENOENT;
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	err = unionfs_imap_find(sbi, ODF_MAP_FORWARD - 1, bid, lower_ino, rec);
	/* A copy, or an original (or a copy copied again, 6.3). */
	if (!err && (rec->mr_kind == ODF_MK_UPPER ||
		     rec->mr_kind == ODF_MK_COPIED))
		*uino = le64_to_cpu(rec->mr_union_ino);
	else
		err = -ENOENT;
	kfree(rec);
	return err;
}

/*
 * Union inode numbers: an object gets a number computed from its branch's
 * persistent id and its inode number there, so looking a tree up writes
 * nothing.  Numbers that do not fit need an allocation on the ODF.
 */
int unionfs_uino_det(struct super_block *sb, unsigned int bindex,
		     u64 lower_ino, u64 *uino)
{
	if (lower_ino > ODF_UINO_LOW_MASK)
		return unionfs_imap_bigino(sb, bindex, lower_ino, uino);
	*uino = (u64)unionfs_branch(sb, bindex)->id << ODF_UINO_SHIFT |
		lower_ino;
	return 0;
}

/*
 * The number of an entry listed from branch @bindex when it needs no
 * ODF and no lock (a listing may call this under the branch directory's
 * lock): deterministic, and not a key the forward map may hold.  false
 * when it needs unionfs_uino_entry().
 */
bool unionfs_uino_quick(struct super_block *sb, unsigned int bindex,
			u64 lower_ino, u64 *uino)
{
	if (lower_ino > ODF_UINO_LOW_MASK)
		return false;
	if (unionfs_imap_may_hold(UNIONFS_SB(sb), unionfs_branch(sb, bindex)->id,
				  lower_ino))
		return false;
	/* A number that fits: computed, with no I/O. */
	return !unionfs_uino_det(sb, bindex, lower_ino, uino);
}

/* The same, for an entry listed from a branch directory. */
int unionfs_uino(struct super_block *sb, unsigned int bindex, u64 lower_ino,
		 u64 *uino)
{
	if (!unionfs_uino_copy(sb, bindex, lower_ino, uino))
		return 0;
	return unionfs_uino_det(sb, bindex, lower_ino, uino);
}

/*
 * The number readdir gives the entry @name (inode @lower_ino) of branch
 * @bindex's directory @bdir (NULL if not at hand).  As unionfs_uino(),
 * except that an UPPER record found for the entry (a copy on the upper
 * branch or a writable lower one) is checked against the object, as
 * lookup does (unionfs_ino_of(): its REVERSE record's generation): the
 * branch may have reused the inode number of a copy removed behind the
 * union's back, and d_ino must then be the new object's number, which
 * stat gives.  Only entries with a record pay the name lookup; a failed
 * or raced lookup keeps the record's number.
 */
int unionfs_uino_entry(struct super_block *sb, unsigned int bindex,
		       struct dentry *bdir, const char *name, int len,
		       u64 lower_ino, u64 *uino)
{
	const struct cred *old_cred;
	struct dentry *d;
	int err;

	if (!bdir)
		return unionfs_uino(sb, bindex, lower_ino, uino);
	err = unionfs_uino_copy(sb, bindex, lower_ino, uino);
	if (err)
		return unionfs_uino_det(sb, bindex, lower_ino, uino);
	old_cred = unionfs_override_creds(sb);
	d = lookup_one_len_unlocked(name, bdir, len);
	if (!IS_ERR(d)) {
		if (d_really_is_positive(d) && d_inode(d)->i_ino == lower_ino)
			unionfs_ino_of(sb, bindex, d_inode(d), uino, NULL);
		dput(d);
	}
	revert_creds(old_cred);
	return 0;
}

struct unionfs_iget_key {
	struct inode *lower;
	unsigned int bindex;
};

/*
 * The lower inode is part of the key: a branch object deleted behind the
 * union's back may have its inode number reused while the old union
 * inode is still cached.
 */
static int unionfs_inode_test(struct inode *inode, void *data)
{
	struct unionfs_iget_key *key = data;

	return unionfs_lower_inode(inode) == key->lower;
}

static int unionfs_inode_set(struct inode *inode, void *data)
{
	struct unionfs_iget_key *key = data;

	UNIONFS_I(inode)->lower = igrab(key->lower);
	UNIONFS_I(inode)->bindex = key->bindex;
	return UNIONFS_I(inode)->lower ? 0 : -ESTALE;
}

/*
 * A union can be a branch of another: the outer one takes its inodes'
 * locks and then the inner one's, of the same filesystem type.  Each
 * stacking depth gets its own lockdep classes, so that is not taken
 * for recursion (as overlayfs does).
 */
static void unionfs_lockdep_annotate(struct inode *inode)
{
#ifdef CONFIG_LOCKDEP
	static struct lock_class_key rwsem_key[FILESYSTEM_MAX_STACK_DEPTH];
	static struct lock_class_key dir_rwsem_key[FILESYSTEM_MAX_STACK_DEPTH];
	static struct lock_class_key lock_key[FILESYSTEM_MAX_STACK_DEPTH];
	static struct lock_class_key copyup_key[FILESYSTEM_MAX_STACK_DEPTH];
	int depth = inode->i_sb->s_stack_depth - 1;

	if (depth < 0 || depth >= FILESYSTEM_MAX_STACK_DEPTH)
		depth = 0;
	if (S_ISDIR(inode->i_mode))
		lockdep_set_class(&inode->i_rwsem, &dir_rwsem_key[depth]);
	else
		lockdep_set_class(&inode->i_rwsem, &rwsem_key[depth]);
	lockdep_set_class(&inode->i_lock, &lock_key[depth]);
	/*
	 * An outer union's copy-up holds its copyup_lock and readdir lock
	 * while it writes into an inner union (sb_writers of the union
	 * type, whose class all unions share); the inner union takes its
	 * own copyup_lock under that.  One class per depth keeps the two
	 * apart, as for i_rwsem.
	 */
	lockdep_set_class(&UNIONFS_I(inode)->copyup_lock, &copyup_key[depth]);
#endif
}

struct inode *unionfs_iget(struct super_block *sb, u64 ino, struct inode *lower,
			   unsigned int bindex)
{
	struct unionfs_iget_key key = { .lower = lower, .bindex = bindex };
	struct inode *inode;

	inode = iget5_locked(sb, ino, unionfs_inode_test, unionfs_inode_set,
			     &key);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(inode->i_state & I_NEW))
		return inode;

	inode->i_ino = ino;
	inode->i_mode = lower->i_mode;
	unionfs_copy_attr(inode, lower, unionfs_branch(sb, bindex)->root.mnt);
	fsstack_copy_inode_size(inode, lower);
#ifdef CONFIG_FS_POSIX_ACL
	/*
	 * The ACLs are the real inode's, and the real inode changes at
	 * copy-up: the VFS asks unionfs_get_acl() every time.
	 */
	inode->i_acl = ACL_DONT_CACHE;
	inode->i_default_acl = ACL_DONT_CACHE;
#endif
	switch (lower->i_mode & S_IFMT) {
	case S_IFDIR:
		inode->i_op = &unionfs_dir_iops;
		inode->i_fop = &unionfs_dir_fops;
		break;
	case S_IFREG:
		inode->i_op = &unionfs_file_iops;
		inode->i_fop = &unionfs_file_fops;
		break;
	case S_IFLNK:
		inode->i_op = &unionfs_symlink_iops;
		break;
	default:
		inode->i_op = &unionfs_special_iops;
		init_special_inode(inode, lower->i_mode, lower->i_rdev);
		break;
	}
	unionfs_lockdep_annotate(inode);
	unlock_new_inode(inode);
	return inode;
}

int unionfs_getattr(unionfs_idmap_t *idmap, const struct path *path,
		    struct kstat *stat, u32 request_mask, unsigned int flags)
{
	struct dentry *dentry = path->dentry;
	struct inode *inode = d_inode(dentry);
	struct path real;
	int err;

	unionfs_real_path(dentry, &real);
	err = unionfs_vfs_getattr(&real, stat, request_mask, flags);
	if (err)
		return err;
	if (d_inode(real.dentry) == unionfs_lower_inode(inode))
		unionfs_copy_attr(inode, d_inode(real.dentry), real.mnt);
	/*
	 * A copied-up hard link: its lower names that still show the lower
	 * object count too (docs/odf-format.md section 4).
	 */
	if (S_ISREG(inode->i_mode) && !UNIONFS_I(inode)->bindex)
		stat->nlink += READ_ONCE(UNIONFS_I(inode)->lower_links);
	stat->dev = dentry->d_sb->s_dev;
	stat->ino = inode->i_ino;
	/*
	 * A merged directory's subdirectories are spread over its branches;
	 * like btrfs, say 1 ("unknown") rather than a wrong count, which
	 * would mislead find's leaf optimisation.
	 */
	if (S_ISDIR(inode->i_mode) && unionfs_dir_is_merged(dentry))
		stat->nlink = 1;
	return 0;
}

/*
 * The owner and mode the union inode mirrors may be older than the real
 * inode's (a change made on the branch directly): the check decides on
 * the real inode's as they are now.  Lockless, like the RCU-walk caller;
 * every writer copies from the same real inode.
 */
static void unionfs_refresh_perm_attr(struct inode *inode,
				      const struct inode *real,
				      const struct vfsmount *mnt)
{
	umode_t mode = READ_ONCE(real->i_mode);
	kuid_t uid = unionfs_real_uid(mnt, real);
	kgid_t gid = unionfs_real_gid(mnt, real);

	if (inode->i_mode != mode)
		WRITE_ONCE(inode->i_mode, mode);
	if (!uid_eq(inode->i_uid, uid))
		WRITE_ONCE(inode->i_uid, uid);
	if (!gid_eq(inode->i_gid, gid))
		WRITE_ONCE(inode->i_gid, gid);
}

/*
 * Two checks, as on a branch: the caller's right on the union inode
 * (owner, mode and, through unionfs_get_acl(), the ACLs of the real
 * inode; and the LSMs, which inode_permission() asked about the union
 * inode already), then the mounter's right on the real inode, because
 * the union acts on the branch with the mounter's credentials.
 *
 * Writing to an object of a lower branch means copying it up: the branch
 * itself is not written (it may be a read-only file system), but the
 * mounter must be able to read it to copy it.
 *
 * Called in RCU walk mode too (MAY_NOT_BLOCK): nothing here sleeps, and
 * unionfs_get_acl() answers -ECHILD when it would have to.
 */
int unionfs_permission(unionfs_idmap_t *idmap, struct inode *inode, int mask)
{
	/* Pairs with unionfs_inode_copied_up(): bindex 0 is the upper. */
	unsigned int bindex = smp_load_acquire(&UNIONFS_I(inode)->bindex);
	struct inode *real = unionfs_lower_inode(inode);
	const struct cred *old_cred;
	struct vfsmount *mnt;
	int err;

	if (!real)
		return -ESTALE;
	mnt = unionfs_real_mnt(inode, real, bindex);
	unionfs_refresh_perm_attr(inode, real, mnt);
	err = generic_permission(unionfs_nop_idmap, inode, mask);
	if (err)
		return err;

	/*
	 * A lower object is written after copy-up: it must only be readable
	 * then.  One changed in place (a writable lower branch's file) must
	 * be writable itself.  Directories are written through their upper
	 * part (a create copies the directory up first).
	 */
	if (bindex && (mask & (MAY_WRITE | MAY_APPEND)) &&
	    !special_file(real->i_mode) &&
	    (S_ISDIR(real->i_mode) || !unionfs_branch_writable(inode->i_sb, bindex))) {
		mask &= ~(MAY_WRITE | MAY_APPEND);
		mask |= MAY_READ;
	}
	old_cred = override_creds(UNIONFS_SB(inode->i_sb)->creator_cred);
	err = inode_permission(unionfs_mnt_idmap(mnt), real, mask);
	revert_creds(old_cred);
	return err;
}

#ifdef CONFIG_FS_POSIX_ACL
/*
 * @acl (a reference, consumed), an ACL of @real as the file system keeps
 * it, as a mount with @idmap shows it: ACL_USER and ACL_GROUP entries
 * mapped like the owner (unionfs_copy_attr()).  A new ACL unless the
 * mount is not idmapped.
 */
struct posix_acl *unionfs_acl_through_idmap(unionfs_idmap_t *idmap,
					    const struct inode *real,
					    struct posix_acl *acl)
{
	struct user_namespace *fs_userns = i_user_ns(real);
	struct posix_acl *clone;
	unsigned int i;

	if (idmap == unionfs_nop_idmap || IS_ERR_OR_NULL(acl))
		return acl;
	clone = posix_acl_clone(acl, GFP_KERNEL);
	posix_acl_release(acl);
	if (!clone)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < clone->a_count; i++) {
		struct posix_acl_entry *e = &clone->a_entries[i];

		if (e->e_tag == ACL_USER)
			e->e_uid = vfsuid_into_kuid(make_vfsuid(idmap, fs_userns,
								e->e_uid));
		else if (e->e_tag == ACL_GROUP)
			e->e_gid = vfsgid_into_kgid(make_vfsgid(idmap, fs_userns,
								e->e_gid));
	}
	return clone;
}

/*
 * The ACL of the real inode, read with the mounter's credentials, as its
 * branch mount shows it.  In RCU walk mode only a cached ACL of a branch
 * mount that is not idmapped can be used; get_cached_acl_rcu() takes no
 * reference, so neither do we.
 */
struct posix_acl *unionfs_get_acl(struct inode *inode, int type, bool rcu)
{
	/* Pairs with unionfs_inode_copied_up(), as in the permission check. */
	unsigned int bindex = smp_load_acquire(&UNIONFS_I(inode)->bindex);
	struct inode *real = unionfs_lower_inode(inode);
	unionfs_idmap_t *idmap;
	const struct cred *old_cred;
	struct posix_acl *acl;

	if (!real)
		return rcu ? ERR_PTR(-ECHILD) : ERR_PTR(-ESTALE);
	if (!IS_POSIXACL(real))
		return NULL;
	idmap = unionfs_mnt_idmap(unionfs_real_mnt(inode, real, bindex));
	if (rcu)
		return idmap == unionfs_nop_idmap ?
		       get_cached_acl_rcu(real, type) : ERR_PTR(-ECHILD);
	old_cred = override_creds(UNIONFS_SB(inode->i_sb)->creator_cred);
	acl = unionfs_real_get_acl(real, type);
	revert_creds(old_cred);
	return unionfs_acl_through_idmap(idmap, real, acl);
}
#endif

/*
 * Attribute changes copy the object up (or change it in place on a
 * writable lower branch), then apply to the branch object with the
 * mounter's credentials, after the union checked the caller's right to
 * make them against the union inode.
 */
int unionfs_setattr(unionfs_idmap_t *idmap, struct dentry *dentry,
		    struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	const struct cred *old_cred;
	struct path real;
	bool in_place;
	int err;

	err = setattr_prepare(unionfs_nop_idmap, dentry, attr);
	if (err)
		return err;
	err = unionfs_prepare_change(dentry, &real, &in_place);
	if (err)
		return err;
	if (attr->ia_valid & (ATTR_KILL_SUID | ATTR_KILL_SGID))
		attr->ia_valid &= ~ATTR_MODE;
	attr->ia_valid &= ~ATTR_FILE;

	old_cred = override_creds(UNIONFS_SB(dentry->d_sb)->creator_cred);
	err = unionfs_do_setattr(real.mnt, real.dentry, attr);
	revert_creds(old_cred);
	if (!err) {
		unionfs_copy_attr(inode, d_inode(real.dentry), real.mnt);
		fsstack_copy_inode_size(inode, d_inode(real.dentry));
	}
	unionfs_change_done(dentry, in_place);
	return err;
}

static const char *unionfs_get_link(struct dentry *dentry, struct inode *inode,
				    struct delayed_call *done)
{
	struct path real;

	if (!dentry)
		return ERR_PTR(-ECHILD);
	unionfs_real_path(dentry, &real);
	return vfs_get_link(real.dentry, done);
}

/*
 * Extended attributes, POSIX ACLs included, are the branch object's.
 * Lower reads run with the caller's credentials so the branch applies its
 * own rules (trusted.* needs CAP_SYS_ADMIN there too).
 */
static int unionfs_xattr_get(const struct xattr_handler *handler,
			     struct dentry *dentry, struct inode *inode,
			     const char *name, void *buffer, size_t size)
{
	struct path real;

	unionfs_real_path(dentry, &real);
	return vfs_getxattr(unionfs_mnt_idmap(real.mnt), real.dentry, name,
			    buffer, size);
}

/*
 * Setting or removing (@value NULL) an attribute copies the object up
 * (or changes it in place on a writable lower branch); that branch then
 * applies its own rules with the caller's credentials.  The VFS checked
 * the union inode for user.* and trusted.* names (xattr_permission());
 * an ACL may be set only by the owner, which
 * must be checked before the copy-up too, so that a refused setfacl
 * copies nothing.
 */
int unionfs_xattr_change(struct dentry *dentry, const char *name,
			 const void *value, size_t size, int flags)
{
	struct inode *inode = d_inode(dentry);
	struct path real;
	bool in_place;
	int err;

	if ((!strcmp(name, XATTR_NAME_POSIX_ACL_ACCESS) ||
	     !strcmp(name, XATTR_NAME_POSIX_ACL_DEFAULT)) &&
	    !inode_owner_or_capable(unionfs_nop_idmap, inode))
		return -EPERM;
	err = unionfs_prepare_change(dentry, &real, &in_place);
	if (err)
		return err;
	if (value)
		err = unionfs_do_setxattr(real.mnt, real.dentry, name, value,
					  size, flags);
	else
		err = unionfs_do_removexattr(real.mnt, real.dentry, name);
	if (!err)
		unionfs_copy_attr(inode, d_inode(real.dentry), real.mnt);
	unionfs_change_done(dentry, in_place);
	return err;
}

static int unionfs_xattr_set(const struct xattr_handler *handler,
			     unionfs_idmap_t *idmap, struct dentry *dentry,
			     struct inode *inode, const char *name,
			     const void *value, size_t size, int flags)
{
	return unionfs_xattr_change(dentry, name, value, size, flags);
}

ssize_t unionfs_listxattr(struct dentry *dentry, char *list, size_t size)
{
	struct path real;

	unionfs_real_path(dentry, &real);
	return vfs_listxattr(real.dentry, list, size);
}

static const struct xattr_handler unionfs_xattr_handler = {
	.prefix	= "",	/* every name: the branch decides */
	.get	= unionfs_xattr_get,
	.set	= unionfs_xattr_set,
};

const struct xattr_handler *unionfs_xattr_handlers[] = {
	&unionfs_xattr_handler,
	NULL
};

const struct inode_operations unionfs_file_iops = {
	.setattr	= unionfs_setattr,
	.getattr	= unionfs_getattr,
	.permission	= unionfs_permission,
	.listxattr	= unionfs_listxattr,
	.unionfs_get_acl_op = unionfs_get_acl,
	UNIONFS_SET_ACL_OP
};

const struct inode_operations unionfs_symlink_iops = {
	.get_link	= unionfs_get_link,
	.setattr	= unionfs_setattr,
	.getattr	= unionfs_getattr,
	.listxattr	= unionfs_listxattr,
	.unionfs_get_acl_op = unionfs_get_acl,
	UNIONFS_SET_ACL_OP
};

const struct inode_operations unionfs_special_iops = {
	.setattr	= unionfs_setattr,
	.getattr	= unionfs_getattr,
	.permission	= unionfs_permission,
	.listxattr	= unionfs_listxattr,
	.unionfs_get_acl_op = unionfs_get_acl,
	UNIONFS_SET_ACL_OP
};
