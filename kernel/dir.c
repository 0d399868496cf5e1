// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: operations that change the union namespace: create,
 * mkdir, mknod, symlink, link, unlink, rmdir, rename; and O_TMPFILE,
 * which makes a file with no name (yet).
 *
 * Objects are created on the upper branch (its parents copied up first);
 * names of lower objects are hidden by whiteouts on the ODF, never by
 * anything written into a branch.  The order of branch and ODF writes is
 * that of docs/odf-format.md section 9: show before hide, hide before
 * delete.  Branch objects are made with the mounter's credentials and the
 * caller's fsuid/fsgid, so they belong to the caller.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/cred.h>
#include <linux/fs_stack.h>
#include <linux/namei.h>
#include <linux/security.h>
#include "unionfs.h"

const struct cred *unionfs_override_creds(struct super_block *sb)
{
	return override_creds(UNIONFS_SB(sb)->creator_cred);
}

/* The mounter's credentials with the caller's fsuid and fsgid. */
const struct cred *unionfs_create_creds(struct super_block *sb)
{
	kuid_t fsuid = current_fsuid();
	kgid_t fsgid = current_fsgid();
	const struct cred *old;
	struct cred *c;

	old = unionfs_override_creds(sb);
	c = prepare_creds();
	if (!c) {
		revert_creds(old);
		return ERR_PTR(-ENOMEM);
	}
	c->fsuid = fsuid;
	c->fsgid = fsgid;
	put_cred(override_creds(c));
	put_cred(c);
	return old;
}

static int unionfs_may_write(struct super_block *sb)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);

	if (!sbi->has_upper)
		return -EROFS;
	if (READ_ONCE(sbi->odf_failed))
		return -EIO;
	return 0;
}

/*
 * Look up @dentry's name in its parent's upper directory (locked by the
 * caller).  The result must be the dentry the union's lookup kept, if it
 * kept one; a different one means the branch changed behind our back.
 */
static struct dentry *unionfs_upper_child(struct dentry *dentry,
					  struct dentry *uparent)
{
	struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	struct dentry *ud;

	ud = lookup_one_len(dentry->d_name.name, uparent, dentry->d_name.len);
	if (!IS_ERR(ud) && di->upper && di->upper != ud) {
		dput(ud);
		ud = ERR_PTR(-ESTALE);
	}
	return ud;
}

/* The union directory's attributes follow its upper directory. */
static void unionfs_dir_changed(struct inode *dir, struct dentry *uparent)
{
	unionfs_copy_attr(dir, d_inode(uparent), unionfs_upper_mnt(dir->i_sb));
	fsstack_copy_inode_size(dir, d_inode(uparent));
}

/*
 * A union directory after a change of its part @ldir on a writable lower
 * branch: its attributes follow that part if it is its top one (a
 * directory's attributes are its top part's: unionfs_getattr()).
 */
static void unionfs_lower_dir_changed(struct inode *dir, struct dentry *ldir,
				      struct vfsmount *mnt)
{
	if (d_inode(ldir) == unionfs_lower_inode(dir)) {
		unionfs_copy_attr(dir, d_inode(ldir), mnt);
		fsstack_copy_inode_size(dir, d_inode(ldir));
	}
}

/*
 * The union link count of a non-directory after one of its names went:
 * a copied object counts its upper links plus the lower names that still
 * show it; a lower object loses the name (never below zero: names may
 * have gone behind the union's back).
 */
static void unionfs_name_gone(struct inode *inode)
{
	struct inode *real = unionfs_lower_inode(inode);

	if (!UNIONFS_I(inode)->bindex)
		set_nlink(inode, real->i_nlink +
				 READ_ONCE(UNIONFS_I(inode)->lower_links));
	else if (inode->i_nlink)
		drop_nlink(inode);
}

/*
 * Before the ODF node of a name is removed or replaced (a whiteout made
 * moot by a new upper object), the new object must be durable: a crash
 * that kept the node's removal but lost the object would show the lower
 * object that the whiteout hid (section 9, the ordering rule).
 */
static int unionfs_upper_durable(struct super_block *sb, unsigned int ns_flags,
				 struct dentry *uparent)
{
	struct path p = { .mnt = unionfs_upper_mnt(sb), .dentry = uparent };

	if (!(ns_flags & (ODF_NODE_WHITEOUT | ODF_NODE_OPAQUE |
			  ODF_NODE_REDIRECT)))
		return 0;
	return unionfs_odf_fsync_dir(&p);
}

struct unionfs_cattr {
	umode_t mode;
	dev_t rdev;
	const char *link;
};

static int unionfs_create_object_rd(struct inode *dir, struct dentry *dentry,
				    const struct unionfs_cattr *ca,
				    struct dentry *uparent,
				    struct unionfs_rd_txn *rdt)
{
	struct super_block *sb = dir->i_sb;
	struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	struct vfsmount *mnt = unionfs_upper_mnt(sb);
	struct inode *inode;
	const struct cred *old_cred;
	struct dentry *ud = NULL;
	bool whiteout;
	u64 ino;
	int err;

	old_cred = unionfs_create_creds(sb);
	if (IS_ERR(old_cred))
		return PTR_ERR(old_cred);
	err = unionfs_lock_parent(mnt, uparent);
	if (err) {
		revert_creds(old_cred);
		return err;
	}
	unionfs_name_changing(dentry);
	ud = unionfs_upper_child(dentry, uparent);
	err = PTR_ERR_OR_ZERO(ud);
	if (!err && d_is_positive(ud))
		err = -EEXIST;
	if (!err) {
		switch (ca->mode & S_IFMT) {
		case S_IFREG:
			err = unionfs_do_create(mnt, uparent, ud, ca->mode);
			break;
		case S_IFDIR:
			err = unionfs_do_mkdir(mnt, uparent, ud, ca->mode);
			break;
		case S_IFLNK:
			err = unionfs_do_symlink(mnt, uparent, ud, ca->link);
			break;
		default:
			err = unionfs_do_mknod(mnt, uparent, ud, ca->mode,
					       ca->rdev);
			break;
		}
	}
	if (!err)
		unionfs_dir_changed(dir, uparent);
	unionfs_unlock_parent(mnt, uparent);
	revert_creds(old_cred);
	if (err) {
		if (!IS_ERR(ud))
			dput(ud);
		unionfs_name_changed(dentry);
		return err;
	}

	unionfs_set_upper(dentry, ud);
	err = unionfs_ino_of(sb, 0, d_inode(ud), &ino, NULL);
	if (!err) {
		inode = unionfs_iget(sb, ino, d_inode(ud), 0);
		err = PTR_ERR_OR_ZERO(inode);
	}
	if (err) {
		/* The name looks the object up again. */
		WRITE_ONCE(di->invalid, true);
		unionfs_name_changed(dentry);
		return err;
	}

	/*
	 * The object is visible (W1; a directory as opaque, W2).  Over a
	 * whiteout: once the object is durable, a directory gets its opaque
	 * node, and the whiteout goes (section 9.3).
	 */
	whiteout = di->ns_flags & ODF_NODE_WHITEOUT;
	if (whiteout) {
		old_cred = unionfs_override_creds(sb);
		err = unionfs_upper_durable(sb, di->ns_flags, uparent);
		if (!err && S_ISDIR(ca->mode))
			err = unionfs_ns_mark(dentry, inode, false);
		if (!err)
			err = unionfs_ns_unwhiteout(dir, &dentry->d_name);
		revert_creds(old_cred);
		if (err)
			unionfs_odf_refused(sb, "cannot update a namespace node",
					    err);
	}
	di->ns_flags = S_ISDIR(ca->mode) && whiteout ?
		       UNIONFS_NS_DIR | ODF_NODE_OPAQUE : 0;
	/*
	 * Over a whiteout, a lower object may hide below the new one: the
	 * next lookup records it, so removing the new object hides it again.
	 */
	if (whiteout && !S_ISDIR(ca->mode))
		WRITE_ONCE(di->invalid, true);
	d_instantiate(dentry, inode);
	unionfs_name_changed(dentry);
	unionfs_rd_add(rdt, &dentry->d_name, inode);
	return 0;
}

/*
 * Where a new name goes (unionfs(5), "Several writable branches"): to the
 * upper branch when its parent has an upper part; else to the highest-
 * priority writable lower branch that has the parent (no node, so no
 * whiteout, applies in a directory without an upper part: the name is
 * on none of its parts); else to the upper branch, the parent copied up.
 * Returns the index in @dentry's info of that lower branch's dentry for
 * the name, or -1 for the upper branch.
 */
static int unionfs_create_part(struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	unsigned int i;

	if (unionfs_upper(dentry->d_parent) || di->upper_positive ||
	    sb_rdonly(dentry->d_sb))
		return -1;
	for (i = 0; i < di->nlower; i++)
		if (unionfs_branch_writable(dentry->d_sb, di->lower[i].bindex))
			return i;
	return -1;
}

/*
 * Make the new object on the writable lower branch of @dentry's info
 * entry @k, in the parent's part there, which must still be where the
 * lookup found it.  1: the branch is being made read-only (remount):
 * the caller creates on the upper branch instead.
 */
static int unionfs_create_in_place(struct inode *dir, struct dentry *dentry,
				   const struct unionfs_cattr *ca, unsigned int k)
{
	struct super_block *sb = dir->i_sb;
	const struct unionfs_lower *l = &UNIONFS_D(dentry)->lower[k];
	struct unionfs_branch *br = unionfs_branch(sb, l->bindex);
	struct vfsmount *mnt = l->path.mnt;
	struct dentry *ld = l->path.dentry, *lparent;
	struct unionfs_rd_txn rdt;
	const struct cred *old_cred;
	struct inode *inode;
	int err;

	if (!unionfs_branch_write_begin(br))
		return 1;
	lparent = dget_parent(ld);
	unionfs_rd_begin(&rdt, dentry->d_parent, 0);
	old_cred = unionfs_create_creds(sb);
	err = PTR_ERR_OR_ZERO(old_cred);
	if (err)
		goto out;
	unionfs_name_changing(dentry);
	err = -ESTALE;
	if (lparent == l->parent)
		err = unionfs_lock_parent(mnt, lparent);
	if (!err) {
		if (ld->d_parent != lparent || d_unhashed(ld))
			err = -ESTALE;
		else if (d_is_positive(ld))
			err = -EEXIST;	/* made there behind the union's back */
		else if (S_ISREG(ca->mode))
			err = unionfs_do_create(mnt, lparent, ld, ca->mode);
		else if (S_ISDIR(ca->mode))
			err = unionfs_do_mkdir(mnt, lparent, ld, ca->mode);
		else if (S_ISLNK(ca->mode))
			err = unionfs_do_symlink(mnt, lparent, ld, ca->link);
		else
			err = unionfs_do_mknod(mnt, lparent, ld, ca->mode,
					       ca->rdev);
		if (!err)
			unionfs_lower_dir_changed(dir, lparent, mnt);
		unionfs_unlock_parent(mnt, lparent);
	}
	revert_creds(old_cred);
	if (!err) {
		inode = unionfs_lookup_created(dentry, ld);
		err = PTR_ERR_OR_ZERO(inode);
		if (err) {
			/* Made, but not shown: the name looks it up again. */
			WRITE_ONCE(UNIONFS_D(dentry)->invalid, true);
		} else {
			d_instantiate(dentry, inode);
			unionfs_rd_add(&rdt, &dentry->d_name, inode);
		}
	}
	unionfs_name_changed(dentry);
out:
	unionfs_rd_end(&rdt, err);
	dput(lparent);
	unionfs_branch_write_end(br);
	return err;
}

/*
 * Create on the upper branch (or a writable lower one), then keep the
 * readdir state up to date.
 */
static int unionfs_create_object(struct inode *dir, struct dentry *dentry,
				 const struct unionfs_cattr *ca)
{
	struct super_block *sb = dir->i_sb;
	struct dentry *parent = dentry->d_parent, *uparent;
	struct unionfs_rd_txn rdt;
	int err, k;

	err = unionfs_may_write(sb);
	if (err)
		return err;
	k = unionfs_create_part(dentry);
	if (k >= 0) {
		err = unionfs_create_in_place(dir, dentry, ca, k);
		if (err != 1)
			return err;
	}
	err = unionfs_copy_up(parent);
	if (err)
		return err;
	uparent = unionfs_upper(parent);

	unionfs_rd_begin(&rdt, parent, 0);
	err = unionfs_create_object_rd(dir, dentry, ca, uparent, &rdt);
	unionfs_rd_end(&rdt, err);
	return err;
}

static int unionfs_create(unionfs_idmap_t *idmap, struct inode *dir,
			  struct dentry *dentry, umode_t mode, bool excl)
{
	struct unionfs_cattr ca = { .mode = (mode & 07777) | S_IFREG };

	return unionfs_create_object(dir, dentry, &ca);
}

static int unionfs_mkdir(unionfs_idmap_t *idmap, struct inode *dir,
			 struct dentry *dentry, umode_t mode)
{
	struct unionfs_cattr ca = { .mode = (mode & 07777) | S_IFDIR };

	return unionfs_create_object(dir, dentry, &ca);
}

static int unionfs_mknod(unionfs_idmap_t *idmap, struct inode *dir,
			 struct dentry *dentry, umode_t mode, dev_t rdev)
{
	struct unionfs_cattr ca = { .mode = mode, .rdev = rdev };

	return unionfs_create_object(dir, dentry, &ca);
}

static int unionfs_symlink(unionfs_idmap_t *idmap, struct inode *dir,
			   struct dentry *dentry, const char *link)
{
	struct unionfs_cattr ca = { .mode = S_IFLNK | 0777, .link = link };

	return unionfs_create_object(dir, dentry, &ca);
}

/*
 * link(2) of an object changed in place on a writable lower branch, to a
 * name that would be made on that branch (unionfs_create_part(): its
 * directory has no upper part, so no node and no whiteout there): the
 * link is made on that branch, nothing is copied up, and the new name
 * shows the same union inode.  1: not so, the caller copies up.
 */
static int unionfs_link_in_place(struct dentry *old, struct inode *dir,
				 struct dentry *new)
{
	struct super_block *sb = dir->i_sb;
	struct mutex *copyup_lock = &UNIONFS_I(d_inode(old))->copyup_lock;
	const struct unionfs_lower *l;
	struct unionfs_branch *br;
	struct dentry *nd, *lparent;
	struct unionfs_rd_txn rdt;
	const struct cred *old_cred;
	struct inode *inode;
	struct path lower;
	int k, err;

	if (unionfs_upper(old))
		return 1;
	/* No copy-up of @old meanwhile: see unionfs_remove_name(). */
	mutex_lock(copyup_lock);
	k = unionfs_create_part(new);
	if (!unionfs_change_in_place(old, &lower) || k < 0 ||
	    UNIONFS_D(new)->lower[k].bindex != unionfs_top_lower(old)->bindex) {
		mutex_unlock(copyup_lock);
		return 1;
	}
	br = unionfs_branch(sb, UNIONFS_D(new)->lower[k].bindex);
	if (!unionfs_branch_write_begin(br)) {
		mutex_unlock(copyup_lock);
		return 1;	/* being made read-only: the upper branch */
	}
	l = &UNIONFS_D(new)->lower[k];
	nd = l->path.dentry;
	lparent = dget_parent(nd);
	if (!d_inode(lparent)->i_op->link) {
		/* No hard links there (vfat): on the upper branch. */
		err = 1;
		goto out_put;
	}
	unionfs_rd_begin(&rdt, new->d_parent, 0);
	old_cred = unionfs_override_creds(sb);
	unionfs_name_changing(new);
	err = -ESTALE;
	if (lparent == l->parent)
		err = unionfs_lock_parent(lower.mnt, lparent);
	if (!err) {
		if (nd->d_parent != lparent || d_unhashed(nd))
			err = -ESTALE;
		else if (d_is_positive(nd))
			err = -EEXIST;	/* made there behind the union's back */
		else
			err = unionfs_do_link(lower.mnt, lower.dentry, lparent,
					      nd);
		if (!err)
			unionfs_lower_dir_changed(dir, lparent, lower.mnt);
		if (!err && d_is_negative(nd))
			err = -EIO;	/* see unionfs_link() */
		if (err == -EEXIST || err == -EIO)
			WRITE_ONCE(UNIONFS_D(new)->invalid, true);
		unionfs_unlock_parent(lower.mnt, lparent);
	}
	revert_creds(old_cred);
	if (!err) {
		struct inode *real = d_inode(lower.dentry);

		inode = unionfs_lookup_created(new, lower.dentry);
		if (!IS_ERR(inode) && inode != d_inode(old)) {
			iput(inode);	/* not the union inode of @old */
			inode = ERR_PTR(-ESTALE);
		}
		if (IS_ERR(inode)) {
			/*
			 * Linked, but not shown: the name looks it up again,
			 * and the listing's state is left to reconcile.
			 */
			WRITE_ONCE(UNIONFS_D(new)->invalid, true);
			d_drop(new);
		} else {
			set_nlink(inode, real->i_nlink);
			unionfs_set_inode_ctime(inode, unionfs_inode_ctime(real));
			d_instantiate(new, inode);
			unionfs_rd_add(&rdt, &new->d_name, inode);
		}
	}
	unionfs_name_changed(new);
	unionfs_rd_end(&rdt, err ? err : PTR_ERR_OR_ZERO(inode));
out_put:
	dput(lparent);
	unionfs_branch_write_end(br);
	mutex_unlock(copyup_lock);
	/* Two file systems in one branch (or quota projects): copy up. */
	return err == -EXDEV ? 1 : err;
}

static int unionfs_link(struct dentry *old, struct inode *dir,
			struct dentry *new)
{
	struct super_block *sb = dir->i_sb;
	struct unionfs_dentry_info *di = UNIONFS_D(new);
	struct inode *inode = d_inode(old);
	struct vfsmount *mnt = unionfs_upper_mnt(sb);
	struct dentry *uparent, *ud = NULL, *uold;
	const struct cred *old_cred;
	struct unionfs_rd_txn rdt;
	int err;

	err = unionfs_may_write(sb);
	if (!err)
		err = unionfs_link_in_place(old, dir, new);
	if (err <= 0)
		return err;
	err = unionfs_copy_up(old);
	if (!err)
		err = unionfs_copy_up(new->d_parent);
	if (err)
		return err;
	uold = unionfs_upper(old);
	uparent = unionfs_upper(new->d_parent);

	unionfs_rd_begin(&rdt, new->d_parent, 0);
	old_cred = unionfs_override_creds(sb);
	unionfs_name_changing(new);
	err = unionfs_lock_parent(mnt, uparent);
	if (!err) {
		ud = unionfs_upper_child(new, uparent);
		err = PTR_ERR_OR_ZERO(ud);
		if (!err && d_is_positive(ud))
			err = -EEXIST;
		if (!err)
			err = unionfs_do_link(mnt, uold, uparent, ud);
		if (!err)
			unionfs_dir_changed(dir, uparent);
		if (!err && d_is_negative(ud)) {
			/*
			 * Linked, but the branch left the dentry negative (a
			 * union as the branch, whose lookup of the new name
			 * failed): nothing to show.  EIO, as for mkdir, and
			 * the name is looked up again.
			 */
			WRITE_ONCE(di->invalid, true);
			err = -EIO;
		}
		unionfs_unlock_parent(mnt, uparent);
	}
	if (!err && (di->ns_flags & ODF_NODE_WHITEOUT)) {
		err = unionfs_upper_durable(sb, di->ns_flags, uparent);
		if (!err)
			err = unionfs_ns_unwhiteout(dir, &new->d_name);
		if (err)
			unionfs_odf_refused(sb, "cannot update a namespace node", err);
		/* A hidden lower object may be below: look the name up again. */
		WRITE_ONCE(di->invalid, true);
		di->ns_flags = 0;
		err = 0;
	}
	revert_creds(old_cred);
	if (err) {
		if (!IS_ERR_OR_NULL(ud))
			dput(ud);
		unionfs_name_changed(new);
		unionfs_rd_end(&rdt, err);
		return err;
	}
	unionfs_set_upper(new, ud);
	set_nlink(inode, d_inode(uold)->i_nlink +
			 READ_ONCE(UNIONFS_I(inode)->lower_links));
	unionfs_set_inode_ctime(inode, unionfs_inode_ctime(d_inode(uold)));
	ihold(inode);
	d_instantiate(new, inode);
	unionfs_name_changed(new);
	unionfs_rd_add(&rdt, &new->d_name, inode);
	unionfs_rd_end(&rdt, 0);
	return 0;
}

/*
 * O_TMPFILE: a file with no name, made on the upper branch in the
 * parent's upper directory (the parent copied up first) with the
 * mounter's rights and the caller's fsuid and fsgid, as create makes its
 * objects, and opened as the caller asked.  The union file holds it as
 * any union file holds its real file.  Nothing changes in a listing or
 * on the ODF; linkat() gives the file a name later through ->link, whose
 * upper link is of this upper object.  The upper tmpfile is always
 * linkable; whether the union's is (O_EXCL) the VFS decides on the
 * union inode.  A file closed with no name goes with its upper object.
 */
static int unionfs_tmpfile(unionfs_idmap_t *idmap, struct inode *dir,
			   struct file *file, umode_t mode)
{
	struct super_block *sb = dir->i_sb;
	struct dentry *dentry = file->f_path.dentry;
	struct path upath = { .mnt = unionfs_upper_mnt(sb) };
	struct unionfs_dentry_info *di;
	const struct cred *old_cred;
	struct file *realfile;
	struct inode *inode;
	u64 ino;
	int err;

	err = unionfs_may_write(sb);
	if (err)
		return err;
	/* An upper file system without O_TMPFILE: no copy-up for nothing. */
	if (!d_inode(unionfs_branch(sb, 0)->root.dentry)->i_op->tmpfile)
		return -EOPNOTSUPP;
	/* The VFS made @dentry without a lookup; d_release() frees this. */
	di = unionfs_alloc_dinfo(0);
	if (!di)
		return -ENOMEM;
	dentry->d_fsdata = di;

	/*
	 * The VFS holds no lock on @dir here: keep it from rmdir (which
	 * would leave its upper dentry negative) until the file is made.
	 */
	inode_lock_shared(dir);
	err = IS_DEADDIR(dir) ? -ENOENT : unionfs_copy_up(dentry->d_parent);
	if (err) {
		inode_unlock_shared(dir);
		return err;
	}
	upath.dentry = unionfs_upper(dentry->d_parent);
	old_cred = unionfs_create_creds(sb);
	if (IS_ERR(old_cred)) {
		inode_unlock_shared(dir);
		return PTR_ERR(old_cred);
	}
	realfile = unionfs_do_tmpfile(&upath, mode,
				      file->f_flags & ~(O_CREAT | O_EXCL |
							O_NOCTTY | O_TRUNC |
							O_TMPFILE),
				      old_cred, file);
	revert_creds(old_cred);
	inode_unlock_shared(dir);
	if (IS_ERR(realfile))
		return PTR_ERR(realfile);

	err = unionfs_ino_of(sb, 0, file_inode(realfile), &ino, NULL);
	if (!err) {
		inode = unionfs_iget(sb, ino, file_inode(realfile), 0);
		err = PTR_ERR_OR_ZERO(inode);
	}
	if (err) {
		fput(realfile);
		return err;
	}
	unionfs_set_upper(dentry, dget(realfile->f_path.dentry));
	/* d_tmpfile() drops the one link an inode is made with. */
	set_nlink(inode, 1);
	d_tmpfile(file, inode);
	return unionfs_open_on(file, realfile);
}

/*
 * The node of a name may have changed since its lookup (a rename inside
 * a directory gives the directory a node): read it again before a
 * decision that depends on it.
 */
static int unionfs_refresh_ns(struct dentry *dentry)
{
	struct unionfs_ns_node node;
	int err;

	err = unionfs_ns_get(dentry, &node);
	if (!err)
		UNIONFS_D(dentry)->ns_flags = node.flags;
	unionfs_ns_node_free(&node);
	return err;
}

/*
 * Has a branch below the one of @dentry's top lower object an object at
 * its name?  A lookup stops at a non-directory, so the branches below
 * are asked now, through the parent's lower parts.  On an error, yes:
 * a whiteout too many hides nothing that shows.
 */
static bool unionfs_name_below(struct dentry *dentry)
{
	const struct unionfs_dentry_info *pdi = UNIONFS_D(dentry->d_parent);
	const struct unionfs_lower *top = unionfs_top_lower(dentry);
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	const struct qstr *name = &dentry->d_name;
	const struct cred *old_cred;
	bool after = false, below = false;
	unsigned int i;

	/* Shown from the upper now (read without copyup_lock): a whiteout. */
	if (!top)
		return true;
	old_cred = unionfs_override_creds(dentry->d_sb);
	for (i = 0; i < pdi->nlower && !below; i++) {
		const struct unionfs_lower *pl = &pdi->lower[i];
		struct dentry *ld;

		if (pl->bindex == top->bindex) {
			after = true;
			continue;
		}
		if (!after || !pl->positive || !d_can_lookup(pl->path.dentry) ||
		    READ_ONCE(sbi->branches[pl->bindex].gone))
			continue;
		ld = lookup_one_unlocked(unionfs_mnt_idmap(pl->path.mnt),
					 name->name, pl->path.dentry, name->len);
		if (IS_ERR(ld)) {
			below = true;
			break;
		}
		below = d_is_positive(ld);
		dput(ld);
	}
	revert_creds(old_cred);
	return below;
}

/*
 * Does removing @dentry's name need a whiteout?  When a lower branch has
 * an object there, or its node says a lower object is hidden there.  An
 * object removed in place from a writable lower branch (@in_place)
 * needs one only for lower objects besides it.
 */
static bool unionfs_needs_whiteout(struct dentry *dentry, bool in_place)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);

	if (di->ns_flags & (ODF_NODE_OPAQUE | ODF_NODE_REDIRECT |
			    ODF_NODE_WHITEOUT))
		return true;
	if (!in_place)
		return unionfs_has_lower(dentry);
	return unionfs_name_below(dentry);
}

/*
 * Remove @dentry's object from the writable lower branch it is on
 * (@lower, from unionfs_change_in_place()): it has no upper object.
 * It must still be where the lookup found it (ESTALE if it was moved in
 * its branch since: unionfs_do_remove() checks under the lock).
 */
static int unionfs_remove_in_place(struct dentry *dentry,
				   const struct path *lower)
{
	struct dentry *lparent = dget_parent(lower->dentry);
	/*
	 * Referenced here too, so that the removal unhashes it instead of
	 * making it negative: the union dentry (an O_PATH fd, a working
	 * directory) still reads its inode, as for an upper object.
	 */
	struct dentry *ld = dget(lower->dentry);
	int err = -ESTALE;

	if (lparent == unionfs_top_lower(dentry)->parent)
		err = unionfs_lock_parent(lower->mnt, lparent);
	if (!err) {
		err = unionfs_do_remove(lower->mnt, lparent, ld);
		unionfs_unlock_parent(lower->mnt, lparent);
	}
	/* The last link of a copy made here (section 3.4): its records go. */
	if (!err && !d_is_dir(ld) && !d_inode(ld)->i_nlink)
		unionfs_imap_forget(dentry->d_sb,
				    unionfs_top_lower(dentry)->bindex,
				    d_inode(ld));
	dput(ld);
	dput(lparent);
	return err;
}

/* Remove the upper object of @dentry (unlink or rmdir). */
static int unionfs_remove_upper(struct dentry *dentry, bool is_dir)
{
	struct super_block *sb = dentry->d_sb;
	struct vfsmount *mnt = unionfs_upper_mnt(sb);
	struct dentry *upper = unionfs_upper(dentry);
	struct dentry *parent = dget_parent(dentry);
	struct dentry *uparent = unionfs_upper(parent);
	int err;

	if (!uparent) {
		dput(parent);
		return -EIO;
	}
	dget(upper);
	err = unionfs_lock_parent(mnt, uparent);
	if (!err) {
		err = unionfs_do_remove(mnt, uparent, upper);
		if (!err)
			unionfs_dir_changed(d_inode(parent), uparent);
		unionfs_unlock_parent(mnt, uparent);
	}
	if (!err && (is_dir || !d_inode(upper)->i_nlink))
		unionfs_imap_forget(sb, 0, d_inode(upper));
	dput(upper);
	dput(parent);
	return err;
}

/*
 * Unlink or rmdir.  The inode's copyup_lock is held from the decision
 * (is there an upper object?) to the end: a copy-up that began before
 * finishes first and its object is removed; one that begins after finds
 * the name removed and fails with ENOENT instead of bringing it back.
 */
static int unionfs_remove_name(struct inode *dir, struct dentry *dentry,
			       bool is_dir)
{
	struct super_block *sb = dir->i_sb;
	struct unionfs_dentry_info *di;
	struct inode *inode = d_inode(dentry);
	struct dentry *upper;
	const struct cred *old_cred;
	struct unionfs_rd_txn rdt;
	bool whiteout, in_place, may_in_place = true, retry;
	struct unionfs_branch *br;
	struct path lower;
	int err;

	err = unionfs_may_write(sb);
	if (err)
		return err;
again:
	retry = false;
	if (is_dir) {
		err = unionfs_check_empty(dentry);
		if (err)
			return err;
	} else {
		err = unionfs_copy_up_other_name(dentry);
		if (err)
			return err;
	}
	/*
	 * A whiteout goes into the node of a directory with an upper part
	 * (docs/odf-format.md 9.4): that directory's number is its UPPER
	 * record, which no branch change alters, while a lower-only
	 * directory is renumbered when the branch of its oldest part is
	 * removed (section 3.5), and its whiteouts would stop applying.
	 * An object removed in place from a writable lower branch needs
	 * none when no other branch has the name.
	 */
	in_place = may_in_place && unionfs_change_in_place(dentry, &lower);
	if (unionfs_has_lower(dentry) && !unionfs_upper(dentry->d_parent) &&
	    unionfs_needs_whiteout(dentry, in_place)) {
		err = unionfs_copy_up(dentry->d_parent);
		if (err)
			return err;
	}
	mutex_lock(&UNIONFS_I(inode)->copyup_lock);
	/* A copy-up through an fd may swap the info (copyup.c): read it now. */
	di = UNIONFS_D(dentry);
	upper = unionfs_upper(dentry);
	in_place = may_in_place && unionfs_change_in_place(dentry, &lower);
	unionfs_rd_begin(&rdt, dentry->d_parent, 0);
	old_cred = unionfs_override_creds(sb);
	/* Counted as a writer of its branch, which mode=ro waits for. */
	br = in_place ? unionfs_branch(sb, unionfs_top_lower(dentry)->bindex) :
			NULL;
	if (br && !unionfs_branch_write_begin(br)) {
		/*
		 * A remount is making the branch read-only (the name is then
		 * removed as from a read-only branch: start again that way,
		 * nothing done yet), or removing it.
		 */
		retry = READ_ONCE(br->going_ro);
		err = retry ? -EAGAIN : -ESTALE;
		br = NULL;
		goto out;
	}
	err = unionfs_refresh_ns(dentry);
	if (err)
		goto out;
	whiteout = unionfs_needs_whiteout(dentry, in_place);
	/*
	 * Hide before delete: the whiteout is committed first.  For an
	 * object on a writable lower branch it hides that object too, so a
	 * crash before the branch's unlink leaves the name removed.
	 */
	if (whiteout && !unionfs_upper(dentry->d_parent)) {
		err = -ESTALE;	/* the parent's upper part went meanwhile */
		goto out;
	}
	/* What would surely fail after the whiteout: fail before it. */
	if (in_place && __mnt_is_readonly(lower.mnt)) {
		err = -EROFS;
		goto out;
	}
	if (whiteout) {
		err = unionfs_ns_whiteout(dir, &dentry->d_name,
					  upper || in_place);
		if (err) {
			unionfs_odf_refused(sb, "cannot write a whiteout", err);
			goto out;
		}
	}
	/*
	 * A directory's node (whiteouts of its lower names, its record)
	 * goes with it; the whiteout above, or W2, already hides what it
	 * hid.  One left by a crash is harmless: its owner stamp no longer
	 * matches any directory.
	 */
	if (is_dir) {
		err = unionfs_ns_drop(inode);
		if (err) {
			unionfs_odf_refused(sb, "cannot remove a namespace node", err);
			err = 0;
		}
	}
	if (upper) {
		err = unionfs_remove_upper(dentry, is_dir);
		if (err)
			goto out;
	} else if (in_place) {
		err = unionfs_remove_in_place(dentry, &lower);
		/*
		 * The object stays, so the whiteout that hides it (and the
		 * copies below) goes: a crash before that shows the name
		 * removed, which the unlink may have done.
		 */
		if (err && whiteout) {
			int err2 = unionfs_ns_unwhiteout(dir, &dentry->d_name);

			if (err2)
				unionfs_odf_refused(sb, "cannot remove a whiteout",
						    err2);
		}
		if (err)
			goto out;
	}
	if (!is_dir && !upper && UNIONFS_I(inode)->bindex == 0)
		unionfs_imap_lower_link_gone(sb, inode);	/* whited out */
	if (is_dir)
		clear_nlink(inode);
	else
		unionfs_name_gone(inode);
	unionfs_set_inode_ctime(inode, current_time(inode));
	unionfs_set_inode_ctime(dir, current_time(dir));
	unionfs_set_inode_mtime(dir, unionfs_inode_ctime(dir));
	WRITE_ONCE(di->removed, true);
	WRITE_ONCE(di->invalid, true);
	unionfs_rd_del(&rdt, &dentry->d_name);
out:
	if (br)
		unionfs_branch_write_end(br);
	revert_creds(old_cred);
	unionfs_rd_end(&rdt, err);
	mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
	if (retry) {
		may_in_place = false;
		goto again;
	}
	if (!err && is_dir)
		unionfs_rd_drop(dentry);
	return err;
}

static int unionfs_unlink(struct inode *dir, struct dentry *dentry)
{
	return unionfs_remove_name(dir, dentry, false);
}

static int unionfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	return unionfs_remove_name(dir, dentry, true);
}

/*
 * After a rename, @dentry is at its new name.  A non-directory looks its
 * name up again: it hides other lower objects there.  A directory keeps
 * its lower parts and its node (keyed by its inode number), so its dentry
 * stays valid, and with it the mounts below it (issue 10 item 5: an
 * invalidated dentry detaches them).
 */
static void unionfs_renamed(struct dentry *dentry, bool is_dir)
{
	struct unionfs_dentry_info *di = UNIONFS_D(dentry);

	if (!is_dir)
		WRITE_ONCE(di->invalid, true);
	else	/* unionfs_ns_mark() made it opaque (+ redirect) */
		di->ns_flags = UNIONFS_NS_DIR | ODF_NODE_OPAQUE |
			       (unionfs_has_lower(dentry) ? ODF_NODE_REDIRECT : 0);
}

/* The rename on the upper branch; the union dentries say what to expect. */
static int unionfs_rename_upper(struct dentry *old, struct dentry *new,
				bool new_has_upper, unsigned int flags)
{
	struct vfsmount *mnt = unionfs_upper_mnt(old->d_sb);
	struct dentry *uold_dir, *unew_dir, *uold, *unew, *trap;
	int err;

	uold_dir = unionfs_upper(old->d_parent);
	unew_dir = unionfs_upper(new->d_parent);
	trap = unionfs_lock_rename(mnt, unew_dir, uold_dir);
	if (IS_ERR(trap))
		return PTR_ERR(trap);
	uold = lookup_one_len(old->d_name.name, uold_dir, old->d_name.len);
	err = PTR_ERR_OR_ZERO(uold);
	if (err)
		goto out_unlock;
	unew = lookup_one_len(new->d_name.name, unew_dir, new->d_name.len);
	err = PTR_ERR_OR_ZERO(unew);
	if (err)
		goto out_put_old;
	err = -ESTALE;
	if (uold != unionfs_upper(old) || uold == trap || unew == trap)
		goto out_put_new;
	if (new_has_upper ? unew != unionfs_upper(new) : d_is_positive(unew))
		goto out_put_new;
	err = unionfs_do_rename(mnt, uold_dir, uold, unew_dir, unew, flags);
	if (!err) {
		unionfs_dir_changed(d_inode(old->d_parent), uold_dir);
		if (new->d_parent != old->d_parent)
			unionfs_dir_changed(d_inode(new->d_parent), unew_dir);
	}
out_put_new:
	dput(unew);
out_put_old:
	dput(uold);
out_unlock:
	unionfs_unlock_rename(mnt, unew_dir, uold_dir);
	return err;
}

/*
 * May @old be renamed to @new in place, on the writable lower branch its
 * object is on (unionfs(5), "Several writable branches")?  When it is a
 * non-directory changed in place there, neither name needs a whiteout
 * (no other branch has either name, no node says one is hidden), and
 * @new would be made on that branch (its parent has no upper part, and
 * that branch is its highest writable part); a name there is replaced
 * only if it is such an object too.  Then nothing on the ODF changes:
 * the object keeps its number (its branch's id and inode number).
 * @lower gets @old's object, @k the index of @new's entry for that
 * branch.
 */
static bool unionfs_rename_in_place(struct dentry *old, struct dentry *new,
				    unsigned int flags, struct path *lower,
				    int *k)
{
	const struct unionfs_lower *top;
	struct path nl;

	if ((flags & RENAME_EXCHANGE) || d_is_dir(old) ||
	    !unionfs_change_in_place(old, lower) ||
	    unionfs_needs_whiteout(old, true))
		return false;
	/* Asked again under copyup_lock; before it, an info may be swapped. */
	top = unionfs_top_lower(old);
	*k = unionfs_create_part(new);
	if (!top || *k < 0 || UNIONFS_D(new)->lower[*k].bindex != top->bindex)
		return false;
	if (d_really_is_negative(new))
		return !(UNIONFS_D(new)->ns_flags & ODF_NODE_WHITEOUT);
	return !d_is_dir(new) && unionfs_change_in_place(new, &nl) &&
	       nl.dentry == UNIONFS_D(new)->lower[*k].path.dentry &&
	       !unionfs_needs_whiteout(new, true);
}

/*
 * The rename in place (unionfs_rename_in_place()): both names' branch
 * dentries must still be where the lookups found them (ESTALE, which
 * makes the VFS look up and try again, if the branch changed since).
 */
static int unionfs_rename_lower(struct dentry *old, struct dentry *new,
				const struct path *lower, int k,
				unsigned int flags)
{
	const struct unionfs_lower *nl = &UNIONFS_D(new)->lower[k];
	struct vfsmount *mnt = lower->mnt;
	struct dentry *od = dget(lower->dentry), *nd = dget(nl->path.dentry);
	struct dentry *odir = dget_parent(od), *ndir = dget_parent(nd);
	struct dentry *trap;
	int err = -ESTALE;

	if (odir != unionfs_top_lower(old)->parent || ndir != nl->parent)
		goto out;
	trap = unionfs_lock_rename(mnt, ndir, odir);
	err = PTR_ERR_OR_ZERO(trap);
	if (err)
		goto out;
	err = -ESTALE;
	if (od->d_parent == odir && nd->d_parent == ndir &&
	    !d_unhashed(od) && !d_unhashed(nd) && od != trap && nd != trap &&
	    d_is_positive(nd) == d_really_is_positive(new))
		/* The target was checked under the lock: NOREPLACE is kept. */
		err = unionfs_do_rename(mnt, odir, od, ndir, nd,
					flags & ~RENAME_NOREPLACE);
	if (!err) {
		unionfs_lower_dir_changed(d_inode(old->d_parent), odir, mnt);
		if (ndir != odir)
			unionfs_lower_dir_changed(d_inode(new->d_parent), ndir,
						  mnt);
	}
	unionfs_unlock_rename(mnt, ndir, odir);
out:
	dput(odir);
	dput(ndir);
	dput(od);
	dput(nd);
	return err;
}

/* Make the upper rename durable: both parents' entries (section 9). */
static int unionfs_rename_sync_upper(struct dentry *old, struct dentry *new)
{
	struct path p = { .mnt = unionfs_upper_mnt(old->d_sb) };
	int err;

	p.dentry = unionfs_upper(new->d_parent);
	err = unionfs_odf_fsync_dir(&p);
	if (!err && new->d_parent != old->d_parent) {
		p.dentry = unionfs_upper(old->d_parent);
		err = unionfs_odf_fsync_dir(&p);
	}
	return err;
}

/*
 * Rename (sections 9.5 and 9.7).  The upper branch changes first and is
 * made durable; only then does the ODF record what stands for it (the
 * whiteout of the old name, the moved node of a directory).  When the
 * old name needs a whiteout, or a directory moves, an intent naming the
 * upper object is committed before anything: a mount after a crash
 * finishes the ODF part if the upper rename is durable, and otherwise
 * drops the intent, so a crash leaves the object at its old name or at
 * its new one, never at both, never at neither.  If the upper rename
 * fails, nothing visible has changed.
 */
static int unionfs_rename(unionfs_idmap_t *idmap, struct inode *old_dir,
			  struct dentry *old, struct inode *new_dir,
			  struct dentry *new, unsigned int flags)
{
	struct super_block *sb = old->d_sb;
	bool exchange = flags & RENAME_EXCHANGE;
	bool is_dir = d_is_dir(old);
	bool new_is_dir = d_really_is_positive(new) && d_is_dir(new);
	struct inode *new_inode = d_inode(new), *inode = d_inode(old);
	bool old_whiteout, new_whiteout, new_has_upper, intent = false;
	bool odf_steps, in_place, may_in_place = true, retry = false;
	struct unionfs_rd_txn rdt_old, rdt_new;
	struct unionfs_branch *br = NULL;
	const struct cred *old_cred;
	struct path lower;
	u64 seq = 0;
	int err, k;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	err = unionfs_may_write(sb);
	if (err)
		return err;
	if (new_is_dir && !exchange) {
		err = unionfs_check_empty(new);
		if (err)
			return err;
	}
again:
	in_place = may_in_place &&
		   unionfs_rename_in_place(old, new, flags, &lower, &k);
	if (!in_place) {
		err = unionfs_copy_up(old);
		if (!err && exchange)
			err = unionfs_copy_up(new);
		if (!err)
			err = unionfs_copy_up(new->d_parent);
		if (!err && new_inode && !exchange && !new_is_dir)
			err = unionfs_copy_up_other_name(new);
		if (err)
			return err;
	}

	/* No copy-up of either name from here on (see unionfs_remove_name). */
	mutex_lock(&UNIONFS_I(inode)->copyup_lock);
	if (new_inode)
		mutex_lock_nested(&UNIONFS_I(new_inode)->copyup_lock,
				  SINGLE_DEPTH_NESTING);
	new_has_upper = !!unionfs_upper(new);

	unionfs_rd_begin(&rdt_old, old->d_parent, 0);
	if (new->d_parent != old->d_parent)
		unionfs_rd_begin(&rdt_new, new->d_parent, 1);
	old_cred = unionfs_override_creds(sb);
	err = unionfs_refresh_ns(old);
	if (!err && !exchange)
		err = unionfs_refresh_ns(new);
	if (err)
		goto out;
	if (in_place) {
		/*
		 * Still so under the locks?  Else (a link copied the file up
		 * meanwhile, a remount made the branch read-only) start
		 * again the other way.
		 */
		in_place = unionfs_rename_in_place(old, new, flags, &lower,
						   &k);
		br = in_place ? unionfs_branch(sb, unionfs_top_lower(old)->bindex) :
				NULL;
		if (!br || !unionfs_branch_write_begin(br)) {
			br = NULL;
			may_in_place = false;
			retry = true;
			err = -EAGAIN;	/* nothing done: the states keep */
			goto out;
		}
		err = unionfs_rename_lower(old, new, &lower, k, flags);
		if (err == -EXDEV) {
			/* Two file systems in one branch: the copy-up way. */
			may_in_place = false;
			retry = true;
		}
		if (err)
			goto out;
		goto renamed;
	}
	old_whiteout = !exchange && unionfs_needs_whiteout(old, false);
	new_whiteout = !exchange &&
		       (UNIONFS_D(new)->ns_flags & ODF_NODE_WHITEOUT);
	odf_steps = old_whiteout || new_whiteout || (new_is_dir && !exchange);
	/*
	 * A directory keeps its node (keyed by its inode number) wherever
	 * it goes; before it moves, the node says opaque, and where its
	 * lower parts are (section 9.7).  That changes nothing at its
	 * current name.
	 */
	if (is_dir)
		err = unionfs_ns_mark(old, inode, true);
	if (!err && exchange && new_is_dir)
		err = unionfs_ns_mark(new, new_inode, true);
	if (err) {
		if (err != -EXDEV)
			unionfs_odf_refused(sb, "cannot mark a directory for a rename",
					    err);
		goto out;
	}
	if (old_whiteout) {
		err = unionfs_intent_begin(old, new, d_inode(unionfs_upper(old)),
					   &seq);
		if (err) {
			unionfs_odf_refused(sb, "cannot write a rename intent", err);
			goto out;
		}
		intent = true;
	}

	err = unionfs_rename_upper(old, new, new_has_upper, flags);
	if (err) {
		/* Nothing changed: the intent goes, the names stay. */
		if (intent && unionfs_intent_end(UNIONFS_SB(sb), seq))
			unionfs_odf_error(sb, "cannot delete a rename intent",
					  -EIO);
		goto out;
	}
	if (odf_steps)
		err = unionfs_rename_sync_upper(old, new);

	/* The ODF: the names' whiteouts after the rename. */
	if (!err && new_is_dir && !exchange)
		err = unionfs_ns_drop(new_inode);
	if (!err && old_whiteout)
		err = unionfs_ns_whiteout(old_dir, &old->d_name, true);
	if (!err && new_whiteout)
		err = unionfs_ns_unwhiteout(new_dir, &new->d_name);
	if (err) {
		/*
		 * The upper branch has the rename; the intent (kept) makes
		 * the next mount finish the ODF's part of it.
		 */
		unionfs_odf_error(sb, "cannot update the namespace for a rename",
				  err);
		WRITE_ONCE(UNIONFS_D(old)->invalid, true);
		WRITE_ONCE(UNIONFS_D(new)->invalid, true);
		goto out;
	}

renamed:
	if (new_inode && !exchange) {
		WRITE_ONCE(UNIONFS_D(new)->removed, true);
		if (new_is_dir)
			clear_nlink(new_inode);
		else
			unionfs_name_gone(new_inode);
		/* Its last link: an upper copy, or one on a writable lower. */
		if (new_is_dir ? new_has_upper :
		    !unionfs_lower_inode(new_inode)->i_nlink)
			unionfs_imap_forget(sb, UNIONFS_I(new_inode)->bindex,
					    unionfs_lower_inode(new_inode));
	}
	unionfs_renamed(old, is_dir);
	if (exchange)
		unionfs_renamed(new, new_is_dir);
	if (intent && unionfs_intent_end(UNIONFS_SB(sb), seq))
		unionfs_odf_error(sb, "cannot delete a rename intent", -EIO);
	/* The listings: names gone, added, or showing another object. */
	if (exchange)
		unionfs_rd_add(&rdt_old, &old->d_name, new_inode);
	else
		unionfs_rd_del(&rdt_old, &old->d_name);
	unionfs_rd_add(new->d_parent != old->d_parent ? &rdt_new : &rdt_old,
		       &new->d_name, d_inode(old));
out:
	if (br)
		unionfs_branch_write_end(br);
	br = NULL;	/* a retry takes the copy-up way */
	revert_creds(old_cred);
	if (new->d_parent != old->d_parent)
		unionfs_rd_end(&rdt_new, err);
	unionfs_rd_end(&rdt_old, err);
	if (new_inode)
		mutex_unlock(&UNIONFS_I(new_inode)->copyup_lock);
	mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
	if (retry) {
		retry = false;
		goto again;
	}
	if (!err && new_inode && new_is_dir && !exchange)
		unionfs_rd_drop(new);
	return err;
}

const struct inode_operations unionfs_dir_iops = {
	.lookup		= unionfs_lookup,
	.create		= unionfs_create,
	.mkdir		= unionfs_mkdir,
	.mknod		= unionfs_mknod,
	.symlink	= unionfs_symlink,
	.link		= unionfs_link,
	.unlink		= unionfs_unlink,
	.rmdir		= unionfs_rmdir,
	.rename		= unionfs_rename,
	.tmpfile	= unionfs_tmpfile,
	.setattr	= unionfs_setattr,
	.getattr	= unionfs_getattr,
	.permission	= unionfs_permission,
	.listxattr	= unionfs_listxattr,
	.unionfs_get_acl_op = unionfs_get_acl,
	UNIONFS_SET_ACL_OP
};
