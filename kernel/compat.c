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

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/xattr.h>
#include "unionfs.h"
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/backing-file.h>
#endif

#if UNIONFS_ACL_NOT_XATTR

static ssize_t unionfs_get_acl_xattr(unionfs_idmap_t *idmap,
				     struct dentry *dentry, const char *name,
				     void *value, size_t size)
{
	struct posix_acl *acl;
	ssize_t ret;

	/* In the file system's ids: show them as the mount does. */
	acl = vfs_get_acl(idmap, dentry, name);
	if (IS_ENABLED(CONFIG_FS_POSIX_ACL) && !IS_ERR(acl))
		acl = unionfs_acl_through_idmap(idmap, d_inode(dentry), acl);
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

/*
 * The real file behind a union regular file (compat.h).  ->private_data
 * of the union file holds it.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)

struct file *unionfs_open_real(struct file *file, const struct path *real,
			       int flags)
{
	return dentry_open(real, flags, current_cred());
}

/* An O_TMPFILE in @parent as the real file of @file (O_TMPFILE too). */
struct file *unionfs_open_real_tmpfile(struct file *file,
				       const struct path *parent, umode_t mode,
				       int flags, const struct cred *opener)
{
	return unionfs_tmpfile_open(unionfs_mnt_idmap(parent->mnt), parent,
				    mode, flags, opener);
}

ssize_t unionfs_real_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	ssize_t ret;

	ret = vfs_iter_read(file->private_data, iter, &iocb->ki_pos,
			    iocb->ki_flags & IOCB_NOWAIT ? RWF_NOWAIT : 0);
	unionfs_file_accessed(file);
	return ret;
}

static rwf_t unionfs_iocb_rwf(int ki_flags)
{
	rwf_t flags = 0;

	if (ki_flags & IOCB_NOWAIT)
		flags |= RWF_NOWAIT;
	if (ki_flags & IOCB_HIPRI)
		flags |= RWF_HIPRI;
	if (ki_flags & IOCB_DSYNC)
		flags |= RWF_DSYNC;
	if (ki_flags & IOCB_SYNC)
		flags |= RWF_SYNC;
	return flags;
}

ssize_t unionfs_real_write_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *realfile = file->private_data;
	ssize_t ret;

	file_start_write(realfile);
	ret = vfs_iter_write(realfile, iter, &iocb->ki_pos,
			     unionfs_iocb_rwf(iocb->ki_flags));
	file_end_write(realfile);
	unionfs_file_modified(file);
	return ret;
}

/* Splice through the union file's own ->read_iter and ->write_iter. */
ssize_t unionfs_real_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
	return generic_file_splice_read(in, ppos, pipe, len, flags);
#else
	return copy_splice_read(in, ppos, pipe, len, flags);
#endif
}

ssize_t unionfs_real_splice_write(struct pipe_inode_info *pipe,
				  struct file *out, loff_t *ppos, size_t len,
				  unsigned int flags)
{
	return iter_file_splice_write(pipe, out, ppos, len, flags);
}

/* The mapping is the real file's, and /proc/PID/maps shows its path. */
int unionfs_real_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *realfile = file->private_data;

	if (!realfile->f_op->mmap)
		return -ENODEV;
	vma_set_file(vma, realfile);
	return call_mmap(vma->vm_file, vma);
}

#else /* backing files */

/*
 * The mounter's credentials for the open and for the I/O: the VFS
 * checked the caller on the union inode, unionfs_may_open_real() the
 * mounter on the real one.  The set-id bits are cleared by the helpers
 * on the union file with the caller's credentials (file_remove_privs()
 * through unionfs_setattr()) before a write.
 */
static const struct cred *unionfs_real_cred(struct file *file)
{
	return UNIONFS_SB(file_inode(file)->i_sb)->creator_cred;
}

static void unionfs_real_end_write(struct file *file, loff_t pos, ssize_t ret)
{
	unionfs_file_modified(file);
}

#define UNIONFS_BACKING_CTX(file) {			\
	.cred = unionfs_real_cred(file),		\
	.user_file = (file),				\
	.accessed = unionfs_file_accessed,		\
	.end_write = unionfs_real_end_write,		\
}

/* The backing file's user path is the union file's path. */
struct file *unionfs_open_real(struct file *file, const struct path *real,
			       int flags)
{
	return backing_file_open(file, flags, real, unionfs_real_cred(file));
}

/*
 * An O_TMPFILE in @parent as the real file of @file (O_TMPFILE too): a
 * backing file like the others, made with the current credentials (the
 * caller's fsuid and fsgid), used with the mounter's; @opener is unused.
 */
struct file *unionfs_open_real_tmpfile(struct file *file,
				       const struct path *parent, umode_t mode,
				       int flags, const struct cred *opener)
{
	/* No inode yet: d_tmpfile() comes after. */
	return backing_tmpfile_open(file, flags, parent, mode,
				    UNIONFS_SB(file->f_path.dentry->d_sb)->creator_cred);
}

ssize_t unionfs_real_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct backing_file_ctx ctx = UNIONFS_BACKING_CTX(file);

	return backing_file_read_iter(file->private_data, iter, iocb,
				      iocb->ki_flags, &ctx);
}

ssize_t unionfs_real_write_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct backing_file_ctx ctx = UNIONFS_BACKING_CTX(file);

	return backing_file_write_iter(file->private_data, iter, iocb,
				       iocb->ki_flags, &ctx);
}

ssize_t unionfs_real_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags)
{
	struct backing_file_ctx ctx = UNIONFS_BACKING_CTX(in);

	return backing_file_splice_read(in->private_data, ppos, pipe, len,
					flags, &ctx);
}

/* file_remove_privs() on the union file wants its inode locked. */
ssize_t unionfs_real_splice_write(struct pipe_inode_info *pipe,
				  struct file *out, loff_t *ppos, size_t len,
				  unsigned int flags)
{
	struct inode *inode = file_inode(out);
	struct backing_file_ctx ctx = UNIONFS_BACKING_CTX(out);
	ssize_t ret;

	inode_lock(inode);
	ret = backing_file_splice_write(pipe, out->private_data, ppos, len,
					flags, &ctx);
	inode_unlock(inode);
	return ret;
}

/*
 * The mapping is the real file's; /proc/PID/maps shows the backing
 * file's user path, the union path.
 */
int unionfs_real_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct backing_file_ctx ctx = UNIONFS_BACKING_CTX(file);

	return backing_file_mmap(file->private_data, vma, &ctx);
}

#endif
