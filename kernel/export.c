// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: NFS export, file handles of union objects
 * (docs/odf-format.md section 13).
 *
 * A union handle names an object by its union inode number and by the
 * file handle of the branch object that showed it when the handle was
 * made.  Decoding opens that branch object (the branch's own handle
 * carries its generation, so a removed and reused branch inode is
 * refused there), then finds the union object the way a lookup would:
 * by the branch object's path, walked in the union from the root.  The
 * union object found must carry the handle's union inode number, else
 * the handle is stale: a handle never decodes to another object.
 *
 * Decoded dentries are connected (found by name from the root) whenever
 * the branch object is, so exportfs never has to reconnect a union
 * dentry, and copy-up, rename and unlink through them work as through
 * any other union dentry.  The one exception is a non-directory of the
 * upper branch that exportfs cannot put back under a name (it moved to
 * another directory and nothing of it is cached): it gets a
 * disconnected union dentry, as exportfs expects of non-directories.
 *
 * Nothing is written for export on the normal path: the handle is
 * computed when knfsd asks for it, from what lookup already holds, and
 * decoding uses only the records copy-up writes anyway (REVERSE, to
 * follow an object copied up and renamed since the handle was made).
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/exportfs.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include "unionfs.h"

#define UNIONFS_FH_HDR_WORDS	(sizeof(struct odf_fh) / 4)

/*
 * A dentry of @inode, or NULL.  A disconnected dentry that
 * unionfs_fh_disconnected() has not yet given its fsdata is not one.
 */
static struct dentry *unionfs_fh_alias(struct inode *inode)
{
	struct dentry *alias = d_find_alias(inode);

	if (alias && !READ_ONCE(alias->d_fsdata)) {
		dput(alias);
		alias = NULL;
	}
	return alias;
}

/*
 * Encode the branch object @real into @buf; a non-directory gets a
 * connectable handle when there is room (its branch parent is in it),
 * so that exportfs can find its name again after the branch caches are
 * dropped.  Returns the fileid type, or FILEID_INVALID.
 */
static int unionfs_encode_real(struct dentry *real, u32 *buf, int *words)
{
	int max = *words, type;

	if (!d_is_dir(real)) {
		type = exportfs_encode_fh(real, (struct fid *)buf, words,
					  UNIONFS_FH_CONNECTABLE);
		if (type > 0 && type != FILEID_INVALID && *words <= max)
			return type;
		*words = max;
	}
	type = exportfs_encode_fh(real, (struct fid *)buf, words, 0);
	if (type <= 0 || type == FILEID_INVALID || *words > max)
		return FILEID_INVALID;
	return type;
}

static int unionfs_encode_fh(struct inode *inode, u32 *fh, int *max_len,
			     struct inode *parent)
{
	struct super_block *sb = inode->i_sb;
	u32 real[ODF_FH_REAL_MAX / 4];
	int rwords = ARRAY_SIZE(real), type, need;
	struct dentry *alias, *rd;
	struct odf_fh hdr = {};
	unsigned int bindex;
	struct path rp;

	/* knfsd and name_to_handle_at() encode an inode they reached by name. */
	alias = unionfs_fh_alias(inode);
	if (!alias)
		return FILEID_INVALID;
	unionfs_real_path(alias, &rp);
	bindex = unionfs_real_bindex(alias);
	rd = dget(rp.dentry);
	dput(alias);
	type = unionfs_encode_real(rd, real, &rwords);
	dput(rd);
	if (type == FILEID_INVALID) {
		pr_warn_ratelimited("branch '%s' cannot encode a file handle for union inode %lu\n",
				    unionfs_branch(sb, bindex)->name, inode->i_ino);
		*max_len = 0;
		return FILEID_INVALID;
	}

	need = UNIONFS_FH_HDR_WORDS + rwords;
	if (*max_len < need) {
		*max_len = need;
		return FILEID_INVALID;
	}
	hdr.fh_magic = ODF_FH_MAGIC;
	hdr.fh_version = ODF_FH_VERSION;
	hdr.fh_real_type = type;
	hdr.fh_branch = cpu_to_le16(unionfs_branch(sb, bindex)->id);
	hdr.fh_real_bytes = cpu_to_le16(rwords * 4);
	hdr.fh_uino = cpu_to_le64(inode->i_ino);
	if (parent) {
		hdr.fh_flags = ODF_FH_CONNECTABLE;
		hdr.fh_parent = cpu_to_le64(parent->i_ino);
	}
	memcpy(fh, &hdr, sizeof(hdr));
	memcpy(fh + UNIONFS_FH_HDR_WORDS, real, rwords * 4);
	*max_len = need;
	return ODF_FH_TYPE;
}

/* exportfs: a branch object is usable if it is connected below the root. */
static int unionfs_real_acceptable(void *root, struct dentry *d)
{
	return is_subdir(d, root);
}

/* exportfs: any non-directory; a directory only below the root. */
static int unionfs_real_any_file(void *root, struct dentry *d)
{
	return !d_is_dir(d) || is_subdir(d, root);
}

/*
 * Decode a branch handle.  On the upper branch (@upper) a non-directory
 * that exportfs cannot reconnect (its handle's parent no longer holds
 * it) is taken disconnected, for unionfs_fh_disconnected().
 */
static struct dentry *unionfs_decode_real(struct unionfs_branch *br,
					  void *fid, int words, int type,
					  bool upper)
{
	struct dentry *d;

	d = exportfs_decode_fh(br->root.mnt, fid, words, type,
			       unionfs_real_acceptable, br->root.dentry);
	if (!upper || !IS_ERR(d) || PTR_ERR(d) != -ESTALE)
		return d;
	return exportfs_decode_fh(br->root.mnt, fid, words, type,
				  unionfs_real_any_file, br->root.dentry);
}

struct unionfs_fh_key {
	u64 uino;
	struct inode *real;
};

static int unionfs_fh_test(struct inode *inode, void *data)
{
	struct unionfs_fh_key *key = data;
	struct unionfs_inode_info *ui = UNIONFS_I(inode);

	return inode->i_ino == key->uino &&
	       (READ_ONCE(ui->lower) == key->real ||
		READ_ONCE(ui->origin) == key->real);
}

/*
 * The union inode is cached and still shows @real (or was copied up
 * from it this session): its name, wherever a rename took it.
 */
static struct dentry *unionfs_fh_cached(struct super_block *sb, u64 uino,
					struct inode *real)
{
	struct unionfs_fh_key key = { .uino = uino, .real = real };
	struct dentry *alias = NULL;
	struct inode *inode;

	inode = ilookup5(sb, uino, unionfs_fh_test, &key);
	if (!inode)
		return NULL;
	if (inode->i_nlink)
		alias = unionfs_fh_alias(inode);
	iput(inode);
	if (alias && (d_unhashed(alias) || UNIONFS_D(alias)->removed ||
		      READ_ONCE(UNIONFS_D(alias)->invalid))) {
		dput(alias);
		alias = NULL;
	}
	return alias;
}

/* Walk the union from its root along @rel ("/a/b"), as a lookup does. */
static struct dentry *unionfs_walk(struct super_block *sb, const char *rel)
{
	struct dentry *d = dget(sb->s_root), *next;
	const char *p = rel, *end;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			return d;
		end = strchrnul(p, '/');
		if (!d_can_lookup(d)) {
			dput(d);
			return ERR_PTR(-ESTALE);
		}
		next = lookup_one_len_unlocked(p, d, end - p);
		dput(d);
		if (IS_ERR(next))
			return next;
		if (d_is_negative(next)) {
			dput(next);
			return ERR_PTR(-ESTALE);
		}
		d = next;
		p = end;
	}
}

/*
 * The union object at the path of branch object @real, if it is the
 * object @uino names.  An object copied up keeps its number, so the
 * path of its lower original finds the copy as long as it has not been
 * renamed.
 */
static struct dentry *unionfs_fh_by_path(struct super_block *sb,
					 unsigned int bindex,
					 struct dentry *real, u64 uino)
{
	struct dentry *d;
	char *buf, *rel;

	buf = __getname();
	if (!buf)
		return ERR_PTR(-ENOMEM);
	rel = unionfs_branch_relpath(real, unionfs_branch(sb, bindex)->root.dentry,
				     buf, PATH_MAX);
	if (IS_ERR(rel))
		d = ERR_PTR(-ESTALE);
	else
		d = unionfs_walk(sb, rel);
	__putname(buf);
	if (!IS_ERR(d) && d_inode(d)->i_ino != uino) {
		dput(d);
		d = ERR_PTR(-ESTALE);
	}
	return d;
}

/*
 * @real is a non-directory of the upper branch that is not connected
 * below the branch root: nothing names it in the branch dcache, and its
 * handle's parent no longer holds it (it was moved to another
 * directory).  The union shows every linked upper object, under the
 * same path as on the branch, so it is the union object @uino if its
 * number says so; with no path to walk, its union dentry is a
 * disconnected one (knfsd needs no more of a non-directory).
 */
static struct dentry *unionfs_fh_disconnected(struct super_block *sb,
					      unsigned int bindex,
					      struct dentry *real, u64 uino)
{
	struct unionfs_dentry_info *di;
	struct inode *inode;
	struct dentry *d;
	u64 ino;
	int err;

	if (bindex || !UNIONFS_SB(sb)->has_upper || d_is_dir(real) ||
	    !d_inode(real)->i_nlink)
		return ERR_PTR(-ESTALE);
	err = unionfs_uino(sb, 0, d_inode(real)->i_ino, &ino);
	if (err)
		return ERR_PTR(err);
	if (ino != uino)
		return ERR_PTR(-ESTALE);
	di = unionfs_alloc_dinfo(0);
	if (!di)
		return ERR_PTR(-ENOMEM);
	inode = unionfs_iget(sb, uino, d_inode(real), 0);
	if (IS_ERR(inode)) {
		unionfs_free_dinfo(di);
		return ERR_CAST(inode);
	}
	di->upper = dget(real);
	di->upper_positive = true;
	di->gen = READ_ONCE(UNIONFS_SB(sb)->br_gen);
	/*
	 * d_obtain_alias() gives the inode's existing dentry, which has its
	 * own fsdata, or a new disconnected one without: ours goes there.
	 * Until then a d_find_alias() elsewhere sees no fsdata and treats
	 * the dentry as not there (unionfs_fh_alias()).
	 */
	d = d_obtain_alias(inode);
	if (IS_ERR(d) || cmpxchg(&d->d_fsdata, NULL, di))
		unionfs_free_dinfo(di);
	/* An existing alias that unionfs_fh_cached() would not take. */
	if (!IS_ERR(d) && (UNIONFS_D(d)->removed ||
			   READ_ONCE(UNIONFS_D(d)->invalid))) {
		dput(d);
		d = ERR_PTR(-ESTALE);
	}
	return d;
}

static struct dentry *unionfs_fh_by_real(struct super_block *sb,
					 unsigned int bindex,
					 struct dentry *real, u64 uino)
{
	struct dentry *d = unionfs_fh_cached(sb, uino, d_inode(real));

	if (d)
		return d;
	if (is_subdir(real, unionfs_branch(sb, bindex)->root.dentry))
		return unionfs_fh_by_path(sb, bindex, real, uino);
	return unionfs_fh_disconnected(sb, bindex, real, uino);
}

/* The slot of the branch with id @bid in the union now, or -1. */
static int unionfs_fh_branch(struct unionfs_sb_info *sbi, u16 bid)
{
	/* Pairs with the release in unionfs_newset_commit(). */
	unsigned int n = smp_load_acquire(&sbi->nbranches), bindex;

	for (bindex = 0; bindex < n; bindex++)
		if (sbi->branches[bindex].id == bid &&
		    !READ_ONCE(sbi->branches[bindex].gone))
			return bindex;
	return -1;
}

/*
 * Is the upper object (B, @upper_ino) the copy of @origin on the branch
 * with id @bid, numbered @uino?  Its UPPER record says (section 6).
 */
static bool unionfs_fh_is_copy_of(struct unionfs_sb_info *sbi,
				  struct odf_map_rec *rec, u16 cbid,
				  u64 upper_ino, u64 uino, u16 bid,
				  struct inode *origin)
{
	u32 gen;

	if (unionfs_imap_find(sbi, ODF_MAP_FORWARD - 1, cbid, upper_ino, rec) ||
	    rec->mr_kind != ODF_MK_UPPER)
		return false;
	gen = le32_to_cpu(rec->mr_tgt_gen);
	return le64_to_cpu(rec->mr_union_ino) == uino &&
	       le16_to_cpu(rec->mr_tgt_branch) == bid &&
	       le64_to_cpu(rec->mr_tgt_ino) == origin->i_ino &&
	       (!gen || !origin->i_generation || gen == origin->i_generation);
}

/*
 * The lower object @origin of the handle was copied up, and its copy has
 * moved since the handle was made: the REVERSE record of @uino holds the
 * copy's handle, and the copy's UPPER record must name @origin, so a
 * handle whose number was changed finds nothing.
 */
static struct dentry *unionfs_fh_by_reverse(struct super_block *sb, u64 uino,
					    u16 bid, struct inode *origin)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct dentry *real, *d = ERR_PTR(-ESTALE);
	struct odf_map_rec *rec;
	unsigned int hb;
	int cbindex;
	u64 upper_ino;
	u16 cbid;

	if (!sbi->has_upper || !sbi->imap[1] || bid == sbi->branches[0].id)
		return d;
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return ERR_PTR(-ENOMEM);
	if (unionfs_imap_find(sbi, ODF_MAP_REVERSE - 1, 0, uino, rec) ||
	    !(le32_to_cpu(rec->mr_flags) & ODF_MREC_HAVE_HANDLE))
		goto out;
	/* The copy: on the upper branch, or a writable lower one (3.4). */
	cbid = le16_to_cpu(rec->mr_tgt_branch);
	cbindex = unionfs_fh_branch(sbi, cbid);
	if (cbindex < 0 || cbid == bid)
		goto out;
	hb = le16_to_cpu(rec->mr_handle_bytes);
	if (!hb || hb > ODF_HANDLE_MAX || hb % 4)
		goto out;
	real = unionfs_decode_real(&sbi->branches[cbindex], rec->mr_handle,
				   hb / 4, le32_to_cpu(rec->mr_handle_type),
				   !cbindex);
	if (IS_ERR(real)) {
		if (PTR_ERR(real) == -ENOMEM)
			d = real;
		goto out;
	}
	upper_ino = le64_to_cpu(rec->mr_tgt_ino);
	if (d_inode(real)->i_ino == upper_ino &&
	    (!rec->mr_tgt_gen || d_inode(real)->i_generation ==
				 le32_to_cpu(rec->mr_tgt_gen)) &&
	    unionfs_fh_is_copy_of(sbi, rec, cbid, upper_ino, uino, bid,
				  origin))
		d = unionfs_fh_by_real(sb, cbindex, real, uino);
	dput(real);
out:
	kfree(rec);
	return d;
}

static struct dentry *unionfs_fh_decode(struct super_block *sb,
					struct fid *fid, int fh_len, int fh_type)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	const struct odf_fh *fh = (const struct odf_fh *)fid;
	const struct cred *old_cred;
	struct dentry *real, *d;
	unsigned int rbytes;
	int bindex;
	u16 bid;
	u64 uino;

	/* A handle is input from the network: check every field. */
	if (fh_type != ODF_FH_TYPE || fh_len < UNIONFS_FH_HDR_WORDS ||
	    fh->fh_magic != ODF_FH_MAGIC || fh->fh_version != ODF_FH_VERSION ||
	    fh->fh_flags & ~ODF_FH_CONNECTABLE)
		return ERR_PTR(-ESTALE);
	rbytes = le16_to_cpu(fh->fh_real_bytes);
	if (!rbytes || rbytes % 4 || rbytes > ODF_FH_REAL_MAX ||
	    UNIONFS_FH_HDR_WORDS + rbytes / 4 > fh_len)
		return ERR_PTR(-ESTALE);
	bid = le16_to_cpu(fh->fh_branch);
	uino = le64_to_cpu(fh->fh_uino);
	bindex = unionfs_fh_branch(sbi, bid);
	if (bindex < 0)
		return ERR_PTR(-ESTALE);	/* the branch left the union */

	/* Walk the union as the mounter, as a lookup would. */
	old_cred = unionfs_override_creds(sb);
	real = unionfs_decode_real(&sbi->branches[bindex],
				   (u32 *)fid + UNIONFS_FH_HDR_WORDS,
				   rbytes / 4, fh->fh_real_type,
				   !bindex && sbi->has_upper);
	if (IS_ERR(real)) {
		d = PTR_ERR(real) == -ENOMEM ? real : ERR_PTR(-ESTALE);
		goto out;
	}
	d = unionfs_fh_by_real(sb, bindex, real, uino);
	if (IS_ERR(d) && PTR_ERR(d) != -ENOMEM)
		d = unionfs_fh_by_reverse(sb, uino, bid, d_inode(real));
	dput(real);
out:
	revert_creds(old_cred);
	if (IS_ERR(d) && PTR_ERR(d) != -ENOMEM)
		d = ERR_PTR(-ESTALE);
	return d;
}

static struct dentry *unionfs_fh_to_dentry(struct super_block *sb,
					   struct fid *fid, int fh_len,
					   int fh_type)
{
	return unionfs_fh_decode(sb, fid, fh_len, fh_type);
}

/* A connected dentry's parent is the current one; disconnected: none. */
static struct dentry *unionfs_fh_to_parent(struct super_block *sb,
					   struct fid *fid, int fh_len,
					   int fh_type)
{
	struct dentry *d = unionfs_fh_decode(sb, fid, fh_len, fh_type);
	struct dentry *parent;

	if (IS_ERR(d))
		return d;
	if (IS_ROOT(d) && !d_is_dir(d)) {
		dput(d);
		return ERR_PTR(-ESTALE);
	}
	parent = dget_parent(d);
	dput(d);
	return parent;
}

static struct dentry *unionfs_get_parent(struct dentry *dir)
{
	/* Disconnected dentries are non-directories: never asked. */
	if (IS_ROOT(dir))
		return ERR_PTR(-ESTALE);
	return dget_parent(dir);
}

/* knfsd's COMMIT of a create or setattr: the branch object's metadata. */
static int unionfs_commit_metadata(struct inode *inode)
{
	struct inode *real = unionfs_lower_inode(inode);
	const struct export_operations *eop = real->i_sb->s_export_op;

	if (eop && eop->commit_metadata)
		return eop->commit_metadata(real);
	return sync_inode_metadata(real, 1);
}

/*
 * subtree_check is refused: its handles would carry the parent, which a
 * rename on the server changes, and decoding needs no parent.
 */
static const struct export_operations unionfs_export_ops = {
	.flags		= EXPORT_OP_NOSUBTREECHK,
	.encode_fh	= unionfs_encode_fh,
	.fh_to_dentry	= unionfs_fh_to_dentry,
	.fh_to_parent	= unionfs_fh_to_parent,
	.get_parent	= unionfs_get_parent,
	.commit_metadata = unionfs_commit_metadata,
};

/*
 * A union is exportable if every branch can decode file handles.  If
 * one cannot, s_export_op stays NULL and knfsd refuses the export; the
 * one log line at mount says why, since knfsd itself says nothing.
 */
void unionfs_export_init(struct super_block *sb)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	unsigned int i;

	for (i = 0; i < sbi->nbranches; i++) {
		struct super_block *bsb = sbi->branches[i].root.mnt->mnt_sb;
		const struct export_operations *eop = bsb->s_export_op;

		if (!eop || !eop->fh_to_dentry) {
			pr_info("branch '%s' (%s) has no NFS file handles: this union cannot be exported over NFS\n",
				sbi->branches[i].name, bsb->s_type->name);
			return;
		}
	}
	sb->s_export_op = &unionfs_export_ops;
}
