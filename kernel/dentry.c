// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: dentry operations.
 *
 * Every union dentry carries the dentries its lookup found on each branch
 * (see struct unionfs_dentry_info).  Branches may change behind the
 * union's back, since the union does not own them, so a cached union
 * dentry is revalidated against them: a lower name that appeared,
 * disappeared or now names another object makes the union look it up
 * again.
 */
#include <linux/slab.h>
#include <linux/namei.h>
#include "unionfs.h"

struct unionfs_dentry_info *unionfs_alloc_dinfo(unsigned int nlower)
{
	struct unionfs_dentry_info *di;

	di = kzalloc(struct_size(di, lower, nlower), GFP_KERNEL);
	if (di) {
		di->nlower = 0;		/* entries are counted as they are filled */
		di->top = 0;
	}
	return di;
}

void unionfs_free_dinfo(struct unionfs_dentry_info *di)
{
	unsigned int i;

	if (!di)
		return;
	for (i = 0; i < di->nlower; i++)
		path_put(&di->lower[i].path);
	dput(di->upper);
	dput(di->alias);
	/* d_revalidate in RCU walk may still read it (dentries are RCU-freed). */
	kfree_rcu(di, rcu);
}

/*
 * The name now has an object on the upper branch (create, copy-up):
 * publish its upper dentry.  @upper is the dentry the lookup kept, turned
 * positive in place, or a new one when the parent had no upper directory
 * at lookup; the reference is taken over.
 */
void unionfs_set_upper(struct dentry *dentry, struct dentry *upper)
{
	struct unionfs_dentry_info *di = UNIONFS_D(dentry);

	di->upper_positive = d_is_positive(upper);
	if (di->upper == upper) {
		dput(upper);
		return;
	}
	WARN_ON(di->upper);
	/* Pairs with smp_load_acquire in unionfs_upper(): a complete dentry. */
	smp_store_release(&di->upper, upper);
}

static void unionfs_d_release(struct dentry *dentry)
{
	unionfs_free_dinfo(UNIONFS_D(dentry));
}

/*
 * A removed name is not kept in the dcache once unused: its negative
 * dentry would hold the upper dentry, and so the unlinked upper inode
 * and its blocks, until memory pressure (a full upper branch stayed
 * full after rm).
 */
static int unionfs_d_delete(const struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = READ_ONCE(dentry->d_fsdata);

	return di && READ_ONCE(di->invalid);
}

static int unionfs_lower_changed(const struct unionfs_lower *l)
{
	struct dentry *d = l->path.dentry;

	if (!l->positive)
		return !d_is_negative(d);
	return d_unhashed(d) || d_is_negative(d);
}

static int unionfs_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct unionfs_dentry_info *di = READ_ONCE(dentry->d_fsdata);
	const struct unionfs_lower *top;
	struct dentry *lower, *upper;
	struct inode *inode;
	unsigned int i;

	if (!di)
		return 1;
	if (READ_ONCE(di->invalid))
		return 0;
	/* Being made on the upper branch: see unionfs_name_changing(). */
	if (smp_load_acquire(&di->changing))
		return 1;
	/* Pairs with the release in unionfs_set_upper(). */
	upper = smp_load_acquire(&di->upper);
	if (upper && (d_unhashed(upper) ||
		      d_is_positive(upper) != READ_ONCE(di->upper_positive)))
		return 0;
	for (i = 0; i < di->nlower; i++)
		if (unionfs_lower_changed(&di->lower[i]))
			return 0;

	inode = d_inode_rcu(dentry);
	top = unionfs_top_lower(dentry);
	if (upper && d_is_positive(upper)) {
		if (!inode)
			return 0;
		lower = upper;
	} else if (READ_ONCE(di->alias)) {
		if (!inode)
			return 0;
		lower = di->alias;	/* a lower hard link showing its copy */
	} else {
		if (!inode || !top)
			return !inode && !top;
		lower = top->path.dentry;
	}
	if (d_inode_rcu(lower) != UNIONFS_I(inode)->lower)
		return 0;
	/* Network filesystems under a branch revalidate themselves. */
	if (lower->d_flags & DCACHE_OP_REVALIDATE) {
		if (flags & LOOKUP_RCU)
			return -ECHILD;
		return lower->d_op->d_revalidate(lower, flags);
	}
	return 1;
}

const struct dentry_operations unionfs_dops = {
	.d_delete	= unionfs_d_delete,
	.d_release	= unionfs_d_release,
	.d_revalidate	= unionfs_d_revalidate,
};
