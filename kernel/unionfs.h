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
#include <linux/path.h>
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

/* Mount options collected by the fs_context before fill_super. */
struct unionfs_options {
	char *odf;				/* odf=: device or directory */
	unsigned int nbranches;
	struct unionfs_branch_spec *branches;	/* dirs=, highest priority first */
};

/* A resolved branch of a mounted union; index 0 has the highest priority. */
struct unionfs_branch {
	struct path root;
	enum unionfs_branch_mode mode;
	u16 id;			/* persistent branch id (ODF branch table) */
	char *name;		/* the path as given in dirs=, for show_options */
};

struct unionfs_sb_info {
	unsigned int nbranches;
	struct unionfs_branch *branches;
	char *odf_name;		/* odf= as given, for show_options */
	struct path odf;	/* the ODF volume's root, a private mount */
	const struct cred *creator_cred;	/* for work on the branches */
};

struct unionfs_inode_info {
	struct inode *lower;	/* the object on the branch that shows it */
	unsigned int bindex;	/* index of that branch */
	struct inode vfs_inode;
};

/* One branch's dentry for a union name. */
struct unionfs_lower {
	struct path path;	/* path.dentry may be negative */
	unsigned int bindex;
	bool positive;		/* path.dentry was positive at lookup */
};

/*
 * d_fsdata of every union dentry: the dentries of the name on each branch
 * that was searched, in priority order.  The first positive one is what
 * the union shows; for a directory, every positive directory below it
 * (up to an opaque one) is merged into it.  Negative entries are kept so
 * a name that appears in a branch behind the union's back is noticed.
 */
struct unionfs_dentry_info {
	unsigned int nlower;
	unsigned int top;	/* index of the shown entry; nlower if negative */
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
	return UNIONFS_I(inode)->lower;
}

static inline struct unionfs_dentry_info *UNIONFS_D(const struct dentry *dentry)
{
	return dentry->d_fsdata;
}

/*
 * The branch object a union dentry shows, or NULL for a negative one.
 * Fixed at lookup: a lower dentry that changes later makes the union
 * dentry fail revalidation instead.
 */
static inline const struct unionfs_lower *
unionfs_top_lower(const struct dentry *dentry)
{
	const struct unionfs_dentry_info *di = UNIONFS_D(dentry);

	return di->top < di->nlower ? &di->lower[di->top] : NULL;
}

static inline const struct path *unionfs_lower_path(const struct dentry *dentry)
{
	return &unionfs_top_lower(dentry)->path;
}

static inline struct unionfs_branch *unionfs_branch(const struct super_block *sb,
						    unsigned int bindex)
{
	return &UNIONFS_SB(sb)->branches[bindex];
}

/* options.c */
int unionfs_parse_param(struct fs_context *fc, struct fs_parameter *param);
void unionfs_free_options(struct unionfs_options *opts);

/* super.c */
extern const struct super_operations unionfs_sops;

/* odf.c */
int unionfs_odf_resolve(struct fs_context *fc, struct unionfs_sb_info *sbi,
			struct path *user_path);
int unionfs_odf_load(struct fs_context *fc, struct unionfs_sb_info *sbi,
		     const struct path *user_path);
void unionfs_odf_close(struct unionfs_sb_info *sbi);

/* dentry.c */
extern const struct dentry_operations unionfs_dops;
struct unionfs_dentry_info *unionfs_alloc_dinfo(unsigned int nlower);
void unionfs_free_dinfo(struct unionfs_dentry_info *di);

/* namei.c */
struct dentry *unionfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags);

/* inode.c */
extern const struct inode_operations unionfs_dir_iops;
extern const struct inode_operations unionfs_file_iops;
extern const struct inode_operations unionfs_symlink_iops;
extern const struct inode_operations unionfs_special_iops;
extern const struct xattr_handler *unionfs_xattr_handlers[];
int unionfs_uino(struct super_block *sb, unsigned int bindex, u64 lower_ino,
		 u64 *uino);
struct inode *unionfs_iget(struct super_block *sb, u64 ino, struct inode *lower,
			   unsigned int bindex);
int unionfs_init_inode_cache(void);
void unionfs_destroy_inode_cache(void);
struct inode *unionfs_alloc_inode(struct super_block *sb);
void unionfs_free_inode(struct inode *inode);
void unionfs_evict_inode(struct inode *inode);

/* file.c */
extern const struct file_operations unionfs_file_fops;

/* readdir.c */
extern const struct file_operations unionfs_dir_fops;
bool unionfs_dir_is_merged(const struct dentry *dentry);

#endif /* _UNIONFS_H */
