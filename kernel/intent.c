// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: intents (docs/odf-format.md sections 8, 9.5 and 9.7).
 *
 * Renaming a directory, or a name that needs a whiteout, changes the
 * upper branch (the object moves) and the ODF (a directory's node moves;
 * a whiteout takes the old name), which no single write can order
 * safely.  An intent /reclaim/intent-<seq> naming both paths and the
 * upper object is committed first and deleted last.  The upper rename
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

/* Write and commit RENAME_DIR(@src, @dst); its number goes to @seq. */
int unionfs_intent_begin(struct unionfs_sb_info *sbi, const char *src,
			 const char *dst, u64 ino, u32 gen, u64 *seq)
{
	struct dentry *rdir = sbi->reclaim.dentry;
	size_t sl = strlen(src), dl = strlen(dst), len;
	char name[UNIONFS_INTENT_NAME];
	struct odf_intent *in;
	struct dentry *d;
	struct file *f;
	struct path p;
	loff_t pos = 0;
	ssize_t n;
	int err;

	if (sl > ODF_INTENT_PATH_MAX || dl > ODF_INTENT_PATH_MAX)
		return -ENAMETOOLONG;
	len = sizeof(*in) + sl + dl;
	in = kzalloc(len, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	mutex_lock(&sbi->odf_lock);
	*seq = ++sbi->reclaim_seq;
	in->i_magic = cpu_to_le32(ODF_INTENT_MAGIC);
	in->i_version = cpu_to_le16(ODF_FORMAT_VERSION);
	in->i_op = cpu_to_le16(ODF_INTENT_RENAME);
	in->i_src_len = cpu_to_le16(sl);
	in->i_dst_len = cpu_to_le16(dl);
	in->i_seq = cpu_to_le64(*seq);
	in->i_time = cpu_to_le64(ktime_get_real_seconds());
	in->i_ino = cpu_to_le64(ino);
	in->i_gen = cpu_to_le32(gen);
	memcpy(in + 1, src, sl);
	memcpy((char *)(in + 1) + sl, dst, dl);
	in->i_crc = cpu_to_le32(unionfs_odf_crc(in, len,
					offsetof(struct odf_intent, i_crc)));

	unionfs_intent_name(name, *seq);
	err = unionfs_lock_parent(sbi->reclaim.mnt, rdir);
	if (err) {
		d = ERR_PTR(err);
		goto out;
	}
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
		n = kernel_write(f, in, len, &pos);
		err = n == len ? vfs_fsync(f, 0) : n < 0 ? n : -EIO;
		fput(f);
	}
	if (!err)
		err = unionfs_odf_fsync_dir(&sbi->reclaim);
out:
	if (!IS_ERR(d))
		dput(d);
	mutex_unlock(&sbi->odf_lock);
	kfree(in);
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

/* Which kind of object does union path @upath name in the tree @root? */
static int unionfs_path_kind(const struct path *root, const char *upath)
{
	struct path p;
	int kind;

	if (vfs_path_lookup(root->dentry, root->mnt, upath + 1,
			    LOOKUP_NO_SYMLINKS | LOOKUP_NO_XDEV, &p))
		return 0;
	kind = d_can_lookup(p.dentry) ? S_IFDIR : d_inode(p.dentry)->i_mode & S_IFMT;
	path_put(&p);
	return kind;
}

/* Rename @src to @dst in the upper branch (step 5), unless done. */
static int unionfs_intent_rename_upper(struct unionfs_sb_info *sbi,
				       const char *src, const char *dst)
{
	const struct path *root = &sbi->branches[0].root;
	const char *sname = strrchr(src, '/') + 1, *dname = strrchr(dst, '/') + 1;
	struct path sp, dp;
	struct dentry *sd, *dd, *trap;
	char *sparent, *dparent;
	int err;

	sparent = kstrndup(src, max_t(int, sname - src - 1, 1), GFP_KERNEL);
	dparent = kstrndup(dst, max_t(int, dname - dst - 1, 1), GFP_KERNEL);
	err = sparent && dparent ? 0 : -ENOMEM;
	if (!err)
		err = vfs_path_lookup(root->dentry, root->mnt, sparent + 1,
				      LOOKUP_NO_SYMLINKS | LOOKUP_NO_XDEV, &sp);
	if (!err) {
		err = vfs_path_lookup(root->dentry, root->mnt, dparent + 1,
				      LOOKUP_NO_SYMLINKS | LOOKUP_NO_XDEV, &dp);
		if (err)
			path_put(&sp);
	}
	kfree(sparent);
	kfree(dparent);
	if (err)
		return err;
	trap = unionfs_lock_rename(root->mnt, dp.dentry, sp.dentry);
	if (IS_ERR(trap)) {
		err = PTR_ERR(trap);
		goto put;
	}
	sd = lookup_one_len(sname, sp.dentry, strlen(sname));
	err = PTR_ERR_OR_ZERO(sd);
	if (err)
		goto unlock;
	dd = lookup_one_len(dname, dp.dentry, strlen(dname));
	err = PTR_ERR_OR_ZERO(dd);
	if (err)
		goto put_sd;
	if (sd == trap || dd == trap) {
		err = -EINVAL;
	} else if (d_is_positive(sd)) {
		err = unionfs_do_rename(root->mnt, sp.dentry, sd, dp.dentry,
					dd, 0);
	}
	dput(dd);
put_sd:
	dput(sd);
unlock:
	unionfs_unlock_rename(root->mnt, dp.dentry, sp.dentry);
put:
	path_put(&sp);
	path_put(&dp);
	return err;
}

/* The ODF part of a directory rename: node moved with a redirect. */
static int unionfs_intent_redo_dir_nodes(struct unionfs_sb_info *sbi,
					 const char *src, const char *dst)
{
	int ns_src, ns_dst, err = 0;

	ns_src = unionfs_path_kind(&sbi->ns, src);
	ns_dst = unionfs_path_kind(&sbi->ns, dst);
	if (ns_src == S_IFDIR || ns_dst != S_IFDIR) {
		struct unionfs_ns_node node = {};

		/* Redirect (kept if it had one) and move. */
		if (ns_src == S_IFDIR) {
			struct path p;

			err = vfs_path_lookup(sbi->ns.dentry, sbi->ns.mnt,
					      src + 1, 0, &p);
			if (!err) {
				err = unionfs_ns_read_node(sbi, p.dentry, &node);
				path_put(&p);
			}
		}
		if (!err && !strcmp(node.redirect ?: src, dst))	/* back home */
			err = unionfs_ns_set_dir_path(sbi, src, 0, NULL);
		else if (!err)
			err = unionfs_ns_set_dir_path(sbi, src, ODF_NODE_OPAQUE,
						      node.redirect ?: src);
		kfree(node.redirect);
		if (!err && ns_dst == S_IFDIR)
			err = unionfs_ns_remove_path(sbi, dst);
		if (!err)
			err = unionfs_ns_move_path(sbi, src, dst, false);
	}
	return err;
}

/* Is the upper object at @upath the inode (@ino, @gen)? */
static bool unionfs_intent_upper_is(struct unionfs_sb_info *sbi,
				    const char *upath, u64 ino, u32 gen)
{
	const struct path *root = &sbi->branches[0].root;
	struct path p;
	bool is;

	if (vfs_path_lookup(root->dentry, root->mnt, upath + 1,
			    LOOKUP_NO_SYMLINKS | LOOKUP_NO_XDEV, &p))
		return false;
	is = d_inode(p.dentry)->i_ino == ino &&
	     d_inode(p.dentry)->i_generation == gen;
	path_put(&p);
	return is;
}

/*
 * Finish or drop RENAME(@src, @dst) of upper inode (@ino, @gen), section
 * 9.5/9.7.  The module makes the upper rename durable before it changes
 * the ODF, so the upper branch tells how far the rename got.  An intent
 * of an older module (@ino 0) is rolled forward as that module did.
 */
static int unionfs_intent_redo_rename(struct unionfs_sb_info *sbi,
				      const char *src, const char *dst,
				      u64 ino, u32 gen, bool *done)
{
	int err = 0;

	*done = false;
	if (ino) {
		if (unionfs_intent_upper_is(sbi, src, ino, gen) ||
		    !unionfs_intent_upper_is(sbi, dst, ino, gen))
			return 0;	/* never happened: nothing to finish */
		*done = true;
		if (unionfs_path_kind(&sbi->branches[0].root, dst) == S_IFDIR)
			err = unionfs_intent_redo_dir_nodes(sbi, src, dst);
		else if (unionfs_path_kind(&sbi->ns, dst) == S_IFREG)
			err = unionfs_ns_remove_path(sbi, dst);	/* moot */
		if (!err)
			err = unionfs_ns_whiteout_path(sbi, src, true);
		return err;
	}

	*done = true;
	if (unionfs_path_kind(&sbi->branches[0].root, src) != S_IFDIR) {
		/* The upper rename happened (or the rename never began). */
		if (unionfs_path_kind(&sbi->ns, dst) == S_IFDIR)
			err = unionfs_ns_whiteout_path(sbi, src, true);
		return err;
	}
	err = unionfs_intent_redo_dir_nodes(sbi, src, dst);
	if (!err)
		err = unionfs_ns_whiteout_path(sbi, src, true);
	if (!err)
		err = unionfs_intent_rename_upper(sbi, src, dst);
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

/* Read intent @seq; returns its paths (one allocation) or an ERR_PTR. */
static char *unionfs_intent_read(struct unionfs_sb_info *sbi, u64 seq,
				 char **src, char **dst, u64 *ino, u32 *gen)
{
	char name[UNIONFS_INTENT_NAME];
	struct odf_intent *in;
	unsigned int sl, dl;
	struct file *f;
	struct path p;
	loff_t pos = 0, size;
	char *paths;
	ssize_t n;
	int err;

	unionfs_intent_name(name, seq);
	err = vfs_path_lookup(sbi->reclaim.dentry, sbi->reclaim.mnt, name, 0, &p);
	if (err)
		return ERR_PTR(err);
	f = dentry_open(&p, O_RDONLY | O_LARGEFILE, current_cred());
	path_put(&p);
	if (IS_ERR(f))
		return ERR_CAST(f);
	size = i_size_read(file_inode(f));
	err = -EUCLEAN;
	if (size < sizeof(*in) || size > sizeof(*in) + 2 * ODF_INTENT_PATH_MAX)
		goto out_f;
	in = kmalloc(size, GFP_KERNEL);
	err = -ENOMEM;
	if (!in)
		goto out_f;
	n = kernel_read(f, in, size, &pos);
	sl = le16_to_cpu(in->i_src_len);
	dl = le16_to_cpu(in->i_dst_len);
	err = -EUCLEAN;
	if (n != size || le32_to_cpu(in->i_magic) != ODF_INTENT_MAGIC ||
	    le16_to_cpu(in->i_version) != ODF_FORMAT_VERSION ||
	    le16_to_cpu(in->i_op) != ODF_INTENT_RENAME || in->i_reserved ||
	    le64_to_cpu(in->i_seq) != seq || sizeof(*in) + sl + dl != size ||
	    le32_to_cpu(in->i_crc) != unionfs_odf_crc(in, size,
					offsetof(struct odf_intent, i_crc)))
		goto out_in;
	paths = kmalloc(sl + dl + 2, GFP_KERNEL);
	err = -ENOMEM;
	if (!paths)
		goto out_in;
	memcpy(paths, in + 1, sl);
	paths[sl] = 0;
	memcpy(paths + sl + 1, (char *)(in + 1) + sl, dl);
	paths[sl + 1 + dl] = 0;
	*src = paths;
	*dst = paths + sl + 1;
	*ino = le64_to_cpu(in->i_ino);
	*gen = le32_to_cpu(in->i_gen);
	err = 0;
	if (paths[0] != '/' || (*dst)[0] != '/' || !strcmp(paths, "/") ||
	    !strcmp(*dst, "/")) {
		kfree(paths);
		err = -EUCLEAN;
	}
out_in:
	kfree(in);
out_f:
	fput(f);
	return err ? ERR_PTR(err) : paths;
}

/*
 * At every read-write mount (section 10.2): roll every intent forward,
 * then delete it.  One that cannot be read was never committed, so its
 * operation never began: it is deleted.
 */
int unionfs_intent_replay(struct unionfs_sb_info *sbi)
{
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
		char *paths, *src, *dst;
		bool done;
		u64 ino;
		u32 gen;

		sbi->reclaim_seq = max(sbi->reclaim_seq, sc.seqs[i]);
		paths = unionfs_intent_read(sbi, sc.seqs[i], &src, &dst, &ino,
					    &gen);
		if (IS_ERR(paths)) {
			pr_warn("ODF '%s': intent %016llx is damaged (error %ld); dropped\n",
				sbi->odf_name, sc.seqs[i], PTR_ERR(paths));
		} else {
			err = unionfs_intent_redo_rename(sbi, src, dst, ino, gen,
							 &done);
			if (err) {
				pr_err("ODF '%s': cannot finish renaming '%s' to '%s' (error %d)\n",
				       sbi->odf_name, src, dst, err);
				kfree(paths);
				return err;
			}
			if (done)
				pr_notice("ODF '%s': finished renaming '%s' to '%s'\n",
					  sbi->odf_name, src, dst);
			else
				pr_notice("ODF '%s': renaming '%s' to '%s' had not reached the upper branch; the name stays '%s'\n",
					  sbi->odf_name, src, dst, src);
			kfree(paths);
		}
		err = unionfs_intent_end(sbi, sc.seqs[i]);
		if (err)
			return err;
	}
	/* More than one batch: scan again. */
	return sc.n == ARRAY_SIZE(sc.seqs) ? unionfs_intent_replay(sbi) : 0;
}
