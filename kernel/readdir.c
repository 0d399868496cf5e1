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
	u64 ino;
	unsigned int type;
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

/* Passes one branch directory through, translating d_ino. */
struct unionfs_rdpass {
	struct dir_context ctx;
	struct dir_context *caller;
	struct super_block *sb;
	unsigned int bindex;
	u64 dot_ino, dotdot_ino;
	int err;
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
			       int len, u64 ino, unsigned int type)
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
	u64 uino;

	if (unionfs_is_dot(name, len))
		return true;
	rf->err = unionfs_uino(rf->sb, rf->bindex, ino, &uino);
	if (!rf->err)
		rf->err = unionfs_rdcache_add(rf->cache, name, len, uino, type);
	return !rf->err;
}

static int unionfs_rdcache_fill_branch(struct unionfs_rdcache *cache,
				       struct super_block *sb,
				       const struct unionfs_lower *l)
{
	struct unionfs_rdfill rf = {
		.ctx.actor = unionfs_rdfill_actor,
		.sb = sb,
		.cache = cache,
		.bindex = l->bindex,
	};
	struct file *dir;
	int err;

	dir = dentry_open(&l->path, O_RDONLY | O_DIRECTORY, current_cred());
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
	unsigned int i;
	int err = 0;

	cache = kzalloc(sizeof(*cache), GFP_KERNEL);
	if (!cache)
		return ERR_PTR(-ENOMEM);
	cache->names = RB_ROOT;
	INIT_LIST_HEAD(&cache->entries);

	old_cred = override_creds(UNIONFS_SB(dentry->d_sb)->creator_cred);
	for (i = di->top; i < di->nlower && !err; i++) {
		const struct unionfs_lower *l = &di->lower[i];

		if (l->positive && d_is_dir(l->path.dentry))
			err = unionfs_rdcache_fill_branch(cache, dentry->d_sb, l);
	}
	revert_creds(old_cred);
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
		if (!dir_emit(ctx, e->name, e->len, e->ino, e->type))
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
	u64 uino;

	if (len == 1 && name[0] == '.') {
		uino = rp->dot_ino;
	} else if (len == 2 && name[0] == '.' && name[1] == '.') {
		uino = rp->dotdot_ino;
	} else {
		rp->err = unionfs_uino(rp->sb, rp->bindex, ino, &uino);
		if (rp->err)
			return false;
	}
	return rp->caller->actor(rp->caller, name, len, offset, uino, type);
}

static int unionfs_iterate_single(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;
	struct inode *inode = file_inode(file);
	struct unionfs_rdpass rp = {
		.ctx.actor = unionfs_rdpass_actor,
		.ctx.pos = ctx->pos,
		.caller = ctx,
		.sb = inode->i_sb,
		.bindex = UNIONFS_I(inode)->bindex,
		.dot_ino = inode->i_ino,
		.dotdot_ino = unionfs_parent_ino(file),
	};
	int err;

	/* The branch directory resumes where the union file stands. */
	df->realfile->f_pos = ctx->pos;
	err = iterate_dir(df->realfile, &rp.ctx);
	ctx->pos = df->realfile->f_pos;
	return err ?: rp.err;
}

static int unionfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;

	return df->realfile ? unionfs_iterate_single(file, ctx) :
			      unionfs_iterate_merged(file, ctx);
}

bool unionfs_dir_is_merged(const struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	unsigned int i;

	for (i = di->top + 1; i < di->nlower; i++)
		if (di->lower[i].positive)
			return true;
	return false;
}

static int unionfs_dir_open(struct inode *inode, struct file *file)
{
	struct dentry *dentry = file->f_path.dentry;
	struct unionfs_dir_file *df;
	struct file *realfile;

	df = kzalloc(sizeof(*df), GFP_KERNEL);
	if (!df)
		return -ENOMEM;
	if (!unionfs_dir_is_merged(dentry)) {
		realfile = dentry_open(unionfs_lower_path(dentry), file->f_flags,
				       current_cred());
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
