// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: changing the branch set of a mounted union, by remount
 * with add=, del=, mode= or a new dirs= (docs/odf-format.md 3.5).
 *
 * The new set is worked out and checked whole before anything changes:
 * a remount with one bad change changes nothing.  Then the ODF records
 * it in one durable step, and only then does the union use it:
 *  - branch slots never move (unionfs.h): an added branch takes a new
 *    slot, a removed one is marked gone and stays referenced until
 *    unmount, so a branch index kept in a dentry or inode stays valid;
 *  - the root gets a dentry info for the new set and the branch
 *    generation goes up: every other dentry is looked up again at its
 *    next revalidation, in the new set.  Where it still shows the same
 *    object it takes the new info in place and stays hashed, so mounts
 *    on it stay (unionfs_d_refresh()); where not, it is dropped.  An
 *    open file keeps its dentry and real file.  del= is EBUSY while a
 *    file of that branch is open or mapped through the union, so no
 *    I/O goes to a removed branch.
 * Union inode numbers come from branch ids and branch inode numbers
 * (section 4), whiteouts and redirects are keyed by union directory,
 * readdir states are stamped per branch id: all stay valid.  A merged
 * directory's state is reconciled at its next listing: names of an
 * added branch are appended, those of a removed one tombstoned, every
 * other offset is kept.  A lower-only directory numbered after a
 * removed branch's part takes another number, and its state moves
 * with it (unionfs_rd_rekey()).
 *
 * A lower branch may be writable (mode=, add=, dirs=): its objects are
 * changed in place; making it read-only again is EBUSY while a file of
 * it is open for writing, or mapped shared and writable, through the
 * union.
 *
 * Not yet (issue 11): a new first branch (rotating the writable branch),
 * refused with a clear line.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/dcache.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include "unionfs.h"

/* A remount's view of the branches: the slots, then the new order. */
struct unionfs_newset {
	struct unionfs_branch *br;	/* copy of the slots, plus new ones */
	unsigned int nslots;		/* slots used in @br */
	struct unionfs_order order;	/* the new set, by slot */
	bool changed;
};

/* The slot of branch @path (as given) in set @o, or -1. */
static int unionfs_find_in(const struct unionfs_newset *ns,
			   const struct unionfs_order *o, const char *path)
{
	struct path p;
	unsigned int k;
	int found = -1;

	/* By name first: a branch whose mount went away can still go. */
	for (k = 0; k < o->n && found < 0; k++)
		if (!strcmp(ns->br[o->idx[k]].name, path))
			found = o->idx[k];
	if (found >= 0 || kern_path(path, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &p))
		return found;
	for (k = 0; k < o->n && found < 0; k++) {
		const struct path *r = &ns->br[o->idx[k]].root;

		if (r->dentry == p.dentry && r->mnt->mnt_sb == p.mnt->mnt_sb)
			found = o->idx[k];
	}
	path_put(&p);
	return found;
}

static int unionfs_newset_find(const struct unionfs_newset *ns,
			       const char *path)
{
	return unionfs_find_in(ns, &ns->order, path);
}

static void unionfs_newset_remove(struct unionfs_newset *ns, unsigned int k)
{
	memmove(&ns->order.idx[k], &ns->order.idx[k + 1],
		ns->order.n - k - 1);
	ns->order.n--;
	ns->changed = true;
}

/* Resolve and clone a new branch @spec into a new slot at priority @pos. */
static int unionfs_newset_add(struct fs_context *fc, struct super_block *sb,
			      struct unionfs_newset *ns,
			      const struct unionfs_branch_spec *spec,
			      unsigned int pos)
{
	struct unionfs_branch *br;
	struct vfsmount *mnt;
	int err;

	if (unionfs_newset_find(ns, spec->path) >= 0)
		return invalfc(fc, "add=%s: it is a branch of this union already",
			       spec->path);
	if (ns->nslots >= UNIONFS_MAX_BRANCHES || ns->order.n >= ODF_BRANCH_SLOTS)
		return invalfc(fc, "add=%s: a union has at most %u branches (slots are reused only after unmount)",
			       spec->path, UNIONFS_MAX_BRANCHES);
	if (pos == 0)
		return invalfc(fc, "add=0:%s: a new first branch (rotating the writable branch) is not supported yet",
			       spec->path);
	if (pos > ns->order.n)
		return invalfc(fc, "add=%u:%s: the union has %u branches; the position can be 1 to %u",
			       pos, spec->path, ns->order.n, ns->order.n);
	br = &ns->br[ns->nslots];
	err = unionfs_resolve_branch(fc, spec, br);
	if (err) {
		path_put(&br->root);
		kfree(br->name);
		memset(br, 0, sizeof(*br));
		return err;
	}
	ns->nslots++;		/* unionfs_newset_free() puts it from here */
	br->slot = -1;
	if (br->root.mnt->mnt_sb == sb)
		return invalfc(fc, "add=%s: a union cannot be a branch of itself",
			       spec->path);
	if (br->root.mnt->mnt_sb->s_stack_depth + 1 > sb->s_stack_depth)
		return invalfc(fc, "add=%s: it is stacked deeper than the union's branches at mount; unmount and mount with it",
			       spec->path);
	mnt = clone_private_mount(&br->root);
	if (IS_ERR(mnt)) {
		errorfc(fc, "cannot use branch '%s' (error %ld): it must be a directory of a mount in this mount namespace, not unbindable",
			spec->path, PTR_ERR(mnt));
		return PTR_ERR(mnt);
	}
	mntput(br->root.mnt);
	br->root.mnt = mnt;
	br->cloned = true;
	memmove(&ns->order.idx[pos + 1], &ns->order.idx[pos],
		ns->order.n - pos);
	ns->order.idx[pos] = ns->nslots - 1;
	ns->order.n++;
	ns->changed = true;
	return 0;
}

/* Drop what a failed remount resolved: the new slots only. */
static void unionfs_newset_free(struct unionfs_sb_info *sbi,
				struct unionfs_newset *ns)
{
	unsigned int i;

	for (i = sbi->nbranches; i < ns->nslots; i++)
		unionfs_put_branch(&ns->br[i]);
	kfree(ns->br);
}

/* dirs= naming another set: the same as the add=/del=/mode= it means. */
static int unionfs_newset_dirs(struct fs_context *fc, struct super_block *sb,
			       struct unionfs_newset *ns,
			       const struct unionfs_options *opts)
{
	struct unionfs_order old = ns->order;
	unsigned int i;
	int err, slot;

	if (opts->nbranches == old.n) {
		for (i = 0; i < old.n; i++)
			if (strcmp(opts->branches[i].path,
				   ns->br[old.idx[i]].name) ||
			    opts->branches[i].mode != ns->br[old.idx[i]].mode)
				break;
		if (i == old.n)
			return 0;	/* mount(8) passing /proc/mounts back */
	}
	ns->order.n = 0;
	ns->changed = true;
	for (i = 0; i < opts->nbranches; i++) {
		const struct unionfs_branch_spec *spec = &opts->branches[i];

		/* Found among the branches mounted now, not the new ones. */
		slot = unionfs_find_in(ns, &old, spec->path);
		if (slot >= 0) {
			unsigned int k;

			for (k = 0; k < ns->order.n; k++)
				if (ns->order.idx[k] == slot)
					return invalfc(fc, "dirs= names branch '%s' twice",
						       spec->path);
			ns->order.idx[ns->order.n++] = slot;
			ns->br[slot].mode = spec->mode;
			continue;
		}
		err = unionfs_newset_add(fc, sb, ns, spec, ns->order.n);
		if (err)
			return err;
		ns->br[ns->nslots - 1].mode = spec->mode;
	}
	return 0;
}

static int unionfs_newset_ops(struct fs_context *fc, struct super_block *sb,
			      struct unionfs_newset *ns,
			      const struct unionfs_options *opts)
{
	unsigned int i, k;
	int err, slot;

	for (i = 0; i < opts->nops; i++) {
		const struct unionfs_branch_op *op = &opts->ops[i];

		if (op->kind == UNIONFS_BROP_ADD) {
			err = unionfs_newset_add(fc, sb, ns, &op->spec,
						 op->pos < 0 ? 1 : op->pos);
			if (err)
				return err;
			ns->br[ns->nslots - 1].mode = op->spec.mode;
			continue;
		}
		slot = unionfs_newset_find(ns, op->spec.path);
		if (slot < 0)
			return invalfc(fc, "%s=%s: not a branch of this union",
				       op->kind == UNIONFS_BROP_DEL ? "del" : "mode",
				       op->spec.path);
		if (op->kind == UNIONFS_BROP_MODE) {
			if (ns->br[slot].mode != op->spec.mode)
				ns->changed = true;
			ns->br[slot].mode = op->spec.mode;
			continue;
		}
		for (k = 0; ns->order.idx[k] != slot; k++)
			;
		unionfs_newset_remove(ns, k);
	}
	return 0;
}

/* Branch trees must not nest, nor hold the ODF (as at mount). */
static bool unionfs_trees_overlap(const struct path *a, const struct path *b)
{
	return a->mnt->mnt_sb == b->mnt->mnt_sb &&
	       (is_subdir(a->dentry, b->dentry) ||
		is_subdir(b->dentry, a->dentry));
}

/* The rules every set must keep. */
static int unionfs_newset_check(struct fs_context *fc,
				struct unionfs_sb_info *sbi,
				struct unionfs_newset *ns)
{
	const struct unionfs_order *o = &ns->order;
	unsigned int i, k;

	if (!o->n || o->idx[0] != 0)
		return invalfc(fc, "the first branch '%s' cannot be removed or moved by remount: rotating the writable branch is not supported yet",
			       ns->br[0].name);
	if (sbi->has_upper && ns->br[0].mode != UNIONFS_BR_RW)
		return invalfc(fc, "the first branch '%s' must stay rw in a read-write union",
			       ns->br[0].name);
	for (k = 1; k < o->n; k++) {
		const struct unionfs_branch *a = &ns->br[o->idx[k]];

		if (sbi->has_upper && a->mode == UNIONFS_BR_RW &&
		    __mnt_is_readonly(a->root.mnt))
			return unionfs_rw_branch_readonly(fc, a);
	}
	for (k = 0; k < o->n; k++) {
		const struct unionfs_branch *a = &ns->br[o->idx[k]];

		for (i = k + 1; i < o->n; i++) {
			const struct unionfs_branch *b = &ns->br[o->idx[i]];

			if (unionfs_trees_overlap(&a->root, &b->root))
				return invalfc(fc, "branches '%s' and '%s' overlap: one is inside the other",
					       a->name, b->name);
		}
		if (unionfs_trees_overlap(&a->root, &sbi->odf))
			return invalfc(fc, "ODF '%s' and branch '%s' overlap: one is inside the other",
				       sbi->odf_name, a->name);
	}
	return 0;
}

/*
 * Lower branches the new set makes read-only: no file of theirs may be
 * open for writing through the union (they are written in place).  As
 * for branches that leave, each is marked first, so an open for writing
 * that counts itself after this check sees the mark and fails with
 * EROFS (unionfs_count_real_open()); one counted before is seen here:
 * EBUSY.  @on false clears the marks (the remount failed or is done).
 */
static int unionfs_newset_going_ro(struct fs_context *fc,
				   struct unionfs_sb_info *sbi,
				   struct unionfs_newset *ns, bool on)
{
	unsigned int i;
	bool busy;

	for (i = 1; i < sbi->nbranches; i++) {
		struct unionfs_branch *br = &sbi->branches[i];

		if (!on) {
			WRITE_ONCE(br->going_ro, false);
			continue;
		}
		if (br->gone || br->mode != UNIONFS_BR_RW ||
		    ns->br[i].mode == UNIONFS_BR_RW)
			continue;
		WRITE_ONCE(br->going_ro, true);
		/* Pairs with the barrier in unionfs_count_real_open(). */
		smp_mb();
		busy = atomic_read(&br->write_files);
		/* Pairs with the barrier in unionfs_count_real_open(). */
		smp_rmb();
		if (busy || unionfs_branch_mapped(sbi, br, true)) {
			errorfc(fc, "cannot make branch '%s' read-only: files of it are open for writing, mapped shared and writable, or being changed, through the union",
				br->name);
			unionfs_newset_going_ro(fc, sbi, ns, false);
			return -EBUSY;
		}
	}
	return 0;
}

/*
 * Branches that leave: no file of theirs may be open through the union.
 * Each is marked leaving first, so an open that counts itself after
 * this check sees the mark and fails (unionfs_count_open()); one that
 * counted itself before is seen here: EBUSY.
 */
static int unionfs_newset_leave(struct fs_context *fc,
				struct unionfs_sb_info *sbi,
				struct unionfs_newset *ns, bool leaving)
{
	const struct unionfs_order *o = &ns->order;
	unsigned int i, k;
	bool busy;

	for (i = 0; i < sbi->nbranches; i++) {
		if (sbi->branches[i].gone)
			continue;
		for (k = 0; k < o->n && o->idx[k] != i; k++)
			;
		if (k < o->n)
			continue;
		WRITE_ONCE(sbi->branches[i].leaving, leaving);
		if (!leaving)
			continue;
		/* Pairs with the barrier in unionfs_count_open(). */
		smp_mb();
		/* Changes in place count as writers, not as open files. */
		busy = atomic_read(&sbi->branches[i].open_files) ||
		       atomic_read(&sbi->branches[i].write_files);
		/* Pairs with the barrier in unionfs_count_real_open(). */
		smp_rmb();
		if (busy ||
		    unionfs_branch_mapped(sbi, &sbi->branches[i], false)) {
			errorfc(fc, "cannot remove branch '%s': files of it are open or mapped through the union",
				sbi->branches[i].name);
			unionfs_newset_leave(fc, sbi, ns, false);
			return -EBUSY;
		}
	}
	return 0;
}

/*
 * Use the new set: the ODF has it.  Nothing here can fail: the root's
 * new info (@di) was made before the ODF was written.  Returns whether
 * a branch left the union.
 */
static bool unionfs_newset_commit(struct super_block *sb,
				  struct unionfs_newset *ns,
				  struct unionfs_dentry_info *di)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct dentry *root = sb->s_root;
	unsigned int i, k;
	bool left = false;

	/* Lookups and listings in the root wait: they read its info. */
	inode_lock(d_inode(root));
	write_seqlock(&sbi->order_lock);
	for (i = 0; i < ns->nslots; i++) {
		if (i >= sbi->nbranches) {
			sbi->branches[i] = ns->br[i];
			atomic_set(&sbi->branches[i].open_files, 0);
			atomic_set(&sbi->branches[i].write_files, 0);
		}
		WRITE_ONCE(sbi->branches[i].mode, ns->br[i].mode);
		for (k = 0; k < ns->order.n && ns->order.idx[k] != i; k++)
			;
		if (k == ns->order.n && !sbi->branches[i].gone) {
			WRITE_ONCE(sbi->branches[i].gone, true);
			left = true;
		}
	}
	/* Readers that see the new count see the slots filled. */
	smp_store_release(&sbi->nbranches, ns->nslots);
	sbi->order = ns->order;
	WRITE_ONCE(sbi->br_gen, sbi->br_gen + 1);
	write_sequnlock(&sbi->order_lock);
	ns->nslots = sbi->nbranches;	/* all owned by sbi now */
	di->gen = sbi->br_gen;
	unionfs_swap_dinfo(root, di);
	inode_unlock(d_inode(root));
	shrink_dcache_sb(sb);
	return left;
}

/*
 * remount: dirs= as mounted, or another set; add=, del=, mode= applied
 * after it in the order given.  Returns 0 with nothing changed when the
 * options name the set mounted now.
 */
int unionfs_remount_branches(struct fs_context *fc, struct super_block *sb)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	const struct unionfs_options *opts = fc->fs_private;
	struct unionfs_dentry_info *root_di = NULL;
	struct unionfs_newset ns = {};
	const struct cred *old_cred;
	unsigned int i;
	int err;

	unionfs_mapped_prune(sbi, false);	/* a look at every remount */
	if (opts->odf && strcmp(opts->odf, sbi->odf_name))
		return invalfc(fc, "odf= cannot be changed by remount");
	if (!opts->nbranches && !opts->nops)
		return 0;
	ns.br = kcalloc(UNIONFS_MAX_BRANCHES, sizeof(*ns.br), GFP_KERNEL);
	if (!ns.br)
		return -ENOMEM;
	memcpy(ns.br, sbi->branches, sbi->nbranches * sizeof(*ns.br));
	ns.nslots = sbi->nbranches;
	unionfs_get_order(sbi, &ns.order);

	err = opts->nbranches ? unionfs_newset_dirs(fc, sb, &ns, opts) : 0;
	if (!err)
		err = unionfs_newset_ops(fc, sb, &ns, opts);
	if (!err && !ns.changed)
		goto out;
	if (!err)
		err = unionfs_newset_check(fc, sbi, &ns);
	if (err)
		goto out;
	if (!!(fc->sb_flags & SB_RDONLY) != sb_rdonly(sb)) {
		err = invalfc(fc, "change the branches and ro/rw in two remounts");
		goto out;
	}
	if (!unionfs_odf_rw(sbi) || READ_ONCE(sbi->odf_failed)) {
		err = invalfc(fc, "a read-only union cannot change its branches: the ODF records them, and it is not written now (remount rw first, or unmount and mount with the new dirs=)");
		goto out;
	}
	root_di = unionfs_root_dinfo(sbi, ns.br, &ns.order);
	if (!root_di) {
		err = -ENOMEM;
		goto out;
	}
	err = unionfs_newset_leave(fc, sbi, &ns, true);
	if (err)
		goto out;
	err = unionfs_newset_going_ro(fc, sbi, &ns, true);
	if (err) {
		unionfs_newset_leave(fc, sbi, &ns, false);
		goto out;
	}
	old_cred = override_creds(sbi->creator_cred);
	err = unionfs_odf_set_branches(sbi, ns.br, &ns.order);
	revert_creds(old_cred);
	if (err) {
		unionfs_newset_going_ro(fc, sbi, &ns, false);
		unionfs_newset_leave(fc, sbi, &ns, false);
		errorfc(fc, "ODF '%s': cannot record the new branches (error %d); nothing changed",
			sbi->odf_name, err);
		goto out;
	}
	/* The modes change in the commit: the marks may go after it. */
	if (unionfs_newset_commit(sb, &ns, root_di)) {
		old_cred = override_creds(sbi->creator_cred);
		unionfs_rd_rekey(sb);
		revert_creds(old_cred);
	}
	unionfs_newset_going_ro(fc, sbi, &ns, false);
	root_di = NULL;
	for (i = 0; i < ns.order.n; i++)
		if (!sbi->branches[ns.order.idx[i]].root.mnt->mnt_sb->s_export_op &&
		    sb->s_export_op)
			pr_info("branch '%s' has no NFS file handles: its objects cannot be reached over NFS\n",
				sbi->branches[ns.order.idx[i]].name);
out:
	unionfs_free_dinfo(root_di);
	unionfs_newset_free(sbi, &ns);
	return err;
}
