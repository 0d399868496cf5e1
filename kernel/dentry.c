// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: dentry operations.
 *
 * Every union dentry carries the lower path it was looked up on.  Branches
 * may change behind the union's back (the union does not own them), so a
 * cached dentry is revalidated against the lower dentry it wraps.
 */
#include <linux/slab.h>
#include <linux/namei.h>
#include "unionfs.h"

struct unionfs_dentry_info *unionfs_alloc_dinfo(const struct path *lower)
{
	struct unionfs_dentry_info *di = kzalloc(sizeof(*di), GFP_KERNEL);

	if (di) {
		di->lower = *lower;
		path_get(&di->lower);
	}
	return di;
}

static void unionfs_d_release(struct dentry *dentry)
{
	struct unionfs_dentry_info *di = UNIONFS_D(dentry);

	if (di) {
		path_put(&di->lower);
		kfree(di);
	}
}

/*
 * A negative union dentry goes stale when its lower dentry became positive
 * (a file created in the branch directly); a positive one when the lower
 * dentry was unlinked or renamed away, or now holds another inode.  Lower
 * filesystems that revalidate themselves (network filesystems) are asked.
 */
static int unionfs_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct unionfs_dentry_info *di = READ_ONCE(dentry->d_fsdata);
	struct dentry *lower;
	struct inode *inode;

	if (!di)
		return 1;
	lower = di->lower.dentry;
	if (d_unhashed(lower))
		return 0;
	inode = d_inode_rcu(dentry);
	if (!inode)
		return d_is_negative(lower);
	if (d_inode_rcu(lower) != unionfs_lower_inode(inode))
		return 0;
	if (lower->d_flags & DCACHE_OP_REVALIDATE) {
		if (flags & LOOKUP_RCU)
			return -ECHILD;
		return lower->d_op->d_revalidate(lower, flags);
	}
	return 1;
}

const struct dentry_operations unionfs_dops = {
	.d_release	= unionfs_d_release,
	.d_revalidate	= unionfs_d_revalidate,
};
