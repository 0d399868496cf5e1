/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel version differences, in one place.  The module targets Linux
 * 6.1 LTS first; 6.3 replaced the user_namespace argument of the inode
 * operations and of the vfs_* helpers with struct mnt_idmap.  Every
 * operation in the module takes an "idmap" of type unionfs_idmap_t and
 * passes the branch mount's map down with unionfs_mnt_idmap().
 */
#ifndef _UNIONFS_COMPAT_H
#define _UNIONFS_COMPAT_H

#include <linux/version.h>
#include <linux/mount.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
typedef struct user_namespace unionfs_idmap_t;
#define unionfs_mnt_idmap(mnt)	mnt_user_ns(mnt)
#else
typedef struct mnt_idmap unionfs_idmap_t;
#define unionfs_mnt_idmap(mnt)	mnt_idmap(mnt)
#endif

/*
 * 6.2 renamed the inode operation that gives the VFS an inode's ACL for
 * permission checks from ->get_acl to ->get_inode_acl (same arguments),
 * and get_acl() to get_inode_acl().
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define unionfs_get_acl_op		get_acl
#define unionfs_real_get_acl(inode, type)	get_acl(inode, type)
#else
#define unionfs_get_acl_op		get_inode_acl
#define unionfs_real_get_acl(inode, type)	get_inode_acl(inode, type)
#endif

/*
 * Exported by fs/namei.c (EXPORT_SYMBOL) but declared only in the
 * private fs/internal.h: walk a relative path below a given dentry.
 */
struct path;
int vfs_path_lookup(struct dentry *dentry, struct vfsmount *mnt,
		    const char *name, unsigned int flags, struct path *path);

#endif /* _UNIONFS_COMPAT_H */
