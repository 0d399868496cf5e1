// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: regular files.
 *
 * A union file holds an open file on the branch object and passes I/O to
 * it; mmap maps the branch file itself, so the page cache is the branch's
 * and there is one copy of each page.
 */
#include <linux/file.h>
#include <linux/fs_stack.h>
#include <linux/mm.h>
#include <linux/uio.h>
#include "unionfs.h"

static struct file *unionfs_real_file(const struct file *file)
{
	return file->private_data;
}

static int unionfs_open(struct inode *inode, struct file *file)
{
	struct file *realfile;

	realfile = dentry_open(unionfs_lower_path(file_dentry(file)),
			       file->f_flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC),
			       current_cred());
	if (IS_ERR(realfile))
		return PTR_ERR(realfile);
	file->private_data = realfile;
	return 0;
}

static int unionfs_release(struct inode *inode, struct file *file)
{
	fput(unionfs_real_file(file));
	return 0;
}

static ssize_t unionfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *realfile = unionfs_real_file(file);
	ssize_t ret;

	if (!iov_iter_count(iter))
		return 0;
	ret = vfs_iter_read(realfile, iter, &iocb->ki_pos,
			    iocb->ki_flags & IOCB_NOWAIT ? RWF_NOWAIT : 0);
	fsstack_copy_attr_atime(file_inode(file), file_inode(realfile));
	return ret;
}

static loff_t unionfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *realfile = unionfs_real_file(file);
	loff_t ret;

	/*
	 * The branch file answers SEEK_DATA/SEEK_HOLE and knows the size;
	 * keep both positions equal.
	 */
	realfile->f_pos = file->f_pos;
	ret = vfs_llseek(realfile, offset, whence);
	file->f_pos = realfile->f_pos;
	return ret;
}

static int unionfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *realfile = unionfs_real_file(file);

	if (!realfile->f_op->mmap)
		return -ENODEV;
	vma_set_file(vma, realfile);
	return call_mmap(vma->vm_file, vma);
}

static int unionfs_fsync(struct file *file, loff_t start, loff_t end,
			 int datasync)
{
	return vfs_fsync_range(unionfs_real_file(file), start, end, datasync);
}

static int unionfs_fadvise(struct file *file, loff_t offset, loff_t len,
			   int advice)
{
	return vfs_fadvise(unionfs_real_file(file), offset, len, advice);
}

const struct file_operations unionfs_file_fops = {
	.open		= unionfs_open,
	.release	= unionfs_release,
	.llseek		= unionfs_llseek,
	.read_iter	= unionfs_read_iter,
	.mmap		= unionfs_mmap,
	.fsync		= unionfs_fsync,
	.fadvise	= unionfs_fadvise,
	.splice_read	= generic_file_splice_read,
};
