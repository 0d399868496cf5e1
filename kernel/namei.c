// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: lookup.
 */
#include <linux/namei.h>
#include <linux/slab.h>
#include "unionfs.h"

struct dentry *unionfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags)
{
	const struct path *parent = unionfs_lower_path(dentry->d_parent);
	struct unionfs_dentry_info *di;
	struct path lower;
	struct inode *inode = NULL;
	struct dentry *ret;

	if (dentry->d_name.len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);

	lower.mnt = parent->mnt;
	lower.dentry = lookup_one_unlocked(unionfs_mnt_idmap(parent->mnt),
					   dentry->d_name.name, parent->dentry,
					   dentry->d_name.len);
	if (IS_ERR(lower.dentry))
		return ERR_CAST(lower.dentry);

	di = unionfs_alloc_dinfo(&lower);
	if (!di) {
		ret = ERR_PTR(-ENOMEM);
		goto out;
	}
	if (d_is_positive(lower.dentry)) {
		inode = unionfs_iget(dir->i_sb, d_inode(lower.dentry));
		if (IS_ERR(inode)) {
			path_put(&di->lower);
			kfree(di);
			ret = ERR_CAST(inode);
			goto out;
		}
	}
	dentry->d_fsdata = di;
	ret = d_splice_alias(inode, dentry);
out:
	dput(lower.dentry);
	return ret;
}
