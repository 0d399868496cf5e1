// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: regular files.
 *
 * A union file holds an open file on the branch object and passes I/O to
 * it; mmap maps the branch file itself, so the page cache is the branch's
 * and there is one copy of each page.  How the real file is opened and
 * how read, write, splice and mmap reach it depends on the kernel
 * (unionfs_open_real() and unionfs_real_*() in compat.c); what the union
 * inode learns after I/O is here (unionfs_file_accessed(),
 * unionfs_file_modified()).
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs_stack.h>
#include <linux/mm.h>
#include <linux/splice.h>
#include <linux/uio.h>
#include "unionfs.h"

static struct file *unionfs_real_file(const struct file *file)
{
	return file->private_data;
}

/*
 * The VFS checked the caller's right on the union inode and, through
 * unionfs_permission(), the mounter's right to read a lower file for
 * copy-up.  The file opened now may be another one (the copy): check
 * the mounter's right to open it as asked, as a branch would.
 */
static int unionfs_may_open_real(struct file *file, const struct path *real)
{
	const struct cred *old_cred;
	int mask = MAY_OPEN;
	int err;

	if (file->f_mode & FMODE_READ)
		mask |= MAY_READ;
	if (file->f_mode & FMODE_WRITE)
		mask |= MAY_WRITE;
	if (file->f_flags & O_APPEND)
		mask |= MAY_APPEND;
	old_cred = unionfs_override_creds(file_inode(file)->i_sb);
	err = inode_permission(unionfs_mnt_idmap(real->mnt),
			       d_inode(real->dentry), mask);
	revert_creds(old_cred);
	return err;
}

/*
 * Union files open on each branch, for remount del= (EBUSY while any is
 * open or mapped): the branch is the one of the real file's mount.  A
 * directory listed through its one branch directory (readdir.c) counts
 * too.
 */
struct unionfs_branch *unionfs_file_branch(struct super_block *sb,
					   struct file *realfile)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct vfsmount *mnt = realfile->f_path.mnt;
	/* Pairs with the release in unionfs_newset_commit(). */
	unsigned int i, n = smp_load_acquire(&sbi->nbranches);

	for (i = 0; i < n; i++)
		if (sbi->branches[i].root.mnt == mnt)
			return &sbi->branches[i];
	return NULL;
}

/*
 * A change in place of a writable lower branch's object (not through a
 * file: unionfs_prepare_change(), an unlink) begins: counted with the
 * branch's writers, so that mode=ro waits for none and misses none.
 * False if a remount is making the branch read-only, or it is leaving.
 */
bool unionfs_branch_write_begin(struct unionfs_branch *br)
{
	atomic_inc(&br->write_files);
	/* Pairs with the barrier in unionfs_newset_going_ro(). */
	smp_mb();
	if (!READ_ONCE(br->going_ro) && !READ_ONCE(br->leaving) &&
	    !READ_ONCE(br->gone) && READ_ONCE(br->mode) == UNIONFS_BR_RW)
		return true;
	atomic_dec(&br->write_files);
	return false;
}

void unionfs_branch_write_end(struct unionfs_branch *br)
{
	atomic_dec(&br->write_files);
}

/*
 * Count an open of @realfile for union @sb (@delta 1): ESTALE if its
 * branch is leaving or gone (a remount del= that did not see this open,
 * or a name found under a directory still in the old set); EROFS for a
 * writer on a lower branch a remount is making read-only.
 */
int unionfs_count_real_open(struct super_block *sb, struct file *realfile,
			    int delta)
{
	struct unionfs_branch *br = unionfs_file_branch(sb, realfile);

	bool writer = realfile->f_mode & FMODE_WRITE;
	int err = -ESTALE;

	if (!br)
		return 0;
	if (delta < 0)
		/*
		 * A mapping made with the file is in the table before the
		 * close counts: pairs with the smp_rmb() of remount.c.
		 */
		smp_mb__before_atomic();
	atomic_add(delta, &br->open_files);
	if (writer)
		atomic_add(delta, &br->write_files);
	if (delta < 0)
		return 0;
	/* Pairs with the barriers in unionfs_newset_leave(), _going_ro(). */
	smp_mb();
	if (!READ_ONCE(br->leaving) && !READ_ONCE(br->gone)) {
		/* A lower branch written in place is being made read-only. */
		if (!writer || br == &UNIONFS_SB(sb)->branches[0] ||
		    (!READ_ONCE(br->going_ro) &&
		     READ_ONCE(br->mode) == UNIONFS_BR_RW))
			return 0;
		err = -EROFS;
	}
	atomic_dec(&br->open_files);
	if (writer)
		atomic_dec(&br->write_files);
	return err;
}

/*
 * A mapping outlives the union file it was made with and is not counted
 * by it: the vma holds the branch's file (unionfs_real_mmap()).  So a
 * lower branch's inode mapped through the union is kept in a table, for
 * del= and mode=ro to see while it is mapped.  What a mapping the union
 * did not make (one of the branch file itself) does to the verdict is
 * not told apart: an inode the union mapped once counts while any
 * mapping of it is left.
 *
 * The vma joins the inode's mapping only after ->mmap() returns, so an
 * entry is not dropped in the generation it was mapped in: the look for
 * unmapped entries (at a remount, and when a union file closes after
 * the table doubled) drops those mapped no more that were not mapped
 * since the look before.  An unmapped inode stays held until then: a
 * file removed meanwhile gives its space back later (at unmount at the
 * latest).
 */
struct unionfs_mapped {
	struct hlist_node hash;
	struct inode *inode;		/* held */
	struct unionfs_branch *br;
	unsigned int gen;		/* the look it was last mapped before */
	bool writer;			/* a shared mapping that may write */
};

/* Forget the inodes mapped no more (see above); every one if @all. */
void unionfs_mapped_prune(struct unionfs_sb_info *sbi, bool all)
{
	struct unionfs_mapped *m;
	struct hlist_node *tmp;
	HLIST_HEAD(dead);
	unsigned int bkt;

	spin_lock(&sbi->mapped_lock);
	hash_for_each_safe(sbi->mapped, bkt, tmp, m, hash) {
		if (!all && (m->gen == sbi->mapped_gen ||
			     mapping_mapped(m->inode->i_mapping)))
			continue;
		hash_del(&m->hash);
		hlist_add_head(&m->hash, &dead);
		sbi->nmapped--;
	}
	sbi->mapped_gen++;
	sbi->mapped_prune_at = max(2 * sbi->nmapped, 64U);
	WRITE_ONCE(sbi->mapped_prune_due, false);
	spin_unlock(&sbi->mapped_lock);
	hlist_for_each_entry_safe(m, tmp, &dead, hash) {
		iput(m->inode);
		kfree(m);
	}
}

/*
 * Is an inode of @br still mapped through the union (by a shared
 * mapping that may write, if @writers)?  The caller made the branch
 * refuse new opens (leaving, going_ro) and found none open (for
 * writing): a mapping (a writable one) needs one to be made, so none
 * of @br is being made now.
 */
bool unionfs_branch_mapped(struct unionfs_sb_info *sbi,
			   const struct unionfs_branch *br, bool writers)
{
	struct unionfs_mapped *m;
	unsigned int bkt;
	bool busy = false;

	spin_lock(&sbi->mapped_lock);
	hash_for_each(sbi->mapped, bkt, m, hash) {
		if (m->br != br)
			continue;
		if (!writers)
			busy |= mapping_mapped(m->inode->i_mapping);
		else if (m->writer)
			busy |= mapping_writably_mapped(m->inode->i_mapping);
	}
	spin_unlock(&sbi->mapped_lock);
	return busy;
}

static int unionfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct super_block *sb = file_inode(file)->i_sb;
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct file *realfile = unionfs_real_file(file);
	bool writer = (vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) ==
		      (VM_SHARED | VM_MAYWRITE);
	struct unionfs_branch *br = unionfs_file_branch(sb, realfile);
	struct unionfs_mapped *m, *new;
	struct inode *mapped;
	int err;

	/* The upper branch can be neither removed nor made read-only. */
	if (!br || br == &sbi->branches[0])
		return unionfs_real_mmap(file, vma);
	new = kmalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	err = unionfs_real_mmap(file, vma);
	if (err) {
		kfree(new);
		return err;
	}
	/* A stacked branch may have passed it on to its own branch's file. */
	mapped = file_inode(vma->vm_file);
	spin_lock(&sbi->mapped_lock);
	hash_for_each_possible(sbi->mapped, m, hash, (unsigned long)mapped)
		if (m->inode == mapped && m->br == br)
			break;
	if (!m) {
		ihold(mapped);
		m = new;
		new = NULL;
		m->inode = mapped;
		m->br = br;
		m->writer = false;
		hash_add(sbi->mapped, &m->hash, (unsigned long)mapped);
		if (++sbi->nmapped > sbi->mapped_prune_at)
			WRITE_ONCE(sbi->mapped_prune_due, true);
	}
	m->writer |= writer;
	m->gen = sbi->mapped_gen;
	spin_unlock(&sbi->mapped_lock);
	kfree(new);
	return 0;
}

static int unionfs_count_open(struct file *file, int delta)
{
	return unionfs_count_real_open(file_inode(file)->i_sb,
				       unionfs_real_file(file), delta);
}

/*
 * Opening for writing copies the file up first (without its data when
 * the open truncates it), unless it is on a writable lower branch: then
 * that file is opened, under copyup_lock, so a copy-up of it (a rename
 * or link) that follows sees the writer (unionfs_copy_up_one()).  The
 * union file then holds the real file open.
 */
static int unionfs_open(struct inode *inode, struct file *file)
{
	struct mutex *copyup_lock = &UNIONFS_I(inode)->copyup_lock;
	struct dentry *dentry = file_dentry(file);
	struct file *realfile;
	bool in_place = false;
	struct path real;
	int err;

	/* An upper object stays one: no lock on the usual path. */
	err = 1;
	while ((file->f_mode & FMODE_WRITE || file->f_flags & O_TRUNC) &&
	       err > 0 && !unionfs_upper(dentry)) {
		mutex_lock(copyup_lock);
		in_place = unionfs_change_in_place(dentry, &real);
		if (in_place)
			break;
		mutex_unlock(copyup_lock);
		/*
		 * Data is skipped only when the open will surely truncate.
		 * Copied to a writable lower branch (1): opened there, in
		 * place (a second time the copy goes to the upper branch).
		 */
		err = unionfs_copy_up_open(dentry, (file->f_flags & O_TRUNC) &&
					   (file->f_mode & FMODE_WRITE),
					   err == 1);
		if (err < 0)
			return err;
		if (err)
			err = 2;
	}
	if (!in_place)
		unionfs_real_path(dentry, &real);
	err = unionfs_may_open_real(file, &real);
	if (err)
		goto out;
	realfile = unionfs_open_real(file, &real,
				     file->f_flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC));
	err = PTR_ERR_OR_ZERO(realfile);
	if (err)
		goto out;
	file->private_data = realfile;
	err = unionfs_count_open(file, 1);
	if (err)
		fput(realfile);
out:
	if (in_place)
		mutex_unlock(copyup_lock);
	return err;
}

/* The real file is open already (see unionfs_open_on()). */
static int unionfs_open_nothing(struct inode *inode, struct file *file)
{
	return 0;
}

/*
 * Open @file, whose dentry shows @realfile's object, on @realfile (an
 * O_TMPFILE made for it): the union file then holds it as unionfs_open()
 * holds the real file it opens.  @realfile is the union file's from
 * here on, also when the open fails.
 */
int unionfs_open_on(struct file *file, struct file *realfile)
{
	int err;

	file->private_data = realfile;
	err = finish_open(file, file->f_path.dentry, unionfs_open_nothing);
	/* Without FMODE_OPENED, no ->release() drops it. */
	if (!(file->f_mode & FMODE_OPENED))
		fput(realfile);
	else
		unionfs_count_open(file, 1);	/* the upper branch stays */
	return err;
}

static int unionfs_release(struct inode *inode, struct file *file)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(inode->i_sb);

	unionfs_count_open(file, -1);
	fput(unionfs_real_file(file));
	/* Here, not in ->mmap(): no mmap_lock held for an iput(). */
	if (READ_ONCE(sbi->mapped_prune_due))
		unionfs_mapped_prune(sbi, false);
	return 0;
}

/* After a read or mmap: the union inode's atime follows the real one. */
void unionfs_file_accessed(struct file *file)
{
	fsstack_copy_attr_atime(file_inode(file),
				file_inode(unionfs_real_file(file)));
}

/*
 * After a write: size and times of the union inode follow the real ones,
 * and the mode too: the branch file system (or, on 6.12, the VFS on the
 * union file first) cleared the set-id bits if the writer may not keep
 * them.
 */
void unionfs_file_modified(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct inode *realinode = file_inode(unionfs_real_file(file));

	fsstack_copy_inode_size(inode, realinode);
	fsstack_copy_attr_times(inode, realinode);
	inode->i_mode = realinode->i_mode;
}

static ssize_t unionfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	if (!iov_iter_count(iter))
		return 0;
	return unionfs_real_read_iter(iocb, iter);
}

static ssize_t unionfs_write_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	ssize_t ret;

	if (!iov_iter_count(iter))
		return 0;
	inode_lock(inode);
	ret = unionfs_real_write_iter(iocb, iter);
	inode_unlock(inode);
	return ret;
}

static long unionfs_fallocate(struct file *file, int mode, loff_t offset,
			      loff_t len)
{
	struct file *realfile = unionfs_real_file(file);
	struct inode *inode = file_inode(file);
	long ret;

	ret = vfs_fallocate(realfile, mode, offset, len);
	fsstack_copy_inode_size(inode, file_inode(realfile));
	fsstack_copy_attr_times(inode, file_inode(realfile));
	return ret;
}

/*
 * Between two real files on one file system the branch copies (maybe
 * sharing extents); across branches it falls back to a splice copy.
 */
static ssize_t unionfs_copy_file_range(struct file *in, loff_t pos_in,
				       struct file *out, loff_t pos_out,
				       size_t len, unsigned int flags)
{
	struct file *rin = unionfs_real_file(in);
	struct file *rout = unionfs_real_file(out);
	struct inode *inode = file_inode(out);
	ssize_t ret;

	ret = vfs_copy_file_range(rin, pos_in, rout, pos_out, len, flags);
	if (ret == -EXDEV || ret == -EOPNOTSUPP) {
		ret = unionfs_splice_direct(rin, &pos_in, rout, &pos_out,
					    min_t(size_t, len, MAX_RW_COUNT));
	}
	fsstack_copy_inode_size(inode, file_inode(rout));
	fsstack_copy_attr_times(inode, file_inode(rout));
	return ret;
}

static int unionfs_flush(struct file *file, fl_owner_t id)
{
	struct file *realfile = unionfs_real_file(file);

	if (realfile->f_op->flush)
		return realfile->f_op->flush(realfile, id);
	return 0;
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
	.write_iter	= unionfs_write_iter,
	.flush		= unionfs_flush,
	.fallocate	= unionfs_fallocate,
	.copy_file_range = unionfs_copy_file_range,
	.splice_write	= unionfs_real_splice_write,
	.mmap		= unionfs_mmap,
	.fsync		= unionfs_fsync,
	.fadvise	= unionfs_fadvise,
	.splice_read	= unionfs_real_splice_read,
};
