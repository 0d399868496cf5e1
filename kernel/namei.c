// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: lookup.
 *
 * A name is searched in every branch where the parent is a directory,
 * highest priority first.  The first object found is what the union
 * shows; if it is a directory, the directories of the same name on the
 * branches below it are merged into it, and the search goes on past
 * negative entries (kept for revalidation) until a non-directory, which
 * ends the merge.  Lower lookups run with the credentials of the mounter,
 * so a merged directory's permissions are those of its top branch alone.
 *
 * The ODF's namespace node of the name decides what the branches below
 * the upper one may show (docs/odf-format.md 5.2): a whiteout hides them
 * (W1; over an upper directory it acts as opaque, W2), an opaque node
 * stops the merge at the upper branch (O1), and a redirect says where the
 * lower directories of a renamed directory are (R1).
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/cred.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include "unionfs.h"

/* Add @ld (referenced) as the next lower entry; false ends the merge. */
static bool unionfs_lookup_add(struct unionfs_dentry_info *di,
			       const struct unionfs_lower *pl, struct dentry *ld,
			       bool *found)
{
	struct unionfs_lower *l;

	if (*found && d_is_positive(ld) && !d_is_dir(ld)) {
		/* A non-directory below a directory is hidden. */
		dput(ld);
		return false;
	}
	l = &di->lower[di->nlower++];
	unionfs_lower_set(l, pl->path.mnt, ld, pl->bindex);
	if (!l->positive || *found)
		return true;
	*found = true;
	di->top = di->nlower - 1;	/* shown only if the upper is not */
	return d_is_dir(ld);
}

/*
 * The lower parts of a renamed directory, at its redirect entries (R1),
 * merged in the branches' current priority order.
 */
static int unionfs_lookup_redirect(struct super_block *sb,
				   struct unionfs_dentry_info *di,
				   const struct odf_node *rec, bool found)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	unsigned int o, i, k, nr = le16_to_cpu(rec->n_nredirect);
	struct unionfs_order order;

	unionfs_get_order(sbi, &order);
	/* A remount may have added branches since @di was allocated. */
	for (o = 1; o < order.n && di->nlower < di->cap; o++) {
		struct unionfs_lower pl = {
			.path = sbi->branches[order.idx[o]].root,
			.bindex = order.idx[o],
		};
		size_t off = sizeof(*rec);
		const struct odf_redirect *r = NULL;
		struct path p;
		char *rpath;
		int err;

		/* The record was checked when read (ns.c). */
		for (k = 0; k < nr; k++) {
			r = (const void *)rec + off;
			i = order.idx[o];
			if (le16_to_cpu(r->r_branch) == sbi->branches[i].id)
				break;
			off += ALIGN(sizeof(*r) + le16_to_cpu(r->r_len), 4);
		}
		if (k == nr)
			continue;
		rpath = kmemdup_nul((const char *)(r + 1), le16_to_cpu(r->r_len),
				    GFP_KERNEL);	/* up to 64 KiB: kmalloc is fine */
		if (!rpath)
			return -ENOMEM;
		err = unionfs_branch_walk(&pl.path, rpath, &p);
		kfree(rpath);
		if (err == -ENOENT || err == -ENOTDIR || err == -ENAMETOOLONG)
			continue;
		if (err)
			return err;
		if (!d_is_dir(p.dentry)) {
			path_put(&p);
			if (found)
				break;
			continue;
		}
		mntput(p.mnt);
		if (!unionfs_lookup_add(di, &pl, p.dentry, &found))
			break;
	}
	return 0;
}

/*
 * Fill @di for @name in @parent from the branches and the ODF.  For an
 * upper directory, its union inode number is needed to find its node:
 * it is returned in *@uino (*@have_uino set), with its *@lower_links,
 * and what its node says in @node (for its inode to keep; the caller
 * frees it).
 */
static int unionfs_lookup_branches(struct dentry *parent,
				   const struct qstr *name,
				   struct unionfs_dentry_info *di, u64 *uino,
				   u32 *lower_links, bool *have_uino,
				   struct unionfs_ns_node *node)
{
	struct super_block *sb = parent->d_sb;
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	const struct unionfs_dentry_info *pdi = READ_ONCE(parent->d_fsdata);
	struct dentry *pupper = unionfs_upper(parent);
	bool found = false, upper_file = false, wo;
	unsigned int i;
	int err;

	*have_uino = false;
	/* Found in the parent's branch set, current or not (remount.c). */
	di->gen = pdi->gen;
	di->top = UINT_MAX;
	if (pupper && d_can_lookup(pupper)) {
		struct dentry *ud;

		ud = lookup_one_unlocked(unionfs_mnt_idmap(unionfs_upper_mnt(sb)),
					 name->name, pupper, name->len);
		if (IS_ERR(ud))
			return PTR_ERR(ud);
		di->upper = ud;
		di->upper_positive = d_is_positive(ud);
		found = di->upper_positive;
		upper_file = found && !d_is_dir(ud);
	}

	/* One ODF lookup: the name in its parent's node (W1). */
	err = unionfs_ns_is_whiteout(d_inode(parent), name, &wo);
	if (err)
		return err;
	if (found && !upper_file) {
		/* An upper directory: its own node (O1, R1). */
		err = unionfs_ino_of(sb, 0, d_inode(di->upper), uino,
				     lower_links);
		if (!err)
			err = unionfs_ns_read(sb, NULL, *uino,
					      d_inode(di->upper), node);
		if (err)
			return err;
		*have_uino = true;
	}
	if (wo)
		node->flags |= ODF_NODE_WHITEOUT;
	di->ns_flags = node->flags;
	if (node->flags & ODF_NODE_REDIRECT) {
		/*
		 * R1: the lower parts are where the redirect says, not at
		 * this name (so a whiteout of the name does not hide them).
		 */
		err = unionfs_lookup_redirect(sb, di, node->rec, found);
		goto out;
	}
	if (node->flags & (ODF_NODE_WHITEOUT | ODF_NODE_OPAQUE))
		goto out;	/* W1, W2, O1: nothing below the upper branch */

	/* The parent's info may be newer than @di's size (a remount). */
	for (i = 0; i < pdi->nlower && di->nlower < di->cap; i++) {
		const struct unionfs_lower *pl = &pdi->lower[i];
		struct dentry *ld;

		if (!pl->positive || !d_can_lookup(pl->path.dentry))
			continue;
		/* Under a directory still in the old set: not what left it. */
		if (READ_ONCE(sbi->branches[pl->bindex].gone))
			continue;
		ld = lookup_one_unlocked(unionfs_mnt_idmap(pl->path.mnt),
					 name->name, pl->path.dentry, name->len);
		if (IS_ERR(ld)) {
			err = PTR_ERR(ld);
			goto out;
		}
		if (upper_file) {
			/*
			 * Hidden by the upper file, but remembered: removing
			 * or renaming the upper file must then hide it.
			 */
			struct unionfs_lower *l = &di->lower[di->nlower++];

			unionfs_lower_set(l, pl->path.mnt, ld, pl->bindex);
			if (l->positive)
				break;
			continue;
		}
		if (!unionfs_lookup_add(di, pl, ld, &found))
			break;
	}
out:
	if (di->top == UINT_MAX)
		di->top = di->nlower;	/* negative, or on the upper branch */
	return err;
}

/*
 * The union inode number of a branch object (docs/odf-format.md section
 * 4): an object on the upper branch may be a copy that keeps its origin's
 * number (UPPER record, checked against the generation in its REVERSE
 * record); otherwise the number is deterministic.
 */
int unionfs_ino_of(struct super_block *sb, unsigned int bindex,
		   struct inode *lower, u64 *uino, u32 *lower_links)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct odf_map_rec *rec;
	/* Copies are on the upper branch or a writable lower one (3.4). */
	u16 bid = sbi->branches[bindex].id;
	u32 ll;
	u64 u;
	int err;

	if (lower_links)
		*lower_links = 0;
	if (!unionfs_imap_may_hold(sbi, bid, lower->i_ino))
		return unionfs_uino_det(sb, bindex, lower->i_ino, uino);
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	err = unionfs_imap_find(sbi, ODF_MAP_FORWARD - 1, bid, lower->i_ino, rec);
	if (!err && rec->mr_kind == ODF_MK_COPIED) {
		/* An original, or a copy copied again (6.3): its number. */
		u = le64_to_cpu(rec->mr_union_ino);
		goto out;
	}
	if (err || rec->mr_kind != ODF_MK_UPPER)
		goto det;
	u = le64_to_cpu(rec->mr_union_ino);
	ll = le32_to_cpu(rec->mr_lower_links);
	err = unionfs_imap_find(sbi, ODF_MAP_REVERSE - 1, 0, u, rec);
	/* The forward map is authoritative: only a mismatch makes it stale. */
	if (!err && (le64_to_cpu(rec->mr_tgt_ino) != lower->i_ino ||
		     le16_to_cpu(rec->mr_tgt_branch) != bid ||
		     (rec->mr_tgt_gen && lower->i_generation &&
		      le32_to_cpu(rec->mr_tgt_gen) != lower->i_generation))) {
		/*
		 * A record of an inode number the branch reused (stale:
		 * dropped), or one read while a copy-up was writing them.
		 */
		if (unionfs_imap_check_copy(sbi, bid, lower, &u, &ll))
			goto det;
	}
	if (lower_links)
		*lower_links = ll;
out:
	*uino = u;
	kfree(rec);
	unionfs_odf_seen_ino(sbi, u);
	return 0;
det:
	kfree(rec);
	return unionfs_uino_det(sb, bindex, lower->i_ino, uino);
}

/*
 * A directory shown from lower branches only is numbered after its part
 * on the oldest branch (the lowest branch id), not its top part: a
 * branch added by remount with the same directory, above or below,
 * changes neither its number nor so the key of its ODF node and readdir
 * state (docs/odf-format.md section 4).  Before any branch change ids
 * follow priority, and this is the top part.  Returns the slot and sets
 * *@real to that part's dentry.
 */
static unsigned int unionfs_dir_number_part(struct super_block *sb,
					    const struct unionfs_dentry_info *di,
					    unsigned int bindex,
					    struct dentry **real)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	unsigned int i;

	for (i = di->top + 1; i < di->nlower; i++) {
		const struct unionfs_lower *l = &di->lower[i];

		if (l->positive && d_is_dir(l->path.dentry) &&
		    sbi->branches[l->bindex].id < sbi->branches[bindex].id) {
			bindex = l->bindex;
			*real = l->path.dentry;
		}
	}
	return bindex;
}

/*
 * The union inode number of the object @real that @di shows from branch
 * @bindex, hard-link copies aside (unionfs_lookup()): a lower-only
 * directory is numbered after its part on the oldest branch, anything
 * else after itself.
 */
static int unionfs_shown_number(struct super_block *sb,
				const struct unionfs_dentry_info *di,
				unsigned int bindex, struct dentry *real,
				u64 *ino, u32 *lower_links)
{
	if (bindex && d_is_dir(real)) {
		bindex = unionfs_dir_number_part(sb, di, bindex, &real);
		return unionfs_uino_det(sb, bindex, d_inode(real)->i_ino, ino);
	}
	return unionfs_ino_of(sb, bindex, d_inode(real), ino, lower_links);
}

/*
 * A new info for @name in @parent, filled as a lookup fills it (with the
 * mounter's credentials; the node is not kept), or an ERR_PTR.
 */
static struct unionfs_dentry_info *
unionfs_lookup_again(struct dentry *parent, const struct qstr *name,
		     u64 *ino, bool *have_uino)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(parent->d_sb);
	struct unionfs_ns_node node = {};
	struct unionfs_dentry_info *di;
	const struct cred *old_cred;
	u32 lower_links;
	int err;

	di = unionfs_alloc_dinfo(READ_ONCE(sbi->nbranches));
	if (!di)
		return ERR_PTR(-ENOMEM);
	old_cred = override_creds(sbi->creator_cred);
	err = unionfs_lookup_branches(parent, name, di, ino, &lower_links,
				      have_uino, &node);
	revert_creds(old_cred);
	unionfs_ns_node_free(&node);
	if (err) {
		unionfs_free_dinfo(di);
		return ERR_PTR(err);
	}
	return di;
}

/*
 * The origin a copy-up of a lower-only directory records: the part its
 * number was made of, if @dentry shows the part in *@bindex.
 */
void unionfs_dir_origin(struct dentry *dentry, unsigned int *bindex,
			struct inode **origin)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	struct dentry *part;

	if (di->top >= di->nlower || di->lower[di->top].bindex != *bindex)
		return;
	part = di->lower[di->top].path.dentry;
	*bindex = unionfs_dir_number_part(dentry->d_sb, di, *bindex, &part);
	*origin = d_inode(part);
}

/*
 * @dentry was found before a remount changed the branches (remount.c):
 * look it up again in the current set, without the parent's lock (its
 * name and parent are taken as they are now; the caller checks they did
 * not change before using the result).  Returns the new info if it
 * still shows the object its inode stands for (the same branch object
 * on the same branch, so the same union inode number; or, for a
 * directory shown from lower branches only, the same number: the caller
 * then moves the inode to the new top part, unionfs_inode_moved()),
 * NULL if it shows another or none, or an ERR_PTR.
 */
struct unionfs_dentry_info *unionfs_relookup(struct dentry *dentry,
					     struct dentry *parent,
					     const struct qstr *name)
{
	struct super_block *sb = dentry->d_sb;
	struct unionfs_inode_info *ui = UNIONFS_I(d_inode(dentry));
	struct unionfs_dentry_info *di;
	struct dentry *real;
	unsigned int bindex;
	bool have_uino, moved;
	u64 ino;

	di = unionfs_lookup_again(parent, name, &ino, &have_uino);
	if (IS_ERR(di))
		return di;
	if (di->upper_positive) {
		real = di->upper;
		bindex = 0;
	} else if (di->top < di->nlower) {
		real = di->lower[di->top].path.dentry;
		bindex = di->lower[di->top].bindex;
	} else {
		goto other;	/* gone from the union */
	}
	/* A lower hard link showing its copy (di->alias) is not redone. */
	moved = d_inode(real) != READ_ONCE(ui->lower) ||
		/* Pairs with the release in unionfs_inode_copied_up(). */
		bindex != smp_load_acquire(&ui->bindex);
	if (have_uino && ino != d_inode(dentry)->i_ino)
		goto other;
	/* A lower-only directory whose oldest part left: another number. */
	if (bindex && d_is_dir(real)) {
		if (unionfs_shown_number(sb, di, bindex, real, &ino, NULL) ||
		    ino != d_inode(dentry)->i_ino)
			goto other;
		/* Its top part moved: the same directory (see above). */
		if (moved && (!d_is_dir(dentry) || !READ_ONCE(ui->bindex)))
			goto other;
		return di;
	}
	if (moved)
		goto other;
	return di;
other:
	unionfs_free_dinfo(di);
	return NULL;
}

/*
 * @dentry, a non-directory, may no longer be its name's dentry: an fd's
 * dentry unhashed after its name was renamed or removed through another
 * dentry, or one marked invalid.  Before a copy made at its name, look
 * the name up again as unionfs_relookup() does (the caller checks the
 * name and parent did not change).  Returns the new info if the name
 * still shows the dentry's object, or is a lower hard link of it once
 * copied up (the copy-up then links the name to that copy); NULL if it
 * shows another object or none; or an ERR_PTR.
 */
struct unionfs_dentry_info *unionfs_relookup_file(struct dentry *dentry,
						  struct dentry *parent,
						  const struct qstr *name)
{
	struct unionfs_inode_info *ui = UNIONFS_I(d_inode(dentry));
	struct unionfs_dentry_info *di;
	struct inode *real;
	bool have_uino, same;
	u64 ino;

	di = unionfs_lookup_again(parent, name, &ino, &have_uino);
	if (IS_ERR(di))
		return di;
	real = unionfs_dinfo_real(di);
	/* Pairs with the release in unionfs_inode_copied_up(). */
	if (!smp_load_acquire(&ui->bindex))
		same = real == READ_ONCE(ui->lower) ||
		       (!di->upper_positive && real == ui->origin);
	else
		same = !di->upper_positive && real == READ_ONCE(ui->lower) &&
		       di->lower[di->top].bindex == ui->bindex;
	if (!real || !same || (have_uino && ino != d_inode(dentry)->i_ino)) {
		unionfs_free_dinfo(di);
		return NULL;
	}
	/* A lower hard link shows the copy (as unionfs_copy_up_one() finds it). */
	if (!di->upper_positive && real == ui->origin)
		di->alias = d_find_any_alias(READ_ONCE(ui->lower));
	return di;
}

/*
 * @dentry's object was just made on a writable lower branch, as @lower
 * (dir.c: a new name in a directory without an upper part).  Look the
 * name up again, as a lookup would, give the dentry that info and
 * return its inode, numbered as a lookup numbers it, to instantiate;
 * the caller then calls unionfs_name_changed().
 */
struct inode *unionfs_lookup_created(struct dentry *dentry,
				     struct dentry *lower)
{
	struct super_block *sb = dentry->d_sb;
	const struct unionfs_lower *top = NULL;
	struct unionfs_dentry_info *di;
	const struct cred *old_cred;
	struct inode *inode;
	bool have_uino;
	u64 ino;
	int err = 0;

	di = unionfs_lookup_again(dentry->d_parent, &dentry->d_name, &ino,
				  &have_uino);
	if (IS_ERR(di))
		return ERR_CAST(di);
	if (!di->upper_positive && di->top < di->nlower)
		top = &di->lower[di->top];
	/*
	 * The same object, maybe through another dentry (a branch that is a
	 * union itself may have dropped the one it made).
	 */
	if (!top || d_inode(top->path.dentry) != d_inode(lower))
		err = -ESTALE;	/* changed in its branch meanwhile */
	if (!err) {
		lower = top->path.dentry;
		old_cred = override_creds(UNIONFS_SB(sb)->creator_cred);
		err = unionfs_shown_number(sb, di, top->bindex, lower, &ino,
					   NULL);
		revert_creds(old_cred);
	}
	inode = err ? ERR_PTR(err) :
		      unionfs_iget(sb, ino, d_inode(lower), top->bindex);
	if (IS_ERR(inode)) {
		unionfs_free_dinfo(di);
		return inode;
	}
	/* Until the caller instantiates it: see unionfs_name_changing(). */
	di->changing = true;
	unionfs_swap_dinfo(dentry, di);
	return inode;
}

struct dentry *unionfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags)
{
	struct super_block *sb = dir->i_sb;
	struct unionfs_dentry_info *di;
	struct inode *inode = NULL;
	struct dentry *res;
	const struct cred *old_cred;
	struct unionfs_ns_node node = {};
	u32 lower_links = 0;
	struct path real;
	bool have_uino;
	u64 ino;
	int err;

	if (dentry->d_name.len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);

	di = unionfs_alloc_dinfo(UNIONFS_SB(sb)->nbranches);
	if (!di)
		return ERR_PTR(-ENOMEM);
	old_cred = override_creds(UNIONFS_SB(sb)->creator_cred);
	dentry->d_fsdata = di;
	err = unionfs_lookup_branches(dentry->d_parent, &dentry->d_name, di,
				      &ino, &lower_links, &have_uino, &node);
	if (err)
		goto out_free;

	if (have_uino) {
		unionfs_real_path(dentry, &real);
		inode = unionfs_iget(sb, ino, d_inode(real.dentry), 0);
		if (IS_ERR(inode)) {
			err = PTR_ERR(inode);
			goto out_free;
		}
		if (lower_links)
			UNIONFS_I(inode)->lower_links = lower_links;
		if (S_ISDIR(inode->i_mode))
			unionfs_ns_seed(inode, &node);	/* spec 5.2 */
	} else if (di->upper_positive || di->top < di->nlower) {
		unsigned int bindex = unionfs_real_bindex(dentry);

		unionfs_real_path(dentry, &real);
		if (bindex && d_is_reg(real.dentry) &&
		    d_inode(real.dentry)->i_nlink > 1) {
			/* Another name of this object may have been copied. */
			di->alias = unionfs_imap_find_copy(sb, bindex,
							   d_inode(real.dentry),
							   &ino);
			if (di->alias) {
				bindex = 0;
				unionfs_real_path(dentry, &real);
				goto iget;
			}
		}
		err = unionfs_shown_number(sb, di, bindex, real.dentry, &ino,
					   &lower_links);
		if (err)
			goto out_free;
iget:
		inode = unionfs_iget(sb, ino, d_inode(real.dentry), bindex);
		if (IS_ERR(inode)) {
			err = PTR_ERR(inode);
			goto out_free;
		}
		if (!bindex && lower_links)
			UNIONFS_I(inode)->lower_links = lower_links;
	}
	revert_creds(old_cred);
	unionfs_ns_node_free(&node);
	res = d_splice_alias(inode, dentry);
	if (!IS_ERR_OR_NULL(res))
		unionfs_lookup_moved(res, dentry);
	return res;

out_free:
	revert_creds(old_cred);
	unionfs_ns_node_free(&node);
	dentry->d_fsdata = NULL;
	unionfs_free_dinfo(di);
	return ERR_PTR(err);
}
