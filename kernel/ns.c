// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: the namespace /ns of the ODF (docs/odf-format.md section 5).
 *
 * /ns holds one node per union directory that carries namespace
 * metadata, named after the directory's union inode number:
 * /ns/<016llx uino>/ is a directory whose regular files are whiteouts of
 * names in that union directory, with a trusted.odf record saying
 * whether the directory itself is opaque or was renamed (redirect
 * entries: where its lower parts are, per branch).  No union path is ever
 * computed: a directory rename touches only the names of its two parents,
 * and a lookup costs one ODF lookup in the parent's node.  A union
 * directory's inode keeps a reference to its node's dentry (positive or
 * negative); the ODF's dcache keeps it right, since every change to /ns
 * goes through this file: a node moved to reclaim or unlinked leaves the
 * cached dentry moved or unhashed, which the next use notices.
 *
 * A node records the upper directory it was made for (owner inode and
 * generation): an inode number the upper branch reuses would otherwise
 * inherit a dead directory's whiteouts and redirect.  Such a stale node
 * is ignored and replaced when next written.
 *
 * Every change runs under odf_lock with the mounter's credentials, and
 * never while a branch directory is locked (both may be ext4, and lockdep
 * sees one lock class).  Write access to the ODF is taken once per change,
 * after odf_lock (unionfs_ns_begin), and the unionfs_do_* calls inside
 * rely on it.  Lock order inside: /ns, then a node directory, then
 * /reclaim.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/cred.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "unionfs.h"

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

static void unionfs_ns_name(char name[ODF_NS_NAME_LEN + 1], u64 uino)
{
	snprintf(name, ODF_NS_NAME_LEN + 1, "%016llx", uino);
}

/* The upper directory a union directory inode stands on, or NULL. */
static struct inode *unionfs_ns_owner(struct inode *inode)
{
	/* Pairs with the release of bindex in unionfs_inode_copied_up(). */
	if (smp_load_acquire(&UNIONFS_I(inode)->bindex))
		return NULL;
	/* Pairs with the release of lower there: a complete inode. */
	return smp_load_acquire(&UNIONFS_I(inode)->lower);
}

static bool unionfs_ns_dentry_ok(struct unionfs_sb_info *sbi, struct dentry *d)
{
	return !d_unhashed(d) && READ_ONCE(d->d_parent) == sbi->ns.dentry;
}

/*
 * The dentry of node @uino in /ns (referenced; negative if there is
 * none), from @inode's cache when it is still right.
 */
static struct dentry *unionfs_ns_dentry(struct unionfs_sb_info *sbi,
					struct inode *inode, u64 uino)
{
	struct unionfs_inode_info *ui = inode ? UNIONFS_I(inode) : NULL;
	char name[ODF_NS_NAME_LEN + 1];
	struct dentry *d = NULL, *old;

	if (ui) {
		spin_lock(&ui->ns_lock);
		d = dget(ui->ns);
		spin_unlock(&ui->ns_lock);
		if (d && unionfs_ns_dentry_ok(sbi, d))
			return d;
		dput(d);
	}
	unionfs_ns_name(name, uino);
	d = lookup_one_len_unlocked(name, sbi->ns.dentry, ODF_NS_NAME_LEN);
	if (IS_ERR(d) || !ui)
		return d;
	spin_lock(&ui->ns_lock);
	old = ui->ns;
	ui->ns = dget(d);
	spin_unlock(&ui->ns_lock);
	dput(old);
	return d;
}

/* The inode goes: so does its reference to its node. */
void unionfs_ns_forget(struct inode *inode)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);

	dput(ui->ns);
	ui->ns = NULL;
	ui->ns_seq = 0;
}

/*
 * A node's record, or which node /ns holds at a name, changed: every
 * cached verdict is to be read again.  Called after the change (a
 * reader that saw the old state took the old sequence number first).
 */
static void unionfs_ns_changed(struct unionfs_sb_info *sbi)
{
	/* The change before the new number: pairs with the read side's rmb. */
	smp_mb__before_atomic();
	atomic64_inc(&sbi->ns_seq);
}

/*
 * The sequence number, taken before a node's dentry is looked up and its
 * record read: what is read after is at least that new.
 */
static u64 unionfs_ns_snap(struct unionfs_sb_info *sbi)
{
	u64 seq = atomic64_read(&sbi->ns_seq);

	/* Pairs with unionfs_ns_changed(). */
	smp_rmb();
	return seq;
}

/*
 * @inode's cached verdict on its node, for upper directory @owner (or
 * none), when the number was @seq before the node's dentry was looked
 * up: true with *@flags if it was kept at @seq and nothing changed since
 * (so the dentry is the node the verdict is about).  A redirect is not
 * cached (its entries are read when needed).
 */
static bool unionfs_ns_cached(struct unionfs_sb_info *sbi, struct inode *inode,
			      struct inode *owner, u64 seq,
			      unsigned int *flags)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);
	bool hit;

	spin_lock(&ui->ns_lock);
	hit = ui->ns_seq == seq && atomic64_read(&sbi->ns_seq) == seq &&
	      ui->ns_owner_ino == (owner ? owner->i_ino : 0) &&
	      ui->ns_owner_gen == (owner ? owner->i_generation : 0);
	*flags = ui->ns_flags;
	spin_unlock(&ui->ns_lock);
	return hit;
}

/* Keep what the record said, as of sequence number @seq (read before). */
static void unionfs_ns_keep(struct inode *inode, u64 owner_ino, u32 owner_gen,
			    u64 seq, unsigned int flags)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);

	if (flags & ODF_NODE_REDIRECT)
		seq = 0;
	spin_lock(&ui->ns_lock);
	ui->ns_seq = seq;
	ui->ns_owner_ino = owner_ino;
	ui->ns_owner_gen = owner_gen;
	ui->ns_flags = flags;
	spin_unlock(&ui->ns_lock);
}

/*
 * Directory @inode was just looked up: it keeps what the lookup read of
 * its node (read without an inode to keep it in), so its first use
 * reads it no more.  An older verdict is only taken as stale later.
 */
void unionfs_ns_seed(struct inode *inode, const struct unionfs_ns_node *node)
{
	if (node->seq && inode->i_ino == node->uino)
		unionfs_ns_keep(inode, node->owner_ino, node->owner_gen,
				node->seq, node->flags &
				(UNIONFS_NS_DIR | ODF_NODE_OPAQUE |
				 ODF_NODE_REDIRECT));
}

/* Check a record read from node @uino; 0 if it is sound. */
static int unionfs_ns_check_record(const struct odf_node *n, size_t len,
				   u64 uino)
{
	unsigned int type, nr, i;
	size_t off = sizeof(*n);

	if (len < sizeof(*n) || le32_to_cpu(n->n_magic) != ODF_NODE_MAGIC ||
	    le16_to_cpu(n->n_version) != ODF_NODE_VERSION ||
	    le16_to_cpu(n->n_size) != len || le64_to_cpu(n->n_uino) != uino ||
	    n->n_pad0 ||
	    le32_to_cpu(n->n_crc) != UNIONFS_CRC(n, len, n_crc))
		return -EUCLEAN;
	type = le16_to_cpu(n->n_type);
	nr = le16_to_cpu(n->n_nredirect);
	if (type & ~ODF_NODE_TYPE_MASK ||
	    ((type & ODF_NODE_REDIRECT) && !(type & ODF_NODE_OPAQUE)) ||
	    !!(type & ODF_NODE_REDIRECT) != !!nr)
		return -EUCLEAN;
	for (i = 0; i < nr; i++) {
		const struct odf_redirect *r = (const void *)n + off;
		unsigned int rl;

		if (off + sizeof(*r) > len)
			return -EUCLEAN;
		rl = le16_to_cpu(r->r_len);
		if (!rl || off + sizeof(*r) + rl > len ||
		    ((const char *)(r + 1))[0] != '/' ||
		    memchr(r + 1, 0, rl))
			return -EUCLEAN;
		off += ALIGN(sizeof(*r) + rl, 4);
	}
	return off == len ? 0 : -EUCLEAN;
}

void unionfs_ns_node_free(struct unionfs_ns_node *node)
{
	kvfree(node->rec);
	node->rec = NULL;
}

/*
 * Read the record of node dentry @d (positive) of number @uino into
 * @node.  -ESTALE: the node belongs to an upper directory other than
 * @owner (an inode number reused), so it says nothing.  A damaged record
 * is logged and the node taken as plain: its whiteouts still count.
 */
static int unionfs_ns_read_record(struct unionfs_sb_info *sbi,
				  struct dentry *d, u64 uino,
				  struct inode *owner,
				  struct unionfs_ns_node *node)
{
	size_t size = 256;	/* most records: no or short redirects */
	struct odf_node *n;
	ssize_t len;
	int err = 0;

	node->flags = UNIONFS_NS_DIR;
	node->rec = NULL;
	unionfs_count(sbi, UNIONFS_ST_NS_READS);
	for (;;) {
		n = kvmalloc(size, GFP_KERNEL);
		if (!n)
			return -ENOMEM;
		len = vfs_getxattr(unionfs_ns_idmap(sbi), d, ODF_NODE_XATTR, n,
				   size);
		if (len != -ERANGE || size == ODF_NODE_MAX)
			break;
		kvfree(n);
		/* A long redirect (in an EA inode): its exact size. */
		len = vfs_getxattr(unionfs_ns_idmap(sbi), d, ODF_NODE_XATTR,
				   NULL, 0);
		if (len < 0)
			return len;
		size = clamp_t(size_t, len, 256, ODF_NODE_MAX);
	}
	if (len < 0 && len != -ENODATA && len != -ERANGE) {
		err = len;
		goto out;
	}
	if (len < 0 || unionfs_ns_check_record(n, len, uino)) {
		pr_warn_ratelimited("ODF '%s': damaged record of namespace node %016llx ignored: run odfck\n",
				    sbi->odf_name, uino);
		goto out;
	}
	if (n->n_owner_ino &&
	    (!owner || owner->i_ino != le64_to_cpu(n->n_owner_ino) ||
	     owner->i_generation != le32_to_cpu(n->n_owner_gen))) {
		node->flags = 0;
		err = -ESTALE;
		goto out;
	}
	node->flags |= le16_to_cpu(n->n_type) &
		       (ODF_NODE_OPAQUE | ODF_NODE_REDIRECT);
	if (node->flags & ODF_NODE_REDIRECT) {
		node->rec = n;
		n = NULL;
	}
out:
	kvfree(n);
	return err;
}

/*
 * The record of node dentry @d (a directory) of union directory @uino,
 * as unionfs_ns_read_record(), from @inode's cached verdict when it is
 * still good, else read and kept there (@inode may be NULL: read).
 * @seq: unionfs_ns_snap() from before @d was looked up.
 */
static int unionfs_ns_read_cached(struct unionfs_sb_info *sbi,
				  struct inode *inode, struct dentry *d,
				  u64 seq, u64 uino, struct inode *owner,
				  struct unionfs_ns_node *node)
{
	int err;

	node->rec = NULL;
	node->seq = 0;
	node->uino = uino;
	node->owner_ino = owner ? owner->i_ino : 0;
	node->owner_gen = owner ? owner->i_generation : 0;
	if (inode && unionfs_ns_cached(sbi, inode, owner, seq, &node->flags))
		return node->flags ? 0 : -ESTALE;
	err = unionfs_ns_read_record(sbi, d, uino, owner, node);
	if (!err || err == -ESTALE) {
		node->seq = seq;
		if (inode)
			unionfs_ns_keep(inode, node->owner_ino,
					node->owner_gen, seq, node->flags);
	}
	return err;
}

/*
 * The node of union directory @uino (with inode @inode if it has one,
 * standing on upper directory @owner): @node->flags is 0 when there is
 * no valid node.  Called with the mounter's credentials.
 */
int unionfs_ns_read(struct super_block *sb, struct inode *inode, u64 uino,
		    struct inode *owner, struct unionfs_ns_node *node)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	u64 seq = unionfs_ns_snap(sbi);
	struct dentry *d;
	int err = 0;

	node->flags = 0;
	node->rec = NULL;
	node->seq = 0;
	d = unionfs_ns_dentry(sbi, inode, uino);
	if (IS_ERR(d))
		return PTR_ERR(d);
	if (d_can_lookup(d))
		err = unionfs_ns_read_cached(sbi, inode, d, seq, uino, owner,
					     node);
	else if (d_is_positive(d))
		pr_warn_ratelimited("ODF '%s': namespace node %016llx is not a directory: run odfck\n",
				    sbi->odf_name, uino);
	dput(d);
	return err == -ESTALE ? 0 : err;
}

/* The valid node of union directory inode @dir, as a path; -ENOENT if none. */
static int unionfs_ns_node_path(struct inode *dir, struct path *path)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dir->i_sb);
	u64 seq = unionfs_ns_snap(sbi);
	struct unionfs_ns_node node;
	struct dentry *d;
	int err;

	d = unionfs_ns_dentry(sbi, dir, dir->i_ino);
	if (IS_ERR(d))
		return PTR_ERR(d);
	err = -ENOENT;
	if (d_can_lookup(d)) {
		err = unionfs_ns_read_cached(sbi, dir, d, seq, dir->i_ino,
					     unionfs_ns_owner(dir), &node);
		unionfs_ns_node_free(&node);
		if (err == -ESTALE)
			err = -ENOENT;
	}
	if (err) {
		dput(d);
		return err;
	}
	path->mnt = mntget(sbi->ns.mnt);
	path->dentry = d;
	return 0;
}

int unionfs_ns_lookup_dir(struct dentry *dir, struct path *path)
{
	return unionfs_ns_node_path(d_inode(dir), path);
}

/* Is @name whited out in union directory @dir?  (W1) */
int unionfs_ns_is_whiteout(struct inode *dir, const struct qstr *name,
			   bool *whiteout)
{
	struct path p;
	struct dentry *d;
	int err;

	*whiteout = false;
	err = unionfs_ns_node_path(dir, &p);
	if (err)
		return err == -ENOENT ? 0 : err;
	d = lookup_one_len_unlocked(name->name, p.dentry, name->len);
	path_put(&p);
	if (IS_ERR(d))
		return PTR_ERR(d);
	if (d_is_reg(d))
		*whiteout = true;	/* a regular file is one, record or not */
	else if (d_is_positive(d))
		pr_warn_ratelimited("ODF '%s': a namespace node holds a non-file entry: run odfck\n",
				    UNIONFS_SB(dir->i_sb)->odf_name);
	dput(d);
	return 0;
}

/*
 * What the ODF says of a positive union name: a whiteout in its parent,
 * and, for a directory with an upper part, its own node's record.
 */
int unionfs_ns_get(struct dentry *dentry, struct unionfs_ns_node *node)
{
	struct inode *inode = d_inode(dentry);
	struct inode *owner;
	bool wo;
	int err;

	node->flags = 0;
	node->rec = NULL;
	node->seq = 0;
	err = unionfs_ns_is_whiteout(d_inode(dentry->d_parent),
				     &dentry->d_name, &wo);
	if (err || !inode || !S_ISDIR(inode->i_mode))
		goto out;
	owner = unionfs_ns_owner(inode);
	if (owner)
		err = unionfs_ns_read(dentry->d_sb, inode, inode->i_ino, owner,
				      node);
out:
	if (!err && wo)
		node->flags |= ODF_NODE_WHITEOUT;
	return err;
}

static int unionfs_ns_write_record(struct unionfs_sb_info *sbi,
				   struct dentry *d, u64 uino,
				   struct inode *owner, unsigned int type,
				   const struct odf_node *redirect)
{
	size_t len = sizeof(struct odf_node);
	struct odf_node *n;
	int err;

	if (redirect)
		len = le16_to_cpu(redirect->n_size);
	n = kvzalloc(len, GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	if (redirect) {
		memcpy(n, redirect, len);
		type |= ODF_NODE_REDIRECT | ODF_NODE_OPAQUE;
	}
	n->n_magic = cpu_to_le32(ODF_NODE_MAGIC);
	n->n_crc = 0;
	n->n_version = cpu_to_le16(ODF_NODE_VERSION);
	n->n_type = cpu_to_le16(type);
	n->n_size = cpu_to_le16(len);
	n->n_time = cpu_to_le64(ktime_get_real_seconds());
	n->n_uino = cpu_to_le64(uino);
	n->n_owner_ino = cpu_to_le64(owner ? owner->i_ino : 0);
	n->n_owner_gen = cpu_to_le32(owner ? owner->i_generation : 0);
	n->n_pad0 = 0;
	n->n_crc = cpu_to_le32(UNIONFS_CRC(n, len, n_crc));
	err = __unionfs_do_setxattr(sbi->ns.mnt, d, ODF_NODE_XATTR, n, len, 0);
	unionfs_ns_changed(sbi);	/* written or not: read it again */
	kvfree(n);
	/* No room (a volume made without ea_inode): as if too long. */
	return err == -ENOSPC || err == -E2BIG ? -EXDEV : err;
}

/* Delete a reclaim entry: a whiteout, or a node and the whiteouts in it. */
struct unionfs_ns_batch {
	struct dir_context ctx;
	unsigned int n;
	bool skip_intents;
	struct {
		unsigned char len;
		char name[NAME_MAX + 1];
	} e[16];
};

static bool unionfs_ns_batch_actor(struct dir_context *ctx, const char *name,
				   int len, loff_t off, u64 ino,
				   unsigned int type)
{
	struct unionfs_ns_batch *b =
		container_of(ctx, struct unionfs_ns_batch, ctx);
	int pl = strlen(ODF_INTENT_PREFIX);

	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return true;
	if (b->skip_intents && len > pl && !memcmp(name, ODF_INTENT_PREFIX, pl))
		return true;	/* rolled forward by unionfs_intent_replay */
	if (len > NAME_MAX)
		return true;
	if (b->n == ARRAY_SIZE(b->e))
		return false;	/* not taken: the next read starts with it */
	b->e[b->n].len = len;
	memcpy(b->e[b->n].name, name, len);
	b->n++;
	return true;
}

/*
 * Call @fn for every entry of ODF directory @dir (but intents, if
 * b->skip_intents), 16 names at a time, with no lock held: @fn may remove
 * the entry.  The directory is opened once and read on from where the
 * last batch stopped, so emptying it is linear in its size.
 */
static int unionfs_ns_for_each(struct unionfs_sb_info *sbi, struct dentry *dir,
			       struct unionfs_ns_batch *b,
			       int (*fn)(struct unionfs_sb_info *sbi,
					 struct dentry *dir, const char *name,
					 unsigned int len, int depth),
			       int depth)
{
	struct path p = { .mnt = sbi->ns.mnt, .dentry = dir };
	struct file *f;
	unsigned int i;
	int err;

	f = dentry_open(&p, O_RDONLY | O_DIRECTORY, current_cred());
	if (IS_ERR(f))
		return PTR_ERR(f);
	b->ctx.actor = unionfs_ns_batch_actor;
	b->ctx.pos = 0;
	do {
		b->n = 0;
		err = iterate_dir(f, &b->ctx);
		for (i = 0; !err && i < b->n; i++)
			err = fn(sbi, dir, b->e[i].name, b->e[i].len, depth);
	} while (!err && b->n);
	fput(f);
	return err;
}

static int unionfs_ns_empty_dir(struct unionfs_sb_info *sbi, struct dentry *dir,
				int depth);

/* One entry of a node being emptied: a whiteout, or damage nested in it. */
static int unionfs_ns_remove_entry(struct unionfs_sb_info *sbi,
				   struct dentry *dir, const char *name,
				   unsigned int len, int depth)
{
	struct dentry *c;
	int err;

	inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	c = lookup_one_len(name, dir, len);
	err = PTR_ERR_OR_ZERO(c);
	if (!err && d_can_lookup(c)) {
		inode_unlock(d_inode(dir));
		/* Only damage nests deeper than a node. */
		err = depth < 4 ? unionfs_ns_empty_dir(sbi, c, depth + 1) :
				  -EUCLEAN;
		inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	}
	if (!err && d_is_positive(c))
		err = unionfs_do_remove(sbi->ns.mnt, dir, c);
	inode_unlock(d_inode(dir));
	if (!IS_ERR(c))
		dput(c);
	return err;
}

/* Remove every entry of directory @dir (entries that are directories too). */
static int unionfs_ns_empty_dir(struct unionfs_sb_info *sbi, struct dentry *dir,
				int depth)
{
	struct unionfs_ns_batch *b;
	int err;

	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->skip_intents = false;
	err = unionfs_ns_for_each(sbi, dir, b, unionfs_ns_remove_entry, depth);
	kfree(b);
	return err;
}

static int unionfs_ns_delete(struct unionfs_sb_info *sbi, struct dentry *d)
{
	struct dentry *parent;
	int err = 0;

	if (d_can_lookup(d))
		err = unionfs_ns_empty_dir(sbi, d, 0);
	if (err)
		return err;
	parent = dget_parent(d);
	inode_lock_nested(d_inode(parent), I_MUTEX_PARENT);
	if (d->d_parent == parent && d_is_positive(d))
		err = unionfs_do_remove(sbi->ns.mnt, parent, d);
	inode_unlock(d_inode(parent));
	dput(parent);
	return err;
}

/*
 * Replace or remove node @name of /ns through /reclaim, both locked with
 * lock_rename() (the ODF's renames between them are cross-directory).
 * With @fresh (a directory made in /reclaim by the caller's @make), one
 * RENAME_EXCHANGE puts it at the name; without, the node just moves to
 * /reclaim.  The old node, now in /reclaim, is returned referenced for
 * unionfs_ns_delete(), or NULL if there was none.  Under odf_lock.
 */
static struct dentry *unionfs_ns_swap(struct unionfs_sb_info *sbi,
				      const char *name,
				      int (*make)(struct unionfs_sb_info *sbi,
						  struct dentry *r, void *arg),
				      void *arg)
{
	struct dentry *nsdir = sbi->ns.dentry, *rdir = sbi->reclaim.dentry;
	struct dentry *d, *r = NULL, *trap;
	char rname[24];
	int err;

	trap = lock_rename(rdir, nsdir);
	d = lookup_one_len(name, nsdir, ODF_NS_NAME_LEN);
	err = PTR_ERR_OR_ZERO(d);
	if (err)
		goto unlock;
	if (d_is_negative(d) || d == trap) {
		err = d == trap ? -EINVAL : 0;
		dput(d);
		d = NULL;
		goto unlock;
	}
	snprintf(rname, sizeof(rname), "%lu", d_inode(d)->i_ino);
	r = lookup_one_len(rname, rdir, strlen(rname));
	err = PTR_ERR_OR_ZERO(r);
	if (!err && d_is_positive(r))
		err = -EEXIST;	/* a leftover: odfck or the next mount */
	if (!err && make) {
		err = make(sbi, r, arg);
		if (!err)
			err = unionfs_do_rename(sbi->ns.mnt, rdir, r, nsdir, d,
						RENAME_EXCHANGE);
	} else if (!err) {
		err = unionfs_do_rename(sbi->ns.mnt, nsdir, d, rdir, r, 0);
	}
	if (IS_ERR(r))
		r = NULL;
	if (err)
		dput(d);
unlock:
	unionfs_ns_changed(sbi);	/* another node, or none, at @name */
	unlock_rename(rdir, nsdir);
	dput(r);	/* the dentries moved with their inodes: @d is in reclaim */
	return err ? ERR_PTR(err) : d;
}

struct unionfs_ns_newnode {
	u64 uino;
	struct inode *owner;
	unsigned int type;
	const struct odf_node *redirect;
};

static int unionfs_ns_make_fresh(struct unionfs_sb_info *sbi, struct dentry *r,
				 void *arg)
{
	const struct unionfs_ns_newnode *nn = arg;
	int err;

	err = unionfs_do_mkdir(sbi->ns.mnt, r->d_parent, r, 0700);
	if (!err)
		err = unionfs_ns_write_record(sbi, r, nn->uino, nn->owner,
					      nn->type, nn->redirect);
	return err;
}

/*
 * The node of union directory @uino for writing: referenced, positive,
 * valid for @owner.  A missing node is made (plain, or with @type and
 * @redirect); a stale one (another owner) is replaced with one
 * RENAME_EXCHANGE by a fresh one made in /reclaim, so the name never
 * shows a half-made node.  *@made says the record was written already.
 */
static struct dentry *unionfs_ns_make(struct unionfs_sb_info *sbi, u64 uino,
				      struct inode *owner, unsigned int type,
				      const struct odf_node *redirect,
				      bool *made)
{
	struct unionfs_ns_newnode nn = {
		.uino = uino, .owner = owner, .type = type, .redirect = redirect,
	};
	struct dentry *nsdir = sbi->ns.dentry;
	char name[ODF_NS_NAME_LEN + 1];
	struct unionfs_ns_node node;
	struct dentry *d, *old;
	int err;

	*made = false;
	unionfs_ns_name(name, uino);
	inode_lock_nested(d_inode(nsdir), I_MUTEX_PARENT);
	d = lookup_one_len(name, nsdir, ODF_NS_NAME_LEN);
	err = PTR_ERR_OR_ZERO(d);
	if (!err && d_is_negative(d)) {
		err = unionfs_ns_make_fresh(sbi, d, &nn);
		*made = true;
	} else if (!err && !d_can_lookup(d)) {
		err = -EUCLEAN;
	} else if (!err) {
		err = unionfs_ns_read_record(sbi, d, uino, owner, &node);
		unionfs_ns_node_free(&node);
	}
	inode_unlock(d_inode(nsdir));
	if (err != -ESTALE) {
		if (err && !IS_ERR(d)) {
			dput(d);
			d = ERR_PTR(err);
		}
		return d;
	}
	/* Stale: a fresh node takes the name in one exchange. */
	dput(d);
	old = unionfs_ns_swap(sbi, name, unionfs_ns_make_fresh, &nn);
	if (IS_ERR_OR_NULL(old))
		return old ? old : ERR_PTR(-ENOENT);
	err = unionfs_ns_delete(sbi, old);
	if (err)
		pr_warn("ODF '%s': cannot delete a stale namespace node (error %d): odfck will\n",
			sbi->odf_name, err);
	dput(old);
	*made = true;
	d = lookup_one_len_unlocked(name, nsdir, ODF_NS_NAME_LEN);
	if (!IS_ERR(d) && !d_can_lookup(d)) {
		dput(d);
		d = ERR_PTR(-EIO);
	}
	return d;
}

static int unionfs_ns_commit(struct unionfs_sb_info *sbi, struct dentry *d)
{
	struct path p = { .mnt = sbi->ns.mnt, .dentry = d };

	return unionfs_odf_fsync_dir(&p);
}

/*
 * Whiteout @name in union directory @uino (standing on @owner): the node
 * is made if needed.  With @commit the whiteout is on disk before a
 * branch write that follows (hide before delete, section 9).
 */
int unionfs_ns_whiteout_uino(struct super_block *sb, u64 uino,
			     struct inode *owner, const char *name,
			     unsigned int len, bool commit)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct dentry *node, *w;
	bool made;
	int err;

	err = unionfs_ns_begin(sbi);
	if (err)
		return err;
	node = unionfs_ns_make(sbi, uino, owner, 0, NULL, &made);
	err = PTR_ERR_OR_ZERO(node);
	if (err)
		goto out;
	inode_lock_nested(d_inode(node), I_MUTEX_PARENT);
	w = lookup_one_len(name, node, len);
	err = PTR_ERR_OR_ZERO(w);
	if (!err && d_is_negative(w))
		err = unionfs_do_create(sbi->ns.mnt, node, w, S_IFREG | 0600);
	else if (!err && !d_is_reg(w))
		err = -EUCLEAN;
	inode_unlock(d_inode(node));
	if (!IS_ERR(w))
		dput(w);
	if (!err && commit)
		err = unionfs_ns_commit(sbi, node);
	dput(node);
	if (!err)
		unionfs_count(sbi, UNIONFS_ST_WHITEOUTS);
out:
	unionfs_ns_end(sbi);
	return err;
}

int unionfs_ns_whiteout(struct inode *dir, const struct qstr *name,
			bool commit)
{
	return unionfs_ns_whiteout_uino(dir->i_sb, dir->i_ino,
					unionfs_ns_owner(dir), name->name,
					name->len, commit);
}

/* The name shows an upper object again: its whiteout is moot (W1). */
int unionfs_ns_unwhiteout_uino(struct super_block *sb, u64 uino,
			       const char *name, unsigned int len)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	char nname[ODF_NS_NAME_LEN + 1];
	struct dentry *node, *w;
	int err;

	err = unionfs_ns_begin(sbi);
	if (err)
		return err;
	unionfs_ns_name(nname, uino);
	node = lookup_one_len_unlocked(nname, sbi->ns.dentry, ODF_NS_NAME_LEN);
	err = PTR_ERR_OR_ZERO(node);
	if (err || !d_can_lookup(node))
		goto out;
	inode_lock_nested(d_inode(node), I_MUTEX_PARENT);
	w = lookup_one_len(name, node, len);
	err = PTR_ERR_OR_ZERO(w);
	if (!err && d_is_reg(w))
		err = unionfs_do_remove(sbi->ns.mnt, node, w);
	inode_unlock(d_inode(node));
	if (!IS_ERR(w))
		dput(w);
out:
	if (!IS_ERR(node))
		dput(node);
	unionfs_ns_end(sbi);
	return err;
}

int unionfs_ns_unwhiteout(struct inode *dir, const struct qstr *name)
{
	return unionfs_ns_unwhiteout_uino(dir->i_sb, dir->i_ino, name->name,
					  name->len);
}

/*
 * The path of branch dentry @d from its branch root @root, at the end of
 * @buf (@len bytes); "/" for the root itself.
 */
char *unionfs_branch_relpath(struct dentry *d, struct dentry *root,
			     char *buf, int len)
{
	char *p = buf + len;
	struct dentry *parent;

	*--p = 0;
	d = dget(d);
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
	if (!*p)
		*--p = '/';
	return p;
}

/*
 * Walk @rel ("/a/b", any length: no PATH_MAX limit) from branch root
 * @root, component by component, without following symlinks or crossing
 * mounts; *@out is the directory found (referenced).  -ENOENT, -ENOTDIR
 * as a path walk would say.
 */
int unionfs_branch_walk(const struct path *root, const char *rel,
			struct path *out)
{
	struct dentry *d = dget(root->dentry), *next;
	const char *p = rel, *end;

	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		if (!d_can_lookup(d)) {
			dput(d);
			return -ENOTDIR;
		}
		next = lookup_one_unlocked(unionfs_mnt_idmap(root->mnt), p,
					   d, end - p);
		dput(d);
		if (IS_ERR(next))
			return PTR_ERR(next);
		if (d_is_negative(next)) {
			dput(next);
			return -ENOENT;
		}
		d = next;
		p = end;
	}
	out->mnt = mntget(root->mnt);
	out->dentry = d;
	return 0;
}

/*
 * The redirect entries of directory @dentry: where each of its lower
 * parts is on its branch (R1).  NULL when it has none.  -EXDEV when they
 * do not fit a record (rename(2) then fails as across file systems, and
 * mv(1) copies).
 */
static struct odf_node *unionfs_ns_redirect_of(struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	struct super_block *sb = dentry->d_sb;
	size_t off = sizeof(struct odf_node);
	struct dentry *root;
	struct odf_node *n;
	unsigned int i, nr = 0;
	char *buf;
	int err = 0;

	n = kvzalloc(ODF_NODE_MAX, GFP_KERNEL);
	buf = kvmalloc(ODF_NODE_MAX, GFP_KERNEL);
	if (!n || !buf) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < di->nlower; i++) {
		const struct unionfs_lower *l = &di->lower[i];
		struct odf_redirect *r = (void *)n + off;
		char *path;
		size_t pl;

		if (!l->positive || !d_is_dir(l->path.dentry))
			continue;
		root = unionfs_branch(sb, l->bindex)->root.dentry;
		path = unionfs_branch_relpath(l->path.dentry, root, buf,
					      ODF_NODE_MAX);
		if (IS_ERR(path)) {
			err = PTR_ERR(path) == -ENAMETOOLONG ? -EXDEV :
							       PTR_ERR(path);
			goto fail;
		}
		pl = strlen(path);
		if (off + ALIGN(sizeof(*r) + pl, 4) > ODF_NODE_MAX) {
			err = -EXDEV;
			goto fail;
		}
		r->r_branch = cpu_to_le16(unionfs_branch(sb, l->bindex)->id);
		r->r_len = cpu_to_le16(pl);
		memcpy(r + 1, path, pl);
		off += ALIGN(sizeof(*r) + pl, 4);
		nr++;
	}
	kvfree(buf);
	if (!nr) {
		kvfree(n);
		return NULL;
	}
	n->n_nredirect = cpu_to_le16(nr);
	n->n_size = cpu_to_le16(off);
	return n;
fail:
	kvfree(buf);
	kvfree(n);
	return ERR_PTR(err);
}

/*
 * A directory with an upper part is about to be renamed (or was made
 * where a lower one is hidden): its node becomes opaque, so the lower
 * directories at its new name never merge into it, with a redirect to
 * where its own lower parts are, if it has any and no redirect yet
 * (section 9.7).  Nothing visible changes at its current name: the
 * redirect names the lower parts it merges there.  Committed: the
 * renamed directory must not appear before its record.
 */
int unionfs_ns_mark(struct dentry *dentry, struct inode *inode, bool redirect)
{
	struct super_block *sb = dentry->d_sb;
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct inode *owner = unionfs_ns_owner(inode);
	struct odf_node *rec = NULL;
	struct unionfs_ns_node node;
	struct dentry *d;
	bool made;
	int err;

	if (!owner)
		return -EIO;	/* copied up before: cannot happen */
	err = unionfs_ns_read(sb, inode, inode->i_ino, owner, &node);
	if (err)
		return err;
	if (node.flags & ODF_NODE_REDIRECT) {
		unionfs_ns_node_free(&node);
		return 0;	/* marked at an earlier rename: kept */
	}
	if (redirect && unionfs_has_lower(dentry)) {
		rec = unionfs_ns_redirect_of(dentry);
		if (IS_ERR(rec))
			return PTR_ERR(rec);
	}
	if ((node.flags & ODF_NODE_OPAQUE) && !rec)
		return 0;
	err = unionfs_ns_begin(sbi);
	if (err)
		goto out;
	d = unionfs_ns_make(sbi, inode->i_ino, owner, ODF_NODE_OPAQUE, rec,
			    &made);
	err = PTR_ERR_OR_ZERO(d);
	if (!err && !made)
		err = unionfs_ns_write_record(sbi, d, inode->i_ino, owner,
					      ODF_NODE_OPAQUE, rec);
	if (!err)
		err = unionfs_ns_commit(sbi, d);
	if (!IS_ERR(d))
		dput(d);
	unionfs_ns_end(sbi);
out:
	kvfree(rec);
	return err;
}

/*
 * Union directory @inode is gone (rmdir, renamed over): its node goes to
 * reclaim with the whiteouts in it, and is deleted.
 */
int unionfs_ns_drop(struct inode *inode)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(inode->i_sb);
	char name[ODF_NS_NAME_LEN + 1];
	struct dentry *d;
	int err;

	err = unionfs_ns_begin(sbi);
	if (err)
		return err;
	unionfs_ns_name(name, inode->i_ino);
	d = unionfs_ns_swap(sbi, name, NULL, NULL);
	err = PTR_ERR_OR_ZERO(d);
	if (d && !err) {
		err = unionfs_ns_delete(sbi, d);	/* @d is in reclaim now */
		dput(d);
	}
	unionfs_ns_end(sbi);
	return err;
}

/* One entry of the reclaim area: a whiteout or a node, deleted. */
static int unionfs_reclaim_entry(struct unionfs_sb_info *sbi,
				 struct dentry *rdir, const char *name,
				 unsigned int len, int depth)
{
	struct dentry *d;
	int err;

	d = lookup_one_len_unlocked(name, rdir, len);
	if (IS_ERR(d))
		return PTR_ERR(d);
	err = d_is_positive(d) ? unionfs_ns_begin(sbi) : -EIO;
	if (!err) {
		err = unionfs_ns_delete(sbi, d);
		unionfs_ns_end(sbi);
	}
	dput(d);
	return err;
}

/* Finish the reclaim area (section 8), keeping intents. */
int unionfs_reclaim_all(struct unionfs_sb_info *sbi)
{
	struct unionfs_ns_batch *b;
	int err;

	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->skip_intents = true;
	err = unionfs_ns_for_each(sbi, sbi->reclaim.dentry, b,
				  unionfs_reclaim_entry, 0);
	kfree(b);
	return err;
}
