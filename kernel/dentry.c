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

	/*
	 * Freed with its dentry, which the dcache shrinker frees: so the
	 * memory is reclaimable, and counts as such, as the dentry does.
	 */
	di = kzalloc(struct_size(di, lower, nlower),
		     GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE);
	if (di) {
		di->cap = nlower;
		di->nlower = 0;		/* entries are counted as they are filled */
		di->top = 0;
	}
	return di;
}

/* Free @di and the infos it replaced (unionfs_swap_dinfo()). */
void unionfs_free_dinfo(struct unionfs_dentry_info *di)
{
	struct unionfs_dentry_info *next;
	unsigned int i;

	for (; di; di = next) {
		next = di->next_old;
		for (i = 0; i < di->nlower; i++)
			path_put(&di->lower[i].path);
		dput(di->upper);
		dput(di->alias);
		/* RCU-walk revalidation may still read it (dentries are RCU-freed). */
		kfree_rcu(di, rcu);
	}
}

/*
 * @dentry takes @new in place of its info (a branch change, remount.c; a
 * new lookup before a copy, copyup.c), with its inode's copyup_lock
 * held.  The old info is kept, chained to the new one, until the dentry
 * goes: whoever still uses it holds the dentry.  @new's copy_swaps is
 * its own (0, or 1 for a copy's) plus the chain's.
 */
void unionfs_swap_dinfo(struct dentry *dentry, struct unionfs_dentry_info *new)
{
	new->next_old = dentry->d_fsdata;
	new->copy_swaps += new->next_old->copy_swaps;
	/* Pairs with the READ_ONCE of d_fsdata in the lockless readers. */
	smp_store_release(&dentry->d_fsdata, new);
}

/*
 * Do two infos of a name hold the same branch dentries (a new lookup
 * found what the old one did)?  Their flags are not compared.
 */
bool unionfs_dinfo_same(const struct unionfs_dentry_info *a,
			const struct unionfs_dentry_info *b)
{
	unsigned int i;

	if (a->upper != b->upper || a->upper_positive != b->upper_positive ||
	    a->nlower != b->nlower || a->top != b->top)
		return false;
	for (i = 0; i < a->nlower; i++) {
		const struct unionfs_lower *x = &a->lower[i], *y = &b->lower[i];

		if (x->path.dentry != y->path.dentry ||
		    x->path.mnt != y->path.mnt || x->bindex != y->bindex ||
		    x->positive != y->positive || x->parent != y->parent ||
		    x->hash_len != y->hash_len)
			return false;
	}
	return true;
}

/*
 * Is @dentry still at @name in @parent, where a lookup without the
 * parent's lock (unionfs_relookup(), unionfs_relookup_file()) found it?
 */
bool unionfs_dentry_at(struct dentry *dentry, const struct dentry *parent,
		       const struct qstr *name)
{
	bool same;

	spin_lock(&dentry->d_lock);
	same = dentry->d_parent == parent &&
	       dentry->d_name.hash_len == name->hash_len &&
	       !memcmp(dentry->d_name.name, name->name, name->len);
	spin_unlock(&dentry->d_lock);
	return same;
}

/* The branch object @di shows: its upper one, else its top lower one. */
struct inode *unionfs_dinfo_real(const struct unionfs_dentry_info *di)
{
	if (di->upper_positive)
		return d_inode(di->upper);
	return di->top < di->nlower ? d_inode(di->lower[di->top].path.dentry) :
				      NULL;
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

/*
 * A new info for a name whose object was just copied to the branch of
 * @di's entry @k, a negative one, as @ld (copyup.c): what a lookup would
 * find now, without one.  Entries below @k are left out (a lookup stops
 * at a non-directory).  NULL if out of memory.
 */
struct unionfs_dentry_info *
unionfs_dinfo_shown_at(const struct unionfs_dentry_info *di, unsigned int k,
		       struct dentry *ld)
{
	struct unionfs_dentry_info *n = unionfs_alloc_dinfo(di->cap);
	unsigned int i;

	if (!n)
		return NULL;
	n->upper = dget(di->upper);
	n->upper_positive = di->upper_positive;
	n->invalid = READ_ONCE(di->invalid);
	n->removed = READ_ONCE(di->removed);
	n->ns_flags = di->ns_flags;
	n->gen = di->gen;
	for (i = 0; i < k; i++) {
		n->lower[i] = di->lower[i];
		path_get(&n->lower[i].path);
	}
	unionfs_lower_set(&n->lower[k], di->lower[k].path.mnt, dget(ld),
			  di->lower[k].bindex);
	n->nlower = k + 1;
	n->top = k;
	return n;
}

/* @l is @ld (its reference taken over), found on branch @bindex. */
void unionfs_lower_set(struct unionfs_lower *l, struct vfsmount *mnt,
		       struct dentry *ld, unsigned int bindex)
{
	l->path.mnt = mntget(mnt);
	l->path.dentry = ld;
	l->bindex = bindex;
	l->positive = d_is_positive(ld);
	l->parent = ld->d_parent;
	l->hash_len = ld->d_name.hash_len;
}

/*
 * The VFS keeps one dentry per directory: a lookup that finds a
 * directory whose union dentry at another name is still in use (a file
 * open below it, say) moves that dentry here (d_splice_alias) and drops
 * the new one.  That happens after the directory was renamed in its
 * branch.  @alias holds what its lookup found at the old name.  If this
 * lookup (@found) found the same branch directories, it is right here
 * too: it takes this name's upper dentry (negative: it is not on the
 * upper branch) and where its branch dentries are now.  If not, it is
 * looked up again at its next use, until it is no longer in use.
 * Copy-up, the only user of a negative upper dentry, is held off.
 */
void unionfs_lookup_moved(struct dentry *alias, struct dentry *dentry)
{
	struct unionfs_dentry_info *di = UNIONFS_D(alias);
	struct unionfs_dentry_info *found = UNIONFS_D(dentry);
	struct inode *inode = d_inode(alias);
	struct dentry *old = NULL;
	unsigned int i;
	bool same;

	if (!di || !inode)
		return;
	if (READ_ONCE(di->gen) != found->gen) {
		unionfs_refresh_dir(alias, dentry);
		return;
	}
	mutex_lock(&UNIONFS_I(inode)->copyup_lock);
	same = di->nlower == found->nlower && di->top == found->top &&
	       di->ns_flags == found->ns_flags && !unionfs_upper(alias) &&
	       !(found->upper && d_is_positive(found->upper));
	for (i = 0; same && i < di->nlower; i++)
		same = di->lower[i].path.dentry == found->lower[i].path.dentry &&
		       di->lower[i].bindex == found->lower[i].bindex;
	if (!same) {
		WRITE_ONCE(di->invalid, true);
		goto out;
	}
	for (i = 0; i < di->nlower; i++) {
		WRITE_ONCE(di->lower[i].parent, found->lower[i].parent);
		WRITE_ONCE(di->lower[i].hash_len, found->lower[i].hash_len);
	}
	WRITE_ONCE(di->gen, found->gen);
	if (di->upper != found->upper) {
		old = di->upper;
		/* Dentries are freed after RCU: revalidation may still read it. */
		smp_store_release(&di->upper, dget(found->upper));
	}
out:
	mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
	dput(old);
}

/*
 * A directory in use (a working directory, an open directory) keeps its
 * dentry across a remount that changed the branches (remount.c): its
 * next lookup finds it again, under the new set, and the VFS moves the
 * old dentry (@alias) to the new one's place.  The alias takes what this
 * lookup found (@dentry's info, if newer and still of the same object),
 * so whoever uses the directory sees the new set from now on.  Only if
 * nothing holds the directory's lock (a listing, a lookup or a change in
 * it reads its info more than once): a trylock, as the caller may hold
 * it (a rename into the directory's parent); else a later revalidation
 * does it (unionfs_d_refresh()).  copyup_lock keeps copy-up out.
 */
void unionfs_refresh_dir(struct dentry *alias, struct dentry *dentry)
{
	struct unionfs_dentry_info *found = dentry->d_fsdata;
	struct inode *inode = d_inode(alias);
	struct unionfs_dentry_info *old;

	if (found->gen != READ_ONCE(UNIONFS_SB(alias->d_sb)->br_gen) ||
	    !inode_trylock(inode))
		return;
	mutex_lock(&UNIONFS_I(inode)->copyup_lock);
	old = alias->d_fsdata;
	if (old->gen != found->gen && !READ_ONCE(old->changing) &&
	    unionfs_dinfo_real(found) == READ_ONCE(UNIONFS_I(inode)->lower)) {
		unionfs_swap_dinfo(alias, found);
		dentry->d_fsdata = NULL;	/* the VFS drops it: not freed */
	}
	mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
	inode_unlock(inode);
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

/*
 * Has the name changed in its branch since the lookup?  An object
 * created at it, removed from it, or renamed away (the branch dentry
 * moves with its object: another parent or another name; a negative
 * dentry renamed over is unhashed).  Read without locks in RCU walk: a
 * torn read only makes the union look the name up again.
 */
static int unionfs_lower_changed(const struct unionfs_lower *l)
{
	struct dentry *d = l->path.dentry;

	if (d_unhashed(d) || READ_ONCE(d->d_parent) != l->parent ||
	    READ_ONCE(d->d_name.hash_len) != l->hash_len)
		return 1;
	return l->positive ? d_is_negative(d) : !d_is_negative(d);
}

/*
 * A directory shown from lower branches only, whose top part a branch
 * change moved (unionfs_relookup() checked that its number stays):
 * its inode shows the new top part of @new from now on.  With the
 * inode lock and copyup_lock held; false if it cannot.
 */
static bool unionfs_dir_moved(struct dentry *dentry,
			      const struct unionfs_dentry_info *new)
{
	struct inode *inode = d_inode(dentry);
	const struct unionfs_lower *top;

	if (!S_ISDIR(inode->i_mode) || !UNIONFS_I(inode)->bindex ||
	    new->upper_positive || new->alias || new->top >= new->nlower)
		return false;
	top = &new->lower[new->top];
	return !unionfs_inode_moved(inode, d_inode(top->path.dentry),
				    top->bindex, top->path.mnt);
}

/*
 * A dentry found before a remount changed the branches.  Where it still
 * shows the same object it takes a new lookup's info in place, so that
 * it stays hashed (a directory with a mount below it keeps it, as
 * d_invalidate() would detach it); where not, or for a negative dentry,
 * it is looked up again (0).  Below a directory still in the old set (a
 * working directory nobody has looked up since) it keeps that set's
 * view, as its parent does.  As in unionfs_refresh_dir(), only if its
 * inode lock is free (else at a later revalidation); the name and parent
 * the lookup used must still be the dentry's.
 */
static int unionfs_d_refresh(struct dentry *dentry)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	struct inode *inode = d_inode(dentry);
	struct unionfs_dentry_info *new, *old;
	struct name_snapshot name;
	struct dentry *parent;
	bool same;
	int ret = 1;

	if (!inode || IS_ROOT(dentry))
		return 0;
	parent = dget_parent(dentry);
	if (READ_ONCE(UNIONFS_D(parent)->gen) != READ_ONCE(sbi->br_gen) ||
	    !inode_trylock(inode)) {
		dput(parent);
		return 1;
	}
	take_dentry_name_snapshot(&name, dentry);
	new = unionfs_relookup(dentry, parent, &name.name);
	if (IS_ERR_OR_NULL(new)) {
		ret = new ? PTR_ERR(new) : 0;
		goto out;
	}
	mutex_lock(&UNIONFS_I(inode)->copyup_lock);
	old = dentry->d_fsdata;
	same = unionfs_dentry_at(dentry, parent, &name.name);
	/* A copy-up or rename since the lookup: it was for before them. */
	if (same && old->gen != new->gen && !READ_ONCE(old->changing) &&
	    (unionfs_dinfo_real(new) == UNIONFS_I(inode)->lower ||
	     unionfs_dir_moved(dentry, new))) {
		unionfs_swap_dinfo(dentry, new);
		new = NULL;
	}
	mutex_unlock(&UNIONFS_I(inode)->copyup_lock);
	unionfs_free_dinfo(new);
out:
	release_dentry_name_snapshot(&name);
	inode_unlock(inode);
	dput(parent);
	return ret;
}

/*
 * A branch dentry of a filesystem that revalidates its own (NFS, another
 * union: a remount of an inner union changes what its cached names
 * show): for the object a positive name shows, and for every branch
 * dentry of a negative name (a name absent from an inner union may be
 * there after its remount), in RCU walk as well: such filesystems
 * handle LOOKUP_RCU themselves.
 */
static int unionfs_revalidate_real(struct dentry *d, unsigned int flags)
{
	if (!(d->d_flags & DCACHE_OP_REVALIDATE))
		return 1;
	return d->d_op->d_revalidate(d, flags);
}

static int unionfs_revalidate_branches(struct unionfs_dentry_info *di,
				       struct dentry *upper, unsigned int flags)
{
	unsigned int i;
	int ret = upper ? unionfs_revalidate_real(upper, flags) : 1;

	for (i = 0; ret > 0 && i < di->nlower; i++)
		ret = unionfs_revalidate_real(di->lower[i].path.dentry, flags);
	return ret;
}

static int unionfs_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	/* Pairs with unionfs_swap_dinfo(): the inode is moved before. */
	struct unionfs_dentry_info *di = smp_load_acquire(&dentry->d_fsdata);
	const struct unionfs_lower *top;
	struct dentry *lower, *upper;
	struct inode *inode;
	unsigned int i;

	if (!di)
		return 1;
	if (READ_ONCE(di->invalid))
		return 0;
	/* A remount changed the branches since the lookup (remount.c). */
	if (READ_ONCE(di->gen) != READ_ONCE(UNIONFS_SB(dentry->d_sb)->br_gen)) {
		if (flags & LOOKUP_RCU)
			return -ECHILD;
		return unionfs_d_refresh(dentry);
	}
	/* Being made on the upper branch: see unionfs_name_changing(). */
	if (smp_load_acquire(&di->changing))
		return 1;
	/* Pairs with the release in unionfs_set_upper(). */
	upper = smp_load_acquire(&di->upper);
	if (upper && (d_unhashed(upper) ||
		      d_is_positive(upper) != READ_ONCE(di->upper_positive)))
		return 0;
	/*
	 * Direct edits of the branches (udba=reval): a name created,
	 * removed or renamed in any branch.  udba=none trusts that only
	 * the union changes them; what the union changes itself is
	 * checked above and below either way.
	 */
	if (!READ_ONCE(UNIONFS_SB(dentry->d_sb)->udba_none))
		for (i = 0; i < di->nlower; i++)
			if (unionfs_lower_changed(&di->lower[i]))
				return 0;

	inode = d_inode_rcu(dentry);
	top = di->top < di->nlower ? &di->lower[di->top] : NULL;
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
			return !inode && !top ?
				unionfs_revalidate_branches(di, upper, flags) : 0;
		lower = top->path.dentry;
	}
	if (d_inode_rcu(lower) != UNIONFS_I(inode)->lower)
		return 0;
	/*
	 * Only the object shown: a 0 for a hidden or negative branch
	 * dentry would make the VFS invalidate this one, and detach what
	 * is mounted on it, for a change that does not concern it.
	 */
	return unionfs_revalidate_real(lower, flags);
}

const struct dentry_operations unionfs_dops = {
	.d_delete	= unionfs_d_delete,
	.d_release	= unionfs_d_release,
	.d_revalidate	= unionfs_d_revalidate,
};
