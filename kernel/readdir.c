// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: directories.
 *
 * A directory that exists on one branch only is that branch's directory:
 * entries, offsets and seeks are the branch's own; only d_ino is
 * translated to the union inode number, so d_ino equals st_ino.
 *
 * A merged directory (on several branches) is listed from a per-open-file
 * cache built when the listing starts at offset 0: every branch's
 * directory in priority order, each name once (the highest branch wins),
 * "." and ".." at offsets 0 and 1, entry n at offset n + 2.  This cache
 * lives in memory for as long as the directory is open; the persistent,
 * ODF-backed readdir state replaces it (see docs/odf-format.md).
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include "unionfs.h"

#define UNIONFS_RD_FIRST	2	/* offset of the first merged entry */

struct unionfs_rdent {
	struct rb_node node;		/* by name, to drop duplicates */
	struct list_head list;		/* listing order */
	u64 ino;			/* branch inode until translated */
	unsigned int type;
	unsigned int bindex;
	bool hidden;			/* a whiteout: never listed */
	int len;
	char name[];
};

struct unionfs_rdcache {
	struct rb_root names;
	struct list_head entries;
	loff_t count;
	/* where the last read stopped, so reading on costs no walk */
	struct unionfs_rdent *cursor;
	loff_t cursor_pos;
};

struct unionfs_dir_file {
	struct file *realfile;		/* the only branch directory, if one */
	struct unionfs_rdcache *cache;	/* merged directories */
};

/* Collects one branch directory into the merged cache. */
struct unionfs_rdfill {
	struct dir_context ctx;
	struct super_block *sb;
	struct unionfs_rdcache *cache;
	unsigned int bindex;
	int err;
};

/*
 * Passes one branch directory through in batches: entries are collected
 * while the branch directory is locked and handed on (with d_ino
 * translated, which may read the inode maps) after it is unlocked.
 */
#define UNIONFS_PASS_BATCH	64

struct unionfs_passent {
	loff_t pos;			/* the entry's own offset */
	u64 ino;
	unsigned int type;
	int len;
	char name[NAME_MAX + 1];
};

struct unionfs_rdpass {
	struct dir_context ctx;
	unsigned int n;
	struct unionfs_passent ent[UNIONFS_PASS_BATCH];
};

static bool unionfs_is_dot(const char *name, int len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

static void unionfs_rdcache_free(struct unionfs_rdcache *cache)
{
	struct unionfs_rdent *e, *next;

	if (!cache)
		return;
	list_for_each_entry_safe(e, next, &cache->entries, list)
		kfree(e);
	kfree(cache);
}

/* Inserts a name unless a higher branch already gave it.  */
static int unionfs_rdcache_add(struct unionfs_rdcache *cache, const char *name,
			       int len, u64 ino, unsigned int type,
			       unsigned int bindex, bool hidden)
{
	struct rb_node **link = &cache->names.rb_node, *parent = NULL;
	struct unionfs_rdent *e;
	int cmp;

	while (*link) {
		e = rb_entry(*link, struct unionfs_rdent, node);
		cmp = strncmp(name, e->name, min(len, e->len));
		if (!cmp)
			cmp = len - e->len;
		if (!cmp)
			return 0;
		parent = *link;
		link = cmp < 0 ? &(*link)->rb_left : &(*link)->rb_right;
	}
	e = kmalloc(struct_size(e, name, len), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	memcpy(e->name, name, len);
	e->len = len;
	e->ino = ino;
	e->type = type;
	e->bindex = bindex;
	e->hidden = hidden;
	rb_link_node(&e->node, parent, link);
	rb_insert_color(&e->node, &cache->names);
	list_add_tail(&e->list, &cache->entries);
	cache->count++;
	return 0;
}

static bool unionfs_rdfill_actor(struct dir_context *ctx, const char *name,
				 int len, loff_t offset, u64 ino,
				 unsigned int type)
{
	struct unionfs_rdfill *rf = container_of(ctx, struct unionfs_rdfill, ctx);

	if (unionfs_is_dot(name, len))
		return true;
	rf->err = unionfs_rdcache_add(rf->cache, name, len, ino, type,
				      rf->bindex, false);
	return !rf->err;
}

static int unionfs_rdcache_hide(void *arg, const char *name, int len)
{
	return unionfs_rdcache_add(arg, name, len, 0, DT_UNKNOWN, 0, true);
}

static int unionfs_rdcache_fill_branch(struct unionfs_rdcache *cache,
				       struct super_block *sb,
				       const struct path *path,
				       unsigned int bindex)
{
	struct unionfs_rdfill rf = {
		.ctx.actor = unionfs_rdfill_actor,
		.sb = sb,
		.cache = cache,
		.bindex = bindex,
	};
	struct file *dir;
	int err;

	dir = dentry_open(path, O_RDONLY | O_DIRECTORY, current_cred());
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	err = iterate_dir(dir, &rf.ctx);
	fput(dir);
	return err ?: rf.err;
}

static struct unionfs_rdcache *unionfs_rdcache_build(struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	struct unionfs_rdcache *cache;
	const struct cred *old_cred;
	struct unionfs_rdent *e;
	struct path upper;
	unsigned int i;
	int err = 0;

	cache = kzalloc(sizeof(*cache), GFP_KERNEL);
	if (!cache)
		return ERR_PTR(-ENOMEM);
	cache->names = RB_ROOT;
	INIT_LIST_HEAD(&cache->entries);

	old_cred = override_creds(UNIONFS_SB(dentry->d_sb)->creator_cred);
	upper.dentry = unionfs_upper(dentry);
	if (upper.dentry) {
		upper.mnt = unionfs_upper_mnt(dentry->d_sb);
		err = unionfs_rdcache_fill_branch(cache, dentry->d_sb, &upper, 0);
	}
	/* Whiteouts hide the names of the branches below the upper one. */
	if (!err)
		err = unionfs_ns_list_whiteouts(dentry, unionfs_rdcache_hide,
						cache);
	for (i = upper.dentry ? 0 : di->top; i < di->nlower && !err; i++) {
		const struct unionfs_lower *l = &di->lower[i];

		if (l->positive && d_is_dir(l->path.dentry))
			err = unionfs_rdcache_fill_branch(cache, dentry->d_sb,
							  &l->path, l->bindex);
	}
	revert_creds(old_cred);
	/* d_ino: the union numbers, now that no branch directory is locked. */
	list_for_each_entry(e, &cache->entries, list) {
		if (err)
			break;
		if (!e->hidden)
			err = unionfs_uino(dentry->d_sb, e->bindex, e->ino,
					   &e->ino);
	}
	if (err) {
		unionfs_rdcache_free(cache);
		return ERR_PTR(err);
	}
	return cache;
}

static u64 unionfs_parent_ino(struct file *file)
{
	struct dentry *parent = dget_parent(file->f_path.dentry);
	u64 ino = d_inode(parent)->i_ino;

	dput(parent);
	return ino;
}

static int unionfs_iterate_merged(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;
	struct unionfs_rdcache *cache = df->cache;
	struct unionfs_rdent *e;
	loff_t pos;

	if (ctx->pos == 0 || !cache) {
		cache = unionfs_rdcache_build(file->f_path.dentry);
		if (IS_ERR(cache))
			return PTR_ERR(cache);
		unionfs_rdcache_free(df->cache);
		df->cache = cache;
	}
	if (ctx->pos == 0 &&
	    !dir_emit(ctx, ".", 1, file_inode(file)->i_ino, DT_DIR))
		return 0;
	if (ctx->pos == 0)
		ctx->pos = 1;
	if (ctx->pos == 1 &&
	    !dir_emit(ctx, "..", 2, unionfs_parent_ino(file), DT_DIR))
		return 0;
	if (ctx->pos == 1)
		ctx->pos = UNIONFS_RD_FIRST;

	/* Resume at the cursor when reading on, else walk to the offset. */
	if (cache->cursor && cache->cursor_pos == ctx->pos) {
		e = cache->cursor;
		pos = ctx->pos;
	} else {
		pos = UNIONFS_RD_FIRST;
		e = list_first_entry_or_null(&cache->entries,
					     struct unionfs_rdent, list);
		while (e && pos < ctx->pos) {
			e = list_is_last(&e->list, &cache->entries) ? NULL :
				list_next_entry(e, list);
			pos++;
		}
	}
	for (; e; pos++) {
		if (!e->hidden &&
		    !dir_emit(ctx, e->name, e->len, e->ino, e->type))
			break;
		ctx->pos = pos + 1;
		e = list_is_last(&e->list, &cache->entries) ? NULL :
			list_next_entry(e, list);
	}
	if (!e)
		ctx->pos = cache->count + UNIONFS_RD_FIRST;
	cache->cursor = e;
	cache->cursor_pos = ctx->pos;
	return 0;
}

static bool unionfs_rdpass_actor(struct dir_context *ctx, const char *name,
				 int len, loff_t offset, u64 ino,
				 unsigned int type)
{
	struct unionfs_rdpass *rp = container_of(ctx, struct unionfs_rdpass, ctx);
	struct unionfs_passent *pe;

	if (rp->n == UNIONFS_PASS_BATCH)
		return false;	/* not consumed: the next batch starts here */
	pe = &rp->ent[rp->n++];
	pe->pos = offset;
	pe->ino = ino;
	pe->type = type;
	pe->len = len;
	memcpy(pe->name, name, len);
	return true;
}

static int unionfs_iterate_single(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;
	struct inode *inode = file_inode(file);
	struct super_block *sb = inode->i_sb;
	unsigned int bindex = UNIONFS_I(inode)->bindex;
	struct unionfs_rdpass *rp;
	unsigned int i;
	int err = 0;

	rp = kmalloc(sizeof(*rp), GFP_KERNEL);
	if (!rp)
		return -ENOMEM;
	for (;;) {
		loff_t next;

		rp->ctx.actor = unionfs_rdpass_actor;
		rp->ctx.pos = ctx->pos;
		rp->n = 0;
		/* The branch directory resumes where the union file stands. */
		df->realfile->f_pos = ctx->pos;
		err = iterate_dir(df->realfile, &rp->ctx);
		if (err || !rp->n)
			break;
		next = df->realfile->f_pos;
		for (i = 0; i < rp->n; i++) {
			struct unionfs_passent *pe = &rp->ent[i];
			u64 uino;

			if (pe->len == 1 && pe->name[0] == '.')
				uino = inode->i_ino;
			else if (pe->len == 2 && pe->name[0] == '.' &&
				 pe->name[1] == '.')
				uino = unionfs_parent_ino(file);
			else
				err = unionfs_uino(sb, bindex, pe->ino, &uino);
			if (err)
				goto out;
			ctx->pos = pe->pos;
			if (!dir_emit(ctx, pe->name, pe->len, uino, pe->type))
				goto out;
		}
		ctx->pos = next;
		if (rp->n < UNIONFS_PASS_BATCH)
			break;
	}
out:
	kfree(rp);
	return err;
}

static int unionfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;

	return df->realfile ? unionfs_iterate_single(file, ctx) :
			      unionfs_iterate_merged(file, ctx);
}

/* Does the directory merge directories of several branches? */
bool unionfs_dir_is_merged(const struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	unsigned int i, n = unionfs_upper(dentry) ? 1 : 0;

	for (i = n ? 0 : di->top; i < di->nlower; i++)
		if (di->lower[i].positive && d_is_dir(di->lower[i].path.dentry))
			n++;
	return n > 1;
}

/*
 * A directory of one branch is passed through, unless it is a lower one
 * with a namespace node (whiteouts may hide some of its names).
 */
static bool unionfs_dir_needs_merge(struct dentry *dentry)
{
	const struct cred *old_cred;
	bool ret;

	if (unionfs_dir_is_merged(dentry))
		return true;
	if (unionfs_upper(dentry))
		return false;
	old_cred = override_creds(UNIONFS_SB(dentry->d_sb)->creator_cred);
	ret = unionfs_ns_dir_exists(dentry);
	revert_creds(old_cred);
	return ret;
}

/* Call @fn for each name of a merged listing, until it returns false. */
int unionfs_dir_iterate_merged(struct dentry *dentry,
			       bool (*fn)(void *arg, const char *name, int len,
					  u64 ino, unsigned int type),
			       void *arg)
{
	struct unionfs_rdcache *cache;
	struct unionfs_rdent *e;

	cache = unionfs_rdcache_build(dentry);
	if (IS_ERR(cache))
		return PTR_ERR(cache);
	list_for_each_entry(e, &cache->entries, list)
		if (!e->hidden && !fn(arg, e->name, e->len, e->ino, e->type))
			break;
	unionfs_rdcache_free(cache);
	return 0;
}

static int unionfs_dir_open(struct inode *inode, struct file *file)
{
	struct dentry *dentry = file->f_path.dentry;
	struct unionfs_dir_file *df;
	struct file *realfile;

	df = kzalloc(sizeof(*df), GFP_KERNEL);
	if (!df)
		return -ENOMEM;
	if (!unionfs_dir_needs_merge(dentry)) {
		struct path real;

		unionfs_real_path(dentry, &real);
		realfile = dentry_open(&real, file->f_flags, current_cred());
		if (IS_ERR(realfile)) {
			kfree(df);
			return PTR_ERR(realfile);
		}
		df->realfile = realfile;
	}
	file->private_data = df;
	return 0;
}

static int unionfs_dir_release(struct inode *inode, struct file *file)
{
	struct unionfs_dir_file *df = file->private_data;

	if (df->realfile)
		fput(df->realfile);
	unionfs_rdcache_free(df->cache);
	kfree(df);
	return 0;
}

static loff_t unionfs_dir_llseek(struct file *file, loff_t offset, int whence)
{
	struct unionfs_dir_file *df = file->private_data;
	loff_t ret;

	if (df->realfile) {
		df->realfile->f_pos = file->f_pos;
		ret = vfs_llseek(df->realfile, offset, whence);
		file->f_pos = df->realfile->f_pos;
		return ret;
	}
	switch (whence) {
	case SEEK_SET:
		break;
	case SEEK_CUR:
		offset += file->f_pos;
		break;
	default:
		/* SEEK_END comes with the persistent readdir state. */
		return -EINVAL;
	}
	if (offset < 0)
		return -EINVAL;
	file->f_pos = offset;
	return offset;
}

const struct file_operations unionfs_dir_fops = {
	.open		= unionfs_dir_open,
	.release	= unionfs_dir_release,
	.iterate_shared	= unionfs_iterate,
	.llseek		= unionfs_dir_llseek,
	.read		= generic_read_dir,
};
