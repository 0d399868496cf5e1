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
#include "compat.h"

#define UNIONFS_NAME		"unionfs"
#define UNIONFS_SUPER_MAGIC	0x4f444655	/* "UFDO" */

/*
 * Branch limit of the mount syntax.  The ODF branch table is sized by its
 * own format; this is what one mount may name.
 */
#define UNIONFS_MAX_BRANCHES	128

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

/* A resolved branch of a mounted union. */
struct unionfs_branch {
	struct path root;
	enum unionfs_branch_mode mode;
	char *name;		/* the path as given in dirs=, for show_options */
};

struct unionfs_sb_info {
	unsigned int nbranches;
	struct unionfs_branch *branches;
	char *odf_name;		/* odf= as given, for show_options */
	struct path odf;	/* the ODF root (validated, not yet used) */
};

struct unionfs_inode_info {
	struct inode *lower;	/* the object on the branch that holds it */
	struct inode vfs_inode;
};

/* d_fsdata of every union dentry. */
struct unionfs_dentry_info {
	struct path lower;	/* lower.dentry may be negative */
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

static inline const struct path *unionfs_lower_path(const struct dentry *dentry)
{
	return &UNIONFS_D(dentry)->lower;
}

/* options.c */
int unionfs_parse_param(struct fs_context *fc, struct fs_parameter *param);
void unionfs_free_options(struct unionfs_options *opts);

/* super.c */
extern const struct super_operations unionfs_sops;

/* dentry.c */
extern const struct dentry_operations unionfs_dops;
struct unionfs_dentry_info *unionfs_alloc_dinfo(const struct path *lower);

/* namei.c */
struct dentry *unionfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags);

/* inode.c */
extern const struct inode_operations unionfs_dir_iops;
extern const struct inode_operations unionfs_file_iops;
extern const struct inode_operations unionfs_symlink_iops;
extern const struct inode_operations unionfs_special_iops;
struct inode *unionfs_iget(struct super_block *sb, struct inode *lower);
int unionfs_init_inode_cache(void);
void unionfs_destroy_inode_cache(void);
struct inode *unionfs_alloc_inode(struct super_block *sb);
void unionfs_free_inode(struct inode *inode);
void unionfs_evict_inode(struct inode *inode);

/* file.c */
extern const struct file_operations unionfs_file_fops;
int unionfs_open(struct inode *inode, struct file *file);
int unionfs_release(struct inode *inode, struct file *file);
loff_t unionfs_llseek(struct file *file, loff_t offset, int whence);

/* readdir.c */
extern const struct file_operations unionfs_dir_fops;

#endif /* _UNIONFS_H */
