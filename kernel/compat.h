/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel version differences, in one place.  The module supports the two
 * LTS kernels Debian ships, 6.1 (Debian 12) and 6.12 (Debian 13, and
 * Debian 12's backports); every #if on the kernel version is here or in
 * compat.c, and the rest of the module calls the unionfs_* names below.
 *
 * What changed between 6.1 and 6.12 that the module meets:
 *
 *  6.2  ->get_acl became ->get_inode_acl; POSIX ACLs stopped being
 *       extended attributes inside the VFS: getxattr/setxattr of
 *       system.posix_acl_* go to ->get_acl/->set_acl and vfs_getxattr()
 *       and friends refuse those names (compat.c).
 *  6.3  struct mnt_idmap replaced the user_namespace argument of the inode
 *       operations and of the vfs_* helpers (and in struct renamedata),
 *       and of the id mapping helpers an idmapped branch mount needs
 *       (i_uid_into_vfsuid(), make_vfsuid()): unionfs_idmap_t below.
 *  6.5  generic_file_splice_read() went; copy_splice_read() reads through
 *       ->read_iter, which is what a pass-through file needs.
 *  6.6  kernel_tmpfile_open() replaced vfs_tmpfile_open(); inode ctime
 *       behind accessors.
 *  6.7  atime and mtime behind accessors; do_splice_direct() takes the
 *       output file's freeze protection itself; ->getattr gets
 *       AT_GETATTR_NOSEC, which vfs_getattr() refuses.
 *  6.10 security_inode_copy_up_xattr() takes the source dentry and says
 *       "discard" with -ECANCELED instead of 1.
 *  6.5  exportfs_encode_fh() takes flags (EXPORT_FH_CONNECTABLE) instead
 *       of a "connectable" boolean.
 *  6.12 struct file lost f_version; <asm/unaligned.h> became
 *       <linux/unaligned.h>.
 *  6.12 backing files (fs/backing-file.c; the module uses them from
 *       6.12 on, the one kernel with them it is tested on): a stacking
 *       file system opens the real file with backing_file_open(), which
 *       remembers the union file's path, and passes read, write, splice
 *       and mmap through backing_file_*() with a struct
 *       backing_file_ctx (credentials, after-read and after-write
 *       callbacks).  compat.c uses them on 6.12: /proc/PID/maps shows
 *       the union path of a mapped file, not the path inside the
 *       branch, and the helpers pass async reads and writes on as async
 *       and clear set-id bits on the union file; 6.1 keeps
 *       dentry_open() and the synchronous VFS calls.
 */
#ifndef _UNIONFS_COMPAT_H
#define _UNIONFS_COMPAT_H

#include <linux/version.h>
#include <linux/exportfs.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/security.h>
#include <linux/splice.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#include <asm/unaligned.h>
#else
#include <linux/unaligned.h>
#endif

/* The last argument of exportfs_encode_fh() asking for the parent. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
#define UNIONFS_FH_CONNECTABLE	1
#else
#define UNIONFS_FH_CONNECTABLE	EXPORT_FH_CONNECTABLE
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
typedef struct user_namespace unionfs_idmap_t;
#define unionfs_mnt_idmap(mnt)	mnt_user_ns(mnt)
/* The identity map: the union inode's own ids are not remapped. */
#define unionfs_nop_idmap	(&init_user_ns)
#else
typedef struct mnt_idmap unionfs_idmap_t;
#define unionfs_mnt_idmap(mnt)	mnt_idmap(mnt)
#define unionfs_nop_idmap	(&nop_mnt_idmap)
#endif

/*
 * 6.2 renamed the inode operation that gives the VFS an inode's ACL for
 * permission checks from ->get_acl to ->get_inode_acl (same arguments),
 * and get_acl() to get_inode_acl().  ->get_acl and ->set_acl are now the
 * operations behind getxattr/setxattr of an ACL; the union needs
 * ->set_acl there (compat.c), ->get_inode_acl answers the reads.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define unionfs_get_acl_op		get_acl
#define unionfs_real_get_acl(inode, type)	get_acl(inode, type)
#define UNIONFS_ACL_NOT_XATTR		0
#else
#define unionfs_get_acl_op		get_inode_acl
#define unionfs_real_get_acl(inode, type)	get_inode_acl(inode, type)
#define UNIONFS_ACL_NOT_XATTR		1
#endif

/* ->set_acl of the union inodes, or nothing where ACLs are xattrs. */
#if UNIONFS_ACL_NOT_XATTR && IS_ENABLED(CONFIG_FS_POSIX_ACL)
struct posix_acl;
int unionfs_set_acl(unionfs_idmap_t *idmap, struct dentry *dentry,
		    struct posix_acl *acl, int type);
#define UNIONFS_SET_ACL_OP	.set_acl = unionfs_set_acl,
#else
#define UNIONFS_SET_ACL_OP
#endif

/*
 * Extended attributes of a branch object by name, ACLs included, in the
 * xattr format on every kernel (compat.c): the callers copy and set them
 * as opaque values.
 */
ssize_t unionfs_vfs_getxattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			     const char *name, void *value, size_t size);
int unionfs_vfs_setxattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			 const char *name, const void *value, size_t size,
			 int flags);
int unionfs_vfs_removexattr(unionfs_idmap_t *idmap, struct dentry *dentry,
			    const char *name);

static inline void unionfs_init_renamedata(struct renamedata *rd,
					   unionfs_idmap_t *idmap)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
	rd->old_mnt_userns = idmap;
	rd->new_mnt_userns = idmap;
#else
	rd->old_mnt_idmap = idmap;
	rd->new_mnt_idmap = idmap;
#endif
}

/*
 * The real file behind a union regular file (compat.c).  The union file
 * holds it in ->private_data.  Up to 6.11 it is an ordinary open file of
 * the branch, opened with the caller's credentials, and I/O reaches it
 * through the VFS calls with the caller's credentials.  From 6.12 it is
 * a backing file whose user path is the union file's path, opened and
 * used with the mounter's credentials (as for any other work on the
 * branches), and I/O goes through the backing_file_*() helpers.  After
 * a read, splice-read or mmap they call unionfs_file_accessed(), after a
 * write or splice-write unionfs_file_modified() (file.c).
 *
 * unionfs_real_write_iter() is called with the union inode locked;
 * unionfs_real_splice_write() locks it where needed.
 */
struct iov_iter;
struct pipe_inode_info;
struct vm_area_struct;
void unionfs_file_accessed(struct file *file);
void unionfs_file_modified(struct file *file);
struct file *unionfs_open_real(struct file *file, const struct path *real,
			       int flags);
struct file *unionfs_open_real_tmpfile(struct file *file,
					const struct path *parent, umode_t mode,
					int flags, const struct cred *opener);
ssize_t unionfs_real_read_iter(struct kiocb *iocb, struct iov_iter *iter);
ssize_t unionfs_real_write_iter(struct kiocb *iocb, struct iov_iter *iter);
ssize_t unionfs_real_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags);
ssize_t unionfs_real_splice_write(struct pipe_inode_info *pipe,
				  struct file *out, loff_t *ppos, size_t len,
				  unsigned int flags);
int unionfs_real_mmap(struct file *file, struct vm_area_struct *vma);

static inline struct file *unionfs_tmpfile_open(unionfs_idmap_t *idmap,
						const struct path *dir,
						umode_t mode, int flags,
						const struct cred *cred)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	return vfs_tmpfile_open(idmap, dir, mode, flags, cred);
#else
	return kernel_tmpfile_open(idmap, dir, mode, flags, cred);
#endif
}

/* Inode times: fields up to 6.5 (ctime) and 6.6 (atime, mtime). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
static inline struct timespec64 unionfs_inode_ctime(const struct inode *inode)
{
	return inode->i_ctime;
}

static inline void unionfs_set_inode_ctime(struct inode *inode,
					   struct timespec64 ts)
{
	inode->i_ctime = ts;
}
#else
static inline struct timespec64 unionfs_inode_ctime(const struct inode *inode)
{
	return inode_get_ctime(inode);
}

static inline void unionfs_set_inode_ctime(struct inode *inode,
					   struct timespec64 ts)
{
	inode_set_ctime_to_ts(inode, ts);
}
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
static inline struct timespec64 unionfs_inode_atime(const struct inode *inode)
{
	return inode->i_atime;
}

static inline struct timespec64 unionfs_inode_mtime(const struct inode *inode)
{
	return inode->i_mtime;
}

static inline void unionfs_set_inode_atime(struct inode *inode,
					   struct timespec64 ts)
{
	inode->i_atime = ts;
}

static inline void unionfs_set_inode_mtime(struct inode *inode,
					   struct timespec64 ts)
{
	inode->i_mtime = ts;
}
#else
static inline struct timespec64 unionfs_inode_atime(const struct inode *inode)
{
	return inode_get_atime(inode);
}

static inline struct timespec64 unionfs_inode_mtime(const struct inode *inode)
{
	return inode_get_mtime(inode);
}

static inline void unionfs_set_inode_atime(struct inode *inode,
					   struct timespec64 ts)
{
	inode_set_atime_to_ts(inode, ts);
}

static inline void unionfs_set_inode_mtime(struct inode *inode,
					   struct timespec64 ts)
{
	inode_set_mtime_to_ts(inode, ts);
}
#endif

/*
 * Copy bytes between two files with the freeze protection of write(2)
 * on @out: the caller's job up to 6.6, do_splice_direct()'s since.
 */
static inline long unionfs_splice_direct(struct file *in, loff_t *ppos,
					 struct file *out, loff_t *opos,
					 size_t len)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
	long n;

	file_start_write(out);
	n = do_splice_direct(in, ppos, out, opos, len, 0);
	file_end_write(out);
	return n;
#else
	return do_splice_direct(in, ppos, out, opos, len, 0);
#endif
}

/*
 * May the extended attribute @name of @src be copied up?  0: yes,
 * 1: an LSM discards it, < 0: error (-EOPNOTSUPP: no LSM has a say).
 */
static inline int unionfs_security_copy_up_xattr(struct dentry *src,
						 const char *name)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
	return security_inode_copy_up_xattr(name);
#else
	int err = security_inode_copy_up_xattr(src, name);

	return err == -ECANCELED ? 1 : err;
#endif
}

/*
 * getattr of the real object from the union's ->getattr.  Since 6.7 (and
 * in the stable kernels that took the fix) the VFS marks a ->getattr
 * call whose LSM check it has made with AT_GETATTR_NOSEC, and
 * vfs_getattr() refuses that flag with a warning: pass it down to
 * vfs_getattr_nosec() then, as the check on the union inode stands.
 */
static inline int unionfs_vfs_getattr(const struct path *path,
				      struct kstat *stat, u32 request_mask,
				      unsigned int flags)
{
#ifdef AT_GETATTR_NOSEC
	if (flags & AT_GETATTR_NOSEC)
		return vfs_getattr_nosec(path, stat, request_mask, flags);
#endif
	return vfs_getattr(path, stat, request_mask, flags);
}

/*
 * Exported by fs/namei.c (EXPORT_SYMBOL) but declared only in the
 * private fs/internal.h: walk a relative path below a given dentry.
 */
struct path;
int vfs_path_lookup(struct dentry *dentry, struct vfsmount *mnt,
		    const char *name, unsigned int flags, struct path *path);

#endif /* _UNIONFS_COMPAT_H */
