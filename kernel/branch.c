// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: the one layer through which the module changes a branch or
 * the ODF (unionfs_do_*).
 *
 * Every change is made on a private mount of its own (branch roots are
 * cloned at mount, the ODF is mounted or cloned privately) and only after
 * write access to that mount was taken with mnt_want_write(), as the
 * system calls do: a frozen file system makes the union wait until it is
 * thawed, and a read-only one refuses the change.
 *
 * Write access comes before the parent's i_rwsem, in the VFS's order
 * (sb_writers, then i_rwsem): unionfs_lock_parent() and
 * unionfs_lock_rename() take both, and the unionfs_do_* calls between
 * them and their unlock are the only places the module calls a vfs_*
 * function that changes something.  Changes that take no parent lock
 * (attributes, extended attributes, O_TMPFILE) take write access
 * themselves.  Nothing here may be called with write access to the same
 * mount already held by this task: sb_start_write() does not nest when a
 * freeze is pending.
 */
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/splice.h>
#include <linux/xattr.h>
#include "unionfs.h"

int unionfs_lock_parent(struct vfsmount *mnt, struct dentry *dir)
{
	int err = mnt_want_write(mnt);

	if (!err)
		inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	return err;
}

void unionfs_unlock_parent(struct vfsmount *mnt, struct dentry *dir)
{
	inode_unlock(d_inode(dir));
	mnt_drop_write(mnt);
}

/* lock_rename() with write access; returns its trap or an ERR_PTR. */
struct dentry *unionfs_lock_rename(struct vfsmount *mnt, struct dentry *d1,
				   struct dentry *d2)
{
	struct dentry *trap;
	int err = mnt_want_write(mnt);

	if (err)
		return ERR_PTR(err);
	trap = lock_rename(d1, d2);
	/* 6.7 on: EXDEV when the two have no common ancestor (any more). */
	if (IS_ERR(trap))
		mnt_drop_write(mnt);
	return trap;
}

void unionfs_unlock_rename(struct vfsmount *mnt, struct dentry *d1,
			   struct dentry *d2)
{
	unlock_rename(d1, d2);
	mnt_drop_write(mnt);
}

/* Between unionfs_lock_parent() and unionfs_unlock_parent(): */
int unionfs_do_create(struct vfsmount *mnt, struct dentry *dir,
		      struct dentry *d, umode_t mode)
{
	return vfs_create(unionfs_mnt_idmap(mnt), d_inode(dir), d, mode, true);
}

int unionfs_do_mkdir(struct vfsmount *mnt, struct dentry *dir,
		     struct dentry *d, umode_t mode)
{
	int err = vfs_mkdir(unionfs_mnt_idmap(mnt), d_inode(dir), d, mode);

	/* Every file system we stack on instantiates the dentry in place. */
	if (!err && d_unhashed(d))
		err = -EIO;
	return err;
}

int unionfs_do_mknod(struct vfsmount *mnt, struct dentry *dir,
		     struct dentry *d, umode_t mode, dev_t rdev)
{
	return vfs_mknod(unionfs_mnt_idmap(mnt), d_inode(dir), d, mode, rdev);
}

int unionfs_do_symlink(struct vfsmount *mnt, struct dentry *dir,
		       struct dentry *d, const char *target)
{
	return vfs_symlink(unionfs_mnt_idmap(mnt), d_inode(dir), d, target);
}

int unionfs_do_link(struct vfsmount *mnt, struct dentry *old,
		    struct dentry *dir, struct dentry *d)
{
	return vfs_link(old, unionfs_mnt_idmap(mnt), d_inode(dir), d, NULL);
}

/* Unlink or rmdir @d, which must still be @dir's child. */
int unionfs_do_remove(struct vfsmount *mnt, struct dentry *dir,
		      struct dentry *d)
{
	if (d->d_parent != dir || d_unhashed(d) || d_is_negative(d))
		return -ESTALE;
	if (d_can_lookup(d))
		return vfs_rmdir(unionfs_mnt_idmap(mnt), d_inode(dir), d);
	return vfs_unlink(unionfs_mnt_idmap(mnt), d_inode(dir), d, NULL);
}

/* Between unionfs_lock_rename() (or lock_parent, one dir) and unlock. */
int unionfs_do_rename(struct vfsmount *mnt, struct dentry *odir,
		      struct dentry *od, struct dentry *ndir,
		      struct dentry *nd, unsigned int flags)
{
	struct renamedata rd = {
		.old_dir = d_inode(odir),
		.old_dentry = od,
		.new_dir = d_inode(ndir),
		.new_dentry = nd,
		.flags = flags,
	};

	unionfs_init_renamedata(&rd, unionfs_mnt_idmap(mnt));
	return vfs_rename(&rd);
}

/* Changes that take their own locks. */
int unionfs_do_setattr(struct vfsmount *mnt, struct dentry *d,
		       struct iattr *attr)
{
	int err = mnt_want_write(mnt);

	if (err)
		return err;
	inode_lock(d_inode(d));
	err = notify_change(unionfs_mnt_idmap(mnt), d, attr, NULL);
	inode_unlock(d_inode(d));
	mnt_drop_write(mnt);
	return err;
}

/* With write access already held (a node change, ns.c). */
int __unionfs_do_setxattr(struct vfsmount *mnt, struct dentry *d,
			  const char *name, const void *value, size_t size,
			  int flags)
{
	return unionfs_vfs_setxattr(unionfs_mnt_idmap(mnt), d, name, value, size,
				    flags);
}

int unionfs_do_setxattr(struct vfsmount *mnt, struct dentry *d,
			const char *name, const void *value, size_t size,
			int flags)
{
	int err = mnt_want_write(mnt);

	if (err)
		return err;
	err = __unionfs_do_setxattr(mnt, d, name, value, size, flags);
	mnt_drop_write(mnt);
	return err;
}

/* With write access already held; an absent attribute is no error. */
int __unionfs_do_removexattr(struct vfsmount *mnt, struct dentry *d,
			     const char *name)
{
	int err = unionfs_vfs_removexattr(unionfs_mnt_idmap(mnt), d, name);

	return err == -ENODATA ? 0 : err;
}

int unionfs_do_removexattr(struct vfsmount *mnt, struct dentry *d,
			   const char *name)
{
	int err = mnt_want_write(mnt);

	if (err)
		return err;
	err = unionfs_vfs_removexattr(unionfs_mnt_idmap(mnt), d, name);
	mnt_drop_write(mnt);
	return err;
}

/*
 * An O_TMPFILE in @dir, made with the current credentials on @dir's
 * (private) mount and opened with @flags; @cred is the opener the file
 * records (f_cred).  It is always linkable.  With @user_file, it is to
 * be that union file's real file (unionfs_open_real_tmpfile()).
 */
struct file *unionfs_do_tmpfile(const struct path *dir, umode_t mode,
				int flags, const struct cred *cred,
				struct file *user_file)
{
	struct file *f;
	int err = mnt_want_write(dir->mnt);

	if (err)
		return ERR_PTR(err);
	flags &= ~O_EXCL;
	if (user_file)
		f = unionfs_open_real_tmpfile(user_file, dir, mode, flags, cred);
	else
		f = unionfs_tmpfile_open(unionfs_mnt_idmap(dir->mnt), dir,
					 mode, flags, cred);
	mnt_drop_write(dir->mnt);
	return f;
}

/*
 * Whole-file helpers for the ODF's "write NAME.new, rename it over NAME"
 * files (/superblock, /imap, /readdir): each locks @dir, looks the name
 * up and changes it through the calls above.
 */

/* Unlink @name in @dir if it is there. */
int unionfs_do_unlink_name(const struct path *dir, const char *name)
{
	struct dentry *d;
	int err;

	err = unionfs_lock_parent(dir->mnt, dir->dentry);
	if (err)
		return err;
	d = lookup_one_len(name, dir->dentry, strlen(name));
	err = PTR_ERR_OR_ZERO(d);
	if (!err) {
		if (d_is_positive(d))
			err = unionfs_do_remove(dir->mnt, dir->dentry, d);
		dput(d);
	}
	unionfs_unlock_parent(dir->mnt, dir->dentry);
	return err;
}

/* A new, empty regular file @name in @dir (gone before), opened rw. */
struct file *unionfs_do_create_file(const struct path *dir, const char *name,
				    int flags)
{
	struct path p = { .mnt = dir->mnt };
	struct file *f;
	int err;

	err = unionfs_do_unlink_name(dir, name);
	if (!err)
		err = unionfs_lock_parent(dir->mnt, dir->dentry);
	if (err)
		return ERR_PTR(err);
	p.dentry = lookup_one_len(name, dir->dentry, strlen(name));
	err = PTR_ERR_OR_ZERO(p.dentry);
	if (!err) {
		err = d_is_positive(p.dentry) ? -EEXIST :
		      unionfs_do_create(dir->mnt, dir->dentry, p.dentry,
					S_IFREG | 0600);
		if (err)
			dput(p.dentry);
	}
	unionfs_unlock_parent(dir->mnt, dir->dentry);
	if (err)
		return ERR_PTR(err);
	f = dentry_open(&p, O_RDWR | O_LARGEFILE | flags, current_cred());
	dput(p.dentry);
	return f;
}

/*
 * Rename @from over @to, both in @dir; ENOENT if @from is not there.
 * @flags: 0, or RENAME_NOREPLACE (EEXIST if @to is there).
 */
int unionfs_do_rename_name(const struct path *dir, const char *from,
			   const char *to, unsigned int flags)
{
	struct dentry *d1, *d2;
	int err;

	err = unionfs_lock_parent(dir->mnt, dir->dentry);
	if (err)
		return err;
	d1 = lookup_one_len(from, dir->dentry, strlen(from));
	err = PTR_ERR_OR_ZERO(d1);
	if (err)
		goto out;
	d2 = lookup_one_len(to, dir->dentry, strlen(to));
	err = PTR_ERR_OR_ZERO(d2);
	if (err)
		goto out_d1;
	err = -ENOENT;
	if (d_is_positive(d1))
		err = unionfs_do_rename(dir->mnt, dir->dentry, d1, dir->dentry,
					d2, flags);
	dput(d2);
out_d1:
	dput(d1);
out:
	unionfs_unlock_parent(dir->mnt, dir->dentry);
	return err;
}

/* Copy bytes into @out: freeze protection as for write(2). */
long unionfs_do_splice(struct file *in, loff_t *ppos, struct file *out,
		       loff_t *opos, size_t len)
{
	return unionfs_splice_direct(in, ppos, out, opos, len);
}
