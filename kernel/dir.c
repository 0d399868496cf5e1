// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: operations that change the union namespace: create,
 * mkdir, mknod, symlink, link, unlink, rmdir, rename.
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

static unionfs_idmap_t *unionfs_upper_idmap(struct super_block *sb)
{
	return unionfs_mnt_idmap(unionfs_upper_mnt(sb));
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
	unionfs_copy_attr(dir, d_inode(uparent));
	fsstack_copy_inode_size(dir, d_inode(uparent));
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
	unionfs_idmap_t *idmap = unionfs_upper_idmap(sb);
	struct inode *udir = d_inode(uparent), *inode;
	const struct cred *old_cred;
	struct dentry *ud;
	bool whiteout;
	u64 ino;
	int err;

	old_cred = unionfs_create_creds(sb);
	if (IS_ERR(old_cred))
		return PTR_ERR(old_cred);
	inode_lock_nested(udir, I_MUTEX_PARENT);
	ud = unionfs_upper_child(dentry, uparent);
	err = PTR_ERR_OR_ZERO(ud);
	if (!err && d_is_positive(ud))
		err = -EEXIST;
	if (!err) {
		switch (ca->mode & S_IFMT) {
		case S_IFREG:
			err = vfs_create(idmap, udir, ud, ca->mode, true);
			break;
		case S_IFDIR:
			err = vfs_mkdir(idmap, udir, ud, ca->mode);
			if (!err && d_unhashed(ud))
				err = -EIO;
			break;
		case S_IFLNK:
			err = vfs_symlink(idmap, udir, ud, ca->link);
			break;
		default:
			err = vfs_mknod(idmap, udir, ud, ca->mode, ca->rdev);
			break;
		}
	}
	if (!err)
		unionfs_dir_changed(dir, uparent);
	inode_unlock(udir);
	revert_creds(old_cred);
	if (err) {
		if (!IS_ERR(ud))
			dput(ud);
		return err;
	}

	/* The object is visible (W1); now the ODF node of its name. */
	whiteout = di->ns_flags & ODF_NODE_WHITEOUT;
	old_cred = unionfs_override_creds(sb);
	if (S_ISDIR(ca->mode) && (di->ns_flags & ODF_NODE_WHITEOUT))
		err = unionfs_ns_opaque(dentry);
	else if (di->ns_flags)
		err = unionfs_ns_remove(dentry);
	revert_creds(old_cred);
	if (err)
		unionfs_odf_error(sb, "cannot update a namespace node", err);
	di->ns_flags = S_ISDIR(ca->mode) && (di->ns_flags & ODF_NODE_WHITEOUT) ?
		       UNIONFS_NS_DIR | ODF_NODE_OPAQUE : 0;

	unionfs_set_upper(dentry, ud);
	/*
	 * Over a whiteout, a lower object may hide below the new one: the
	 * next lookup records it, so removing the new object hides it again.
	 */
	if (whiteout && !S_ISDIR(ca->mode))
		WRITE_ONCE(di->invalid, true);
	err = unionfs_ino_of(sb, 0, d_inode(ud), &ino, NULL);
	if (err)
		return err;
	inode = unionfs_iget(sb, ino, d_inode(ud), 0);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	d_instantiate(dentry, inode);
	unionfs_rd_add(rdt, &dentry->d_name, inode);
	return 0;
}

/* Create on the upper branch, then keep the readdir state up to date. */
static int unionfs_create_object(struct inode *dir, struct dentry *dentry,
				 const struct unionfs_cattr *ca)
{
	struct super_block *sb = dir->i_sb;
	struct dentry *parent = dentry->d_parent, *uparent;
	struct unionfs_rd_txn rdt;
	int err;

	err = unionfs_may_write(sb);
	if (!err)
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

static int unionfs_link(struct dentry *old, struct inode *dir,
			struct dentry *new)
{
	struct super_block *sb = dir->i_sb;
	struct unionfs_dentry_info *di = UNIONFS_D(new);
	struct inode *inode = d_inode(old);
	struct dentry *uparent, *ud, *uold;
	const struct cred *old_cred;
	struct unionfs_rd_txn rdt;
	struct inode *udir;
	int err;

	err = unionfs_may_write(sb);
	if (!err)
		err = unionfs_copy_up(old);
	if (!err)
		err = unionfs_copy_up(new->d_parent);
	if (err)
		return err;
	uold = unionfs_upper(old);
	uparent = unionfs_upper(new->d_parent);
	udir = d_inode(uparent);

	unionfs_rd_begin(&rdt, new->d_parent, 0);
	old_cred = unionfs_override_creds(sb);
	inode_lock_nested(udir, I_MUTEX_PARENT);
	ud = unionfs_upper_child(new, uparent);
	err = PTR_ERR_OR_ZERO(ud);
	if (!err && d_is_positive(ud))
		err = -EEXIST;
	if (!err)
		err = vfs_link(uold, unionfs_upper_idmap(sb), udir, ud, NULL);
	if (!err)
		unionfs_dir_changed(dir, uparent);
	inode_unlock(udir);
	if (!err && di->ns_flags) {
		err = unionfs_ns_remove(new);
		if (err)
			unionfs_odf_error(sb, "cannot update a namespace node", err);
		/* A hidden lower object may be below: look the name up again. */
		WRITE_ONCE(di->invalid, true);
		di->ns_flags = 0;
		err = 0;
	}
	revert_creds(old_cred);
	if (err) {
		if (!IS_ERR(ud))
			dput(ud);
		unionfs_rd_end(&rdt, err);
		return err;
	}
	unionfs_set_upper(new, ud);
	set_nlink(inode, d_inode(uold)->i_nlink +
			 READ_ONCE(UNIONFS_I(inode)->lower_links));
	inode->i_ctime = d_inode(uold)->i_ctime;
	ihold(inode);
	d_instantiate(new, inode);
	unionfs_rd_add(&rdt, &new->d_name, inode);
	unionfs_rd_end(&rdt, 0);
	return 0;
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
	kfree(node.redirect);
	return err;
}

/*
 * Does removing @dentry's name need a whiteout?  When a lower branch has
 * an object there, or its node says a lower object is hidden there.
 */
static bool unionfs_needs_whiteout(struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);

	return unionfs_has_lower(dentry) ||
	       (di->ns_flags & (ODF_NODE_OPAQUE | ODF_NODE_REDIRECT |
				ODF_NODE_WHITEOUT));
}

/* Remove the upper object of @dentry (unlink or rmdir). */
static int unionfs_remove_upper(struct dentry *dentry, bool is_dir)
{
	struct super_block *sb = dentry->d_sb;
	unionfs_idmap_t *idmap = unionfs_upper_idmap(sb);
	struct dentry *upper = unionfs_upper(dentry);
	struct dentry *parent = dget_parent(dentry);
	struct dentry *uparent = unionfs_upper(parent);
	struct inode *udir;
	int err;

	if (!uparent) {
		dput(parent);
		return -EIO;
	}
	udir = d_inode(uparent);
	dget(upper);
	inode_lock_nested(udir, I_MUTEX_PARENT);
	if (upper->d_parent != uparent || d_unhashed(upper))
		err = -ESTALE;
	else if (is_dir)
		err = vfs_rmdir(idmap, udir, upper);
	else
		err = vfs_unlink(idmap, udir, upper, NULL);
	if (!err)
		unionfs_dir_changed(d_inode(parent), uparent);
	inode_unlock(udir);
	if (!err && (is_dir || !d_inode(upper)->i_nlink))
		unionfs_imap_forget(sb, d_inode(dentry)->i_ino, d_inode(upper));
	dput(upper);
	dput(parent);
	return err;
}

static int unionfs_do_remove(struct inode *dir, struct dentry *dentry,
			     bool is_dir)
{
	struct super_block *sb = dir->i_sb;
	struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	struct inode *inode = d_inode(dentry);
	struct dentry *upper = unionfs_upper(dentry);
	const struct cred *old_cred;
	struct unionfs_rd_txn rdt;
	bool whiteout;
	int err;

	err = unionfs_may_write(sb);
	if (err)
		return err;
	if (is_dir) {
		err = unionfs_check_empty(dentry);
		if (err)
			return err;
	}
	unionfs_rd_begin(&rdt, dentry->d_parent, 0);
	old_cred = unionfs_override_creds(sb);
	err = unionfs_refresh_ns(dentry);
	if (err)
		goto out;
	whiteout = unionfs_needs_whiteout(dentry);
	/* Hide before delete: the whiteout is committed first. */
	if (whiteout) {
		err = unionfs_ns_whiteout(dentry, upper != NULL);
		if (err) {
			unionfs_odf_error(sb, "cannot write a whiteout", err);
			goto out;
		}
	}
	if (upper) {
		err = unionfs_remove_upper(dentry, is_dir);
		if (err)
			goto out;
	}
	if (!whiteout && (di->ns_flags & UNIONFS_NS_DIR)) {
		/* A plain node of a directory that had only upper parts. */
		err = unionfs_ns_remove(dentry);
		if (err) {
			unionfs_odf_error(sb, "cannot remove a namespace node", err);
			err = 0;
		}
	}
	if (!is_dir && !upper && UNIONFS_I(inode)->bindex == 0)
		unionfs_imap_lower_link_gone(sb, inode);	/* whited out */
	if (is_dir)
		clear_nlink(inode);
	else
		unionfs_name_gone(inode);
	inode->i_ctime = current_time(inode);
	dir->i_mtime = dir->i_ctime = current_time(dir);
	WRITE_ONCE(di->removed, true);
	WRITE_ONCE(di->invalid, true);
	unionfs_rd_del(&rdt, &dentry->d_name);
out:
	revert_creds(old_cred);
	unionfs_rd_end(&rdt, err);
	if (!err && is_dir)
		unionfs_rd_drop(dentry);
	return err;
}

static int unionfs_unlink(struct inode *dir, struct dentry *dentry)
{
	return unionfs_do_remove(dir, dentry, false);
}

static int unionfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	return unionfs_do_remove(dir, dentry, true);
}

/*
 * Where the lower directories of @dentry are: the path of the first one
 * inside its branch (the redirect of a renamed directory, R1).  For a
 * directory inside a renamed one, that is not its union path.
 */
static char *unionfs_lower_relpath(struct dentry *dentry, char *buf, int len)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	const struct unionfs_lower *l = NULL;
	struct dentry *d, *root, *parent;
	char *p = buf + len;
	unsigned int i;

	for (i = 0; i < di->nlower && !l; i++)
		if (di->lower[i].positive && d_is_dir(di->lower[i].path.dentry))
			l = &di->lower[i];
	if (!l)
		return ERR_PTR(-ENOENT);
	root = unionfs_branch(dentry->d_sb, l->bindex)->root.dentry;
	*--p = 0;
	d = dget(l->path.dentry);
	while (d != root) {
		struct name_snapshot snap;
		int n;

		if (IS_ROOT(d)) {
			dput(d);
			return ERR_PTR(-EXDEV);	/* not below its branch root */
		}
		take_dentry_name_snapshot(&snap, d);
		n = snap.name.len;
		if (p - buf < n + 2) {
			release_dentry_name_snapshot(&snap);
			dput(d);
			return ERR_PTR(-ENAMETOOLONG);
		}
		p -= n;
		memcpy(p, snap.name.name, n);
		*--p = '/';
		release_dentry_name_snapshot(&snap);
		parent = dget_parent(d);
		dput(d);
		d = parent;
	}
	dput(d);
	return *p ? p : ERR_PTR(-EINVAL);
}

/*
 * Give a directory that is about to be renamed (or exchanged) the node it
 * needs at its new name: opaque, so the lower directories of the new name
 * never merge into it, and a redirect to where its own lower directories
 * are, if it has any (section 9.7).
 */
static int unionfs_rename_dir_node(struct dentry *dentry)
{
	struct unionfs_ns_node node;
	char *buf, *redirect = NULL;
	int err;

	err = unionfs_ns_get(dentry, &node);
	if (err)
		return err;
	if (unionfs_has_lower(dentry)) {
		if (node.redirect) {
			redirect = node.redirect;
		} else {
			buf = __getname();
			if (!buf) {
				err = -ENOMEM;
				goto out;
			}
			redirect = unionfs_lower_relpath(dentry, buf, PATH_MAX);
			if (IS_ERR(redirect))
				err = PTR_ERR(redirect);
			else
				err = unionfs_ns_set_dir(dentry, ODF_NODE_OPAQUE,
							 redirect);
			__putname(buf);
			goto out;
		}
	}
	err = unionfs_ns_set_dir(dentry, ODF_NODE_OPAQUE, redirect);
out:
	kfree(node.redirect);
	return err;
}

static int unionfs_rename_intent(struct dentry *old, struct dentry *new,
				 u64 *seq)
{
	char *obuf, *nbuf, *op, *np;
	int err;

	obuf = __getname();
	nbuf = __getname();
	err = obuf && nbuf ? 0 : -ENOMEM;
	if (!err) {
		op = unionfs_union_path(old, obuf, PATH_MAX);
		np = unionfs_union_path(new, nbuf, PATH_MAX);
		if (IS_ERR(op) || IS_ERR(np))
			err = -ENAMETOOLONG;
		else
			err = unionfs_intent_begin(UNIONFS_SB(old->d_sb), op, np,
						   seq);
	}
	if (obuf)
		__putname(obuf);
	if (nbuf)
		__putname(nbuf);
	return err;
}

static int unionfs_rename(unionfs_idmap_t *idmap, struct inode *old_dir,
			  struct dentry *old, struct inode *new_dir,
			  struct dentry *new, unsigned int flags)
{
	struct super_block *sb = old->d_sb;
	unionfs_idmap_t *uidmap = unionfs_upper_idmap(sb);
	bool exchange = flags & RENAME_EXCHANGE;
	bool is_dir = d_is_dir(old);
	bool new_is_dir = d_really_is_positive(new) && d_is_dir(new);
	struct inode *new_inode = d_inode(new);
	bool old_whiteout, new_has_upper, intent = false;
	struct dentry *uold_dir, *unew_dir, *uold, *unew, *trap;
	struct unionfs_rd_txn rdt_old, rdt_new;
	struct renamedata rd = {};
	const struct cred *old_cred;
	u64 seq = 0;
	int err;

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
	err = unionfs_copy_up(old);
	if (!err && exchange)
		err = unionfs_copy_up(new);
	if (!err)
		err = unionfs_copy_up(new->d_parent);
	if (err)
		return err;
	new_has_upper = unionfs_upper(new) != NULL;

	unionfs_rd_begin(&rdt_old, old->d_parent, 0);
	if (new->d_parent != old->d_parent)
		unionfs_rd_begin(&rdt_new, new->d_parent, 1);
	old_cred = unionfs_override_creds(sb);
	err = unionfs_refresh_ns(old);
	if (err)
		goto out;
	old_whiteout = !exchange && unionfs_needs_whiteout(old);
	/* A directory rename is an intent first (section 9.7). */
	if (is_dir && !exchange) {
		err = unionfs_rename_intent(old, new, &seq);
		if (err) {
			unionfs_odf_error(sb, "cannot write a rename intent", err);
			goto out;
		}
		intent = true;
	}
	/* The ODF first: the nodes the names need after the rename. */
	if (is_dir)
		err = unionfs_rename_dir_node(old);
	if (!err && exchange && new_is_dir)
		err = unionfs_rename_dir_node(new);
	if (!err && is_dir && new_is_dir && !exchange)
		err = unionfs_ns_remove(new);
	if (!err && (is_dir || (exchange && new_is_dir)))
		err = unionfs_ns_move(old, new, exchange);
	if (!err && old_whiteout)
		err = unionfs_ns_whiteout(old, true);
	if (err) {
		unionfs_odf_error(sb, "cannot update the namespace for a rename",
				  err);
		goto out;
	}

	uold_dir = unionfs_upper(old->d_parent);
	unew_dir = unionfs_upper(new->d_parent);
	trap = lock_rename(unew_dir, uold_dir);
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
	rd.old_mnt_userns = uidmap;
	rd.old_dir = d_inode(uold_dir);
	rd.old_dentry = uold;
	rd.new_mnt_userns = uidmap;
	rd.new_dir = d_inode(unew_dir);
	rd.new_dentry = unew;
	rd.flags = flags;
	err = vfs_rename(&rd);
	if (!err) {
		unionfs_dir_changed(old_dir, uold_dir);
		if (new_dir != old_dir)
			unionfs_dir_changed(new_dir, unew_dir);
	}
out_put_new:
	dput(unew);
out_put_old:
	dput(uold);
out_unlock:
	unlock_rename(unew_dir, uold_dir);
	if (err) {
		/*
		 * The ODF already says the rename happened; the intent stays
		 * and the next mount finishes the job (section 9.7).
		 */
		if (intent)
			pr_err("rename of directory '%pd' to '%pd' failed on the upper branch (error %d): it is finished at the next mount\n",
			       old, new, err);
		WRITE_ONCE(UNIONFS_D(old)->invalid, true);
		WRITE_ONCE(UNIONFS_D(new)->invalid, true);
		goto out;
	}

	/* A stale whiteout at the new name is moot now (W1); tidy it. */
	if (!is_dir && !exchange && (UNIONFS_D(new)->ns_flags & ODF_NODE_WHITEOUT))
		unionfs_ns_remove(new);
	if (new_inode && !exchange) {
		WRITE_ONCE(UNIONFS_D(new)->removed, true);
		if (new_is_dir)
			clear_nlink(new_inode);
		else
			unionfs_name_gone(new_inode);
		if (new_has_upper && (new_is_dir ||
				      !unionfs_lower_inode(new_inode)->i_nlink))
			unionfs_imap_forget(sb, new_inode->i_ino,
					    unionfs_lower_inode(new_inode));
	}
	/*
	 * A renamed file looks its new name up again (the lower objects it
	 * hides there are others).  A directory keeps its info: its lower
	 * directories are its redirect, and its node is read again when a
	 * decision needs it; invalidating it would detach mounts below it.
	 */
	WRITE_ONCE(UNIONFS_D(old)->invalid, true);
	if (exchange)
		WRITE_ONCE(UNIONFS_D(new)->invalid, true);
	if (intent && unionfs_intent_end(UNIONFS_SB(sb), seq))
		unionfs_odf_error(sb, "cannot delete a rename intent", -EIO);
	/* The listings: names gone, added, or showing another object. */
	if (exchange) {
		unionfs_rd_add(&rdt_old, &old->d_name, new_inode);
	} else {
		unionfs_rd_del(&rdt_old, &old->d_name);
	}
	unionfs_rd_add(new->d_parent != old->d_parent ? &rdt_new : &rdt_old,
		       &new->d_name, d_inode(old));
out:
	revert_creds(old_cred);
	if (new->d_parent != old->d_parent)
		unionfs_rd_end(&rdt_new, err);
	unionfs_rd_end(&rdt_old, err);
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
	.setattr	= unionfs_setattr,
	.getattr	= unionfs_getattr,
	.permission	= unionfs_permission,
	.listxattr	= unionfs_listxattr,
	.unionfs_get_acl_op = unionfs_get_acl,
};
