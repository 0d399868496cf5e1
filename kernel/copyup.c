// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: copy-up (docs/odf-format.md section 9.6).
 *
 * An object that lives only on a lower branch is copied to the upper
 * branch before anything changes it: parents first (directories, with
 * their attributes), then the object.  A regular file is written into an
 * O_TMPFILE in the upper parent (data with its holes, extended
 * attributes, owner, mode, times), its inode map records are committed,
 * and only then is it linked at its name, so a crash never leaves a
 * partial file visible and the copy keeps the union inode number.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs_stack.h>
#include <linux/magic.h>
#include <linux/namei.h>
#include <linux/posix_acl_xattr.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include <linux/xattr.h>
#include "unionfs.h"

#define UNIONFS_COPY_CHUNK	SZ_1M

/* Copy the data ranges of @in to @out; holes are skipped (stay holes). */
static int unionfs_copy_data(struct file *in, struct file *out, loff_t size)
{
	bool seek_data = in->f_mode & FMODE_LSEEK;
	loff_t pos = 0;

	while (pos < size) {
		loff_t data = pos, end = size, opos;
		long n;

		if (fatal_signal_pending(current))
			return -EINTR;
		if (seek_data) {
			data = vfs_llseek(in, pos, SEEK_DATA);
			if (data == -ENXIO)
				break;		/* a hole up to the end */
			if (data < 0) {
				seek_data = false;
				data = pos;
			} else {
				end = vfs_llseek(in, data, SEEK_HOLE);
				if (end < 0 || end > size)
					end = size;
			}
		}
		pos = data;
		while (pos < end) {
			size_t len = min_t(loff_t, end - pos, UNIONFS_COPY_CHUNK);

			if (fatal_signal_pending(current))
				return -EINTR;
			opos = pos;
			n = unionfs_do_splice(in, &pos, out, &opos, len);
			if (n < 0)
				return n;
			if (n == 0)
				return 0;	/* the file shrank under us */
			cond_resched();
		}
	}
	return 0;
}

/*
 * XFS lists each ACL twice: as system.posix_acl_* and as the
 * trusted.SGI_ACL_* attribute that holds it on disk.  The ACL is copied
 * by its system name; the on-disk name means nothing on another branch.
 */
static bool unionfs_xattr_fs_private(const struct path *lower, const char *name)
{
	return lower->mnt->mnt_sb->s_magic == XFS_SUPER_MAGIC &&
	       !strncmp(name, XATTR_TRUSTED_PREFIX "SGI_ACL_",
			XATTR_TRUSTED_PREFIX_LEN + 8);
}

/*
 * The copy was made in the upper parent, which may have a default ACL:
 * the copy then got ACLs the lower object does not have, maybe granting
 * what the lower object denies.  Remove them.
 */
static int unionfs_drop_acl(struct vfsmount *umnt, struct dentry *upper,
			    const char *name)
{
	unionfs_idmap_t *uidmap = unionfs_mnt_idmap(umnt);
	ssize_t size;
	int err;

	/* Look first: removing costs a transaction even when there is none. */
	size = unionfs_vfs_getxattr(uidmap, upper, name, NULL, 0);
	if (size == -ENODATA || size == -EOPNOTSUPP)
		return 0;
	if (size < 0)
		return size;
	err = unionfs_do_removexattr(umnt, upper, name);
	return err == -ENODATA ? 0 : err;
}

static int unionfs_drop_inherited_acls(struct vfsmount *umnt,
				       struct dentry *upper, bool has_access,
				       bool has_default)
{
	int err = 0;

	if (!IS_POSIXACL(d_inode(upper)))
		return 0;
	if (!has_access)
		err = unionfs_drop_acl(umnt, upper, XATTR_NAME_POSIX_ACL_ACCESS);
	if (!err && !has_default && d_is_dir(upper))
		err = unionfs_drop_acl(umnt, upper, XATTR_NAME_POSIX_ACL_DEFAULT);
	return err;
}

/*
 * Copy every extended attribute the target branch (mount @umnt: the upper
 * branch, or a writable lower one) accepts and the LSMs let through (they
 * may keep their own labels off the copy).
 */
static int unionfs_copy_xattrs(struct vfsmount *umnt, const struct path *lower,
			       struct dentry *upper)
{
	unionfs_idmap_t *lidmap = unionfs_mnt_idmap(lower->mnt);
	ssize_t list_size, size;
	char *names, *name, *value = NULL;
	bool has_access = false, has_default = false;
	size_t vsize = 0;
	int err = 0;

	list_size = vfs_listxattr(lower->dentry, NULL, 0);
	if (list_size <= 0) {
		if (list_size && list_size != -EOPNOTSUPP)
			return list_size;
		return unionfs_drop_inherited_acls(umnt, upper, false, false);
	}
	names = kvzalloc(list_size, GFP_KERNEL);
	if (!names)
		return -ENOMEM;
	list_size = vfs_listxattr(lower->dentry, names, list_size);
	if (list_size < 0) {
		err = list_size;
		goto out;
	}
	for (name = names; name < names + list_size && !err;
	     name += strlen(name) + 1) {
		if (unionfs_xattr_fs_private(lower, name))
			continue;
		err = unionfs_security_copy_up_xattr(lower->dentry, name);
		if (err < 0 && err != -EOPNOTSUPP)
			break;
		if (err == 1) {		/* the LSM discards it */
			err = 0;
			continue;
		}
		err = 0;
		size = unionfs_vfs_getxattr(lidmap, lower->dentry, name, NULL, 0);
		if (size == -ENODATA)
			continue;
		if (size < 0) {
			err = size;
			break;
		}
		if (size > vsize) {
			kvfree(value);
			vsize = size;
			value = kvmalloc(vsize ?: 1, GFP_KERNEL);
			if (!value) {
				err = -ENOMEM;
				break;
			}
		}
		size = unionfs_vfs_getxattr(lidmap, lower->dentry, name, value,
					    size);
		if (size < 0) {
			err = size;
			break;
		}
		err = unionfs_do_setxattr(umnt, upper, name, value, size, 0);
		if (!err && !strcmp(name, XATTR_NAME_POSIX_ACL_ACCESS))
			has_access = true;
		if (!err && !strcmp(name, XATTR_NAME_POSIX_ACL_DEFAULT))
			has_default = true;
		if (err == -EOPNOTSUPP) {
			pr_warn_ratelimited("copy-up of '%pd': the target branch (%s) does not support the extended attribute '%s'; not copied\n",
					    upper, upper->d_sb->s_id, name);
			err = 0;
		}
	}
	if (!err)
		err = unionfs_drop_inherited_acls(umnt, upper, has_access,
						  has_default);
out:
	kvfree(value);
	kvfree(names);
	return err;
}

/* Owner, then mode (a chown may clear set-id bits), then times. */
static int unionfs_copy_attrs(struct vfsmount *mnt, struct dentry *upper,
			      const struct kstat *st)
{
	struct iattr attr = {
		.ia_valid = ATTR_UID | ATTR_GID,
		.ia_uid = st->uid,
		.ia_gid = st->gid,
	};
	int err;

	err = unionfs_do_setattr(mnt, upper, &attr);
	if (!err && !S_ISLNK(st->mode)) {
		attr.ia_valid = ATTR_MODE;
		attr.ia_mode = st->mode;
		err = unionfs_do_setattr(mnt, upper, &attr);
	}
	if (!err) {
		attr.ia_valid = ATTR_ATIME | ATTR_MTIME | ATTR_ATIME_SET |
				ATTR_MTIME_SET;
		attr.ia_atime = st->atime;
		attr.ia_mtime = st->mtime;
		err = unionfs_do_setattr(mnt, upper, &attr);
	}
	return err;
}

/* Data (if @data), xattrs and attributes of @lower into the open @out. */
static int unionfs_copy_up_fill(struct super_block *sb,
				const struct path *lower,
				const struct kstat *st, struct file *out,
				bool data)
{
	struct iattr attr = { .ia_valid = ATTR_SIZE, .ia_size = st->size };
	struct dentry *od = out->f_path.dentry;
	struct file *in;
	int err = 0;

	if (data && st->size) {
		err = unionfs_do_setattr(out->f_path.mnt, od, &attr);
		in = err ? NULL : dentry_open(lower, O_RDONLY | O_LARGEFILE,
					      current_cred());
		if (IS_ERR(in)) {
			err = PTR_ERR(in);
		} else if (in) {
			err = unionfs_copy_data(in, out, st->size);
			fput(in);
		}
	}
	if (!err)
		err = unionfs_copy_xattrs(out->f_path.mnt, lower, od);
	if (!err)
		err = unionfs_copy_attrs(out->f_path.mnt, od, st);
	if (!err)
		err = vfs_fsync(out, 0);
	return err;
}

/* Make the new upper object @ud and its entry in @uparent durable. */
static int unionfs_copy_up_sync(const struct path *uparent, struct dentry *ud)
{
	struct path p = { .mnt = uparent->mnt, .dentry = ud };
	struct file *f;
	int err;

	if (d_can_lookup(ud)) {
		f = dentry_open(&p, O_RDONLY | O_DIRECTORY, current_cred());
		if (IS_ERR(f))
			return PTR_ERR(f);
		err = vfs_fsync(f, 0);
		fput(f);
	} else {
		/* No file to fsync a symlink or node with: its inode. */
		err = sync_inode_metadata(d_inode(ud), 1);
	}
	if (err)
		return err;
	p.dentry = uparent->dentry;
	f = dentry_open(&p, O_RDONLY | O_DIRECTORY, current_cred());
	if (IS_ERR(f))
		return PTR_ERR(f);
	err = vfs_fsync(f, 0);
	fput(f);
	return err;
}

/*
 * Anything without O_TMPFILE is created at its name, then given its
 * attributes: directories, symlinks, nodes, and regular files on an upper
 * branch whose filesystem has no O_TMPFILE (another union, NFS).  It is
 * made with the lower object's owner (and, but for a regular file, which
 * is 0600 until its data is in, permission bits) from the start, so what
 * a crash leaves before the attributes are copied is never an object of
 * the mounter's; an error removes the half-built object.  A COPYUP intent
 * committed first names the object: a crash before its records are
 * committed leaves it half built (no extended attributes, hence no ACL,
 * perhaps), and the next mount removes it (section 9.6).
 */
static int unionfs_copy_up_at_name(struct dentry *dentry,
				   const struct path *lower,
				   unsigned int lbindex, const struct kstat *st,
				   const struct path *uparent, struct dentry *ud,
				   bool data, struct dentry *parent)
{
	struct path p = { .mnt = uparent->mnt, .dentry = ud };
	struct file *out;
	struct super_block *sb = dentry->d_sb;
	struct vfsmount *mnt = uparent->mnt;
	DEFINE_DELAYED_CALL(done);
	const char *link = NULL;
	const struct cred *old_cred;
	struct unionfs_rd_txn rdt;
	struct cred *c;
	u64 seq;
	int err;

	if (S_ISLNK(st->mode)) {
		link = vfs_get_link(lower->dentry, &done);
		if (IS_ERR(link))
			return PTR_ERR(link);
	}
	c = prepare_creds();
	if (!c) {
		do_delayed_call(&done);
		return -ENOMEM;
	}
	err = unionfs_intent_begin_copyup(dentry, uparent->dentry, &seq);
	if (err) {
		put_cred(c);
		do_delayed_call(&done);
		return err;
	}
	c->fsuid = st->uid;
	c->fsgid = st->gid;
	old_cred = override_creds(c);
	/*
	 * The parent's listing stays; its upper directory changes.  Its
	 * readdir state stays locked until the copy's records are written:
	 * a listing built in between would keep the copy's own number.
	 */
	unionfs_rd_begin(&rdt, parent, 0);
	err = unionfs_lock_parent(mnt, uparent->dentry);
	if (!err) {
		switch (st->mode & S_IFMT) {
		case S_IFREG:
			err = unionfs_do_create(mnt, uparent->dentry, ud,
						S_IFREG | 0600);
			break;
		case S_IFDIR:
			err = unionfs_do_mkdir(mnt, uparent->dentry, ud,
					       st->mode & 07777);
			break;
		case S_IFLNK:
			err = unionfs_do_symlink(mnt, uparent->dentry, ud, link);
			break;
		default:
			err = unionfs_do_mknod(mnt, uparent->dentry, ud,
					       st->mode & (S_IFMT | 07777),
					       st->rdev);
			break;
		}
		unionfs_unlock_parent(mnt, uparent->dentry);
	}
	revert_creds(old_cred);
	put_cred(c);
	do_delayed_call(&done);
	if (err)
		goto out;
	if (S_ISREG(st->mode)) {
		out = dentry_open(&p, O_WRONLY | O_LARGEFILE, current_cred());
		err = PTR_ERR_OR_ZERO(out);
		if (!err) {
			err = unionfs_copy_up_fill(sb, lower, st, out, data);
			fput(out);
		}
	} else {
		err = unionfs_copy_xattrs(mnt, lower, ud);
		if (!err)
			err = unionfs_copy_attrs(mnt, ud, st);
	}
	if (!err)
		err = unionfs_copy_up_sync(uparent, ud);
	if (!err) {
		struct inode *origin = d_inode(lower->dentry);
		unsigned int obindex = lbindex;
		bool recopy;

		/* A directory's number is its oldest part's (namei.c). */
		if (S_ISDIR(st->mode))
			unionfs_dir_origin(dentry, &obindex, &origin);
		err = unionfs_imap_record_copy(sb, d_inode(dentry)->i_ino,
					       obindex, origin, 0, ud,
					       S_ISREG(st->mode) ?
					       st->nlink - 1 : 0, &recopy);
		/* At its name already: the first copy needs no record. */
		if (!err && recopy)
			unionfs_imap_copy_linked(sb, obindex, origin->i_ino, 0,
						 d_inode(ud)->i_ino);
	}
	if (err && !unionfs_lock_parent(mnt, uparent->dentry)) {
		/* Nothing refers to it yet: the name shows the lower again. */
		unionfs_do_remove(mnt, uparent->dentry, ud);
		unionfs_unlock_parent(mnt, uparent->dentry);
	}
out:
	unionfs_rd_end(&rdt, err);
	/*
	 * Complete, or removed: the intent goes.  If that fails, the next
	 * mount finds the records (or no object) and drops it.
	 */
	unionfs_intent_end(UNIONFS_SB(sb), seq);
	return err;
}

/*
 * A regular file: O_TMPFILE, data, xattrs, attributes, maps, link.  Only
 * the link changes the parent's listing: its readdir state is locked for
 * that step alone, never across the data copy.  An upper branch without
 * O_TMPFILE (NFS, overlayfs before 6.6) gets the copy built at its name
 * under an intent instead, and the parent's readdir state locked
 * throughout.  So does a union: it has O_TMPFILE, but its inodes carry
 * no generation, so the records of a copy that a crash left unlinked
 * could not be told stale once the number is reused (section 9.6).
 */
static int unionfs_copy_up_reg(struct dentry *dentry, const struct path *lower,
			       unsigned int lbindex, const struct kstat *st,
			       unsigned int tbindex, const struct path *uparent,
			       struct dentry *ud, bool data,
			       struct dentry *parent)
{
	struct super_block *sb = dentry->d_sb;
	struct unionfs_rd_txn rdt;
	struct dentry *td;
	struct file *tmp;
	bool recopy;
	int err;

	/*
	 * A union as the upper branch: at the name, see above.  To a
	 * writable lower branch (@tbindex) only as an O_TMPFILE: the
	 * intent of a copy at its name names the upper branch.
	 */
	if (uparent->dentry->d_sb->s_magic == UNIONFS_SUPER_MAGIC)
		return tbindex ? -EOPNOTSUPP :
		       unionfs_copy_up_at_name(dentry, lower, lbindex, st,
					       uparent, ud, data, parent);
	tmp = unionfs_do_tmpfile(uparent, S_IFREG | 0600,
				 O_LARGEFILE | O_WRONLY, current_cred(), NULL);
	if (tmp == ERR_PTR(-EOPNOTSUPP) && !tbindex)	/* no O_TMPFILE */
		return unionfs_copy_up_at_name(dentry, lower, lbindex, st,
					       uparent, ud, data, parent);
	if (IS_ERR(tmp))
		return PTR_ERR(tmp);
	td = tmp->f_path.dentry;
	err = unionfs_copy_up_fill(sb, lower, st, tmp, data);
	if (!err)
		err = unionfs_imap_record_copy(sb, d_inode(dentry)->i_ino,
					       lbindex, d_inode(lower->dentry),
					       tbindex, td, st->nlink - 1,
					       &recopy);
	if (!err) {
		/* The parent's listing stays; its upper directory changes. */
		unionfs_rd_begin(&rdt, parent, 0);
		err = unionfs_lock_parent(uparent->mnt, uparent->dentry);
		if (!err) {
			err = unionfs_do_link(uparent->mnt, td, uparent->dentry,
					      ud);
			unionfs_unlock_parent(uparent->mnt, uparent->dentry);
		}
		unionfs_rd_end(&rdt, err);
		if (err)	/* the copy goes with the tmpfile: so do its records */
			unionfs_imap_drop_copy(UNIONFS_SB(sb),
					       unionfs_branch(sb, tbindex)->id,
					       d_inode(td)->i_ino);
		else if (recopy)	/* the first copy is hidden now */
			unionfs_imap_copy_linked(sb, lbindex,
						 d_inode(lower->dentry)->i_ino,
						 tbindex, d_inode(td)->i_ino);
	}
	fput(tmp);
	return err;
}

/*
 * Other cached names of the inode (lower hard links) still show the lower
 * object: make them look their name up again, which finds the copy.
 */
static void unionfs_invalidate_aliases(struct inode *inode,
				       struct dentry *dentry)
{
	struct dentry *alias;

	if (S_ISDIR(inode->i_mode))
		return;
	spin_lock(&inode->i_lock);
	hlist_for_each_entry(alias, &inode->i_dentry, d_u.d_alias)
		if (alias != dentry && alias->d_fsdata)
			WRITE_ONCE(UNIONFS_D(alias)->invalid, true);
	spin_unlock(&inode->i_lock);
}

/* The lower object @inode shows, or was copied up from; NULL if none. */
static struct inode *unionfs_shown_lower(struct inode *inode)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);

	return ui->bindex ? ui->lower : ui->origin;
}

/*
 * Copy what the union inode shows and nothing else: the branch dentry
 * keeps its inode, but check, so that no object put at the name on the
 * branch since (a symlink, say) is ever copied or followed.  @any: the
 * object is linked to another name's copy, not copied.  Fills @st.
 */
static int unionfs_copy_check_shown(struct inode *inode,
				    const struct path *lower, bool any,
				    struct kstat *st)
{
	struct inode *shown = unionfs_shown_lower(inode);
	int err;

	if (!any && shown && d_inode(lower->dentry) != shown)
		return -ESTALE;
	err = vfs_getattr(lower, st, STATX_BASIC_STATS, AT_STATX_SYNC_AS_STAT);
	if (err)
		return err;
	return ((st->mode ^ inode->i_mode) & S_IFMT) ? -ESTALE : 0;
}

/* The credentials a copy is made with: the mounter's, or an LSM's own. */
struct unionfs_copy_creds {
	const struct cred *old, *lsm_old;
	struct cred *lsm;
};

static int unionfs_copy_creds_begin(struct dentry *dentry,
				    struct unionfs_copy_creds *cc)
{
	int err;

	cc->lsm = NULL;
	cc->lsm_old = NULL;
	cc->old = override_creds(UNIONFS_SB(dentry->d_sb)->creator_cred);
	err = security_inode_copy_up(dentry, &cc->lsm);
	if (err < 0)
		return err;
	if (cc->lsm)
		cc->lsm_old = override_creds(cc->lsm);
	return 0;
}

static void unionfs_copy_creds_end(struct unionfs_copy_creds *cc)
{
	if (cc->lsm) {
		revert_creds(cc->lsm_old);
		put_cred(cc->lsm);
	}
	revert_creds(cc->old);
}

/* Infos a dentry may keep for copies through it (copy_name_current). */
#define UNIONFS_SWAPS_MAX 16

/*
 * Before a copy made at @dentry's name, with its inode's copyup_lock
 * held: a non-directory dentry that is unhashed or invalid may no
 * longer be its name's (an fd's, after a rename or a removal through
 * another dentry, which the lookup that replaced it made), and its name
 * may show another object now, or none: a copy there would bring a
 * removed file back.  Such a dentry takes a new lookup's info if its
 * name still shows its object (marked invalid: a later lookup still
 * replaces a hashed one).  0 then, or when nothing needs checking;
 * -ENOENT when the object has no name left, in the union or in its
 * branch; -ESTALE when it has one elsewhere.  Unlink, rmdir and rename
 * hold copyup_lock too: the answer holds until the lock is released.
 */
static int unionfs_copy_name_current(struct dentry *dentry)
{
	struct unionfs_dentry_info *di = UNIONFS_D(dentry), *new;
	struct inode *inode = d_inode(dentry);
	const struct unionfs_lower *top;
	struct name_snapshot name;
	struct dentry *parent;
	bool same;

	if (d_is_dir(dentry) || IS_ROOT(dentry) || unionfs_upper(dentry) ||
	    (!d_unhashed(dentry) && !READ_ONCE(di->invalid)))
		return 0;
	if (READ_ONCE(di->removed))
		return -ENOENT;
	parent = dget_parent(dentry);
	take_dentry_name_snapshot(&name, dentry);
	new = unionfs_relookup_file(dentry, parent, &name.name);
	same = unionfs_dentry_at(dentry, parent, &name.name);
	release_dentry_name_snapshot(&name);
	dput(parent);
	if (IS_ERR(new))
		return PTR_ERR(new);
	if (new && same) {
		/*
		 * Each swap keeps the old info until the dentry goes: a few
		 * (a copy that failed and is retried) but not without end.
		 */
		if (unionfs_dinfo_same(di, new)) {
			unionfs_free_dinfo(new);
			return 0;
		}
		if (di->copy_swaps < UNIONFS_SWAPS_MAX) {
			new->invalid = true;
			new->copy_swaps = 1;	/* plus @di's (swap_dinfo) */
			unionfs_swap_dinfo(dentry, new);
			return 0;
		}
		unionfs_free_dinfo(new);
		return -ESTALE;
	}
	unionfs_free_dinfo(new);
	top = unionfs_top_lower(dentry);
	if (!inode->i_nlink || (top && !d_inode(top->path.dentry)->i_nlink))
		return -ENOENT;
	return -ESTALE;
}

/*
 * Copy up @dentry, whose parent is on the upper branch already.  The
 * inode's copyup_lock is held throughout: unlink, rmdir and rename of a
 * name of the inode take it too, so a copy is never linked at a name that
 * was removed meanwhile.
 */
static int unionfs_copy_up_one(struct dentry *dentry, bool data)
{
	struct super_block *sb = dentry->d_sb;
	struct unionfs_dentry_info *di;
	struct inode *inode = d_inode(dentry);
	struct dentry *parent, *ud;
	struct path lower, uparent;
	struct unionfs_copy_creds cc;
	struct unionfs_rd_txn rdt;
	unsigned int lbindex;
	struct kstat st;
	int err;

	mutex_lock(&UNIONFS_I(inode)->copyup_lock);
	err = unionfs_copy_name_current(dentry);
	if (err) {
		mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
		return err;
	}
	di = UNIONFS_D(dentry);
	if (unionfs_upper(dentry)) {
		mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
		return 0;
	}
	if (READ_ONCE(di->removed)) {
		/*
		 * The name was removed (an fd keeps the object open): a copy
		 * linked at the old name would bring it back.
		 */
		mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
		return -ENOENT;
	}
	if (!di->alias && !UNIONFS_I(inode)->bindex && UNIONFS_I(inode)->origin &&
	    !S_ISDIR(inode->i_mode)) {
		/*
		 * The inode was copied up through another name of the same
		 * lower object while this dentry was cached: link this name
		 * to that copy instead of copying again.
		 */
		di->alias = d_find_any_alias(unionfs_lower_inode(inode));
	}
	unionfs_name_changing(dentry);
	err = unionfs_copy_creds_begin(dentry, &cc);
	if (err)
		goto out;
	lower = unionfs_top_lower(dentry)->path;
	lbindex = unionfs_top_lower(dentry)->bindex;
	/*
	 * A file of a writable lower branch is written in place: a copy
	 * made while it is open for writing (a rename or link of it) would
	 * leave the writers on the original, which the copy then hides.
	 * unionfs_open() decides and opens under copyup_lock, so a writer
	 * through the union is counted here before its first write.
	 */
	err = -EBUSY;
	if (!di->alias && unionfs_branch_writable(sb, lbindex) &&
	    d_is_reg(lower.dentry) &&
	    atomic_read(&d_inode(lower.dentry)->i_writecount) > 0)
		goto out;
	/*
	 * Nothing here follows a link: the lower object is opened by its
	 * dentry, the upper names are looked up one component at a time
	 * and must be negative.
	 */
	err = unionfs_copy_check_shown(inode, &lower, di->alias, &st);
	if (err)
		goto out;

	parent = dget_parent(dentry);
	uparent.mnt = unionfs_upper_mnt(sb);
	uparent.dentry = unionfs_upper(parent);
	err = -ENOENT;
	if (!uparent.dentry)
		goto out_parent;
	inode_lock_nested(d_inode(uparent.dentry), I_MUTEX_PARENT);
	ud = lookup_one_len(dentry->d_name.name, uparent.dentry,
			    dentry->d_name.len);
	inode_unlock(d_inode(uparent.dentry));
	err = PTR_ERR_OR_ZERO(ud);
	if (err)
		goto out_parent;
	if (d_is_positive(ud) || (di->upper && di->upper != ud)) {
		/* Created on the branch behind the union's back. */
		dput(ud);
		err = -ESTALE;
		goto out_parent;
	}
	if (di->alias) {
		/* Another name was copied up: this one is a link to it. */
		unionfs_rd_begin(&rdt, parent, 0);
		err = unionfs_lock_parent(uparent.mnt, uparent.dentry);
		if (!err) {
			err = unionfs_do_link(uparent.mnt, di->alias,
					      uparent.dentry, ud);
			unionfs_unlock_parent(uparent.mnt, uparent.dentry);
		}
		if (!err && d_is_negative(ud))
			err = -EIO;
		unionfs_rd_end(&rdt, err);
		if (err) {
			dput(ud);
			goto out_parent;
		}
		unionfs_set_upper(dentry, ud);
		unionfs_imap_lower_link_gone(sb, inode);
		unionfs_count(UNIONFS_SB(sb), UNIONFS_ST_COPYUPS);
		goto out_parent;
	} else if (S_ISREG(st.mode))
		err = unionfs_copy_up_reg(dentry, &lower, lbindex, &st, 0,
					  &uparent, ud, data, parent);
	else
		err = unionfs_copy_up_at_name(dentry, &lower, lbindex, &st,
					      &uparent, ud, data, parent);
	if (!err && d_is_negative(ud))
		err = -EIO;
	if (err) {
		dput(ud);
		goto out_parent;
	}
	if (S_ISREG(st.mode))
		UNIONFS_I(inode)->lower_links = st.nlink - 1;
	unionfs_inode_copied_up(inode, d_inode(ud));
	unionfs_count(UNIONFS_SB(sb), UNIONFS_ST_COPYUPS);
	unionfs_set_upper(dentry, ud);
	unionfs_invalidate_aliases(inode, dentry);
	fsstack_copy_attr_times(d_inode(parent), d_inode(uparent.dentry));
out_parent:
	dput(parent);
out:
	unionfs_copy_creds_end(&cc);
	unionfs_name_changed(dentry);
	mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
	if (err && err != -EINTR)
		pr_warn_ratelimited("copy-up of '%pd' failed (error %d)\n",
				    dentry, err);
	return err;
}

static int unionfs_copy_up_data(struct dentry *dentry, bool data)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	int err = 0;

	if (!sbi->has_upper || sb_rdonly(dentry->d_sb))
		return -EROFS;
	if (READ_ONCE(sbi->odf_failed))
		return -EIO;
	/* Parents first, from the highest one that is not on the upper. */
	while (!err && !unionfs_upper(dentry)) {
		struct dentry *d = dget(dentry), *parent;

		for (;;) {
			parent = dget_parent(d);
			if (unionfs_upper(parent))
				break;
			dput(d);
			d = parent;
		}
		dput(parent);
		err = unionfs_copy_up_one(d, data || d != dentry);
		dput(d);
	}
	return err;
}

int unionfs_copy_up(struct dentry *dentry)
{
	return unionfs_copy_up_data(dentry, true);
}

/*
 * Where a change copies @dentry's object when it is not changed in place
 * (unionfs(5), "Several writable branches"): to the nearest writable
 * branch above the read-only branch it is on.  Built for a regular file
 * of one link whose parent has a part on that branch, when it is a lower
 * branch: returns the index of the name's (negative) entry there in
 * @dentry's info.  Else -1: to the upper branch.  Under copyup_lock.
 */
static int unionfs_copy_target(struct dentry *dentry)
{
	struct super_block *sb = dentry->d_sb;
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	const struct unionfs_lower *top = unionfs_top_lower(dentry);
	const struct unionfs_branch *br;
	struct unionfs_order order;
	unsigned int o, k = 0;
	int i;

	if (!top || di->upper_positive || di->alias || sb_rdonly(sb) ||
	    !d_is_reg(top->path.dentry) ||
	    d_inode(top->path.dentry)->i_nlink != 1 ||
	    unionfs_branch_writable(sb, top->bindex))
		return -1;
	unionfs_get_order(sbi, &order);
	for (o = 1; o < order.n && order.idx[o] != top->bindex; o++)
		if (unionfs_branch_writable(sb, order.idx[o]))
			k = order.idx[o];
	if (!k || o == order.n)
		return -1;
	br = unionfs_branch(sb, k);
	if (READ_ONCE(br->leaving) || READ_ONCE(br->gone))
		return -1;
	for (i = (int)di->top - 1; i >= 0; i--)
		if (di->lower[i].bindex == k)
			return d_is_negative(di->lower[i].path.dentry) ? i : -1;
	return -1;
}

/*
 * The copy of unionfs_copy_target(): as unionfs_copy_up_one() copies to
 * the upper branch, an O_TMPFILE in the parent's part on that branch,
 * its inode map records keyed on that branch (docs/odf-format.md 3.4),
 * then linked at the name; the union inode and dentry then show it,
 * with the same number, and the change is made in place there.  0 when
 * copied, or when the object is changed in place already (a change
 * racing this one copied it): the caller decides again.  1 when there
 * is no such target, or it cannot take the copy (no O_TMPFILE, full,
 * read-only, made there behind the union's back): the caller copies to
 * the upper branch.  The dentry's info is replaced, so the inode lock
 * is held (@locked: by the caller), as unlink and rename hold it.
 */
static int unionfs_copy_to_lower(struct dentry *dentry, bool data,
				 bool locked)
{
	struct super_block *sb = dentry->d_sb;
	struct inode *inode = d_inode(dentry);
	struct unionfs_dentry_info *di, *ndi;
	const struct unionfs_lower *l, *top;
	struct unionfs_copy_creds cc;
	struct unionfs_branch *br;
	struct dentry *parent, *kd;
	struct path lower, kparent;
	unsigned int kbindex = 0;
	struct kstat st;
	bool same;
	int k, err;

	if (!S_ISREG(inode->i_mode) || READ_ONCE(UNIONFS_SB(sb)->odf_failed))
		return 1;
	if (!locked)
		inode_lock(inode);
	mutex_lock(&UNIONFS_I(inode)->copyup_lock);
	err = unionfs_copy_name_current(dentry);
	if (err) {
		mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
		if (!locked)
			inode_unlock(inode);
		return err;
	}
	di = UNIONFS_D(dentry);
	if (unionfs_change_in_place(dentry, &lower))
		goto out_unlock;	/* copied meanwhile: in place now */
	err = READ_ONCE(di->removed) ? -ENOENT : 1;
	k = unionfs_copy_target(dentry);
	if (err < 0 || k < 0 || unionfs_upper(dentry))
		goto out_unlock;
	top = unionfs_top_lower(dentry);
	l = &di->lower[k];
	kbindex = l->bindex;
	br = unionfs_branch(sb, kbindex);
	if (!unionfs_branch_write_begin(br))
		goto out_unlock;
	unionfs_name_changing(dentry);
	err = unionfs_copy_creds_begin(dentry, &cc);
	if (err)
		goto out;
	lower = top->path;
	err = -ESTALE;
	if (UNIONFS_I(inode)->bindex != top->bindex)
		goto out;
	err = unionfs_copy_check_shown(inode, &lower, false, &st);
	if (err)
		goto out;
	err = 1;
	if (st.nlink != 1)
		goto out;	/* a hard link: its other names follow the upper copy */
	/*
	 * A copy on a branch made read-only: copied again only upwards.
	 * An allocated number (a big lower inode): upwards too, so that a
	 * copy copied again is told by its number (6.3: not det(key)).
	 */
	if (!(inode->i_ino >> ODF_UINO_SHIFT) ||
	    unionfs_imap_is_copy(UNIONFS_SB(sb), top->bindex,
				 d_inode(lower.dentry)->i_ino, inode->i_ino))
		goto out;

	parent = dget_parent(dentry);
	kparent.mnt = l->path.mnt;
	kparent.dentry = dget_parent(l->path.dentry);
	if (kparent.dentry != l->parent)
		goto out_parent;	/* moved in its branch: err 1 */
	/*
	 * The entry is of the name at lookup: a dentry renamed since would
	 * put the copy at its new name in its old directory (the relookup
	 * above makes that one current), and a parent whose part on the
	 * branch was replaced directly (a direct edit, seen by the parent's
	 * refresh) would put it in a directory the union no longer shows.
	 * Upwards.
	 */
	if (unionfs_part_on(parent, kbindex) != kparent.dentry)
		goto out_parent;
	spin_lock(&l->path.dentry->d_lock);
	same = d_same_name(l->path.dentry, kparent.dentry, &dentry->d_name);
	spin_unlock(&l->path.dentry->d_lock);
	if (!same)
		goto out_parent;
	inode_lock_nested(d_inode(kparent.dentry), I_MUTEX_PARENT);
	kd = lookup_one_len(dentry->d_name.name, kparent.dentry,
			    dentry->d_name.len);
	inode_unlock(d_inode(kparent.dentry));
	err = PTR_ERR_OR_ZERO(kd);
	if (err)
		goto out_parent;
	err = 1;	/* made on the branch behind the union's back: not there */
	if (d_is_negative(kd))
		err = unionfs_copy_up_reg(dentry, &lower, top->bindex, &st,
					  kbindex, &kparent, kd, data, parent);
	/* A branch that cannot take it: the copy goes to the upper branch. */
	if (err == -EOPNOTSUPP || err == -EROFS || err == -ENOSPC ||
	    err == -EDQUOT)
		err = 1;
	if (!err && d_is_negative(kd))
		err = -EIO;
	if (err)
		goto out_kd;
	/*
	 * Linked, with its records: the inode shows it now, as after a
	 * copy-up, or a lookup would make a second inode of its number.
	 */
	unionfs_inode_copied_lower(inode, d_inode(kd), kbindex);
	unionfs_count(UNIONFS_SB(sb), UNIONFS_ST_COPYUPS);
	/* A directory's times are its top part's (unionfs_getattr()). */
	if (d_inode(kparent.dentry) == unionfs_lower_inode(d_inode(parent)))
		fsstack_copy_attr_times(d_inode(parent), d_inode(kparent.dentry));
	ndi = unionfs_dinfo_shown_at(di, k, kd);
	if (!ndi) {
		WRITE_ONCE(di->invalid, true);	/* looked up again */
		err = -ENOMEM;
		goto out_kd;
	}
	unionfs_swap_dinfo(dentry, ndi);
	/* Nobody reads the old info as current again. */
	smp_store_release(&di->changing, false);
out_kd:
	dput(kd);
out_parent:
	dput(kparent.dentry);
	dput(parent);
out:
	unionfs_copy_creds_end(&cc);
	unionfs_name_changed(dentry);
	unionfs_branch_write_end(br);
out_unlock:
	mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
	if (!locked)
		inode_unlock(inode);
	if (err < 0 && err != -EINTR)
		pr_warn_ratelimited("copy of '%pd' to a writable lower branch failed (error %d)\n",
				    dentry, err);
	return err;
}

/*
 * A change of @dentry's object, which is not made in place: copy it to
 * where it is changed, the nearest writable branch above it.  1 when
 * that is a writable lower branch: the caller decides again, and changes
 * the copy in place (once: a second time copies to the upper branch).
 */
static int unionfs_copy_up_change(struct dentry *dentry, bool data,
				  bool lower_ok, bool locked)
{
	int err = lower_ok ? unionfs_copy_to_lower(dentry, data, locked) : 1;

	if (err <= 0)
		return err ? err : 1;
	return unionfs_copy_up_data(dentry, data);
}

/*
 * Is @dentry's object changed where it is: it has no upper object and
 * shows the object of a writable lower branch (docs/man/unionfs.5,
 * "Several writable branches").  @path gets that object, not referenced.
 * The answer holds while the caller holds the inode's copyup_lock, which
 * every copy of the object takes too (to the upper branch or to a
 * writable lower one, also through an fd), as unlink, rmdir and rename
 * of its names do; a caller without it (a first look, as
 * unionfs_remove_name() takes) asks again under it.
 */
bool unionfs_change_in_place(struct dentry *dentry, struct path *path)
{
	struct inode *inode = d_inode(dentry);
	const struct unionfs_lower *top;
	const struct unionfs_branch *br;
	/* Pairs with unionfs_inode_copied_up(): bindex 0 is the upper. */
	unsigned int bindex = smp_load_acquire(&UNIONFS_I(inode)->bindex);

	if (!bindex || unionfs_upper(dentry) || UNIONFS_D(dentry)->alias ||
	    sb_rdonly(dentry->d_sb))
		return false;
	top = unionfs_top_lower(dentry);
	br = unionfs_branch(dentry->d_sb, bindex);
	if (!top || top->bindex != bindex ||
	    d_inode(top->path.dentry) != unionfs_lower_inode(inode) ||
	    !unionfs_branch_writable(dentry->d_sb, bindex) ||
	    READ_ONCE(br->leaving) || READ_ONCE(br->gone))
		return false;
	*path = top->path;
	return true;
}

/* The branch of @dentry's top lower object (unionfs_change_in_place()). */
static struct unionfs_branch *unionfs_path_branch(struct dentry *dentry)
{
	return unionfs_branch(dentry->d_sb, unionfs_top_lower(dentry)->bindex);
}

/*
 * Before a change of @dentry's attributes or extended attributes: the
 * object to change, in place on a writable lower branch, else the upper
 * copy made now.  @path gets it, not referenced.  In place, the inode's
 * copyup_lock is held until unionfs_change_done(): a directory is copied
 * up without its inode lock (a create below it), and a change made on
 * the lower object after the copy was taken would be lost.
 */
int unionfs_prepare_change(struct dentry *dentry, struct path *path,
			   bool *in_place)
{
	struct mutex *copyup_lock = &UNIONFS_I(d_inode(dentry))->copyup_lock;
	int err;

	*in_place = false;
	/* An upper object stays one: no lock on the usual path. */
	for (err = 1; err > 0 && !unionfs_upper(dentry); ) {
		mutex_lock(copyup_lock);
		*in_place = unionfs_change_in_place(dentry, path) &&
			    unionfs_branch_write_begin(unionfs_path_branch(dentry));
		if (*in_place)
			return 0;
		mutex_unlock(copyup_lock);
		/* Copied to a writable lower branch (1): in place there. */
		err = unionfs_copy_up_change(dentry, true, err == 1, true);
		if (err < 0)
			return err;
		if (err)
			err = 2;
	}
	path->mnt = unionfs_upper_mnt(dentry->d_sb);
	path->dentry = unionfs_upper(dentry);
	return 0;
}

void unionfs_change_done(struct dentry *dentry, bool in_place)
{
	if (!in_place)
		return;
	unionfs_branch_write_end(unionfs_path_branch(dentry));
	mutex_unlock(&UNIONFS_I(d_inode(dentry))->copyup_lock);
}

/*
 * Before the last upper name of a copy goes while lower names of its
 * origin still show it (mr_lower_links, section 5): link one of those
 * names, if the union has it cached, to the copy, so the copy keeps a
 * name and the other names keep its data.  Without a cached name the
 * copy goes with its last upper name and the lower names show the
 * origin again (section 9.6).  Called with no union lock but the VFS's
 * on @dentry's parent and inode: the inode lock, which every unlink or
 * rename of a name of the same inode also holds, keeps the answer true
 * until the name is gone.
 */
int unionfs_copy_up_other_name(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct dentry *upper = unionfs_upper(dentry), *alias, *found = NULL;
	int err;

	if (!inode || S_ISDIR(inode->i_mode) || !upper ||
	    UNIONFS_I(inode)->bindex || !READ_ONCE(UNIONFS_I(inode)->lower_links) ||
	    d_inode(upper)->i_nlink != 1)
		return 0;
	spin_lock(&inode->i_lock);
	hlist_for_each_entry(alias, &inode->i_dentry, d_u.d_alias) {
		if (alias == dentry || !alias->d_fsdata || d_unhashed(alias) ||
		    unionfs_upper(alias) || READ_ONCE(UNIONFS_D(alias)->removed))
			continue;
		found = dget(alias);
		break;
	}
	spin_unlock(&inode->i_lock);
	if (!found)
		return 0;
	err = unionfs_copy_up(found);
	dput(found);
	return err;
}

/*
 * Before an open for writing of @dentry's object, which is not changed in
 * place: copy it (without its data when the open surely truncates it).
 * 1 when the copy is on a writable lower branch (unionfs_copy_up_change()),
 * and @lower_ok said that may be.
 */
int unionfs_copy_up_open(struct dentry *dentry, bool trunc, bool lower_ok)
{
	return unionfs_copy_up_change(dentry, !trunc, lower_ok, false);
}
