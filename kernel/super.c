// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: filesystem type, superblock, mount and remount.
 *
 * A read-write union writes to its first branch (the upper branch), which
 * must be rw; the other branches are only read, and must say =ro.  A
 * read-only union writes nothing, to the branches or to the ODF.  Every
 * configuration that cannot be served is refused at mount with the right
 * errno and one kernel-log line that names the problem.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/cred.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include "unionfs.h"

/* Let go of a resolved branch (its root, mount and name). */
void unionfs_put_branch(struct unionfs_branch *br)
{
	dput(br->root.dentry);
	/* A private clone is internal: only kern_unmount() frees it. */
	if (br->cloned)
		kern_unmount(br->root.mnt);
	else
		mntput(br->root.mnt);
	kfree(br->name);
}

static void unionfs_free_sbi(struct unionfs_sb_info *sbi)
{
	unsigned int i;

	if (!sbi)
		return;
	if (sbi->rd_wq)
		destroy_workqueue(sbi->rd_wq);
	unionfs_mapped_prune(sbi, true);	/* the branch inodes it holds */
	for (i = 0; i < sbi->nbranches; i++)
		unionfs_put_branch(&sbi->branches[i]);
	kfree(sbi->branches);
	unionfs_odf_stop(sbi);
	unionfs_odf_close(sbi);
	if (sbi->creator_cred)
		put_cred(sbi->creator_cred);
	kfree(sbi->odf_name);
	cleanup_srcu_struct(&sbi->odf_srcu);
	kfree(sbi);
}

static int unionfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	int err;

	err = vfs_statfs(&sbi->branches[0].root, buf);
	if (!err) {
		buf->f_type = UNIONFS_SUPER_MAGIC;
		buf->f_fsid.val[0] = 0;
		buf->f_fsid.val[1] = 0;
	}
	return err;
}

static int unionfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(root->d_sb);
	unsigned int i;

	struct unionfs_order o;

	unionfs_get_order(sbi, &o);
	seq_show_option(m, "odf", sbi->odf_name);
	seq_puts(m, ",dirs=");
	for (i = 0; i < o.n; i++) {
		const struct unionfs_branch *br = &sbi->branches[o.idx[i]];

		if (i)
			seq_putc(m, ':');
		seq_escape(m, br->name, ",:= \t\n\\");
		seq_puts(m, br->mode == UNIONFS_BR_RW ? "=rw" : "=ro");
	}
	if (READ_ONCE(sbi->udba_none))
		seq_puts(m, ",udba=none");
	return 0;
}

/*
 * sync(2)/syncfs(2) on the union: the upper branch and the ODF hold
 * everything the union wrote.  Lower branches are never written.
 */
static int unionfs_sync_fs(struct super_block *sb, int wait)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct super_block *fs[2];
	int i, err = 0, err2;

	if (!sbi->has_upper || !wait)
		return 0;
	/* Readdir states listings built in memory go to the ODF first. */
	unionfs_rd_flush(sb, false);
	fs[0] = sbi->branches[0].root.mnt->mnt_sb;
	fs[1] = sbi->odf.mnt->mnt_sb;
	for (i = 0; i < 2; i++) {
		/*
		 * The union's own s_umount is held (sync(2), umount): the
		 * upper branch's is one level down, of the same class when
		 * that branch is a union too.
		 */
		down_read_nested(&fs[i]->s_umount, SINGLE_DEPTH_NESTING);
		err2 = sync_filesystem(fs[i]);
		up_read(&fs[i]->s_umount);
		err = err ?: err2;
	}
	return err;
}

const struct super_operations unionfs_sops = {
	.sync_fs	= unionfs_sync_fs,
	.alloc_inode	= unionfs_alloc_inode,
	.free_inode	= unionfs_free_inode,
	.evict_inode	= unionfs_evict_inode,
	.drop_inode	= generic_delete_inode,
	.statfs		= unionfs_statfs,
	.show_options	= unionfs_show_options,
};

/*
 * Options that cannot work together are refused here, before anything is
 * resolved, so a refused mount touches nothing.
 */
static int unionfs_check_supported(struct fs_context *fc,
				   const struct unionfs_options *opts)
{
	if (!opts->odf)
		return invalfc(fc,
			       "missing odf= option: name the ODF volume (block device or directory)");
	if (!opts->nbranches)
		return invalfc(fc, "missing dirs= option: name at least one branch");
	if (opts->branches[0].mode != UNIONFS_BR_RW &&
	    !(fc->sb_flags & SB_RDONLY))
		return invalfc(fc,
			       "the first branch '%s' must be rw for a read-write union: mark it =rw, or mount with -o ro",
			       opts->branches[0].path);
	return 0;
}

/* A branch marked =rw in a read-write union must be writable. */
int unionfs_rw_branch_readonly(struct fs_context *fc,
			       const struct unionfs_branch *br)
{
	errorfc(fc,
		"branch '%s' is marked =rw but is read-only: make it writable, mark it =ro, or mount the union with -o ro",
		br->name);
	return -EROFS;
}

int unionfs_resolve_branch(struct fs_context *fc,
			   const struct unionfs_branch_spec *spec,
			   struct unionfs_branch *br)
{
	int err;

	err = kern_path(spec->path, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &br->root);
	if (err) {
		if (err == -ENOTDIR)
			errorfc(fc, "branch '%s' is not a directory", spec->path);
		else
			errorfc(fc, "cannot find branch '%s' (error %d)",
				spec->path, err);
		return err;
	}
	br->mode = spec->mode;
	br->name = kstrdup(spec->path, GFP_KERNEL);
	if (!br->name)
		return -ENOMEM;
	return 0;
}

static bool unionfs_paths_overlap(const struct path *a, const struct path *b)
{
	return path_is_under(a, b) || path_is_under(b, a);
}

/*
 * A branch inside another branch, or the ODF inside a branch (or the other
 * way round), would make the union see its own objects or metadata twice.
 */
static int unionfs_check_overlap(struct fs_context *fc,
				 const struct unionfs_sb_info *sbi,
				 const struct path *odf)
{
	const struct unionfs_branch *a, *b;
	unsigned int i, j;

	for (i = 0; i < sbi->nbranches; i++) {
		a = &sbi->branches[i];
		for (j = i + 1; j < sbi->nbranches; j++) {
			b = &sbi->branches[j];
			if (unionfs_paths_overlap(&a->root, &b->root))
				return invalfc(fc,
					       "branches '%s' and '%s' overlap: one is inside the other",
					       a->name, b->name);
		}
		if (d_is_dir(odf->dentry) &&
		    unionfs_paths_overlap(&a->root, odf))
			return invalfc(fc,
				       "ODF '%s' and branch '%s' overlap: one is inside the other",
				       sbi->odf_name, a->name);
	}
	return 0;
}

/*
 * The union works on private clones of the branch mounts, as overlayfs
 * does: what the user later does to the mounts they named (umount -l, a
 * bind remount) does not reach the union, and write access is taken on
 * the clone (branch.c).  A rw union needs a writable upper branch.
 */
static int unionfs_clone_branches(struct fs_context *fc,
				  struct unionfs_sb_info *sbi)
{
	unsigned int i;

	for (i = 0; i < sbi->nbranches; i++) {
		struct unionfs_branch *br = &sbi->branches[i];
		struct vfsmount *mnt = clone_private_mount(&br->root);

		if (IS_ERR(mnt)) {
			errorfc(fc,
				"cannot use branch '%s' (error %ld): it must be a directory of a mount in this mount namespace, not unbindable",
				br->name, PTR_ERR(mnt));
			return PTR_ERR(mnt);
		}
		mntput(br->root.mnt);
		br->root.mnt = mnt;
		br->cloned = true;
	}
	if (sbi->has_upper && __mnt_is_readonly(sbi->branches[0].root.mnt)) {
		errorfc(fc,
			"upper branch '%s' is read-only: make it writable, or mount the union with -o ro",
			sbi->branches[0].name);
		return -EROFS;
	}
	for (i = 1; i < sbi->nbranches; i++)
		if (sbi->has_upper &&
		    sbi->branches[i].mode == UNIONFS_BR_RW &&
		    __mnt_is_readonly(sbi->branches[i].root.mnt))
			return unionfs_rw_branch_readonly(fc, &sbi->branches[i]);
	return 0;
}

/*
 * The freeze protection (sb_writers) has one lockdep class per filesystem
 * type.  A union writing into a union it stacks on (a nested read-write
 * union) takes the outer one's and then the inner one's, which lockdep
 * reports as recursion.  Each stacking depth gets classes of its own, as
 * the inode locks do (unionfs_lockdep_annotate()); nothing has used this
 * superblock's freeze protection yet.
 */
static void unionfs_lockdep_sb(struct super_block *sb)
{
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	static struct lock_class_key
		keys[FILESYSTEM_MAX_STACK_DEPTH][SB_FREEZE_LEVELS];
	static const char *const names[SB_FREEZE_LEVELS] = {
		"sb_writers_unionfs", "sb_pagefaults_unionfs",
		"sb_internal_unionfs",
	};
	int depth = clamp(sb->s_stack_depth - 1, 0,
			  FILESYSTEM_MAX_STACK_DEPTH - 1);
	int i;

	for (i = 0; i < SB_FREEZE_LEVELS; i++)
		lockdep_init_map(&sb->s_writers.rw_sem[i].dep_map, names[i],
				 &keys[depth][i], 0);
#endif
}

/*
 * The root's dentry info for branch set @o of @slots.  Slot 0 is the upper branch
 * of the namespace rules (whiteouts never hide it) in every mount; only
 * a rw union writes to it.
 */
struct unionfs_dentry_info *
unionfs_root_dinfo(struct unionfs_sb_info *sbi,
		   const struct unionfs_branch *slots,
		   const struct unionfs_order *o)
{
	struct unionfs_dentry_info *di = unionfs_alloc_dinfo(o->n);
	unsigned int i;

	if (!di)
		return NULL;
	di->gen = sbi->br_gen;
	di->upper = dget(slots[0].root.dentry);
	di->upper_positive = true;
	for (i = 1; i < o->n; i++) {
		const struct unionfs_branch *br = &slots[o->idx[i]];
		struct unionfs_lower *l = &di->lower[di->nlower++];

		unionfs_lower_set(l, br->root.mnt, dget(br->root.dentry),
				  o->idx[i]);
	}
	di->top = di->nlower;
	return di;
}

static int unionfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct unionfs_options *opts = fc->fs_private;
	struct unionfs_sb_info *sbi;
	struct super_block *lower_sb;
	struct unionfs_dentry_info *di;
	struct path odf_path = {};
	struct inode *root_inode;
	unsigned int i;
	int err;

	err = unionfs_check_supported(fc, opts);
	if (err)
		return err;

	sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);
	if (!sbi)
		return -ENOMEM;
	err = init_srcu_struct(&sbi->odf_srcu);
	if (err) {
		kfree(sbi);
		return err;
	}
	sb->s_fs_info = sbi;	/* freed by unionfs_kill_sb, also on failure */

	mutex_init(&sbi->odf_lock);
	atomic64_set(&sbi->ns_seq, 1);	/* 0 in an inode: nothing cached */
	mutex_init(&sbi->imap_change);
	init_rwsem(&sbi->imap_lock);
	spin_lock_init(&sbi->mapped_lock);
	sbi->mapped_prune_at = 64;
	unionfs_stats_add(sb);	/* counts the recovery below too */
	sbi->rd_wq = alloc_workqueue("unionfs-rd", WQ_UNBOUND, 0);
	if (!sbi->rd_wq)
		return -ENOMEM;
	sbi->has_upper = !(fc->sb_flags & SB_RDONLY);
	sbi->udba_none = opts->udba == UNIONFS_UDBA_NONE;
	sbi->odf_name = kstrdup(opts->odf, GFP_KERNEL);
	/* Every slot now: a remount adds branches in place (unionfs.h). */
	sbi->branches = kcalloc(UNIONFS_MAX_BRANCHES, sizeof(*sbi->branches),
				GFP_KERNEL);
	seqlock_init(&sbi->order_lock);
	if (!sbi->odf_name || !sbi->branches)
		return -ENOMEM;

	for (i = 0; i < opts->nbranches; i++) {
		err = unionfs_resolve_branch(fc, &opts->branches[i],
					     &sbi->branches[i]);
		sbi->nbranches = i + 1;	/* what unionfs_free_sbi must put */
		if (err)
			return err;
		sbi->order.idx[i] = i;
		sbi->order.n = i + 1;
	}

	err = unionfs_odf_resolve(fc, sbi, &odf_path);
	if (!err)
		err = unionfs_check_overlap(fc, sbi, &odf_path);
	if (!err)
		err = unionfs_clone_branches(fc, sbi);
	if (!err)
		err = unionfs_odf_load(fc, sbi, &odf_path);
	path_put(&odf_path);
	if (err)
		return err;

	sb->s_time_gran = 1;
	for (i = 0; i < sbi->nbranches; i++) {
		lower_sb = sbi->branches[i].root.mnt->mnt_sb;
		sb->s_stack_depth = max(sb->s_stack_depth,
					lower_sb->s_stack_depth + 1);
		sb->s_time_gran = max(sb->s_time_gran, lower_sb->s_time_gran);
		sb->s_maxbytes = max(sb->s_maxbytes, lower_sb->s_maxbytes);
	}
	if (sb->s_stack_depth > FILESYSTEM_MAX_STACK_DEPTH)
		return invalfc(fc,
			       "a branch is stacked too deeply (at most %d stacked filesystems)",
			       FILESYSTEM_MAX_STACK_DEPTH);

	unionfs_lockdep_sb(sb);
	sbi->creator_cred = prepare_creds();
	if (!sbi->creator_cred)
		return -ENOMEM;
	/* Intents need the inode maps to tell union directories (10.2). */
	if (sbi->super_file && unionfs_intent_replay(sb))
		pr_err("ODF '%s': an interrupted rename could not be finished; it is retried at the next mount\n",
		       sbi->odf_name);

	sb->s_magic = UNIONFS_SUPER_MAGIC;
	sb->s_op = &unionfs_sops;
	sb->s_d_op = &unionfs_dops;
	sb->s_xattr = unionfs_xattr_handlers;
	unionfs_export_init(sb);
	sb->s_flags |= SB_NOSEC;
	/*
	 * The real inodes' ACLs decide (unionfs_get_acl()).  The VFS then
	 * leaves the umask to us: the create helpers of the upper branch
	 * apply it, or the default ACL of the parent there, so a new object
	 * gets the mode and ACL it would get on that branch alone.
	 */
	if (IS_ENABLED(CONFIG_FS_POSIX_ACL))
		sb->s_flags |= SB_POSIXACL;

	di = unionfs_root_dinfo(sbi, sbi->branches, &sbi->order);
	if (!di)
		return -ENOMEM;
	root_inode = unionfs_iget(sb, ODF_UINO_ROOT,
				  d_inode(sbi->branches[0].root.dentry), 0);
	if (IS_ERR(root_inode)) {
		unionfs_free_dinfo(di);
		return PTR_ERR(root_inode);
	}
	sb->s_root = d_make_root(root_inode);
	if (!sb->s_root) {
		unionfs_free_dinfo(di);
		return -ENOMEM;
	}
	sb->s_root->d_fsdata = di;
	return 0;
}

static int unionfs_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, unionfs_fill_super);
}

/* The rest of a remount: the session, read-only or read-write. */
static int unionfs_remount_session(struct fs_context *fc,
				   struct super_block *sb, bool ro)
{
	int err;

	sync_filesystem(sb);
	if (!ro && !UNIONFS_SB(sb)->has_upper)
		return invalfc(fc,
			       "a union mounted read-only cannot be remounted read-write: unmount it and mount it rw");
	err = unionfs_odf_set_ro(sb, ro);
	if (err) {
		errorfc(fc, "ODF '%s': cannot %s its session (error %d)",
			UNIONFS_SB(sb)->odf_name, ro ? "end" : "start", err);
		return err;
	}
	/* Given or not, as mount(8) passes back what /proc/mounts shows. */
	WRITE_ONCE(UNIONFS_SB(sb)->udba_none,
		   ((struct unionfs_options *)fc->fs_private)->udba ==
		   UNIONFS_UDBA_NONE);
	return 0;
}

/*
 * mount(8) passes the options /proc/mounts shows with every remount:
 * odf= and dirs= naming what is mounted change nothing.  Another dirs=,
 * add=, del= and mode= change the branches (remount.c), before the
 * read-only state would change (both in one remount are refused).
 */
static int unionfs_reconfigure(struct fs_context *fc)
{
	struct super_block *sb = fc->root->d_sb;
	bool ro = fc->sb_flags & SB_RDONLY;
	int err;

	/*
	 * Readdir states built in memory are written under the branch set
	 * they were listed in, and before remount,ro ends the session.
	 */
	unionfs_rd_quiesce(sb, ro);
	err = unionfs_remount_branches(fc, sb);
	if (!err)
		err = unionfs_remount_session(fc, sb, ro);
	if (err || !ro)
		WRITE_ONCE(UNIONFS_SB(sb)->rd_sync, false);
	return err;
}

static void unionfs_free_fc(struct fs_context *fc)
{
	struct unionfs_options *opts = fc->fs_private;

	if (opts) {
		unionfs_free_options(opts);
		kfree(opts);
	}
}

static const struct fs_context_operations unionfs_context_ops = {
	.parse_param	= unionfs_parse_param,
	.get_tree	= unionfs_get_tree,
	.reconfigure	= unionfs_reconfigure,
	.free		= unionfs_free_fc,
};

static int unionfs_init_fs_context(struct fs_context *fc)
{
	struct unionfs_options *opts;

	opts = kzalloc(sizeof(*opts), GFP_KERNEL);
	if (!opts)
		return -ENOMEM;
	fc->fs_private = opts;
	fc->ops = &unionfs_context_ops;
	return 0;
}

static void unionfs_kill_sb(struct super_block *sb)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);

	if (sbi) {
		unionfs_stats_del(sbi);
		/* Its works hold inodes: none may be left at eviction. */
		unionfs_rd_flush(sb, true);
		/* and the files they let go of go now, not after umount(2) */
		flush_delayed_fput();
	}
	kill_anon_super(sb);
	unionfs_free_sbi(sbi);
}

static struct file_system_type unionfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= UNIONFS_NAME,
	.init_fs_context	= unionfs_init_fs_context,
	.kill_sb		= unionfs_kill_sb,
};
MODULE_ALIAS_FS(UNIONFS_NAME);

static int __init unionfs_init(void)
{
	int err;

	err = unionfs_init_inode_cache();
	if (err)
		return err;
	err = unionfs_stats_init();
	if (err)
		goto out_cache;
	err = register_filesystem(&unionfs_fs_type);
	if (!err)
		return 0;
	unionfs_stats_exit();
out_cache:
	unionfs_destroy_inode_cache();
	return err;
}

static void __exit unionfs_exit(void)
{
	unregister_filesystem(&unionfs_fs_type);
	unionfs_stats_exit();
	unionfs_destroy_inode_cache();
}

module_init(unionfs_init);
module_exit(unionfs_exit);

MODULE_DESCRIPTION("Union filesystem with its metadata on a separate ODF volume");
MODULE_AUTHOR("odf-unionfs developers");
MODULE_LICENSE("GPL");
