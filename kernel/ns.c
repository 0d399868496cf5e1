// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: the namespace tree /ns of the ODF (docs/odf-format.md
 * section 5).
 *
 * /ns mirrors union directories sparsely: /ns/D/N is a regular file when
 * the union name /D/N is deleted (a whiteout), a directory when something
 * below it carries metadata, with a trusted.odf record when the union
 * directory is opaque or was renamed (redirect).  Nodes are found by the
 * union path of a dentry, so they follow the union's own renames.
 *
 * Every change runs under odf_lock with the mounter's credentials, and
 * never while a branch directory is locked (both may be ext4, and lockdep
 * sees one lock class).  A node change locks several ODF directories in
 * turn, so write access to the ODF is taken once for the whole change,
 * after odf_lock (unionfs_ns_begin), and the unionfs_do_* calls inside
 * rely on it.  Replacing a node of one type by one of the other
 * goes through /reclaim with RENAME_EXCHANGE, so the name always has one
 * (section 9.3, 9.4).
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/cred.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "unionfs.h"

/* The union path of a dentry ("/" for the root), in @buf. */
char *unionfs_union_path(struct dentry *dentry, char *buf, int len)
{
	return dentry_path_raw(dentry, buf, len);
}

static unionfs_idmap_t *unionfs_ns_idmap(struct unionfs_sb_info *sbi)
{
	return unionfs_mnt_idmap(sbi->ns.mnt);
}

/* odf_lock, then write access to the ODF (branch.c's order). */
static int unionfs_ns_begin(struct unionfs_sb_info *sbi)
{
	int err;

	mutex_lock(&sbi->odf_lock);
	err = mnt_want_write(sbi->ns.mnt);
	if (err)
		mutex_unlock(&sbi->odf_lock);
	return err;
}

static void unionfs_ns_end(struct unionfs_sb_info *sbi)
{
	mnt_drop_write(sbi->ns.mnt);
	mutex_unlock(&sbi->odf_lock);
}

/* Look up the node of a union path; -ENOENT when it has none. */
static int unionfs_ns_lookup_path(struct unionfs_sb_info *sbi, const char *upath,
				  struct path *path)
{
	int err;

	if (!upath[1]) {
		*path = sbi->ns;
		path_get(path);
		return 0;
	}
	err = vfs_path_lookup(sbi->ns.dentry, sbi->ns.mnt, upath + 1, 0, path);
	return err == -ENOTDIR ? -ENOENT : err;	/* below a whiteout: dead */
}

static int unionfs_ns_lookup(struct dentry *dentry, struct path *path)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	char *buf, *upath;
	int err;

	buf = __getname();
	if (!buf)
		return -ENOMEM;
	upath = unionfs_union_path(dentry, buf, PATH_MAX);
	err = IS_ERR(upath) ? PTR_ERR(upath) :
			      unionfs_ns_lookup_path(sbi, upath, path);
	__putname(buf);
	return err;
}

int unionfs_ns_read_node(struct unionfs_sb_info *sbi, struct dentry *d,
			 struct unionfs_ns_node *node)
{
	size_t max = sizeof(struct odf_node) + ODF_REDIRECT_MAX;
	struct odf_node *n;
	unsigned int type, rlen;
	ssize_t len;
	int err = 0;

	n = kmalloc(max, GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	len = vfs_getxattr(unionfs_ns_idmap(sbi), d, ODF_NODE_XATTR, n, max);
	if (len == -ENODATA)
		goto out;	/* a plain directory */
	if (len < 0) {
		err = len;
		goto out;
	}
	type = len >= sizeof(*n) ? le16_to_cpu(n->n_type) : 0;
	rlen = len >= sizeof(*n) ? le16_to_cpu(n->n_redirect_len) : 0;
	if (len < sizeof(*n) || le32_to_cpu(n->n_magic) != ODF_NODE_MAGIC ||
	    le16_to_cpu(n->n_version) != ODF_FORMAT_VERSION ||
	    len != sizeof(*n) + rlen ||
	    le32_to_cpu(n->n_crc) != unionfs_odf_crc(n, len,
					offsetof(struct odf_node, n_crc)) ||
	    (type & ODF_NODE_WHITEOUT) || !!(type & ODF_NODE_REDIRECT) != !!rlen) {
		pr_warn_ratelimited("ODF '%s': damaged namespace record ignored: run odfck\n",
				    sbi->odf_name);
		goto out;
	}
	node->flags |= type & (ODF_NODE_OPAQUE | ODF_NODE_REDIRECT);
	if (rlen) {
		node->redirect = kmemdup_nul((char *)(n + 1), rlen, GFP_KERNEL);
		if (!node->redirect)
			err = -ENOMEM;
	}
out:
	kfree(n);
	return err;
}

/*
 * What the ODF says of a union name: nothing, a whiteout, or a directory
 * node with its record.  Called with the mounter's credentials.
 */
int unionfs_ns_get(struct dentry *dentry, struct unionfs_ns_node *node)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	struct path path;
	int err;

	node->flags = 0;
	node->redirect = NULL;
	err = unionfs_ns_lookup(dentry, &path);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (d_is_reg(path.dentry))
		node->flags = ODF_NODE_WHITEOUT;
	else if (d_can_lookup(path.dentry))
		node->flags = UNIONFS_NS_DIR;
	if (node->flags == UNIONFS_NS_DIR)
		err = unionfs_ns_read_node(sbi, path.dentry, node);
	path_put(&path);
	return err;
}

/* The namespace directory /ns/D of union directory D, if there is one. */
int unionfs_ns_lookup_dir(struct dentry *dir, struct path *path)
{
	int err = unionfs_ns_lookup(dir, path);

	if (!err && !d_can_lookup(path->dentry)) {
		path_put(path);
		err = -ENOENT;
	}
	return err;
}

static int unionfs_ns_write_record(struct unionfs_sb_info *sbi,
				   struct dentry *d, unsigned int type,
				   const char *redirect)
{
	size_t rlen = redirect ? strlen(redirect) : 0;
	struct odf_node *n;
	int err;

	if (rlen > ODF_REDIRECT_MAX)
		return -ENAMETOOLONG;
	n = kzalloc(sizeof(*n) + rlen, GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	n->n_magic = cpu_to_le32(ODF_NODE_MAGIC);
	n->n_version = cpu_to_le16(ODF_FORMAT_VERSION);
	n->n_type = cpu_to_le16(type | (rlen ? ODF_NODE_REDIRECT : 0));
	n->n_redirect_len = cpu_to_le16(rlen);
	n->n_time = cpu_to_le64(ktime_get_real_seconds());
	memcpy(n + 1, redirect, rlen);
	n->n_crc = cpu_to_le32(unionfs_odf_crc(n, sizeof(*n) + rlen,
					offsetof(struct odf_node, n_crc)));
	err = __unionfs_do_setxattr(sbi->ns.mnt, d, ODF_NODE_XATTR, n,
				    sizeof(*n) + rlen, 0);
	kfree(n);
	return err;
}

/* Create a whiteout file (@dir locked) and record it. */
static int unionfs_ns_create_whiteout(struct unionfs_sb_info *sbi,
				      struct inode *dir, struct dentry *d)
{
	int err;

	err = unionfs_do_create(sbi->ns.mnt, d->d_parent, d, S_IFREG | 0600);
	if (!err)
		err = unionfs_ns_write_record(sbi, d, ODF_NODE_WHITEOUT, NULL);
	return err;
}

static int unionfs_ns_create_dir(struct unionfs_sb_info *sbi, struct inode *dir,
				 struct dentry *d, unsigned int type)
{
	int err;

	err = unionfs_do_mkdir(sbi->ns.mnt, d->d_parent, d, 0700);
	if (!err && type)
		err = unionfs_ns_write_record(sbi, d, type, NULL);
	return err;
}

static int unionfs_ns_replace(struct unionfs_sb_info *sbi, struct dentry *pdir,
			      struct dentry **d,
			      int (*make)(struct unionfs_sb_info *sbi,
					  struct inode *dir, struct dentry *d,
					  unsigned int type),
			      unsigned int type);
static int unionfs_ns_make_dir(struct unionfs_sb_info *sbi, struct inode *dir,
			       struct dentry *d, unsigned int type);

/*
 * The node directory of union directory @dir, created (plain) with its
 * parents as needed.  A whiteout in the way is the W2 case: a directory
 * created over a whiteout, so it becomes an opaque node.
 */
static int unionfs_ns_mkdir_p(struct unionfs_sb_info *sbi, const char *dirpath,
			      struct path *out)
{
	char *buf, *upath, *comp, *next;
	struct dentry *cur, *child;
	int err = 0;

	buf = __getname();
	if (!buf)
		return -ENOMEM;
	upath = buf;
	strscpy(buf, dirpath, PATH_MAX);
	cur = dget(sbi->ns.dentry);
	for (comp = upath + 1; *comp && !err; comp = next) {
		struct inode *cdir = d_inode(cur);

		next = strchrnul(comp, '/');
		if (*next)
			*next++ = 0;
		inode_lock_nested(cdir, I_MUTEX_PARENT);
		child = lookup_one_len(comp, cur, strlen(comp));
		if (IS_ERR(child)) {
			err = PTR_ERR(child);
		} else if (d_is_negative(child)) {
			err = unionfs_ns_create_dir(sbi, cdir, child, 0);
		} else if (d_is_reg(child)) {
			/* One exchange: the name is never without a node. */
			err = unionfs_ns_replace(sbi, cur, &child,
						 unionfs_ns_make_dir,
						 ODF_NODE_OPAQUE);
		} else if (!d_can_lookup(child)) {
			err = -EUCLEAN;
		}
		inode_unlock(cdir);
		if (!IS_ERR(child)) {
			dput(cur);
			cur = child;
		}
	}
	__putname(buf);
	if (err) {
		dput(cur);
		return err;
	}
	out->mnt = sbi->ns.mnt;
	out->dentry = cur;
	mntget(out->mnt);
	return 0;
}

/* Delete a subtree of the ODF, depth first, without recursion. */
static int unionfs_odf_delete_tree(struct unionfs_sb_info *sbi,
				   struct dentry *top);

struct unionfs_first_child {
	struct dir_context ctx;
	char name[NAME_MAX + 1];
	int len;
};

static bool unionfs_first_child_actor(struct dir_context *ctx, const char *name,
				      int len, loff_t off, u64 ino,
				      unsigned int type)
{
	struct unionfs_first_child *fc =
		container_of(ctx, struct unionfs_first_child, ctx);

	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return true;
	memcpy(fc->name, name, len);
	fc->len = len;
	return false;
}

static int unionfs_odf_delete_tree(struct unionfs_sb_info *sbi,
				   struct dentry *top)
{
	struct dentry *cur = dget(top);
	int err = 0;

	while (!err) {
		struct dentry *parent = dget_parent(cur);
		struct inode *pdir = d_inode(parent);
		struct unionfs_first_child fc = {
			.ctx.actor = unionfs_first_child_actor,
		};
		struct dentry *child;
		struct path p;
		struct file *f;

		if (d_can_lookup(cur)) {
			p.mnt = sbi->ns.mnt;
			p.dentry = cur;
			f = dentry_open(&p, O_RDONLY | O_DIRECTORY,
					current_cred());
			err = PTR_ERR_OR_ZERO(f);
			if (!err) {
				err = iterate_dir(f, &fc.ctx);
				fput(f);
			}
			if (!err && fc.len) {
				/* Descend into the first child. */
				inode_lock_nested(d_inode(cur), I_MUTEX_PARENT);
				child = lookup_one_len(fc.name, cur, fc.len);
				inode_unlock(d_inode(cur));
				dput(parent);
				if (IS_ERR(child)) {
					err = PTR_ERR(child);
					break;
				}
				if (d_is_negative(child)) {
					dput(child);
					err = -EIO;
					break;
				}
				dput(cur);
				cur = child;
				continue;
			}
		}
		if (!err) {
			inode_lock_nested(pdir, I_MUTEX_PARENT);
			err = unionfs_do_remove(sbi->ns.mnt, parent, cur);
			inode_unlock(pdir);
		}
		if (err || cur == top) {
			dput(parent);
			break;
		}
		dput(cur);
		cur = parent;
	}
	dput(cur);
	return err;
}

/*
 * Replace the node *@d (in @pdir, which is locked and stays locked) by a
 * fresh node of the other kind made by @make in the reclaim area: one
 * RENAME_EXCHANGE puts the new node at the name and the old one in
 * reclaim, which is then deleted.  *@d becomes the new node.
 */
static int unionfs_ns_replace(struct unionfs_sb_info *sbi, struct dentry *pdir,
			      struct dentry **d,
			      int (*make)(struct unionfs_sb_info *sbi,
					  struct inode *dir, struct dentry *d,
					  unsigned int type),
			      unsigned int type)
{
	struct dentry *rdir = sbi->reclaim.dentry;
	struct dentry *old = *d;
	struct dentry *r;
	char name[24];
	int err;

	snprintf(name, sizeof(name), "%lu", d_inode(old)->i_ino);
	inode_lock_nested(d_inode(rdir), I_MUTEX_PARENT2);
	r = lookup_one_len(name, rdir, strlen(name));
	if (IS_ERR(r)) {
		inode_unlock(d_inode(rdir));
		return PTR_ERR(r);
	}
	if (d_is_positive(r)) {
		err = -EEXIST;	/* a leftover: odfck or the next mount */
	} else {
		err = make(sbi, d_inode(rdir), r, type);
		if (!err)
			err = unionfs_do_rename(sbi->ns.mnt, rdir, r, pdir, old,
						RENAME_EXCHANGE);
	}
	inode_unlock(d_inode(rdir));
	if (err) {
		dput(r);
		return err;
	}
	/* The dentries moved with their inodes: @r is at the name now. */
	*d = r;
	inode_unlock(d_inode(pdir));
	err = unionfs_odf_delete_tree(sbi, old);
	inode_lock_nested(d_inode(pdir), I_MUTEX_PARENT);
	dput(old);
	return err;
}

static int unionfs_ns_make_whiteout(struct unionfs_sb_info *sbi,
				    struct inode *dir, struct dentry *d,
				    unsigned int type)
{
	return unionfs_ns_create_whiteout(sbi, dir, d);
}

static int unionfs_ns_make_dir(struct unionfs_sb_info *sbi, struct inode *dir,
			       struct dentry *d, unsigned int type)
{
	return unionfs_ns_create_dir(sbi, dir, d, type);
}

/*
 * Lock the node directory of the parent of union path @upath (created if
 * @create) and look up the node of @upath in it.  Returns 1 with nothing
 * locked when the parent has no node and @create is false.
 */
static int unionfs_ns_lock_node(struct unionfs_sb_info *sbi, const char *upath,
				bool create, struct path *pdir,
				struct dentry **node)
{
	const char *name = strrchr(upath, '/') + 1;
	char *parent;
	int err;

	if (!*name)
		return -EINVAL;	/* the root has no node of its own */
	parent = kstrndup(upath, max_t(int, name - upath - 1, 1), GFP_KERNEL);
	if (!parent)
		return -ENOMEM;
	if (create) {
		err = unionfs_ns_mkdir_p(sbi, parent, pdir);
	} else {
		err = unionfs_ns_lookup_path(sbi, parent, pdir);
		if (!err && !d_can_lookup(pdir->dentry)) {
			path_put(pdir);
			err = -ENOENT;
		}
		if (err == -ENOENT)
			err = 1;
	}
	kfree(parent);
	if (err)
		return err;
	inode_lock_nested(d_inode(pdir->dentry), I_MUTEX_PARENT);
	*node = lookup_one_len(name, pdir->dentry, strlen(name));
	if (IS_ERR(*node)) {
		inode_unlock(d_inode(pdir->dentry));
		path_put(pdir);
		return PTR_ERR(*node);
	}
	return 0;
}

static void unionfs_ns_unlock_node(struct path *pdir, struct dentry *node)
{
	dput(node);
	inode_unlock(d_inode(pdir->dentry));
	path_put(pdir);
}

/*
 * Hide the union name @dentry (unlink, rmdir, rename away): its node
 * becomes a whiteout; a directory node and its subtree go to reclaim.
 * With @commit the change is on disk before a branch write that follows
 * (hide before delete, section 9).
 */
int unionfs_ns_whiteout_path(struct unionfs_sb_info *sbi, const char *upath,
			     bool commit)
{
	struct dentry *node;
	struct path pdir;
	int err;

	err = unionfs_ns_begin(sbi);
	if (err)
		return err;
	err = unionfs_ns_lock_node(sbi, upath, true, &pdir, &node);
	if (err)
		goto out;
	if (d_is_negative(node))
		err = unionfs_ns_create_whiteout(sbi, d_inode(pdir.dentry), node);
	else if (d_can_lookup(node))
		err = unionfs_ns_replace(sbi, pdir.dentry, &node,
					 unionfs_ns_make_whiteout, 0);
	else if (!d_is_reg(node))
		err = -EUCLEAN;
	if (!err && commit)
		err = unionfs_odf_fsync_dir(&pdir);
	unionfs_ns_unlock_node(&pdir, node);
out:
	unionfs_ns_end(sbi);
	return err;
}

/*
 * A directory was created where a lower one is hidden: its node is an
 * opaque directory, replacing a whiteout (section 9.3 step 3).
 */
int unionfs_ns_opaque(struct dentry *dentry)
{
	return unionfs_ns_set_dir(dentry, ODF_NODE_OPAQUE, NULL);
}

/*
 * Make the node of @upath a directory with the record @type (+ @redirect),
 * or a plain directory without a record if both are 0.
 */
int unionfs_ns_set_dir_path(struct unionfs_sb_info *sbi, const char *upath,
			    unsigned int type, const char *redirect)
{
	struct dentry *node;
	struct path pdir;
	int err;

	err = unionfs_ns_begin(sbi);
	if (err)
		return err;
	err = unionfs_ns_lock_node(sbi, upath, true, &pdir, &node);
	if (err)
		goto out;
	if (d_is_negative(node))
		err = unionfs_ns_create_dir(sbi, d_inode(pdir.dentry), node, 0);
	else if (d_is_reg(node))	/* born with its record (9.3) */
		err = unionfs_ns_replace(sbi, pdir.dentry, &node,
					 unionfs_ns_make_dir, type);
	else if (!d_can_lookup(node))
		err = -EUCLEAN;
	/* After a replace, @node names the new directory. */
	if (!err && (type || redirect))
		err = unionfs_ns_write_record(sbi, node, type, redirect);
	else if (!err)		/* a plain directory: no record */
		err = __unionfs_do_removexattr(sbi->ns.mnt, node,
					       ODF_NODE_XATTR);
	unionfs_ns_unlock_node(&pdir, node);
out:
	unionfs_ns_end(sbi);
	return err;
}

/* The name shows an upper object again: drop its node (W1 made it moot). */
/* Called between unionfs_ns_begin() and unionfs_ns_end(). */
static int unionfs_ns_do_remove(struct unionfs_sb_info *sbi, const char *upath,
				bool dirs_only)
{
	struct dentry *node;
	struct path pdir;
	int err;

	err = unionfs_ns_lock_node(sbi, upath, false, &pdir, &node);
	if (err)
		goto out;
	if (d_is_reg(node) && !dirs_only) {
		err = unionfs_do_remove(sbi->ns.mnt, pdir.dentry, node);
	} else if (d_can_lookup(node)) {
		struct dentry *rdir = sbi->reclaim.dentry;
		struct dentry *r;
		char name[24];

		snprintf(name, sizeof(name), "%lu", d_inode(node)->i_ino);
		inode_lock_nested(d_inode(rdir), I_MUTEX_PARENT2);
		r = lookup_one_len(name, rdir, strlen(name));
		err = PTR_ERR_OR_ZERO(r);
		if (!err && d_is_positive(r))
			err = -EEXIST;
		if (!err)
			err = unionfs_do_rename(sbi->ns.mnt, pdir.dentry, node,
						rdir, r, 0);
		inode_unlock(d_inode(rdir));
		if (!err) {
			/* d_move: @node is the entry in reclaim now. */
			inode_unlock(d_inode(pdir.dentry));
			err = unionfs_odf_delete_tree(sbi, node);
			inode_lock_nested(d_inode(pdir.dentry), I_MUTEX_PARENT);
		}
		if (!IS_ERR(r))
			dput(r);
	}
	unionfs_ns_unlock_node(&pdir, node);
out:
	return err == 1 ? 0 : err;
}

int unionfs_ns_remove_path(struct unionfs_sb_info *sbi, const char *upath)
{
	int err;

	err = unionfs_ns_begin(sbi);
	if (err)
		return err;
	err = unionfs_ns_do_remove(sbi, upath, false);
	unionfs_ns_end(sbi);
	return err;
}

/*
 * Move the node of @old to @new's name (a directory rename), or exchange
 * the two nodes.  A node already at @new is replaced (it hid a lower
 * object that the renamed directory now hides as an opaque node).
 */
int unionfs_ns_move_path(struct unionfs_sb_info *sbi, const char *oldpath,
			 const char *newpath, bool exchange)
{
	const char *oname = strrchr(oldpath, '/') + 1;
	const char *nname = strrchr(newpath, '/') + 1;
	struct path opdir, npdir;
	struct dentry *on, *nn, *trap;
	unsigned int flags = 0;
	char *op, *np;
	int err;

	op = kstrndup(oldpath, max_t(int, oname - oldpath - 1, 1), GFP_KERNEL);
	np = kstrndup(newpath, max_t(int, nname - newpath - 1, 1), GFP_KERNEL);
	err = op && np ? 0 : -ENOMEM;
	if (!err)
		err = unionfs_ns_begin(sbi);
	if (err) {
		kfree(op);
		kfree(np);
		return err;
	}
	err = unionfs_ns_mkdir_p(sbi, op, &opdir);
	if (!err) {
		err = unionfs_ns_mkdir_p(sbi, np, &npdir);
		if (err)
			path_put(&opdir);
	}
	kfree(op);
	kfree(np);
	if (err)
		goto out;
	if (!exchange) {
		/*
		 * A directory node at the target is obsolete: the moved node
		 * takes the name.  It goes to reclaim first.
		 */
		err = unionfs_ns_do_remove(sbi, newpath, true);
		if (err) {
			path_put(&opdir);
			path_put(&npdir);
			goto out;
		}
	}
	trap = lock_rename(opdir.dentry, npdir.dentry);
	on = lookup_one_len(oname, opdir.dentry, strlen(oname));
	err = PTR_ERR_OR_ZERO(on);
	if (err)
		goto unlock;
	nn = lookup_one_len(nname, npdir.dentry, strlen(nname));
	err = PTR_ERR_OR_ZERO(nn);
	if (err)
		goto put_on;
	if (on == trap || nn == trap) {
		err = -EINVAL;
	} else if (d_is_negative(on) && exchange && d_is_positive(nn)) {
		/* Only the other name has a node: it moves the other way. */
		err = unionfs_do_rename(sbi->ns.mnt, npdir.dentry, nn,
					opdir.dentry, on, 0);
	} else if (d_is_negative(on)) {
		err = 0;	/* nothing to move */
	} else {
		if (d_is_positive(nn) && (exchange || d_is_reg(nn)))
			flags = RENAME_EXCHANGE;
		err = unionfs_do_rename(sbi->ns.mnt, opdir.dentry, on,
					npdir.dentry, nn, flags);
	}
	dput(nn);
put_on:
	dput(on);
unlock:
	unlock_rename(opdir.dentry, npdir.dentry);
	path_put(&opdir);
	path_put(&npdir);
out:
	unionfs_ns_end(sbi);
	return err;
}

/* The dentry forms: the node of a union dentry's path. */
struct unionfs_upath {
	char *buf;
	char *path;
};

static int unionfs_upath_get(struct dentry *dentry, struct unionfs_upath *up)
{
	up->buf = __getname();
	if (!up->buf)
		return -ENOMEM;
	up->path = unionfs_union_path(dentry, up->buf, PATH_MAX);
	if (IS_ERR(up->path)) {
		__putname(up->buf);
		return PTR_ERR(up->path);
	}
	return 0;
}

static void unionfs_upath_put(struct unionfs_upath *up)
{
	__putname(up->buf);
}

int unionfs_ns_whiteout(struct dentry *dentry, bool commit)
{
	struct unionfs_upath up;
	int err;

	err = unionfs_upath_get(dentry, &up);
	if (err)
		return err;
	err = unionfs_ns_whiteout_path(UNIONFS_SB(dentry->d_sb), up.path, commit);
	unionfs_upath_put(&up);
	return err;
}

int unionfs_ns_set_dir(struct dentry *dentry, unsigned int type,
		       const char *redirect)
{
	struct unionfs_upath up;
	int err;

	err = unionfs_upath_get(dentry, &up);
	if (err)
		return err;
	err = unionfs_ns_set_dir_path(UNIONFS_SB(dentry->d_sb), up.path, type,
				      redirect);
	unionfs_upath_put(&up);
	return err;
}

int unionfs_ns_remove(struct dentry *dentry)
{
	struct unionfs_upath up;
	int err;

	err = unionfs_upath_get(dentry, &up);
	if (err)
		return err;
	err = unionfs_ns_remove_path(UNIONFS_SB(dentry->d_sb), up.path);
	unionfs_upath_put(&up);
	return err;
}

int unionfs_ns_move(struct dentry *old, struct dentry *new, bool exchange)
{
	struct unionfs_upath o, n;
	int err;

	err = unionfs_upath_get(old, &o);
	if (err)
		return err;
	err = unionfs_upath_get(new, &n);
	if (!err) {
		err = unionfs_ns_move_path(UNIONFS_SB(old->d_sb), o.path, n.path,
					   exchange);
		unionfs_upath_put(&n);
	}
	unionfs_upath_put(&o);
	return err;
}

/* Finish the reclaim area (section 8), keeping intents. */
static bool unionfs_reclaim_actor(struct dir_context *ctx, const char *name,
				  int len, loff_t off, u64 ino,
				  unsigned int type)
{
	int pl = strlen(ODF_INTENT_PREFIX);

	if (len > pl && !memcmp(name, ODF_INTENT_PREFIX, pl))
		return true;	/* rolled forward by unionfs_intent_replay */
	return unionfs_first_child_actor(ctx, name, len, off, ino, type);
}

int unionfs_reclaim_all(struct unionfs_sb_info *sbi)
{
	struct dentry *rdir = sbi->reclaim.dentry;
	int n, err = 0;

	for (n = 0; n < 100000 && !err; n++) {
		struct unionfs_first_child fc = {
			.ctx.actor = unionfs_reclaim_actor,
		};
		struct dentry *d;
		struct file *f;

		f = dentry_open(&sbi->reclaim, O_RDONLY | O_DIRECTORY,
				current_cred());
		if (IS_ERR(f))
			return PTR_ERR(f);
		err = iterate_dir(f, &fc.ctx);
		fput(f);
		if (err || !fc.len)
			break;
		inode_lock_nested(d_inode(rdir), I_MUTEX_PARENT);
		d = lookup_one_len(fc.name, rdir, fc.len);
		inode_unlock(d_inode(rdir));
		if (IS_ERR(d))
			return PTR_ERR(d);
		err = d_is_positive(d) ? unionfs_ns_begin(sbi) : -EIO;
		if (!err) {
			err = unionfs_odf_delete_tree(sbi, d);
			unionfs_ns_end(sbi);
		}
		dput(d);
	}
	return err;
}
