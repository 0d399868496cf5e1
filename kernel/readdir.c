// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: directory files.
 *
 * A directory whose only part is on the upper branch is that branch's
 * directory: entries, offsets and seeks are the branch's own; only d_ino
 * is translated to the union inode number, so d_ino equals st_ino.
 *
 * A directory with a part on any other branch is merged: it is listed
 * from its persistent readdir state on the ODF (rdstate.c), whose
 * offsets are stable ordinals: "." is 0, ".." is 1, an entry is 2 + its
 * slot.  A read-only union cannot write that state: it uses a valid one
 * and otherwise lists the directory from a per-open-file cache in memory
 * (offsets valid while the file is open); a listing that began from the
 * state goes on from memory after the names it listed.
 *
 * This file also streams the merged listing itself (branch directories
 * in priority order, whiteouts filtered, duplicates NOT removed) with
 * memory that does not depend on the directory's size.
 */
#include <linux/cred.h>
#include <linux/crc32c.h>
#include <linux/file.h>
#include <linux/list.h>
#include <linux/magic.h>
#include <linux/namei.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include "unionfs.h"

/*
 * Branch directories are read in batches: entries are collected while
 * the branch directory is locked and handed on (with d_ino translated,
 * which may read the inode maps, or the ODF written) after it is
 * unlocked.
 */
#define UNIONFS_BATCH	32

struct unionfs_batch_ent {
	loff_t pos;			/* the entry's own offset */
	u64 ino;
	unsigned int type;
	int len;
	char name[NAME_MAX + 1];
};

struct unionfs_batch {
	struct dir_context ctx;
	unsigned int n;
	struct unionfs_batch_ent ent[UNIONFS_BATCH];
};

static bool unionfs_batch_actor(struct dir_context *ctx, const char *name,
				int len, loff_t offset, u64 ino,
				unsigned int type)
{
	struct unionfs_batch *b = container_of(ctx, struct unionfs_batch, ctx);
	struct unionfs_batch_ent *be;

	if (b->n == UNIONFS_BATCH)
		return false;	/* not consumed: the next batch starts here */
	be = &b->ent[b->n++];
	be->pos = offset;
	be->ino = ino;
	be->type = type;
	be->len = len;
	memcpy(be->name, name, len);
	be->name[len] = 0;
	return true;
}

/* Read the next batch of @dir; 0 entries at the end. */
static int unionfs_batch_read(struct file *dir, struct unionfs_batch *b)
{
	b->ctx.actor = unionfs_batch_actor;
	b->ctx.pos = dir->f_pos;
	b->n = 0;
	return iterate_dir(dir, &b->ctx);
}

static bool unionfs_is_dot(const char *name, int len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

/*
 * The branch directories a union directory merges, highest priority
 * first: the upper one (branch 0) if it exists, then every lower
 * directory from the one it shows on.  *k starts at 0.
 */
bool unionfs_dir_next_part(const struct dentry *dentry, unsigned int *k,
			   struct path *path, unsigned int *bindex)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	struct dentry *upper = unionfs_upper(dentry);
	unsigned int i;

	/* *k - 1 is the next index of di->lower to look at. */
	if (*k == 0) {
		*k = 1 + (upper ? 0 : di->top);
		if (upper) {
			path->mnt = unionfs_upper_mnt(dentry->d_sb);
			path->dentry = upper;
			*bindex = 0;
			return true;
		}
	}
	for (i = *k - 1; i < di->nlower; i++) {
		const struct unionfs_lower *l = &di->lower[i];

		if (l->positive && d_is_dir(l->path.dentry)) {
			*k = i + 2;
			*path = l->path;
			*bindex = l->bindex;
			return true;
		}
	}
	*k = di->nlower + 1;
	return false;
}

/* Does the directory have a part on a branch other than the upper one? */
bool unionfs_dir_has_lower(const struct dentry *dentry)
{
	unsigned int k = 0, bindex;
	struct path p;

	while (unionfs_dir_next_part(dentry, &k, &p, &bindex))
		if (bindex)
			return true;
	return false;
}

/* Does the directory merge directories of several branches? */
bool unionfs_dir_is_merged(const struct dentry *dentry)
{
	unsigned int k = 0, bindex, n = 0;
	struct path p;

	while (unionfs_dir_next_part(dentry, &k, &p, &bindex))
		n++;
	return n > 1;
}

/*
 * Whiteouts of one directory, for the names of its lower parts.  A small
 * Bloom filter of the whiteout names (read from the namespace directory
 * first) lets most names pass without a lookup on the ODF; a name it
 * cannot rule out is looked up.  Memory is fixed, whatever the number of
 * names or whiteouts.
 */
#define UNIONFS_WO_BITS		BIT(15)

struct unionfs_wofilter {
	struct dir_context ctx;
	struct path ns;			/* the namespace directory, if any */
	unsigned long *bloom;
	unsigned int nwo;		/* whiteout-like names seen */
};

static u32 unionfs_wo_hash(const char *name, int len)
{
	return crc32c(0x4f444657, name, len);
}

static bool unionfs_wo_actor(struct dir_context *ctx, const char *name,
			     int len, loff_t off, u64 ino, unsigned int type)
{
	struct unionfs_wofilter *wf = container_of(ctx, struct unionfs_wofilter, ctx);
	u32 h;

	if (type == DT_DIR || unionfs_is_dot(name, len))
		return true;	/* directories are nodes, not whiteouts */
	h = unionfs_wo_hash(name, len);
	__set_bit(h % UNIONFS_WO_BITS, wf->bloom);
	__set_bit((h >> 16) % UNIONFS_WO_BITS, wf->bloom);
	wf->nwo++;
	return true;
}

static int unionfs_wo_init(struct unionfs_wofilter *wf, struct dentry *dentry)
{
	struct file *f;
	int err;

	memset(wf, 0, sizeof(*wf));
	err = unionfs_ns_lookup_dir(dentry, &wf->ns);
	if (err) {
		/* a node that is not a directory (damage) is put already */
		wf->ns.dentry = NULL;
		return err == -ENOENT ? 0 : err;
	}
	wf->bloom = kzalloc(UNIONFS_WO_BITS / 8, GFP_KERNEL);
	err = -ENOMEM;
	if (!wf->bloom)
		goto fail;
	f = dentry_open(&wf->ns, O_RDONLY | O_DIRECTORY | O_NOATIME,
			current_cred());
	err = PTR_ERR(f);
	if (IS_ERR(f))
		goto fail;
	wf->ctx.actor = unionfs_wo_actor;
	err = iterate_dir(f, &wf->ctx);
	fput(f);
	if (!err)
		return 0;
fail:
	kfree(wf->bloom);
	wf->bloom = NULL;
	path_put(&wf->ns);
	wf->ns.dentry = NULL;
	return err;
}

static void unionfs_wo_free(struct unionfs_wofilter *wf)
{
	kfree(wf->bloom);
	if (wf->ns.dentry)
		path_put(&wf->ns);
}

/* Is @name whited out in the directory (W1: for lower branches only)? */
static int unionfs_wo_test(struct unionfs_wofilter *wf, const char *name,
			   int len)
{
	struct dentry *d;
	u32 h;
	int ret;

	if (!wf->nwo)
		return 0;
	h = unionfs_wo_hash(name, len);
	if (!test_bit(h % UNIONFS_WO_BITS, wf->bloom) ||
	    !test_bit((h >> 16) % UNIONFS_WO_BITS, wf->bloom))
		return 0;
	d = lookup_one_len_unlocked(name, wf->ns.dentry, len);
	if (IS_ERR(d))
		return PTR_ERR(d);
	/* A regular file is a whiteout, record or not (section 5). */
	ret = d_is_positive(d) && !d_is_dir(d);
	dput(d);
	return ret;
}

/*
 * An entry of branch directory @dir given as DT_UNKNOWN (ISO 9660, NFS
 * without readdirplus, some FUSE filesystems): its type and inode number
 * from a lookup.  The type decides what merges and how a lower directory
 * is numbered, as lookup decides it from the inode; and such a branch's
 * d_ino need not be its st_ino (ISO 9660 numbers them differently).
 */
static void unionfs_entry_resolve(const struct path *dir,
				  struct unionfs_batch_ent *be)
{
	struct dentry *d;

	d = lookup_one_unlocked(unionfs_mnt_idmap(dir->mnt), be->name,
				dir->dentry, be->len);
	if (IS_ERR(d))
		return;		/* lookup will say what is wrong */
	if (d_is_positive(d)) {
		be->type = fs_umode_to_dtype(d_inode(d)->i_mode);
		be->ino = d_inode(d)->i_ino;
	}
	dput(d);
}

/*
 * Call @fn for each name of the merged listing of @dentry: the names of
 * each branch directory in priority order, lower names that a whiteout
 * hides left out.  A name found on several branches comes once per
 * branch (the first is the one the union shows).  @fn gets the branch's
 * inode number and may sleep, read and write the ODF; it returns < 0 to
 * fail, > 0 to stop.  The caller runs with the mounter's credentials.
 */
int unionfs_dir_stream(struct dentry *dentry, unionfs_name_fn fn, void *arg)
{
	struct unionfs_wofilter wf;
	struct unionfs_batch *b;
	unsigned int k = 0, bindex, i;
	struct path part;
	int err;

	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	err = unionfs_wo_init(&wf, dentry);
	if (err)
		goto out_free;
	while (!err && unionfs_dir_next_part(dentry, &k, &part, &bindex)) {
		struct file *dir;

		dir = dentry_open(&part, O_RDONLY | O_DIRECTORY | O_NOATIME,
				  current_cred());
		if (IS_ERR(dir)) {
			err = PTR_ERR(dir);
			break;
		}
		do {
			err = unionfs_batch_read(dir, b);
			for (i = 0; !err && i < b->n; i++) {
				struct unionfs_batch_ent *be = &b->ent[i];

				if (unionfs_is_dot(be->name, be->len))
					continue;
				if (bindex) {
					err = unionfs_wo_test(&wf, be->name,
							      be->len);
					if (err) {
						err = err > 0 ? 0 : err;
						continue;
					}
				}
				if (be->type == DT_UNKNOWN)
					unionfs_entry_resolve(&part, be);
				err = fn(arg, be->name, be->len, be->ino,
					 be->type, bindex);
			}
		} while (!err && b->n == UNIONFS_BATCH);
		fput(dir);
	}
	unionfs_wo_free(&wf);
out_free:
	kfree(b);
	return err < 0 ? err : 0;
}

struct unionfs_counter {
	struct dir_context ctx;
	u64 n;
};

static bool unionfs_count_actor(struct dir_context *ctx, const char *name,
				int len, loff_t off, u64 ino, unsigned int type)
{
	struct unionfs_counter *c = container_of(ctx, struct unionfs_counter, ctx);

	if (!unionfs_is_dot(name, len))
		c->n++;
	return true;
}

/*
 * The fewest bytes of a directory's i_size one name takes, on the branch
 * filesystems whose directory size (in the VFS inode) bounds the names
 * in it: ext2/3/4 (a directory entry is at least 12 bytes, index blocks
 * hold none), tmpfs (20 bytes a name).  0: the size says nothing (xfs
 * keeps a directory's VFS size at what it was when the inode was read,
 * btrfs counts name bytes, a union or overlayfs branch its own way).
 */
static unsigned int unionfs_dirent_min(const struct super_block *sb)
{
	switch (sb->s_magic) {
	case EXT4_SUPER_MAGIC:
		return 12;
	case TMPFS_MAGIC:
		return 20;
	}
	return 0;
}

/*
 * How many names the branch directories hold together, at most: with
 * @exact false, a bound from the directories' sizes where their
 * filesystem gives one (nothing is read), else counted.  Names added
 * directly to a branch meanwhile can exceed either.  A count that read
 * a branch directory shows in readdir_counted.
 */
int unionfs_dir_count(struct dentry *dentry, u64 *count, bool exact)
{
	struct unionfs_counter c = { .ctx.actor = unionfs_count_actor };
	unsigned int k = 0, bindex, min;
	bool read = false;
	struct path part;
	int err = 0;

	while (!err && unionfs_dir_next_part(dentry, &k, &part, &bindex)) {
		struct file *dir;

		min = exact ? 0 : unionfs_dirent_min(part.dentry->d_sb);
		if (min) {
			c.n += div_u64(i_size_read(d_inode(part.dentry)), min);
			continue;
		}
		dir = dentry_open(&part, O_RDONLY | O_DIRECTORY | O_NOATIME,
				  current_cred());
		if (IS_ERR(dir))
			return PTR_ERR(dir);
		c.ctx.pos = 0;
		err = iterate_dir(dir, &c.ctx);
		fput(dir);
		read = true;
	}
	if (read)
		unionfs_count(UNIONFS_SB(dentry->d_sb), UNIONFS_ST_RD_COUNTED);
	*count = c.n;
	return err;
}

/* ------------------------------------------------------------------ */
/* The in-memory listing of a read-only union without a valid state    */
/* ------------------------------------------------------------------ */

struct unionfs_rdent {
	struct rb_node node;		/* by name, to drop duplicates */
	struct list_head list;		/* listing order */
	u64 ino;			/* branch inode until translated */
	unsigned int type;
	unsigned int bindex;
	bool ended;			/* a non-directory below it: no more parts */
	int len;
	char name[];
};

struct unionfs_rdcache {
	struct super_block *sb;
	struct rb_root names;
	struct list_head entries;
	loff_t count;
	/* where the last read stopped, so reading on costs no walk */
	struct unionfs_rdent *cursor;
	loff_t cursor_pos;
};

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
/*
 * A name a higher branch gave: a lower directory below a lower directory
 * is a part of the same union directory, numbered after its part on the
 * oldest branch (namei.c, unionfs_dir_number_part()).  A non-directory
 * ends the parts, as it ends the merge in lookup.
 */
static void unionfs_rdent_dir_part(struct super_block *sb,
				   struct unionfs_rdent *e, u64 ino,
				   unsigned int type, unsigned int bindex)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);

	if (e->ended || e->type != DT_DIR || e->bindex == 0)
		return;
	if (type != DT_DIR) {
		e->ended = true;
		return;
	}
	if (sbi->branches[bindex].id < sbi->branches[e->bindex].id) {
		e->ino = ino;
		e->bindex = bindex;
	}
}

static int unionfs_rdcache_add(void *arg, const char *name, int len, u64 ino,
			       unsigned int type, unsigned int bindex)
{
	struct unionfs_rdcache *cache = arg;
	struct rb_node **link = &cache->names.rb_node, *parent = NULL;
	struct unionfs_rdent *e;
	int cmp;

	while (*link) {
		e = rb_entry(*link, struct unionfs_rdent, node);
		cmp = strncmp(name, e->name, min(len, e->len));
		if (!cmp)
			cmp = len - e->len;
		if (!cmp) {
			unionfs_rdent_dir_part(cache->sb, e, ino, type, bindex);
			return 0;
		}
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
	e->ended = false;
	rb_link_node(&e->node, parent, link);
	rb_insert_color(&e->node, &cache->names);
	list_add_tail(&e->list, &cache->entries);
	cache->count++;
	return 0;
}

static struct unionfs_rdcache *unionfs_rdcache_build(struct dentry *dentry)
{
	struct unionfs_rdcache *cache;
	const struct cred *old_cred;
	struct unionfs_rdent *e;
	int err;

	cache = kzalloc(sizeof(*cache), GFP_KERNEL);
	if (!cache)
		return ERR_PTR(-ENOMEM);
	cache->sb = dentry->d_sb;
	cache->names = RB_ROOT;
	INIT_LIST_HEAD(&cache->entries);

	old_cred = unionfs_override_creds(dentry->d_sb);
	err = unionfs_dir_stream(dentry, unionfs_rdcache_add, cache);
	revert_creds(old_cred);
	list_for_each_entry(e, &cache->entries, list) {
		if (err)
			break;
		err = unionfs_uino_entry(dentry->d_sb, e->bindex,
					 unionfs_part_on(dentry, e->bindex),
					 e->name, e->len, e->ino, &e->ino);
	}
	if (err) {
		unionfs_rdcache_free(cache);
		return ERR_PTR(err);
	}
	return cache;
}

/* ------------------------------------------------------------------ */
/* Directory files                                                      */
/* ------------------------------------------------------------------ */

enum unionfs_dir_mode {
	UNIONFS_DIR_PASS,	/* one branch directory, passed through */
	UNIONFS_DIR_STATE,	/* merged, from the ODF readdir state */
	UNIONFS_DIR_MEMORY,	/* merged, from an in-memory cache */
};

struct unionfs_dir_file {
	enum unionfs_dir_mode mode;
	struct file *realfile;		/* UNIONFS_DIR_PASS */
	unsigned int bindex;		/* its branch */
	struct unionfs_rdcache *cache;	/* UNIONFS_DIR_MEMORY */
	struct unionfs_rdio *kept;	/* UNIONFS_DIR_STATE: the view read */
	bool opened;	/* mode chosen by open, no read from 0 since */
};

static u64 unionfs_parent_ino(struct file *file)
{
	struct dentry *parent = dget_parent(file->f_path.dentry);
	u64 ino = d_inode(parent)->i_ino;

	dput(parent);
	return ino;
}

/* "." and ".." at offsets 0 and 1; false when the caller's buffer is full. */
bool unionfs_emit_dots(struct file *file, struct dir_context *ctx)
{
	if (ctx->pos == ODF_RD_OFF_DOT) {
		if (!dir_emit(ctx, ".", 1, file_inode(file)->i_ino, DT_DIR))
			return false;
		ctx->pos = ODF_RD_OFF_DOTDOT;
	}
	if (ctx->pos == ODF_RD_OFF_DOTDOT) {
		if (!dir_emit(ctx, "..", 2, unionfs_parent_ino(file), DT_DIR))
			return false;
		ctx->pos = ODF_RD_OFF_FIRST;
	}
	return true;
}

static int unionfs_iterate_memory(struct file *file, struct dir_context *ctx)
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
	if (!unionfs_emit_dots(file, ctx))
		return 0;

	/* Resume at the cursor when reading on, else walk to the offset. */
	if (cache->cursor && cache->cursor_pos == ctx->pos) {
		e = cache->cursor;
		pos = ctx->pos;
	} else {
		pos = ODF_RD_OFF_FIRST;
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
		ctx->pos = cache->count + ODF_RD_OFF_FIRST;
	cache->cursor = e;
	cache->cursor_pos = ctx->pos;
	return 0;
}

/*
 * A listing that began from the readdir state goes on from memory (the
 * state went stale in a read-only union, which cannot reconcile it):
 * the offsets of the two differ, so the names the state listed before
 * ctx->pos are put first in the cache, and the listing resumes after
 * them.  No name is listed twice, none that is still there is skipped.
 */
struct unionfs_rdresume {
	struct unionfs_rdcache *cache;
	struct list_head done;
	loff_t n;
};

static int unionfs_rdresume_fn(void *arg, const char *name, int len)
{
	struct unionfs_rdresume *r = arg;
	struct rb_node *node = r->cache->names.rb_node;
	struct unionfs_rdent *e;
	int cmp;

	while (node) {
		e = rb_entry(node, struct unionfs_rdent, node);
		cmp = strncmp(name, e->name, min(len, e->len));
		if (!cmp)
			cmp = len - e->len;
		if (!cmp) {
			list_move_tail(&e->list, &r->done);
			r->n++;
			return 0;
		}
		node = cmp < 0 ? node->rb_left : node->rb_right;
	}
	return 0;	/* gone since */
}

static int unionfs_iterate_resume(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;
	struct unionfs_rdresume r = { .done = LIST_HEAD_INIT(r.done) };
	int err;

	r.cache = unionfs_rdcache_build(file->f_path.dentry);
	if (IS_ERR(r.cache))
		return PTR_ERR(r.cache);
	/*
	 * A state that cannot be read (gone, damaged) leaves the names
	 * moved so far: the listing goes on, maybe repeating some.
	 */
	err = unionfs_rd_names_before(file->f_path.dentry, ctx->pos,
				      unionfs_rdresume_fn, &r);
	if (err == -ENOMEM) {
		unionfs_rdcache_free(r.cache);
		return err;
	}
	list_splice(&r.done, &r.cache->entries);
	unionfs_rdcache_free(df->cache);
	df->cache = r.cache;
	ctx->pos = ODF_RD_OFF_FIRST + r.n;
	return 0;
}

/*
 * A listed-through directory's entries go from the branch directory's
 * actor straight to the caller's when their number needs nothing but
 * arithmetic (unionfs_uino_quick()) and their type is known, as
 * overlayfs lists a directory that is not merged.  An entry that needs
 * more (an inode map record that may exist, a big inode number,
 * DT_UNKNOWN) may read or write the ODF, which is not done under the
 * branch directory's lock: the read stops after it, and it is handed
 * on from unionfs_iterate_single().
 */
struct unionfs_through {
	struct dir_context ctx;
	struct dir_context *caller;
	struct super_block *sb;
	unsigned int bindex;
	u64 dot_ino, dotdot_ino;
	bool full;		/* the caller's buffer is full */
	bool pending;		/* @slow waits to be handed on */
	struct unionfs_batch_ent slow;
};

static bool unionfs_through_actor(struct dir_context *ctx, const char *name,
				  int len, loff_t offset, u64 ino,
				  unsigned int type)
{
	struct unionfs_through *t =
		container_of(ctx, struct unionfs_through, ctx);
	u64 uino;

	if (t->pending)
		return false;	/* not consumed: the next read starts here */
	if (len == 1 && name[0] == '.') {
		uino = t->dot_ino;
	} else if (len == 2 && name[0] == '.' && name[1] == '.') {
		uino = t->dotdot_ino;
	} else if (type == DT_UNKNOWN ||
		   !unionfs_uino_quick(t->sb, t->bindex, ino, &uino)) {
		t->slow.pos = offset;
		t->slow.ino = ino;
		t->slow.type = type;
		t->slow.len = len;
		memcpy(t->slow.name, name, len);
		t->slow.name[len] = 0;
		t->pending = true;
		return true;
	}
	t->caller->pos = offset;
	if (!dir_emit(t->caller, name, len, uino, type)) {
		t->full = true;
		return false;
	}
	return true;
}

static int unionfs_iterate_single(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;
	struct inode *inode = file_inode(file);
	struct file *realfile = df->realfile;
	struct unionfs_through *t;
	int err = 0;

	/* The slow entry's name makes it too big for the stack. */
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->ctx.actor = unionfs_through_actor;
	t->caller = ctx;
	t->sb = inode->i_sb;
	t->bindex = df->bindex;
	t->dot_ino = inode->i_ino;
	t->dotdot_ino = unionfs_parent_ino(file);
	for (;;) {
		struct unionfs_batch_ent *be = &t->slow;
		u64 uino;

		/*
		 * The branch directory resumes where the union file stands:
		 * it is there unless an entry handed on below did not fit
		 * (the branch read past it).  A seek, not a store of f_pos:
		 * tmpfs resumes at its cursor, which only a seek moves.
		 */
		if (realfile->f_pos != ctx->pos) {
			loff_t pos = vfs_llseek(realfile, ctx->pos, SEEK_SET);

			if (pos < 0) {
				err = pos;
				break;
			}
		}
		t->ctx.pos = ctx->pos;
		t->full = false;
		t->pending = false;
		err = iterate_dir(realfile, &t->ctx);
		if (t->full)
			break;
		if (!t->pending) {
			/*
			 * At the end, or an error after the entries already
			 * given: the next read starts after them (and gets
			 * the error), not at the last one again.
			 */
			ctx->pos = realfile->f_pos;
			break;
		}
		/* Not given yet: a failure below leaves it to the next read. */
		ctx->pos = be->pos;
		if (err)
			break;
		if (be->type == DT_UNKNOWN)
			unionfs_entry_resolve(&realfile->f_path, be);
		err = unionfs_uino_entry(t->sb, t->bindex,
					 realfile->f_path.dentry, be->name,
					 be->len, be->ino, &uino);
		if (err || !dir_emit(ctx, be->name, be->len, uino, be->type))
			break;
		ctx->pos = realfile->f_pos;
	}
	kfree(t);
	return err;
}

/*
 * Errors of the readdir state after which the directory is listed from
 * memory: no room on the ODF for the state, a read-only union whose
 * state went stale, or a state whose name a directory took (damage
 * that only odfck can remove, so it cannot be rebuilt in place).
 */
static bool unionfs_rd_fallback(struct file *file, int err)
{
	if (err != -ENOSPC && err != -EDQUOT && err != -E2BIG &&
	    err != -EROFS && err != -EISDIR)
		return false;
	if (err != -EROFS)
		pr_warn_ratelimited("unionfs: cannot write the readdir state of '%pd' (error %d): listing it from memory\n",
				    file->f_path.dentry, err);
	return true;
}

/*
 * How a directory is listed (docs/odf-format.md section 7): through its
 * one branch directory when it has one part and no readdir state (its
 * offsets are then that directory's own: nothing is merged or hidden,
 * since whiteouts go only into nodes of directories with an upper part,
 * 3.5); from its state otherwise.  A lower-only directory that has a
 * namespace node all the same (written by odfck --convert from a format
 * 1 whiteout, or by a module before rule 3.5) needs its filter.
 */
static bool unionfs_dir_listed_through(struct dentry *dentry)
{
	const struct cred *old_cred;
	struct path p;
	int err;

	if (unionfs_dir_is_merged(dentry) || unionfs_rd_exists(dentry))
		return false;
	if (!unionfs_dir_has_lower(dentry))
		return true;
	old_cred = unionfs_override_creds(dentry->d_sb);
	err = unionfs_ns_lookup_dir(dentry, &p);
	revert_creds(old_cred);
	if (!err)
		path_put(&p);
	return err == -ENOENT;
}

/* Open the one branch directory a listed-through directory shows. */
static int unionfs_dir_open_real(struct file *file,
				 struct unionfs_dir_file *df)
{
	struct dentry *dentry = file->f_path.dentry;
	struct unionfs_branch *br;
	struct file *realfile;
	struct path real;
	int err;

	unionfs_real_path(dentry, &real);
	realfile = dentry_open(&real, file->f_flags, current_cred());
	if (IS_ERR(realfile))
		return PTR_ERR(realfile);
	/*
	 * Its branch, for the entries' numbers, from the directory it
	 * opened (each branch has a mount of its own): the inode's can
	 * change under the stream (a copy-up, or a branch change that
	 * moves a lower-only directory's top part).
	 */
	br = unionfs_file_branch(dentry->d_sb, realfile);
	df->bindex = br ? br - UNIONFS_SB(dentry->d_sb)->branches : 0;
	/* A lower branch's directory: del= of that branch is EBUSY. */
	err = unionfs_count_real_open(dentry->d_sb, realfile, 1);
	if (err) {
		fput(realfile);
		return err;
	}
	df->realfile = realfile;
	df->mode = UNIONFS_DIR_PASS;
	return 0;
}

static void unionfs_dir_close_real(struct file *file,
				   struct unionfs_dir_file *df)
{
	if (!df->realfile)
		return;
	unionfs_count_real_open(file_inode(file)->i_sb, df->realfile, -1);
	fput(df->realfile);
	df->realfile = NULL;
}

/*
 * The mode of a directory not listed through.  A read-only union cannot
 * build or reconcile a state: a directory that has none is listed from
 * memory.  One whose state went stale starts on it all the same, so
 * that a read at an offset the state handed out (a new open and a seek,
 * an NFS READDIR) goes on from memory after the names the state has
 * below that offset (unionfs_iterate_resume()), not at a position of
 * the memory listing.
 */
static enum unionfs_dir_mode unionfs_dir_state_mode(struct dentry *dentry)
{
	return unionfs_rd_usable(dentry) || unionfs_rd_exists(dentry) ?
	       UNIONFS_DIR_STATE : UNIONFS_DIR_MEMORY;
}

/*
 * Listed through at open but merged since: a read from the start
 * (rewinddir) lists it from its state from now on.  Until then the
 * stream goes on in its branch directory, as a listing may or may not
 * show names added or removed after it was opened (POSIX readdir).
 */
static void unionfs_dir_rewind(struct file *file, struct unionfs_dir_file *df)
{
	struct dentry *dentry = file->f_path.dentry;

	if (df->mode != UNIONFS_DIR_PASS || unionfs_dir_listed_through(dentry))
		return;
	unionfs_dir_close_real(file, df);
	df->mode = unionfs_dir_state_mode(dentry);
}

static int unionfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct unionfs_dir_file *df = file->private_data;

	/* The first read after open goes by the mode open just chose. */
	if (ctx->pos == 0 && !df->opened)
		unionfs_dir_rewind(file, df);
	df->opened = false;
	switch (df->mode) {
	case UNIONFS_DIR_PASS:
		return unionfs_iterate_single(file, ctx);
	case UNIONFS_DIR_STATE: {
		int err = unionfs_rd_iterate(file, ctx, &df->kept);

		if (!unionfs_rd_fallback(file, err))
			return err;
		df->mode = UNIONFS_DIR_MEMORY;
		unionfs_rd_stream_free(df->kept);
		df->kept = NULL;
		if (ctx->pos > ODF_RD_OFF_FIRST) {
			err = unionfs_iterate_resume(file, ctx);
			if (err)
				return err;
		}
		return unionfs_iterate_memory(file, ctx);
	}
	default:
		return unionfs_iterate_memory(file, ctx);
	}
}

/* A merged directory is empty when its listing (whiteouts hidden) is. */
static int unionfs_empty_fn(void *arg, const char *name, int len, u64 ino,
			    unsigned int type, unsigned int bindex)
{
	*(bool *)arg = false;
	return 1;
}

int unionfs_check_empty(struct dentry *dentry)
{
	const struct cred *old_cred;
	bool empty = true;
	int err;

	old_cred = unionfs_override_creds(dentry->d_sb);
	err = unionfs_dir_stream(dentry, unionfs_empty_fn, &empty);
	revert_creds(old_cred);
	if (err)
		return err;
	return empty ? 0 : -ENOTEMPTY;
}

static int unionfs_dir_open(struct inode *inode, struct file *file)
{
	struct dentry *dentry = file->f_path.dentry;
	struct unionfs_dir_file *df;
	int err;

	df = kzalloc(sizeof(*df), GFP_KERNEL);
	if (!df)
		return -ENOMEM;
	file->private_data = df;
	df->opened = true;
	if (!unionfs_dir_listed_through(dentry)) {
		df->mode = unionfs_dir_state_mode(dentry);
		return 0;
	}
	err = unionfs_dir_open_real(file, df);
	if (err) {
		kfree(df);
		file->private_data = NULL;
	}
	return err;
}

static int unionfs_dir_release(struct inode *inode, struct file *file)
{
	struct unionfs_dir_file *df = file->private_data;

	unionfs_dir_close_real(file, df);
	unionfs_rd_stream_free(df->kept);
	unionfs_rdcache_free(df->cache);
	kfree(df);
	return 0;
}

static loff_t unionfs_dir_llseek(struct file *file, loff_t offset, int whence)
{
	struct unionfs_dir_file *df = file->private_data;
	loff_t ret;

	if (df->mode == UNIONFS_DIR_PASS) {
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
	case SEEK_END:
		if (df->mode == UNIONFS_DIR_STATE) {
			ret = unionfs_rd_end_offset(file);
			if (ret < 0 && unionfs_rd_fallback(file, ret))
				df->mode = UNIONFS_DIR_MEMORY;
		}
		if (df->mode != UNIONFS_DIR_STATE) {
			if (!df->cache) {
				df->cache = unionfs_rdcache_build(file->f_path.dentry);
				if (IS_ERR(df->cache)) {
					ret = PTR_ERR(df->cache);
					df->cache = NULL;
					return ret;
				}
			}
			ret = df->cache->count + ODF_RD_OFF_FIRST;
		}
		if (ret < 0)
			return ret;
		offset += ret;
		break;
	default:
		return -EINVAL;
	}
	if (offset < 0 || offset > ODF_RD_OFF_MAX)
		return -EINVAL;
	file->f_pos = offset;
	return offset;
}

/*
 * fsync(2) of a directory: what a program expects after creating or
 * renaming in it is that the names are durable.  They are the upper
 * directory's entries and the ODF nodes of the names (whiteouts, opaque
 * and redirect records), so both are synced.
 */
static int unionfs_dir_fsync(struct file *file, loff_t start, loff_t end,
			     int datasync)
{
	struct dentry *dentry = file_dentry(file);
	struct super_block *sb = dentry->d_sb;
	const struct cred *old_cred;
	struct dentry *upper;
	struct path p;
	int err = 0;

	if (!UNIONFS_SB(sb)->has_upper)
		return 0;	/* a read-only union changes nothing */
	old_cred = unionfs_override_creds(sb);
	upper = unionfs_upper(dentry);
	if (upper) {
		p.mnt = unionfs_upper_mnt(sb);
		p.dentry = upper;
		err = unionfs_odf_fsync_dir(&p);
	}
	if (!err && !unionfs_ns_lookup_dir(dentry, &p)) {
		err = unionfs_odf_fsync_dir(&p);
		path_put(&p);
	}
	revert_creds(old_cred);
	return err;
}

const struct file_operations unionfs_dir_fops = {
	.open		= unionfs_dir_open,
	.release	= unionfs_dir_release,
	.iterate_shared	= unionfs_iterate,
	.llseek		= unionfs_dir_llseek,
	.read		= generic_read_dir,
	.fsync		= unionfs_dir_fsync,
};
