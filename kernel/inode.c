// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: inodes and their attribute operations.
 *
 * A union inode wraps the inode of the branch object it shows and mirrors
 * its attributes; permission checks are the branch's own, so owner, mode
 * and ACLs mean what they mean on the branch.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/fs_stack.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "unionfs.h"

static struct kmem_cache *unionfs_inode_cachep;

static void unionfs_inode_init_once(void *obj)
{
	struct unionfs_inode_info *ui = obj;

	inode_init_once(&ui->vfs_inode);
}

int unionfs_init_inode_cache(void)
{
	unionfs_inode_cachep = kmem_cache_create("unionfs_inode_cache",
						 sizeof(struct unionfs_inode_info), 0,
						 SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
						 unionfs_inode_init_once);
	return unionfs_inode_cachep ? 0 : -ENOMEM;
}

void unionfs_destroy_inode_cache(void)
{
	/* Inodes are freed after an RCU grace period. */
	rcu_barrier();
	kmem_cache_destroy(unionfs_inode_cachep);
}

struct inode *unionfs_alloc_inode(struct super_block *sb)
{
	struct unionfs_inode_info *ui;

	ui = alloc_inode_sb(sb, unionfs_inode_cachep, GFP_KERNEL);
	if (!ui)
		return NULL;
	ui->lower = NULL;
	return &ui->vfs_inode;
}

void unionfs_free_inode(struct inode *inode)
{
	kmem_cache_free(unionfs_inode_cachep, UNIONFS_I(inode));
}

void unionfs_evict_inode(struct inode *inode)
{
	struct inode *lower = unionfs_lower_inode(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	UNIONFS_I(inode)->lower = NULL;
	iput(lower);
}

/*
 * Union inode numbers: an object gets a number computed from its branch's
 * persistent id and its inode number there, so looking a tree up writes
 * nothing.  Numbers that do not fit need an allocation on the ODF.
 */
int unionfs_uino(struct super_block *sb, unsigned int bindex, u64 lower_ino,
		 u64 *uino)
{
	if (lower_ino > ODF_UINO_LOW_MASK) {
		pr_warn_ratelimited("branch '%s': inode number %llu does not fit in 48 bits; mapping large inode numbers is not supported yet\n",
				    unionfs_branch(sb, bindex)->name, lower_ino);
		return -EOVERFLOW;
	}
	*uino = (u64)unionfs_branch(sb, bindex)->id << ODF_UINO_SHIFT |
		lower_ino;
	return 0;
}

struct unionfs_iget_key {
	struct inode *lower;
	unsigned int bindex;
};

/*
 * The lower inode is part of the key: a branch object deleted behind the
 * union's back may have its inode number reused while the old union
 * inode is still cached.
 */
static int unionfs_inode_test(struct inode *inode, void *data)
{
	struct unionfs_iget_key *key = data;

	return unionfs_lower_inode(inode) == key->lower;
}

static int unionfs_inode_set(struct inode *inode, void *data)
{
	struct unionfs_iget_key *key = data;

	UNIONFS_I(inode)->lower = igrab(key->lower);
	UNIONFS_I(inode)->bindex = key->bindex;
	return UNIONFS_I(inode)->lower ? 0 : -ESTALE;
}

struct inode *unionfs_iget(struct super_block *sb, u64 ino, struct inode *lower,
			   unsigned int bindex)
{
	struct unionfs_iget_key key = { .lower = lower, .bindex = bindex };
	struct inode *inode;

	inode = iget5_locked(sb, ino, unionfs_inode_test, unionfs_inode_set,
			     &key);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(inode->i_state & I_NEW))
		return inode;

	inode->i_ino = ino;
	inode->i_mode = lower->i_mode;
	fsstack_copy_attr_all(inode, lower);
	fsstack_copy_inode_size(inode, lower);
	switch (lower->i_mode & S_IFMT) {
	case S_IFDIR:
		inode->i_op = &unionfs_dir_iops;
		inode->i_fop = &unionfs_dir_fops;
		break;
	case S_IFREG:
		inode->i_op = &unionfs_file_iops;
		inode->i_fop = &unionfs_file_fops;
		break;
	case S_IFLNK:
		inode->i_op = &unionfs_symlink_iops;
		break;
	default:
		inode->i_op = &unionfs_special_iops;
		init_special_inode(inode, lower->i_mode, lower->i_rdev);
		break;
	}
	unlock_new_inode(inode);
	return inode;
}

static int unionfs_getattr(unionfs_idmap_t *idmap, const struct path *path,
			   struct kstat *stat, u32 request_mask,
			   unsigned int flags)
{
	struct dentry *dentry = path->dentry;
	struct inode *inode = d_inode(dentry);
	int err;

	err = vfs_getattr(unionfs_lower_path(dentry), stat, request_mask, flags);
	if (err)
		return err;
	fsstack_copy_attr_all(inode, unionfs_lower_inode(inode));
	stat->dev = dentry->d_sb->s_dev;
	stat->ino = inode->i_ino;
	/*
	 * A merged directory's subdirectories are spread over its branches;
	 * like btrfs, say 1 ("unknown") rather than a wrong count, which
	 * would mislead find's leaf optimisation.
	 */
	if (S_ISDIR(inode->i_mode) && unionfs_dir_is_merged(dentry))
		stat->nlink = 1;
	return 0;
}

/*
 * The branch decides: its owner, mode, ACLs and the branch mount's id
 * mapping.  Called in RCU walk mode too, which inode_permission supports.
 */
static int unionfs_permission(unionfs_idmap_t *idmap, struct inode *inode,
			      int mask)
{
	struct inode *lower = unionfs_lower_inode(inode);
	struct vfsmount *mnt;

	if (!lower)
		return -ESTALE;
	mnt = unionfs_branch(inode->i_sb, UNIONFS_I(inode)->bindex)->root.mnt;
	return inode_permission(unionfs_mnt_idmap(mnt), lower, mask);
}

static const char *unionfs_get_link(struct dentry *dentry, struct inode *inode,
				    struct delayed_call *done)
{
	if (!dentry)
		return ERR_PTR(-ECHILD);
	return vfs_get_link(unionfs_lower_path(dentry)->dentry, done);
}

/*
 * Extended attributes, POSIX ACLs included, are the branch object's.
 * Lower reads run with the caller's credentials so the branch applies its
 * own rules (trusted.* needs CAP_SYS_ADMIN there too).
 */
static int unionfs_xattr_get(const struct xattr_handler *handler,
			     struct dentry *dentry, struct inode *inode,
			     const char *name, void *buffer, size_t size)
{
	const struct path *lower = unionfs_lower_path(dentry);

	return vfs_getxattr(unionfs_mnt_idmap(lower->mnt), lower->dentry,
			    name, buffer, size);
}

/* Changing an attribute needs copy-up, which read-only unions never do. */
static int unionfs_xattr_set(const struct xattr_handler *handler,
			     unionfs_idmap_t *idmap, struct dentry *dentry,
			     struct inode *inode, const char *name,
			     const void *value, size_t size, int flags)
{
	return -EROFS;
}

static ssize_t unionfs_listxattr(struct dentry *dentry, char *list,
				 size_t size)
{
	return vfs_listxattr(unionfs_lower_path(dentry)->dentry, list, size);
}

static const struct xattr_handler unionfs_xattr_handler = {
	.prefix	= "",	/* every name: the branch decides */
	.get	= unionfs_xattr_get,
	.set	= unionfs_xattr_set,
};

const struct xattr_handler *unionfs_xattr_handlers[] = {
	&unionfs_xattr_handler,
	NULL
};

const struct inode_operations unionfs_dir_iops = {
	.lookup		= unionfs_lookup,
	.getattr	= unionfs_getattr,
	.permission	= unionfs_permission,
	.listxattr	= unionfs_listxattr,
};

const struct inode_operations unionfs_file_iops = {
	.getattr	= unionfs_getattr,
	.permission	= unionfs_permission,
	.listxattr	= unionfs_listxattr,
};

const struct inode_operations unionfs_symlink_iops = {
	.get_link	= unionfs_get_link,
	.getattr	= unionfs_getattr,
	.listxattr	= unionfs_listxattr,
};

const struct inode_operations unionfs_special_iops = {
	.getattr	= unionfs_getattr,
	.permission	= unionfs_permission,
	.listxattr	= unionfs_listxattr,
};
