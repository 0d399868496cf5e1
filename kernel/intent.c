// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: intents (docs/odf-format.md sections 8, 9.5 and 9.7).
 *
 * Renaming a name that needs a whiteout changes the upper branch (the
 * object moves) and the ODF (a whiteout takes the old name), which no
 * single write can order safely.  An intent /reclaim/intent-<seq> naming
 * both parents (union inode numbers), both names and the upper object is
 * committed first and deleted last.  The upper rename
 * is made durable before the ODF changes, so a mount finding the intent
 * knows from the upper branch alone how far the rename got: the object
 * still at its old name means it never happened (the intent is
 * dropped); the object at its new name means the ODF part is redone.
 * Every ODF step is idempotent.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/namei.h>
#include <linux/slab.h>
#include "unionfs.h"

#define UNIONFS_INTENT_NAME	(sizeof(ODF_INTENT_PREFIX) + 16)

static void unionfs_intent_name(char *buf, u64 seq)
{
	snprintf(buf, UNIONFS_INTENT_NAME, ODF_INTENT_PREFIX "%016llx", seq);
}

/* The hint of upper directory @d: its path from the upper branch root. */
static char *unionfs_intent_hint(struct super_block *sb, struct dentry *d,
				 char *buf, int len)
{
	return unionfs_branch_relpath(d, unionfs_branch(sb, 0)->root.dentry,
				      buf, len);
}

/* What an intent says, before it is encoded or after it is read back. */
struct unionfs_intent {
	unsigned int op;
	u64 ino, src_dir, dst_dir;
	u32 gen;
	char *src, *dst, *src_hint, *dst_hint;	/* NUL-terminated */
	char *buf;
};

/*
 * Encode @in, write it as /reclaim/intent-<seq> and commit it (the file
 * and the directory entry); the number goes to @seq.
 */
static int unionfs_intent_write(struct unionfs_sb_info *sbi,
				const struct unionfs_intent *in, u64 *seq)
{
	struct dentry *rdir = sbi->reclaim.dentry;
	char name[UNIONFS_INTENT_NAME];
	size_t sl = strlen(in->src), dl = strlen(in->dst);
	size_t shl = strlen(in->src_hint), dhl = strlen(in->dst_hint), len;
	struct odf_intent *h;
	struct dentry *d = NULL;
	struct file *f;
	struct path p;
	loff_t pos = 0;
	ssize_t n;
	char *s;
	int err;

	len = sizeof(*h) + sl + dl + shl + dhl;
	h = kvzalloc(len, GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	mutex_lock(&sbi->odf_lock);
	*seq = ++sbi->reclaim_seq;
	h->i_magic = cpu_to_le32(ODF_INTENT_MAGIC);
	h->i_version = cpu_to_le16(ODF_INTENT_VERSION);
	h->i_op = cpu_to_le16(in->op);
	h->i_src_len = cpu_to_le16(sl);
	h->i_dst_len = cpu_to_le16(dl);
	h->i_seq = cpu_to_le64(*seq);
	h->i_time = cpu_to_le64(ktime_get_real_seconds());
	h->i_ino = cpu_to_le64(in->ino);
	h->i_gen = cpu_to_le32(in->gen);
	h->i_src_hint_len = cpu_to_le16(shl);
	h->i_dst_hint_len = cpu_to_le16(dhl);
	h->i_src_dir = cpu_to_le64(in->src_dir);
	h->i_dst_dir = cpu_to_le64(in->dst_dir);
	s = (char *)(h + 1);
	memcpy(s, in->src, sl);
	memcpy(s + sl, in->dst, dl);
	memcpy(s + sl + dl, in->src_hint, shl);
	memcpy(s + sl + dl + shl, in->dst_hint, dhl);
	h->i_crc = cpu_to_le32(UNIONFS_CRC(h, len, i_crc));

	unionfs_intent_name(name, *seq);
	err = unionfs_lock_parent(sbi->reclaim.mnt, rdir);
	if (err)
		goto out;
	d = lookup_one_len(name, rdir, strlen(name));
	err = PTR_ERR_OR_ZERO(d);
	if (!err && d_is_positive(d))
		err = -EEXIST;
	if (!err)
		err = unionfs_do_create(sbi->reclaim.mnt, rdir, d,
					S_IFREG | 0600);
	unionfs_unlock_parent(sbi->reclaim.mnt, rdir);
	if (err)
		goto out;
	p.mnt = sbi->reclaim.mnt;
	p.dentry = d;
	f = dentry_open(&p, O_WRONLY | O_LARGEFILE, current_cred());
	err = PTR_ERR_OR_ZERO(f);
	if (!err) {
		n = kernel_write(f, h, len, &pos);
		err = n == len ? vfs_fsync(f, 0) : n < 0 ? n : -EIO;
		fput(f);
	}
	if (!err)
		err = unionfs_odf_fsync_dir(&sbi->reclaim);
out:
	if (!IS_ERR_OR_NULL(d))
		dput(d);
	mutex_unlock(&sbi->odf_lock);
	kvfree(h);
	return err;
}

/*
 * Write and commit RENAME(@old, @new) of upper inode @upper; its number
 * goes to @seq.  The intent names the parents by union inode number and
 * the names themselves, with the upper paths of the parents as hints for
 * the next mount (section 8).
 */
int unionfs_intent_begin(struct dentry *old, struct dentry *new,
			 struct inode *upper, u64 *seq)
{
	struct super_block *sb = old->d_sb;
	struct unionfs_intent in = {
		.op = ODF_INTENT_RENAME,
		.ino = upper->i_ino,
		.gen = upper->i_generation,
		.src_dir = d_inode(old->d_parent)->i_ino,
		.dst_dir = d_inode(new->d_parent)->i_ino,
		.src = (char *)old->d_name.name,
		.dst = (char *)new->d_name.name,
	};
	char *sbuf, *dbuf;
	int err;

	/* Hints have no PATH_MAX limit (a union may be deeper). */
	sbuf = kvmalloc(ODF_INTENT_HINT_MAX + 1, GFP_KERNEL);
	dbuf = kvmalloc(ODF_INTENT_HINT_MAX + 1, GFP_KERNEL);
	err = sbuf && dbuf ? 0 : -ENOMEM;
	if (err)
		goto out_free;
	in.src_hint = unionfs_intent_hint(sb, unionfs_upper(old->d_parent),
					  sbuf, ODF_INTENT_HINT_MAX + 1);
	in.dst_hint = unionfs_intent_hint(sb, unionfs_upper(new->d_parent),
					  dbuf, ODF_INTENT_HINT_MAX + 1);
	if (IS_ERR(in.src_hint) || IS_ERR(in.dst_hint)) {
		err = IS_ERR(in.src_hint) ? PTR_ERR(in.src_hint) :
					    PTR_ERR(in.dst_hint);
		goto out_free;
	}
	err = unionfs_intent_write(UNIONFS_SB(sb), &in, seq);
out_free:
	kvfree(sbuf);
	kvfree(dbuf);
	return err;
}

/*
 * Write and commit COPYUP of @dentry (section 9.6), whose upper parent
 * is @uparent: the copy about to be built at its name is removed at the
 * next mount unless its records, which give it union inode number
 * d_inode(@dentry)->i_ino, are there.
 */
int unionfs_intent_begin_copyup(struct dentry *dentry, struct dentry *uparent,
				u64 *seq)
{
	struct super_block *sb = dentry->d_sb;
	struct unionfs_intent in = {
		.op = ODF_INTENT_COPYUP,
		.ino = d_inode(dentry)->i_ino,
		.src_dir = d_inode(dentry->d_parent)->i_ino,
		.dst_dir = d_inode(dentry->d_parent)->i_ino,
	};
	struct name_snapshot n;
	char *buf;
	int err;

	buf = kvmalloc(ODF_INTENT_HINT_MAX + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	take_dentry_name_snapshot(&n, dentry);
	in.src = (char *)n.name.name;
	in.dst = in.src;
	in.src_hint = unionfs_intent_hint(sb, uparent, buf,
					  ODF_INTENT_HINT_MAX + 1);
	in.dst_hint = in.src_hint;
	err = PTR_ERR_OR_ZERO(in.src_hint);
	if (!err)
		err = unionfs_intent_write(UNIONFS_SB(sb), &in, seq);
	release_dentry_name_snapshot(&n);
	kvfree(buf);
	return err;
}

/* The operation is complete: its intent goes. */
int unionfs_intent_end(struct unionfs_sb_info *sbi, u64 seq)
{
	struct dentry *rdir = sbi->reclaim.dentry;
	char name[UNIONFS_INTENT_NAME];
	struct dentry *d;
	int err;

	unionfs_intent_name(name, seq);
	mutex_lock(&sbi->odf_lock);
	err = unionfs_lock_parent(sbi->reclaim.mnt, rdir);
	if (!err) {
		d = lookup_one_len(name, rdir, strlen(name));
		err = PTR_ERR_OR_ZERO(d);
		if (!err) {
			if (d_is_positive(d))
				err = unionfs_do_remove(sbi->reclaim.mnt, rdir,
							d);
			dput(d);
		}
		unionfs_unlock_parent(sbi->reclaim.mnt, rdir);
	}
	mutex_unlock(&sbi->odf_lock);
	return err;
}

/*
 * The upper directory of union directory @uino, found at @hint: NULL
 * when nothing there has that union inode number any more.
 */
static struct dentry *unionfs_intent_dir(struct super_block *sb,
					 const char *hint, u64 uino)
{
	const struct path *root = &unionfs_branch(sb, 0)->root;
	struct path p;
	u64 u;
	int err;

	if (unionfs_branch_walk(root, hint, &p))
		return NULL;
	if (!d_can_lookup(p.dentry)) {
		path_put(&p);
		return NULL;
	}
	if (p.dentry == root->dentry)
		u = ODF_UINO_ROOT;
	else if (unionfs_ino_of(sb, 0, d_inode(p.dentry), &u, NULL))
		u = 0;
	mntput(p.mnt);
	err = u == uino ? 0 : -ESTALE;
	if (err) {
		dput(p.dentry);
		return NULL;
	}
	return p.dentry;
}

/* Is the upper object @name in @dir the inode (@ino, @gen)? */
static bool unionfs_intent_upper_is(struct dentry *dir, const char *name,
				    u64 ino, u32 gen)
{
	struct dentry *d;
	bool is;

	if (!dir)
		return false;
	d = lookup_one_len_unlocked(name, dir, strlen(name));
	if (IS_ERR(d))
		return false;
	is = d_is_positive(d) && d_inode(d)->i_ino == ino &&
	     d_inode(d)->i_generation == gen;
	dput(d);
	return is;
}

/*
 * Finish or drop a RENAME intent (sections 9.5, 9.7).  The module makes
 * the upper rename durable before it changes the ODF, so the upper
 * branch tells how far the rename got: the object still at its old name
 * (or at neither) means it never happened; at its new name, the ODF part
 * is redone (each step is idempotent).
 */
static int unionfs_intent_redo_rename(struct super_block *sb,
				      const struct unionfs_intent *in,
				      bool *done)
{
	struct dentry *sdir, *ddir;
	int err = 0;

	*done = false;
	sdir = unionfs_intent_dir(sb, in->src_hint, in->src_dir);
	ddir = unionfs_intent_dir(sb, in->dst_hint, in->dst_dir);
	if (!unionfs_intent_upper_is(sdir, in->src, in->ino, in->gen) &&
	    unionfs_intent_upper_is(ddir, in->dst, in->ino, in->gen)) {
		*done = true;
		err = unionfs_ns_whiteout_uino(sb, in->src_dir,
					       sdir ? d_inode(sdir) : NULL,
					       in->src, strlen(in->src), true);
		if (!err)
			err = unionfs_ns_unwhiteout_uino(sb, in->dst_dir, in->dst,
							 strlen(in->dst));
	}
	dput(sdir);
	dput(ddir);
	return err;
}

/*
 * A COPYUP intent (section 9.6): the copy at the name is complete when
 * its records give it the intent's union inode number; otherwise it is
 * half built (no records, perhaps without its extended attributes or
 * times) and goes, so the name shows the lower object again.  A
 * directory that is not empty (written on the branch directly) stays.
 */
static int unionfs_intent_undo_copyup(struct super_block *sb,
				      const struct unionfs_intent *in)
{
	struct vfsmount *mnt = unionfs_branch(sb, 0)->root.mnt;
	const char *odf = UNIONFS_SB(sb)->odf_name;
	struct dentry *dir, *d;
	struct inode *inode;
	u64 u = 0;
	int err;

	dir = unionfs_intent_dir(sb, in->src_hint, in->src_dir);
	if (!dir)
		return 0;	/* the parent is gone: so is the copy */
	d = lookup_one_len_unlocked(in->src, dir, strlen(in->src));
	err = PTR_ERR_OR_ZERO(d);
	if (err)
		goto out;
	inode = d_inode(d);
	/* Records (ODF lock) first: never under the upper parent's lock. */
	if (!inode || (!unionfs_ino_of(sb, 0, inode, &u, NULL) &&
		       u == in->ino)) {
		dput(d);
		goto out;	/* nothing there, or the copy is complete */
	}
	err = unionfs_lock_parent(mnt, dir);
	if (!err) {
		struct dentry *d2;

		d2 = lookup_one_len(in->src, dir, strlen(in->src));
		err = PTR_ERR_OR_ZERO(d2);
		if (!err) {
			if (d_inode(d2) == inode)
				err = unionfs_do_remove(mnt, dir, d2);
			dput(d2);
		}
		unionfs_unlock_parent(mnt, dir);
	}
	dput(d);
	if (err == -ENOTEMPTY) {
		pr_warn("ODF '%s': '%s' was copied up without its records and is not empty: kept\n",
			odf, in->src);
		err = 0;
	} else if (!err) {
		pr_notice("ODF '%s': removed the unfinished copy-up of '%s'\n",
			  odf, in->src);
	}
out:
	dput(dir);
	if (err)
		pr_err("ODF '%s': cannot undo the unfinished copy-up of '%s' (error %d)\n",
		       odf, in->src, err);
	return err;
}

struct unionfs_intent_scan {
	struct dir_context ctx;
	u64 seqs[16];
	unsigned int n;
};

static bool unionfs_intent_actor(struct dir_context *ctx, const char *name,
				 int len, loff_t off, u64 ino, unsigned int type)
{
	struct unionfs_intent_scan *sc =
		container_of(ctx, struct unionfs_intent_scan, ctx);
	int pl = strlen(ODF_INTENT_PREFIX);
	char hex[17];
	u64 seq;

	if (len != pl + 16 || memcmp(name, ODF_INTENT_PREFIX, pl))
		return true;
	memcpy(hex, name + pl, 16);
	hex[16] = 0;
	if (kstrtoull(hex, 16, &seq))
		return true;
	sc->seqs[sc->n++] = seq;
	return sc->n < ARRAY_SIZE(sc->seqs);
}

static bool unionfs_intent_name_ok(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* Read intent @seq into @in (in->buf to be freed). */
static int unionfs_intent_read(struct unionfs_sb_info *sbi, u64 seq,
			       struct unionfs_intent *in)
{
	char name[UNIONFS_INTENT_NAME];
	unsigned int sl, dl, shl, dhl;
	struct odf_intent *h;
	struct file *f;
	struct path p;
	loff_t pos = 0, size;
	char *s;
	ssize_t n;
	int err;

	unionfs_intent_name(name, seq);
	err = vfs_path_lookup(sbi->reclaim.dentry, sbi->reclaim.mnt, name, 0, &p);
	if (err)
		return err;
	f = dentry_open(&p, O_RDONLY | O_LARGEFILE, current_cred());
	path_put(&p);
	if (IS_ERR(f))
		return PTR_ERR(f);
	size = i_size_read(file_inode(f));
	err = -EUCLEAN;
	if (size < sizeof(*h) ||
	    size > sizeof(*h) + 2 * NAME_MAX + 2 * ODF_INTENT_HINT_MAX)
		goto out_f;
	h = kvmalloc(size, GFP_KERNEL);
	err = -ENOMEM;
	if (!h)
		goto out_f;
	n = kernel_read(f, h, size, &pos);
	sl = le16_to_cpu(h->i_src_len);
	dl = le16_to_cpu(h->i_dst_len);
	shl = le16_to_cpu(h->i_src_hint_len);
	dhl = le16_to_cpu(h->i_dst_hint_len);
	err = -EUCLEAN;
	if (n != size || le32_to_cpu(h->i_magic) != ODF_INTENT_MAGIC ||
	    le16_to_cpu(h->i_version) != ODF_INTENT_VERSION ||
	    (le16_to_cpu(h->i_op) != ODF_INTENT_RENAME &&
	     le16_to_cpu(h->i_op) != ODF_INTENT_COPYUP) ||
	    le64_to_cpu(h->i_seq) != seq || !h->i_ino ||
	    !sl || sl > NAME_MAX || !dl || dl > NAME_MAX || !shl || !dhl ||
	    sizeof(*h) + sl + dl + shl + dhl != size ||
	    le32_to_cpu(h->i_crc) != UNIONFS_CRC(h, size, i_crc))
		goto out_h;
	in->buf = kvmalloc(sl + dl + shl + dhl + 4, GFP_KERNEL);
	err = -ENOMEM;
	if (!in->buf)
		goto out_h;
	s = (char *)(h + 1);
	in->src = in->buf;
	in->dst = in->src + sl + 1;
	in->src_hint = in->dst + dl + 1;
	in->dst_hint = in->src_hint + shl + 1;
	memcpy(in->src, s, sl);
	in->src[sl] = 0;
	memcpy(in->dst, s + sl, dl);
	in->dst[dl] = 0;
	memcpy(in->src_hint, s + sl + dl, shl);
	in->src_hint[shl] = 0;
	memcpy(in->dst_hint, s + sl + dl + shl, dhl);
	in->dst_hint[dhl] = 0;
	in->op = le16_to_cpu(h->i_op);
	in->ino = le64_to_cpu(h->i_ino);
	in->gen = le32_to_cpu(h->i_gen);
	in->src_dir = le64_to_cpu(h->i_src_dir);
	in->dst_dir = le64_to_cpu(h->i_dst_dir);
	err = 0;
	if (!unionfs_intent_name_ok(in->src) || !unionfs_intent_name_ok(in->dst) ||
	    strlen(in->src) != sl || strlen(in->dst) != dl ||
	    strlen(in->src_hint) != shl || strlen(in->dst_hint) != dhl ||
	    in->src_hint[0] != '/' || in->dst_hint[0] != '/' ||
	    (in->op == ODF_INTENT_COPYUP &&
	     (in->src_dir != in->dst_dir || strcmp(in->src, in->dst) ||
	      strcmp(in->src_hint, in->dst_hint)))) {
		kvfree(in->buf);
		in->buf = NULL;
		err = -EUCLEAN;
	}
out_h:
	kvfree(h);
out_f:
	fput(f);
	return err;
}

/*
 * At every read-write mount (section 10.2): finish or drop every intent,
 * then delete it.  One that cannot be read was never committed, so its
 * operation never began: it is deleted.
 */
int unionfs_intent_replay(struct super_block *sb)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct unionfs_intent_scan sc = { .ctx.actor = unionfs_intent_actor };
	unsigned int i;
	struct file *f;
	int err;

	f = dentry_open(&sbi->reclaim, O_RDONLY | O_DIRECTORY, current_cred());
	if (IS_ERR(f))
		return PTR_ERR(f);
	err = iterate_dir(f, &sc.ctx);
	fput(f);
	if (err)
		return err;
	for (i = 0; i < sc.n; i++) {
		struct unionfs_intent in = {};
		bool done;

		sbi->reclaim_seq = max(sbi->reclaim_seq, sc.seqs[i]);
		err = unionfs_intent_read(sbi, sc.seqs[i], &in);
		if (err) {
			pr_warn("ODF '%s': intent %016llx is damaged (error %d); dropped\n",
				sbi->odf_name, sc.seqs[i], err);
		} else if (in.op == ODF_INTENT_COPYUP) {
			err = unionfs_intent_undo_copyup(sb, &in);
			kvfree(in.buf);
			if (err)
				return err;
		} else {
			err = unionfs_intent_redo_rename(sb, &in, &done);
			if (err) {
				pr_err("ODF '%s': cannot finish renaming '%s' to '%s' (error %d)\n",
				       sbi->odf_name, in.src, in.dst, err);
				kvfree(in.buf);
				return err;
			}
			if (done)
				pr_notice("ODF '%s': finished renaming '%s' to '%s'\n",
					  sbi->odf_name, in.src, in.dst);
			else
				pr_notice("ODF '%s': renaming '%s' to '%s' had not reached the upper branch; the name stays '%s'\n",
					  sbi->odf_name, in.src, in.dst, in.src);
			kvfree(in.buf);
		}
		err = unionfs_intent_end(sbi, sc.seqs[i]);
		if (err)
			return err;
	}
	/* More than one batch: scan again. */
	return sc.n == ARRAY_SIZE(sc.seqs) ? unionfs_intent_replay(sb) : 0;
}
