/* SPDX-License-Identifier: GPL-2.0 */
/*
 * odf-unionfs: internal definitions.
 *
 * The core structures come first; the function prototypes after them are
 * sectioned by the file that defines them, so this header is the map of
 * the module.
 */
#ifndef _UNIONFS_H
#define _UNIONFS_H

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/seqlock.h>
#include <linux/srcu.h>
#include <odf/odf_format.h>
#include "compat.h"

#define UNIONFS_NAME		"unionfs"
#define UNIONFS_SUPER_MAGIC	0x4f444655	/* "UFDO" */

/* One mount may name as many branches as the ODF branch table holds. */
#define UNIONFS_MAX_BRANCHES	ODF_BRANCH_SLOTS

enum unionfs_branch_mode {
	UNIONFS_BR_RO,
	UNIONFS_BR_RW,
};

/* One branch as the user named it in dirs=, before it is resolved. */
struct unionfs_branch_spec {
	char *path;
	enum unionfs_branch_mode mode;
};

/* A branch change asked of remount: add=, del=, mode=, in given order. */
enum unionfs_branch_op_kind {
	UNIONFS_BROP_ADD,
	UNIONFS_BROP_DEL,
	UNIONFS_BROP_MODE,
};

struct unionfs_branch_op {
	enum unionfs_branch_op_kind kind;
	int pos;		/* add=: priority to insert at, -1 if not given */
	struct unionfs_branch_spec spec;	/* mode: given, or =ro */
};

/* Mount options collected by the fs_context before fill_super. */
/* udba=: how direct edits of the branches are noticed (dentry.c). */
enum unionfs_udba {
	UNIONFS_UDBA_UNSET,
	UNIONFS_UDBA_REVAL,	/* default: each cached name checks its branches */
	UNIONFS_UDBA_NONE,	/* branches are changed only through the union */
};

struct unionfs_options {
	char *odf;				/* odf=: device or directory */
	enum unionfs_udba udba;			/* udba=, or UNSET */
	unsigned int nbranches;
	struct unionfs_branch_spec *branches;	/* dirs=, highest priority first */
	unsigned int nops;
	struct unionfs_branch_op *ops;		/* remount: add=, del=, mode= */
};

/*
 * A resolved branch of a mounted union.  Branches live in slots of
 * sbi->branches that never move or get reused while the union is
 * mounted (a remount appends the branches it adds and marks the ones it
 * removes gone), so the branch index a dentry or inode keeps stays
 * valid; sbi->order says which slots are in the union now, highest
 * priority first.  Slot 0 is the upper branch and always first.
 */
struct unionfs_branch {
	struct path root;
	enum unionfs_branch_mode mode;
	u16 id;			/* persistent branch id (ODF branch table) */
	int slot;		/* its slot in the ODF branch table, -1 if new */
	bool cloned;		/* root.mnt is our private clone */
	bool gone;		/* removed by remount: in no lookup any more */
	bool leaving;		/* a remount is removing it: opens fail */
	atomic_t open_files;	/* union files open on it (del= is EBUSY) */
	/*
	 * ... of them open for writing, plus the changes made in place on
	 * it that are under way (a lower branch written in place: mode=ro
	 * is EBUSY while any is), and a remount making the branch
	 * read-only, which such an open or change that counts itself
	 * after the remount's check must see (unionfs_count_real_open(),
	 * unionfs_branch_write_begin()).
	 */
	atomic_t write_files;
	bool going_ro;
	char *name;		/* the path as given in dirs=, for show_options */
};

struct unionfs_dentry_info;

/* The branches of the union now, by slot, highest priority first. */
struct unionfs_order {
	unsigned int n;
	u8 idx[UNIONFS_MAX_BRANCHES];
};

struct unionfs_sb_info {
	unsigned int nbranches;		/* slots used in @branches */
	struct unionfs_branch *branches;	/* UNIONFS_MAX_BRANCHES slots */
	struct unionfs_order order;	/* under order_lock */
	seqlock_t order_lock;
	/*
	 * Bumped by every remount that changes the branch set: a dentry
	 * looked up under another generation is looked up again.
	 */
	unsigned int br_gen;
	bool has_upper;		/* rw union: branch 0 (the upper) takes writes */
	bool udba_none;		/* udba=none: direct branch edits not looked for */
	char *odf_name;		/* odf= as given, for show_options */
	struct path odf;	/* the ODF volume's root, a private mount */
	struct path ns;		/* its /ns */
	struct path reclaim;	/* its /reclaim */
	struct path readdir;	/* its /readdir */
	/* readdir states installed (rdstate.c: a directory's "none" lapses) */
	atomic64_t rd_installs;
	/* writes the states listings built in memory (rdstate.c) */
	struct workqueue_struct *rd_wq;
	bool rd_sync;		/* remount,ro near: no state built in memory */
	atomic_t rd_mem_blocks;	/* record blocks of those waiting in memory */
	struct file *super_file;	/* /superblock, rw unions */
	struct odf_super *odf_sb;	/* the header as last written */
	bool odf_was_mounted;	/* the previous session did not end cleanly */
	bool odf_failed;	/* damage found: the ODF takes no more writes */
	bool odf_paused;	/* remount,ro: the session is over until rw */
	/*
	 * The read side is held by every ODF write that the VFS does not
	 * keep out of remount,ro (those of listings and lookups): see
	 * unionfs_odf_write_begin().
	 */
	struct srcu_struct odf_srcu;
	struct unionfs_stats *stats;	/* /sys/fs/unionfs/<dev>/, or NULL */
	struct mutex odf_lock;	/* serialises ODF namespace and header writes */
	/*
	 * Bumped after every change to a node's record or to which node
	 * /ns holds at a name (ns.c): an inode's cached verdict on its
	 * node is good while this has not moved.
	 */
	atomic64_t ns_seq;
	/*
	 * Inode maps (imap.c): changes one at a time under imap_change;
	 * lookups take only imap_lock shared, which a change takes
	 * exclusive just to put a grown map in the old one's place.
	 */
	struct mutex imap_change;
	struct rw_semaphore imap_lock;
	struct path imap_dir;	/* /imap (rw unions) */
	struct file *imap[2];	/* /imap/forward, /imap/reverse (rw unions) */
	struct odf_map_header imap_hdr[2];	/* their headers as last written */
	void *imap_buf;		/* one bucket, under imap_change */
	/*
	 * Which keys the forward map may hold: one bit per hashed key, set
	 * at mount for every record and before every insert, never
	 * cleared.  A clear bit answers a lookup without imap_lock or a
	 * read of the ODF (imap.c).
	 */
	unsigned long *imap_filter;
	unsigned int imap_filter_shift;
	u64 reclaim_seq;	/* names of reclaim entries made this session */
	const struct cred *creator_cred;	/* for work on the branches */
	/*
	 * Lower branches' inodes mapped through the union (file.c): a
	 * mapping outlives the file it was made with, and del= or mode=ro
	 * must still see it.  One entry per inode and branch, holding the
	 * inode; dropped once it is mapped no more, looked for at every
	 * remount, when a union file closes after the table doubled, and
	 * at unmount.
	 */
	spinlock_t mapped_lock;
	DECLARE_HASHTABLE(mapped, 6);
	unsigned int nmapped;		/* entries in @mapped */
	unsigned int mapped_gen;	/* looks for unmapped entries so far */
	unsigned int mapped_prune_at;	/* look again past this many */
	bool mapped_prune_due;
};

/* May the ODF be written: a rw session that remount,ro has not paused. */
static inline bool unionfs_odf_rw(const struct unionfs_sb_info *sbi)
{
	return sbi->super_file && !READ_ONCE(sbi->odf_paused);
}

/*
 * ODF writes made on behalf of a system call that does not take write
 * access to the union (a listing that builds or reconciles a readdir
 * state, a lookup that drops a stale map record or allocates a number)
 * are not kept out of remount,ro by the VFS.  They go between these two
 * calls: false means the ODF is read-only now and nothing may be
 * written.  remount,ro pauses the session and then waits for every
 * writer that saw it running (unionfs_odf_set_ro()), so none is in
 * flight when the volume is marked CLEAN and none starts after.  The
 * read side is SRCU: it nests, never blocks, and is taken only where a
 * write is about to happen, so it orders against no lock; remount,ro
 * waits for it holding nothing of ours.  Header writes made outside
 * such a section (the inode number counter moved past a recorded number,
 * ERRORS) check unionfs_odf_rw() under odf_lock instead, where
 * remount,ro sets the pause.
 */
static inline bool unionfs_odf_write_begin(struct unionfs_sb_info *sbi,
					   int *idx)
{
	if (!unionfs_odf_rw(sbi))
		return false;
	*idx = srcu_read_lock(&sbi->odf_srcu);
	if (unionfs_odf_rw(sbi))
		return true;
	srcu_read_unlock(&sbi->odf_srcu, *idx);
	return false;
}

static inline void unionfs_odf_write_end(struct unionfs_sb_info *sbi, int idx)
{
	srcu_read_unlock(&sbi->odf_srcu, idx);
}

struct unionfs_inode_info {
	struct inode *lower;	/* the object that backs this inode now */
	struct inode *origin;	/* the lower object it was copied up from */
	/*
	 * Directories shown from lower branches only: the objects @lower
	 * was before a branch change moved the top part (unionfs_inode_moved()),
	 * kept referenced until eviction, as @origin is.
	 */
	struct unionfs_retired *retired;
	unsigned int bindex;	/* index of the branch of @lower */
	unsigned int lower_links;	/* copy: lower names still shown */
	struct mutex copyup_lock;
	struct unionfs_rdstate *rd;	/* directories: readdir state */
	spinlock_t ns_lock;
	struct dentry *ns;	/* directories: the ODF node's dentry, or NULL */
	/*
	 * Directories: what the node's record said (ns_flags) for the upper
	 * directory (ns_owner_ino/gen, 0 for none) when sbi->ns_seq was
	 * ns_seq (0: nothing cached).  Under ns_lock.
	 */
	u64 ns_seq;
	u64 ns_owner_ino;
	u32 ns_owner_gen;
	unsigned int ns_flags;
	struct inode vfs_inode;
};

struct unionfs_retired {
	struct unionfs_retired *next;
	struct inode *inode;
};

/* One branch's dentry for a union name. */
struct unionfs_lower {
	struct path path;	/* path.dentry may be negative */
	unsigned int bindex;
	bool positive;		/* path.dentry was positive at lookup */
	/* Where path.dentry was at lookup: a rename in the branch moves it. */
	struct dentry *parent;
	u64 hash_len;
};

/*
 * d_fsdata of every union dentry.
 *
 * @upper is the name's dentry on the upper branch (branch 0): NULL
 * when the parent had no upper directory at lookup, else a dentry that
 * may be negative.  It is set once and then only turns positive (create,
 * copy-up), published with release semantics so lockless readers see a
 * complete dentry.
 *
 * @lower holds the dentries found on the other branches, in priority
 * order, negative ones too (kept so a name that appears in a branch
 * behind the union's back is noticed); it never changes after lookup.
 * When the upper dentry is not positive, lower[top] is what the union
 * shows; for a directory, every positive directory after it is merged.
 */
struct unionfs_dentry_info {
	struct rcu_head rcu;	/* freed after RCU-walk revalidation is done */
	struct dentry *upper;
	bool upper_positive;	/* what the union believes of @upper */
	bool invalid;		/* renamed: look the name up again */
	bool removed;		/* unlinked, removed or renamed over */
	bool changing;		/* its upper object is being made */
	struct dentry *alias;	/* the upper copy of a lower hard link */
	unsigned int ns_flags;	/* ODF_NODE_* of the name's ODF node at lookup */
	unsigned int gen;	/* sbi->br_gen of the branch set it was found in */
	/* The info this one replaced (remount, copy relookup): freed with it. */
	struct unionfs_dentry_info *next_old;
	/* Infos in that chain swapped in by unionfs_copy_name_current(). */
	unsigned int copy_swaps;
	unsigned int cap;	/* entries @lower has room for */
	unsigned int nlower;
	unsigned int top;	/* index of the shown entry; nlower if none */
	struct unionfs_lower lower[];
};

static inline struct unionfs_sb_info *UNIONFS_SB(const struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct unionfs_inode_info *UNIONFS_I(const struct inode *inode)
{
	return container_of(inode, struct unionfs_inode_info, vfs_inode);
}

static inline struct inode *unionfs_lower_inode(const struct inode *inode)
{
	return READ_ONCE(UNIONFS_I(inode)->lower);
}

static inline struct unionfs_dentry_info *UNIONFS_D(const struct dentry *dentry)
{
	/* Swapped under copyup_lock (unionfs_swap_dinfo()), read without. */
	return READ_ONCE(dentry->d_fsdata);
}

/*
 * The name's upper object is being made (copy-up, create, link).  From
 * the branch operation until the union dentry shows the object, the
 * branch and the union dentry disagree, and revalidation must not take
 * that for a change behind the union's back: a second lookup would make
 * a second union inode for the object, numbered before the copy's inode
 * map records exist (a directory's whiteouts, keyed by its number, then
 * went to the wrong node).  The caller holds what keeps the name from
 * any other change meanwhile (copyup_lock, the parent's inode lock).
 */
static inline void unionfs_name_changing(struct dentry *dentry)
{
	WRITE_ONCE(UNIONFS_D(dentry)->changing, true);
}

/* The union dentry shows the object (or the change failed). */
static inline void unionfs_name_changed(struct dentry *dentry)
{
	/* Pairs with the acquire in unionfs_d_revalidate(). */
	smp_store_release(&UNIONFS_D(dentry)->changing, false);
}

/*
 * The upper branch dentry of a union name if it is positive, else NULL;
 * of @di, the dentry's info (unionfs_upper_of()), or its current one.
 */
static inline struct dentry *
unionfs_upper_of(const struct dentry *dentry,
		 const struct unionfs_dentry_info *di)
{
	/* Pairs with the release in unionfs_set_upper(). */
	struct dentry *upper = smp_load_acquire(&di->upper);
	struct inode *inode;

	if (!upper || !d_is_positive(upper))
		return NULL;
	/*
	 * An fd's dentry outlives its name (unlinked through the union)
	 * and keeps the upper dentry of that name, which a file made there
	 * since has turned positive: it is this dentry's upper object only
	 * if it is the one the inode shows.
	 * (A copy-up links its copy before the inode shows it: until then
	 * the dentry still shows the lower object.)
	 */
	inode = d_inode_rcu(dentry);
	if (inode && d_inode_rcu(upper) != unionfs_lower_inode(inode))
		return NULL;
	return upper;
}

static inline struct dentry *unionfs_upper(const struct dentry *dentry)
{
	return unionfs_upper_of(dentry, UNIONFS_D(dentry));
}

/*
 * The lower branch object a union dentry shows when nothing is on the
 * upper branch, or NULL.  Fixed at lookup: a lower dentry that changes
 * later makes the union dentry fail revalidation instead.
 */
static inline const struct unionfs_lower *
unionfs_top_lower(const struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);

	return di->top < di->nlower ? &di->lower[di->top] : NULL;
}

static inline struct unionfs_branch *unionfs_branch(const struct super_block *sb,
						    unsigned int bindex)
{
	return &UNIONFS_SB(sb)->branches[bindex];
}

/* The current branch order, copied (a remount may change it meanwhile). */
static inline void unionfs_get_order(struct unionfs_sb_info *sbi,
				     struct unionfs_order *o)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&sbi->order_lock);
		*o = sbi->order;
	} while (read_seqretry(&sbi->order_lock, seq));
}

/*
 * May the union change objects of branch @bindex in place: the upper
 * branch or a writable lower branch of a read-write union (issue 11
 * item 3).  A remount may change a lower branch's mode meanwhile.
 */
static inline bool unionfs_branch_writable(const struct super_block *sb,
					   unsigned int bindex)
{
	const struct unionfs_sb_info *sbi = UNIONFS_SB(sb);

	return sbi->has_upper &&
	       READ_ONCE(sbi->branches[bindex].mode) == UNIONFS_BR_RW;
}

static inline struct vfsmount *unionfs_upper_mnt(const struct super_block *sb)
{
	return UNIONFS_SB(sb)->branches[0].root.mnt;
}

/*
 * The branch object a positive union dentry shows: the upper one if it
 * exists, else the top lower one.  The path is not referenced.
 */
static inline void unionfs_real_path(const struct dentry *dentry,
				     struct path *path)
{
	/*
	 * One read of the info: a copy-up through an fd's dentry may swap
	 * in another (copyup.c), whose parts differ.  Pairs with the
	 * release in unionfs_swap_dinfo().
	 */
	const struct unionfs_dentry_info *di = smp_load_acquire(&dentry->d_fsdata);
	struct dentry *upper = unionfs_upper_of(dentry, di);

	if (!upper)
		upper = di->alias;
	if (upper) {
		path->mnt = unionfs_upper_mnt(dentry->d_sb);
		path->dentry = upper;
	} else {
		*path = di->lower[di->top].path;
	}
}

/* The part of directory @dentry on branch @bindex, or NULL. */
static inline struct dentry *unionfs_part_on(const struct dentry *dentry,
					     unsigned int bindex)
{
	const struct unionfs_dentry_info *di = READ_ONCE(dentry->d_fsdata);
	unsigned int i;

	if (!bindex)
		return unionfs_upper(dentry);
	for (i = 0; i < di->nlower; i++)
		if (di->lower[i].bindex == bindex && di->lower[i].positive)
			return di->lower[i].path.dentry;
	return NULL;
}

static inline unsigned int unionfs_real_bindex(const struct dentry *dentry)
{
	/* One read of the info, as in unionfs_real_path(). */
	const struct unionfs_dentry_info *di = smp_load_acquire(&dentry->d_fsdata);

	return unionfs_upper_of(dentry, di) || di->alias ? 0 :
	       di->lower[di->top].bindex;
}

/* Does the name show an object that is on a branch other than the upper? */
static inline bool unionfs_has_lower(const struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);
	unsigned int i;

	for (i = 0; i < di->nlower; i++)
		if (di->lower[i].positive)
			return true;
	return false;
}

/* stats.c: per-mount counters in /sys/fs/unionfs/<dev>/ */
enum unionfs_stat {
	UNIONFS_ST_COPYUPS,		/* objects copied up (or linked up) */
	UNIONFS_ST_WHITEOUTS,		/* whiteouts written */
	UNIONFS_ST_RD_BUILT,		/* readdir states built */
	UNIONFS_ST_RD_RECONCILED,	/* ... found stale and reconciled */
	UNIONFS_ST_RD_REBUILT,		/* ... found damaged and rebuilt */
	UNIONFS_ST_RD_COUNTED,		/* builds that counted the names first */
	UNIONFS_ST_RD_CHECKS,		/* record blocks checked by a read */
	UNIONFS_ST_MAP_RECORDS,		/* inode map records written */
	UNIONFS_ST_MAP_READS,		/* forward map lookups the filter let by */
	UNIONFS_ST_NS_READS,		/* namespace node records read */
	UNIONFS_ST_ODF_ERRORS,		/* ODF errors (the ODF went ERRORS) */
	UNIONFS_ST_ODF_FULL,		/* operations refused: ODF full */
	UNIONFS_NR_STATS
};

struct unionfs_stats;
int unionfs_stats_init(void);
void unionfs_stats_exit(void);
void unionfs_stats_add(struct super_block *sb);
void unionfs_stats_del(struct unionfs_sb_info *sbi);
void unionfs_count(struct unionfs_sb_info *sbi, enum unionfs_stat which);

/* options.c */
int unionfs_parse_param(struct fs_context *fc, struct fs_parameter *param);
void unionfs_free_options(struct unionfs_options *opts);

/* remount.c */
int unionfs_remount_branches(struct fs_context *fc, struct super_block *sb);

/* super.c */
extern const struct super_operations unionfs_sops;
void unionfs_put_branch(struct unionfs_branch *br);
int unionfs_resolve_branch(struct fs_context *fc,
			   const struct unionfs_branch_spec *spec,
			   struct unionfs_branch *br);
int unionfs_rw_branch_readonly(struct fs_context *fc,
			       const struct unionfs_branch *br);
struct unionfs_dentry_info *
unionfs_root_dinfo(struct unionfs_sb_info *sbi,
		   const struct unionfs_branch *slots,
		   const struct unionfs_order *o);

/* branch.c: every change to a branch or the ODF */
int unionfs_lock_parent(struct vfsmount *mnt, struct dentry *dir);
void unionfs_unlock_parent(struct vfsmount *mnt, struct dentry *dir);
struct dentry *unionfs_lock_rename(struct vfsmount *mnt, struct dentry *d1,
				   struct dentry *d2);
void unionfs_unlock_rename(struct vfsmount *mnt, struct dentry *d1,
			   struct dentry *d2);
int unionfs_do_create(struct vfsmount *mnt, struct dentry *dir,
		      struct dentry *d, umode_t mode);
int unionfs_do_mkdir(struct vfsmount *mnt, struct dentry *dir,
		     struct dentry *d, umode_t mode);
int unionfs_do_mknod(struct vfsmount *mnt, struct dentry *dir,
		     struct dentry *d, umode_t mode, dev_t rdev);
int unionfs_do_symlink(struct vfsmount *mnt, struct dentry *dir,
		       struct dentry *d, const char *target);
int unionfs_do_link(struct vfsmount *mnt, struct dentry *old,
		    struct dentry *dir, struct dentry *d);
int unionfs_do_remove(struct vfsmount *mnt, struct dentry *dir,
		      struct dentry *d);
int unionfs_do_rename(struct vfsmount *mnt, struct dentry *odir,
		      struct dentry *od, struct dentry *ndir,
		      struct dentry *nd, unsigned int flags);
int unionfs_do_setattr(struct vfsmount *mnt, struct dentry *d,
		       struct iattr *attr);
int __unionfs_do_setxattr(struct vfsmount *mnt, struct dentry *d,
			  const char *name, const void *value, size_t size,
			  int flags);
int unionfs_do_setxattr(struct vfsmount *mnt, struct dentry *d,
			const char *name, const void *value, size_t size,
			int flags);
int __unionfs_do_removexattr(struct vfsmount *mnt, struct dentry *d,
			     const char *name);
int unionfs_do_removexattr(struct vfsmount *mnt, struct dentry *d,
			   const char *name);
struct file *unionfs_do_tmpfile(const struct path *dir, umode_t mode,
				int flags, const struct cred *cred,
				struct file *user_file);
int unionfs_do_unlink_name(const struct path *dir, const char *name);
struct file *unionfs_do_create_file(const struct path *dir, const char *name,
				    int flags);
int unionfs_do_rename_name(const struct path *dir, const char *from,
			   const char *to, unsigned int flags);
long unionfs_do_splice(struct file *in, loff_t *ppos, struct file *out,
		       loff_t *opos, size_t len);

/* odf.c */
int unionfs_odf_resolve(struct fs_context *fc, struct unionfs_sb_info *sbi,
			struct path *user_path);
int unionfs_odf_load(struct fs_context *fc, struct unionfs_sb_info *sbi,
		     const struct path *user_path);

int unionfs_odf_set_ro(struct super_block *sb, bool ro);
int unionfs_odf_set_branches(struct unionfs_sb_info *sbi,
			     struct unionfs_branch *br,
			     const struct unionfs_order *order);
void unionfs_odf_stop(struct unionfs_sb_info *sbi);
void unionfs_odf_close(struct unionfs_sb_info *sbi);
void unionfs_odf_error(struct super_block *sb, const char *what, int err);
void unionfs_odf_refused(struct super_block *sb, const char *what, int err);
u32 unionfs_odf_crc(const void *buf, size_t len, size_t crc_offset);
/* The CRC of record *@p (@len bytes) whose CRC field is @field. */
#define UNIONFS_CRC(p, len, field) ({					\
	__auto_type __rec = (p);					\
	unionfs_odf_crc(__rec, len, offsetof(typeof(*__rec), field));	\
})
int unionfs_odf_read(struct file *f, void *buf, size_t len, loff_t pos);
int unionfs_odf_write(struct file *f, const void *buf, size_t len, loff_t pos);
int unionfs_odf_fsync_dir(const struct path *dir);
int unionfs_odf_alloc_ino(struct unionfs_sb_info *sbi, u64 *uino);
void unionfs_odf_seen_ino(struct unionfs_sb_info *sbi, u64 uino);

/* ns.c: the namespace /ns (whiteouts, opaque and redirect records) */
#define UNIONFS_NS_DIR	0x0100	/* the directory has a node */
struct unionfs_ns_node {
	unsigned int flags;	/* ODF_NODE_*, UNIONFS_NS_DIR; 0 = nothing */
	struct odf_node *rec;	/* REDIRECT: the record with its entries */
	/* The record was read as of this ns_seq (0: not read) ... */
	u64 seq;
	/* ... for union directory uino standing on this upper directory. */
	u64 uino;
	u64 owner_ino;
	u32 owner_gen;
};

void unionfs_ns_forget(struct inode *inode);
void unionfs_ns_seed(struct inode *inode, const struct unionfs_ns_node *node);
void unionfs_ns_node_free(struct unionfs_ns_node *node);
int unionfs_ns_read(struct super_block *sb, struct inode *inode, u64 uino,
		    struct inode *owner, struct unionfs_ns_node *node);
int unionfs_ns_lookup_dir(struct dentry *dir, struct path *path);
int unionfs_ns_is_whiteout(struct inode *dir, const struct qstr *name,
			   bool *whiteout);
int unionfs_ns_get(struct dentry *dentry, struct unionfs_ns_node *node);
int unionfs_ns_whiteout_uino(struct super_block *sb, u64 uino,
			     struct inode *owner, const char *name,
			     unsigned int len, bool commit);
int unionfs_ns_whiteout(struct inode *dir, const struct qstr *name,
			bool commit);
int unionfs_ns_unwhiteout_uino(struct super_block *sb, u64 uino,
			       const char *name, unsigned int len);
int unionfs_ns_unwhiteout(struct inode *dir, const struct qstr *name);
char *unionfs_branch_relpath(struct dentry *d, struct dentry *root,
			     char *buf, int len);
int unionfs_branch_walk(const struct path *root, const char *rel,
			struct path *out);
int unionfs_ns_mark(struct dentry *dentry, struct inode *inode, bool redirect);
int unionfs_ns_drop(struct inode *inode);
int unionfs_reclaim_all(struct unionfs_sb_info *sbi);

/* intent.c: intents for renames, finished or dropped at mount */
int unionfs_intent_begin(struct dentry *old, struct dentry *new,
			 struct inode *upper, u64 *seq);
int unionfs_intent_begin_copyup(struct dentry *dentry, struct dentry *uparent,
				u64 *seq);
int unionfs_intent_end(struct unionfs_sb_info *sbi, u64 seq);
int unionfs_intent_replay(struct super_block *sb);

/* imap.c: the inode maps /imap/forward and /imap/reverse */
int unionfs_imap_open(struct unionfs_sb_info *sbi);
void unionfs_imap_close(struct unionfs_sb_info *sbi);
bool unionfs_imap_may_hold(const struct unionfs_sb_info *sbi, u16 branch,
			   u64 ino);
int unionfs_imap_find(struct unionfs_sb_info *sbi, int map, u16 branch,
		      u64 ino, struct odf_map_rec *rec);
struct dentry *unionfs_imap_find_copy(struct super_block *sb,
				      unsigned int bindex, struct inode *lower,
				      u64 *uino);
int unionfs_imap_record_copy(struct super_block *sb, u64 uino,
			     unsigned int lbindex, struct inode *lower,
			     unsigned int tbindex, struct dentry *upper,
			     u32 lower_links, bool *recopy);
void unionfs_imap_copy_linked(struct super_block *sb, unsigned int lbindex,
			      u64 lower_ino, unsigned int tbindex, u64 cino);
bool unionfs_imap_is_copy(struct unionfs_sb_info *sbi, unsigned int bindex,
			  u64 ino, u64 uino);
void unionfs_imap_lower_link_gone(struct super_block *sb, struct inode *inode);
int unionfs_imap_bigino(struct super_block *sb, unsigned int bindex,
			u64 lower_ino, u64 *uino);
int unionfs_imap_max_alloc(struct unionfs_sb_info *sbi, u64 *max);
int unionfs_imap_check_copy(struct unionfs_sb_info *sbi, u16 bid,
			    struct inode *upper, u64 *uino, u32 *ll);
int unionfs_imap_drop_copy(struct unionfs_sb_info *sbi, u16 bid, u64 cino);
void unionfs_imap_forget(struct super_block *sb, unsigned int bindex,
			 struct inode *upper);

/* copyup.c */
int unionfs_copy_up(struct dentry *dentry);
bool unionfs_change_in_place(struct dentry *dentry, struct path *path);
int unionfs_prepare_change(struct dentry *dentry, struct path *path,
			   bool *in_place);
void unionfs_change_done(struct dentry *dentry, bool in_place);
int unionfs_copy_up_open(struct dentry *dentry, bool trunc, bool lower_ok);
int unionfs_copy_up_other_name(struct dentry *dentry);

/* dentry.c */
extern const struct dentry_operations unionfs_dops;
struct unionfs_dentry_info *unionfs_alloc_dinfo(unsigned int nlower);
void unionfs_free_dinfo(struct unionfs_dentry_info *di);
void unionfs_lower_set(struct unionfs_lower *l, struct vfsmount *mnt,
		       struct dentry *ld, unsigned int bindex);
void unionfs_lookup_moved(struct dentry *alias, struct dentry *dentry);
struct unionfs_dentry_info *
unionfs_dinfo_shown_at(const struct unionfs_dentry_info *di, unsigned int k,
		       struct dentry *ld);
struct unionfs_dentry_info *unionfs_relookup(struct dentry *dentry,
					     struct dentry *parent,
					     const struct qstr *name);
struct unionfs_dentry_info *unionfs_relookup_file(struct dentry *dentry,
						  struct dentry *parent,
						  const struct qstr *name);
void unionfs_refresh_dir(struct dentry *alias, struct dentry *dentry);
void unionfs_swap_dinfo(struct dentry *dentry, struct unionfs_dentry_info *new);
bool unionfs_dinfo_same(const struct unionfs_dentry_info *a,
			const struct unionfs_dentry_info *b);
bool unionfs_dentry_at(struct dentry *dentry, const struct dentry *parent,
		       const struct qstr *name);
struct inode *unionfs_dinfo_real(const struct unionfs_dentry_info *di);
void unionfs_set_upper(struct dentry *dentry, struct dentry *upper);

/* namei.c */
struct dentry *unionfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags);
struct inode *unionfs_lookup_created(struct dentry *dentry,
				     struct dentry *lower);
int unionfs_ino_of(struct super_block *sb, unsigned int bindex,
		   struct inode *lower, u64 *uino, u32 *lower_links);
void unionfs_dir_origin(struct dentry *dentry, unsigned int *bindex,
			struct inode **origin);

/* dir.c: operations that change the union namespace */
extern const struct inode_operations unionfs_dir_iops;
const struct cred *unionfs_override_creds(struct super_block *sb);
const struct cred *unionfs_create_creds(struct super_block *sb);
struct dentry *unionfs_lookup_upper(struct dentry *dentry);

/* inode.c */
extern const struct inode_operations unionfs_file_iops;
extern const struct inode_operations unionfs_symlink_iops;
extern const struct inode_operations unionfs_special_iops;
extern const struct xattr_handler *unionfs_xattr_handlers[];
int unionfs_uino(struct super_block *sb, unsigned int bindex, u64 lower_ino,
		 u64 *uino);
int unionfs_uino_entry(struct super_block *sb, unsigned int bindex,
		       struct dentry *bdir, const char *name, int len,
		       u64 lower_ino, u64 *uino);
int unionfs_uino_det(struct super_block *sb, unsigned int bindex,
		     u64 lower_ino, u64 *uino);
bool unionfs_uino_quick(struct super_block *sb, unsigned int bindex,
			u64 lower_ino, u64 *uino);
struct inode *unionfs_iget(struct super_block *sb, u64 ino, struct inode *lower,
			   unsigned int bindex);
void unionfs_inode_copied_up(struct inode *inode, struct inode *upper);
void unionfs_inode_copied_lower(struct inode *inode, struct inode *real,
				unsigned int bindex);
int unionfs_inode_moved(struct inode *inode, struct inode *real,
			unsigned int bindex, const struct vfsmount *mnt);
int unionfs_setattr(unionfs_idmap_t *idmap, struct dentry *dentry,
		    struct iattr *attr);
int unionfs_getattr(unionfs_idmap_t *idmap, const struct path *path,
		    struct kstat *stat, u32 request_mask, unsigned int flags);
int unionfs_permission(unionfs_idmap_t *idmap, struct inode *inode, int mask);
void unionfs_copy_attr(struct inode *inode, const struct inode *real,
		       const struct vfsmount *mnt);
/* Defined with CONFIG_FS_POSIX_ACL only (an IS_ENABLED() caller). */
struct posix_acl *unionfs_acl_through_idmap(unionfs_idmap_t *idmap,
					    const struct inode *real,
					    struct posix_acl *acl);
#ifdef CONFIG_FS_POSIX_ACL
struct posix_acl *unionfs_get_acl(struct inode *inode, int type, bool rcu);
#else
#define unionfs_get_acl	NULL
#endif
int unionfs_xattr_change(struct dentry *dentry, const char *name,
			 const void *value, size_t size, int flags);
ssize_t unionfs_listxattr(struct dentry *dentry, char *list, size_t size);
int unionfs_init_inode_cache(void);
void unionfs_destroy_inode_cache(void);
struct inode *unionfs_alloc_inode(struct super_block *sb);
void unionfs_free_inode(struct inode *inode);
void unionfs_evict_inode(struct inode *inode);

/* export.c: NFS file handles (docs/odf-format.md section 13) */
void unionfs_export_init(struct super_block *sb);

/* file.c */
extern const struct file_operations unionfs_file_fops;
int unionfs_open_on(struct file *file, struct file *realfile);
int unionfs_count_real_open(struct super_block *sb, struct file *realfile,
			    int delta);
bool unionfs_branch_write_begin(struct unionfs_branch *br);
void unionfs_branch_write_end(struct unionfs_branch *br);
struct unionfs_branch *unionfs_file_branch(struct super_block *sb,
					   struct file *realfile);
void unionfs_mapped_prune(struct unionfs_sb_info *sbi, bool all);
bool unionfs_branch_mapped(struct unionfs_sb_info *sbi,
			   const struct unionfs_branch *br, bool writers);

/* readdir.c: directory files; the merged listing, streamed */
extern const struct file_operations unionfs_dir_fops;
bool unionfs_dir_next_part(const struct dentry *dentry, unsigned int *k,
			   struct path *path, unsigned int *bindex);
bool unionfs_dir_has_lower(const struct dentry *dentry);
bool unionfs_dir_is_merged(const struct dentry *dentry);
typedef int (*unionfs_name_fn)(void *arg, const char *name, int len, u64 ino,
			       unsigned int type, unsigned int bindex);
int unionfs_dir_stream(struct dentry *dentry, unionfs_name_fn fn, void *arg);
int unionfs_dir_count(struct dentry *dentry, u64 *count, bool exact);
bool unionfs_emit_dots(struct file *file, struct dir_context *ctx);
int unionfs_check_empty(struct dentry *dentry);

/* rdstate.c: persistent readdir state /readdir/<ino> (section 7) */
struct unionfs_rdstate;
struct unionfs_rdio;
struct unionfs_rd_txn {
	struct unionfs_rdstate *rd;	/* NULL: nothing to keep up to date */
	struct unionfs_rdio *io;
	struct dentry *dir;
	bool stale;	/* not fresh before the change: left to reconcile */
};

void unionfs_rd_begin(struct unionfs_rd_txn *t, struct dentry *dir,
		      int subclass);
void unionfs_rd_add(struct unionfs_rd_txn *t, const struct qstr *name,
		    struct inode *inode);
void unionfs_rd_del(struct unionfs_rd_txn *t, const struct qstr *name);
void unionfs_rd_end(struct unionfs_rd_txn *t, int err);
void unionfs_rd_drop(struct dentry *dir);
void unionfs_rd_rekey(struct super_block *sb);
bool unionfs_rd_usable(struct dentry *dentry);
bool unionfs_rd_exists(struct dentry *dentry);
int unionfs_rd_iterate(struct file *file, struct dir_context *ctx,
		       struct unionfs_rdio **keep);
void unionfs_rd_stream_free(struct unionfs_rdio *io);
int unionfs_rd_names_before(struct dentry *dentry, loff_t pos,
			    int (*fn)(void *arg, const char *name, int len),
			    void *arg);
loff_t unionfs_rd_end_offset(struct file *file);
void unionfs_rd_free(struct inode *inode);
void unionfs_rd_flush(struct super_block *sb, bool always);
void unionfs_rd_quiesce(struct super_block *sb, bool ro);

#endif /* _UNIONFS_H */
