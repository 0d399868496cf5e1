// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: the version differences that need more than a name
 * (compat.h has the others).
 *
 * Up to 6.1 a POSIX ACL is an extended attribute all the way down:
 * vfs_getxattr("system.posix_acl_access") reaches the file system's
 * handler.  Since 6.2 the VFS keeps ACLs apart: the system calls turn
 * those names into vfs_get_acl()/vfs_set_acl() and ->get_acl/->set_acl,
 * and vfs_getxattr() and friends refuse them with EOPNOTSUPP.  The module
 * copies, sets and removes attributes by name (copy-up, setxattr on the
 * union), so here an ACL name is turned into the ACL calls and the ACL
 * into its xattr form and back.  The ids are those the branch stores,
 * as for the owner (the union does not remap ids of an idmapped branch).
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/fs.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "unionfs.h"

#if UNIONFS_ACL_NOT_XATTR

static ssize_t unionfs_get_acl_xattr(unionfs_idmap_t *idmap,
				     struct dentry *dentry, const char *name,
				     void *value, size_t size)
{
	struct posix_acl *acl;
	ssize_t ret;

	acl = vfs_get_acl(idmap, dentry, name);
	if (IS_ERR(acl))
		return PTR_ERR(acl);
	ret = posix_acl_xattr_size(acl->a_count);
	if (value) {
		if (ret > size)
			ret = -ERANGE;
		else
			ret = posix_acl_to_xattr(&init_user_ns, acl, value, ret);
	}
	posix_acl_release(acl);
	return ret;
}

static int unionfs_set_acl_xattr(unionfs_idmap_t *idmap,
				 struct dentry *dentry, const char *name,
				 const void *value, size_t size)
{
	struct posix_acl *acl;
	int err;

	acl = posix_acl_from_xattr(&init_user_ns, value, size);
	if (IS_ERR(acl))
		return PTR_ERR(acl);
	err = vfs_set_acl(idmap, dentry, name, acl);
	posix_acl_release(acl);
	return err;
}

ssize_t unionfs_vfs_getxattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			     const char *name, void *value, size_t size)
{
	if (is_posix_acl_xattr(name))
		return unionfs_get_acl_xattr(idmap, dentry, name, value, size);
	return vfs_getxattr(idmap, dentry, name, value, size);
}

int unionfs_vfs_setxattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			 const char *name, const void *value, size_t size,
			 int flags)
{
	if (is_posix_acl_xattr(name))
		return unionfs_set_acl_xattr(idmap, dentry, name, value, size);
	return vfs_setxattr(idmap, dentry, name, value, size, flags);
}

int unionfs_vfs_removexattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			    const char *name)
{
	if (is_posix_acl_xattr(name))
		return vfs_remove_acl(idmap, dentry, name);
	return vfs_removexattr(idmap, dentry, name);
}

#ifdef CONFIG_FS_POSIX_ACL
/*
 * setfacl on the union (6.2+): the VFS checked ownership on the union
 * inode (set_posix_acl()); the change goes the way of any attribute
 * change, copy-up first, then to the upper object.
 */
int unionfs_set_acl(unionfs_idmap_t *idmap, struct dentry *dentry,
		    struct posix_acl *acl, int type)
{
	const char *name = type == ACL_TYPE_ACCESS ?
			   XATTR_NAME_POSIX_ACL_ACCESS :
			   XATTR_NAME_POSIX_ACL_DEFAULT;
	void *value;
	int size, err;

	if (!acl)
		return unionfs_xattr_change(dentry, name, NULL, 0, 0);
	size = posix_acl_xattr_size(acl->a_count);
	value = kmalloc(size, GFP_KERNEL);
	if (!value)
		return -ENOMEM;
	err = posix_acl_to_xattr(&init_user_ns, acl, value, size);
	if (err >= 0)
		err = unionfs_xattr_change(dentry, name, value, size, 0);
	kfree(value);
	return err;
}
#endif

#else /* ACLs are extended attributes */

ssize_t unionfs_vfs_getxattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			     const char *name, void *value, size_t size)
{
	return vfs_getxattr(idmap, dentry, name, value, size);
}

int unionfs_vfs_setxattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			 const char *name, const void *value, size_t size,
			 int flags)
{
	return vfs_setxattr(idmap, dentry, name, value, size, flags);
}

int unionfs_vfs_removexattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			    const char *name)
{
	return vfs_removexattr(idmap, dentry, name);
}

#endif
