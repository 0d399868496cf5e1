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
 */
#include <linux/cred.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include "unionfs.h"

static int unionfs_lookup_branches(struct dentry *dentry,
				   struct unionfs_dentry_info *di)
{
	const struct unionfs_dentry_info *pdi = UNIONFS_D(dentry->d_parent);
	const struct qstr *name = &dentry->d_name;
	bool found = false;
	unsigned int i;

	di->top = pdi->nlower;	/* negative until something is found */
	for (i = 0; i < pdi->nlower; i++) {
		const struct unionfs_lower *pl = &pdi->lower[i];
		struct unionfs_lower *l = &di->lower[di->nlower];
		struct dentry *ld;

		if (!pl->positive || !d_can_lookup(pl->path.dentry))
			continue;
		ld = lookup_one_unlocked(unionfs_mnt_idmap(pl->path.mnt),
					 name->name, pl->path.dentry, name->len);
		if (IS_ERR(ld))
			return PTR_ERR(ld);
		if (found && d_is_positive(ld) && !d_is_dir(ld)) {
			/* A non-directory below a directory is hidden. */
			dput(ld);
			break;
		}
		l->path.mnt = mntget(pl->path.mnt);
		l->path.dentry = ld;
		l->bindex = pl->bindex;
		l->positive = d_is_positive(ld);
		di->nlower++;
		if (!l->positive || found)
			continue;
		found = true;
		di->top = di->nlower - 1;
		if (!d_is_dir(ld))
			break;
	}
	if (!found)
		di->top = di->nlower;
	return 0;
}

struct dentry *unionfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags)
{
	struct super_block *sb = dir->i_sb;
	const struct unionfs_lower *top;
	struct unionfs_dentry_info *di;
	struct inode *inode = NULL;
	const struct cred *old_cred;
	int err;

	if (dentry->d_name.len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);

	di = unionfs_alloc_dinfo(UNIONFS_D(dentry->d_parent)->nlower);
	if (!di)
		return ERR_PTR(-ENOMEM);
	old_cred = override_creds(UNIONFS_SB(sb)->creator_cred);
	err = unionfs_lookup_branches(dentry, di);
	revert_creds(old_cred);
	if (err)
		goto out_free;

	dentry->d_fsdata = di;
	top = unionfs_top_lower(dentry);
	if (top) {
		struct inode *lower = d_inode(top->path.dentry);
		u64 ino;

		err = unionfs_uino(sb, top->bindex, lower->i_ino, &ino);
		if (err) {
			dentry->d_fsdata = NULL;
			goto out_free;
		}
		inode = unionfs_iget(sb, ino, lower, top->bindex);
		if (IS_ERR(inode)) {
			dentry->d_fsdata = NULL;
			err = PTR_ERR(inode);
			goto out_free;
		}
	}
	return d_splice_alias(inode, dentry);

out_free:
	unionfs_free_dinfo(di);
	return ERR_PTR(err);
}
