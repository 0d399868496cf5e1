// SPDX-License-Identifier: GPL-2.0
/*
 * volume.c - opening an ODF volume with libext2fs and the small file
 * system operations the ODF needs (create, read, write, mkdir, remove,
 * rename) done directly on the ext4 structures, without mounting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "libodf.h"

errcode_t odf_random_bytes(void *buf, size_t len)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno;
	n = read(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : EIO;
}

errcode_t odf_vol_wrap(ext2_filsys fs, int rw, struct odf_vol **ret)
{
	struct odf_vol *v = calloc(1, sizeof(*v));

	if (!v)
		return ENOMEM;
	v->fs = fs;
	v->rw = rw;
	*ret = v;
	return 0;
}

errcode_t odf_vol_open(const char *dev, int flags, struct odf_vol **ret)
{
	ext2_filsys fs;
	errcode_t err;
	int eflags = EXT2_FLAG_64BITS | EXT2_FLAG_THREADS;

	if (flags & ODF_OPEN_RW)
		eflags |= EXT2_FLAG_RW;
	err = ext2fs_open2(dev, NULL, eflags, 0, 0, unix_io_manager, &fs);
	if (err)
		return err;
	err = ext2fs_read_bitmaps(fs);
	if (err)
		goto fail;
	err = odf_vol_wrap(fs, !!(flags & ODF_OPEN_RW), ret);
	if (err)
		goto fail;
	odf_vol_find_layout(*ret);
	return 0;
fail:
	ext2fs_close_free(&fs);
	return err;
}

errcode_t odf_vol_close(struct odf_vol *v)
{
	errcode_t err = 0;

	if (!v)
		return 0;
	if (v->fs) {
		if (v->rw)
			err = ext2fs_close_free(&v->fs);
		else {
			v->fs->flags &= ~EXT2_FLAG_DIRTY;
			ext2fs_close_free(&v->fs);
		}
	}
	free(v);
	return err;
}

errcode_t odf_lookup(ext2_filsys fs, ext2_ino_t dir, const char *name,
		     ext2_ino_t *ret)
{
	return ext2fs_lookup(fs, dir, name, strlen(name), NULL, ret);
}

int odf_is_dir(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_inode inode;

	if (ext2fs_read_inode(fs, ino, &inode))
		return 0;
	return LINUX_S_ISDIR(inode.i_mode);
}

static int is_reg(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_inode inode;

	if (ext2fs_read_inode(fs, ino, &inode))
		return 0;
	return LINUX_S_ISREG(inode.i_mode);
}

errcode_t odf_vol_find_layout(struct odf_vol *v)
{
	ext2_filsys fs = v->fs;
	ext2_ino_t ino;

	v->ino_super = v->ino_ns = v->ino_imap = v->ino_fwd = v->ino_rev = 0;
	v->ino_readdir = v->ino_reclaim = 0;
	if (!odf_lookup(fs, EXT2_ROOT_INO, ODF_PATH_SUPER, &ino) &&
	    is_reg(fs, ino))
		v->ino_super = ino;
	if (!odf_lookup(fs, EXT2_ROOT_INO, ODF_PATH_NS, &ino) &&
	    odf_is_dir(fs, ino))
		v->ino_ns = ino;
	if (!odf_lookup(fs, EXT2_ROOT_INO, ODF_PATH_IMAP, &ino) &&
	    odf_is_dir(fs, ino)) {
		v->ino_imap = ino;
		if (!odf_lookup(fs, ino, ODF_PATH_IMAP_FWD, &ino) &&
		    is_reg(fs, ino))
			v->ino_fwd = ino;
		ino = v->ino_imap;
		if (!odf_lookup(fs, ino, ODF_PATH_IMAP_REV, &ino) &&
		    is_reg(fs, ino))
			v->ino_rev = ino;
	}
	if (!odf_lookup(fs, EXT2_ROOT_INO, ODF_PATH_READDIR, &ino) &&
	    odf_is_dir(fs, ino))
		v->ino_readdir = ino;
	if (!odf_lookup(fs, EXT2_ROOT_INO, ODF_PATH_RECLAIM, &ino) &&
	    odf_is_dir(fs, ino))
		v->ino_reclaim = ino;
	return 0;
}

static errcode_t link_expand(ext2_filsys fs, ext2_ino_t dir, const char *name,
			     ext2_ino_t ino, int ftype)
{
	errcode_t err = ext2fs_link(fs, dir, name, ino, ftype);

	if (err == EXT2_ET_DIR_NO_SPACE) {
		err = ext2fs_expand_dir(fs, dir);
		if (!err)
			err = ext2fs_link(fs, dir, name, ino, ftype);
	}
	return err;
}

errcode_t odf_file_create(ext2_filsys fs, ext2_ino_t dir, const char *name,
			  ext2_ino_t *ret)
{
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t err;
	__u32 now = (__u32)time(NULL);

	err = ext2fs_new_inode(fs, dir, LINUX_S_IFREG | 0600, NULL, &ino);
	if (err)
		return err;
	err = link_expand(fs, dir, name, ino, EXT2_FT_REG_FILE);
	if (err)
		return err;
	ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	memset(&inode, 0, sizeof(inode));
	inode.i_mode = LINUX_S_IFREG | 0600;
	inode.i_links_count = 1;
	inode.i_atime = inode.i_ctime = inode.i_mtime = now;
	if (ext2fs_has_feature_extents(fs->super)) {
		ext2_extent_handle_t h;

		inode.i_flags |= EXT4_EXTENTS_FL;
		err = ext2fs_write_new_inode(fs, ino, &inode);
		if (err)
			return err;
		/* writes an empty extent header into i_block */
		err = ext2fs_extent_open2(fs, ino, &inode, &h);
		if (err)
			return err;
		ext2fs_extent_free(h);
		err = ext2fs_write_inode(fs, ino, &inode);
	} else {
		err = ext2fs_write_new_inode(fs, ino, &inode);
	}
	if (err)
		return err;
	if (ret)
		*ret = ino;
	return 0;
}

errcode_t odf_file_size(ext2_filsys fs, ext2_ino_t ino, __u64 *size)
{
	struct ext2_inode inode;
	errcode_t err = ext2fs_read_inode(fs, ino, &inode);

	if (!err)
		*size = EXT2_I_SIZE(&inode);
	return err;
}

errcode_t odf_file_pread(ext2_filsys fs, ext2_ino_t ino, __u64 off,
			 void *buf, size_t len)
{
	ext2_file_t f;
	errcode_t err, err2;
	unsigned int got;
	char *p = buf;

	err = ext2fs_file_open(fs, ino, 0, &f);
	if (err)
		return err;
	err = ext2fs_file_llseek(f, off, EXT2_SEEK_SET, NULL);
	while (!err && len) {
		unsigned int want = len > (1U << 30) ? (1U << 30) : len;

		err = ext2fs_file_read(f, p, want, &got);
		if (!err && got == 0)
			err = EXT2_ET_SHORT_READ;
		p += got;
		len -= got;
	}
	err2 = ext2fs_file_close(f);
	return err ? err : err2;
}

errcode_t odf_file_pwrite(ext2_filsys fs, ext2_ino_t ino, __u64 off,
			  const void *buf, size_t len)
{
	ext2_file_t f;
	errcode_t err, err2;
	unsigned int done;
	const char *p = buf;

	err = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f);
	if (err)
		return err;
	err = ext2fs_file_llseek(f, off, EXT2_SEEK_SET, NULL);
	while (!err && len) {
		unsigned int want = len > (1U << 30) ? (1U << 30) : len;

		err = ext2fs_file_write(f, p, want, &done);
		if (!err && done == 0)
			err = EXT2_ET_SHORT_WRITE;
		p += done;
		len -= done;
	}
	err2 = ext2fs_file_close(f);
	return err ? err : err2;
}

errcode_t odf_file_truncate(ext2_filsys fs, ext2_ino_t ino, __u64 size)
{
	ext2_file_t f;
	errcode_t err, err2;

	err = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f);
	if (err)
		return err;
	err = ext2fs_file_set_size2(f, size);
	err2 = ext2fs_file_close(f);
	return err ? err : err2;
}

errcode_t odf_file_read_all(ext2_filsys fs, ext2_ino_t ino, __u64 max,
			    void **buf, size_t *len)
{
	__u64 size;
	errcode_t err;
	void *p;

	*buf = NULL;
	*len = 0;
	err = odf_file_size(fs, ino, &size);
	if (err)
		return err;
	if (size > max)
		return EXT2_ET_FILE_TOO_BIG;
	p = malloc(size ? size : 1);
	if (!p)
		return ENOMEM;
	if (size) {
		err = odf_file_pread(fs, ino, 0, p, size);
		if (err) {
			free(p);
			return err;
		}
	}
	*buf = p;
	*len = size;
	return 0;
}

errcode_t odf_mkdir(ext2_filsys fs, ext2_ino_t dir, const char *name,
		    ext2_ino_t *ret)
{
	errcode_t err = ext2fs_mkdir(fs, dir, 0, name);

	if (err == EXT2_ET_DIR_NO_SPACE) {
		err = ext2fs_expand_dir(fs, dir);
		if (!err)
			err = ext2fs_mkdir(fs, dir, 0, name);
	}
	if (err)
		return err;
	return ret ? odf_lookup(fs, dir, name, ret) : 0;
}

/* ---- removal -------------------------------------------------------- */

struct rm_ctx {
	ext2_filsys		fs;
	errcode_t		err;
	struct odf_dirent	*ents;
	size_t			n, cap;
};

static int collect_cb(struct ext2_dir_entry *de, int offset, int blocksize,
		      char *buf, void *priv)
{
	struct rm_ctx *c = priv;
	int nl = ext2fs_dirent_name_len(de);

	(void)offset; (void)blocksize; (void)buf;
	if ((nl == 1 && de->name[0] == '.') ||
	    (nl == 2 && de->name[0] == '.' && de->name[1] == '.'))
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		void *nn = realloc(c->ents, ncap * sizeof(*c->ents));

		if (!nn) {
			c->err = ENOMEM;
			return DIRENT_ABORT;
		}
		c->ents = nn;
		c->cap = ncap;
	}
	memcpy(c->ents[c->n].name, de->name, nl);
	c->ents[c->n].name[nl] = 0;
	c->ents[c->n].ino = de->inode;
	c->n++;
	return 0;
}

/* Entries of a directory (without . and ..); caller frees *ents. */
errcode_t odf_list_dir(ext2_filsys fs, ext2_ino_t dir,
		       struct odf_dirent **ents, size_t *n)
{
	struct rm_ctx c = { .fs = fs };
	errcode_t err;

	err = ext2fs_dir_iterate(fs, dir, 0, NULL, collect_cb, &c);
	if (!err)
		err = c.err;
	if (err) {
		free(c.ents);
		return err;
	}
	*ents = c.ents;
	*n = c.n;
	return 0;
}

static errcode_t drop_inode(ext2_filsys fs, ext2_ino_t ino, int isdir)
{
	struct ext2_inode inode;
	errcode_t err;

	err = ext2fs_read_inode(fs, ino, &inode);
	if (err)
		return err;
	if (isdir || inode.i_links_count <= 1) {
		if (ext2fs_inode_has_valid_blocks2(fs, &inode)) {
			err = ext2fs_punch(fs, ino, &inode, NULL, 0, ~0ULL);
			if (err)
				return err;
		}
		err = ext2fs_read_inode(fs, ino, &inode);
		if (err)
			return err;
		inode.i_links_count = 0;
		inode.i_dtime = (__u32)time(NULL);
		err = ext2fs_write_inode(fs, ino, &inode);
		if (err)
			return err;
		ext2fs_inode_alloc_stats2(fs, ino, -1, isdir);
		return 0;
	}
	inode.i_links_count--;
	return ext2fs_write_inode(fs, ino, &inode);
}

static errcode_t remove_ino(ext2_filsys fs, ext2_ino_t ino, int depth)
{
	struct odf_dirent *ents = NULL;
	size_t n = 0, i;
	errcode_t err;
	ext2_ino_t child;

	if (!odf_is_dir(fs, ino))
		return drop_inode(fs, ino, 0);
	if (depth > 4096)
		return EXT2_ET_TOO_MANY_REFS;
	err = odf_list_dir(fs, ino, &ents, &n);
	if (err)
		return err;
	for (i = 0; i < n && !err; i++) {
		child = ents[i].ino;
		err = ext2fs_unlink(fs, ino, ents[i].name, child, 0);
		if (!err)
			err = remove_ino(fs, child, depth + 1);
	}
	free(ents);
	if (err)
		return err;
	return drop_inode(fs, ino, 1);
}

errcode_t odf_remove(ext2_filsys fs, ext2_ino_t dir, const char *name)
{
	ext2_ino_t ino;
	errcode_t err;
	int isdir;

	err = odf_lookup(fs, dir, name, &ino);
	if (err)
		return err;
	isdir = odf_is_dir(fs, ino);
	err = ext2fs_unlink(fs, dir, name, ino, 0);
	if (err)
		return err;
	err = remove_ino(fs, ino, 0);
	if (err)
		return err;
	if (isdir) {	/* the child's ".." no longer counts */
		struct ext2_inode inode;

		err = ext2fs_read_inode(fs, dir, &inode);
		if (!err && inode.i_links_count > 2) {
			inode.i_links_count--;
			err = ext2fs_write_inode(fs, dir, &inode);
		}
	}
	return err;
}

struct dotdot_ctx {
	ext2_ino_t	parent;
};

static int set_dotdot_cb(struct ext2_dir_entry *de, int offset, int blocksize,
			 char *buf, void *priv)
{
	struct dotdot_ctx *c = priv;

	(void)offset; (void)blocksize; (void)buf;
	if (ext2fs_dirent_name_len(de) == 2 && de->name[0] == '.' &&
	    de->name[1] == '.') {
		de->inode = c->parent;
		return DIRENT_CHANGED | DIRENT_ABORT;
	}
	return 0;
}

static errcode_t adjust_links(ext2_filsys fs, ext2_ino_t ino, int delta)
{
	struct ext2_inode inode;
	errcode_t err = ext2fs_read_inode(fs, ino, &inode);

	if (err)
		return err;
	inode.i_links_count += delta;
	return ext2fs_write_inode(fs, ino, &inode);
}

/* rename(2) for the ODF tools: the destination must not exist. */
errcode_t odf_rename(ext2_filsys fs, ext2_ino_t sdir, const char *sname,
		     ext2_ino_t ddir, const char *dname)
{
	ext2_ino_t ino, tmp;
	errcode_t err;
	int isdir;

	err = odf_lookup(fs, sdir, sname, &ino);
	if (err)
		return err;
	if (!odf_lookup(fs, ddir, dname, &tmp))
		return EXT2_ET_FILE_EXISTS;
	isdir = odf_is_dir(fs, ino);
	err = link_expand(fs, ddir, dname, ino,
			  isdir ? EXT2_FT_DIR : EXT2_FT_REG_FILE);
	if (err)
		return err;
	err = ext2fs_unlink(fs, sdir, sname, ino, 0);
	if (err || !isdir || sdir == ddir)
		return err;
	{
		struct dotdot_ctx c = { .parent = ddir };

		err = ext2fs_dir_iterate(fs, ino, 0, NULL, set_dotdot_cb, &c);
	}
	if (!err)
		err = adjust_links(fs, sdir, -1);
	if (!err)
		err = adjust_links(fs, ddir, +1);
	return err;
}

/* ---- the layout mkodf lays down ------------------------------------ */

errcode_t odf_layout_create(struct odf_vol *v, const struct odf_super *sb)
{
	ext2_filsys fs = v->fs;
	unsigned char zero[ODF_BLOCK_SIZE];
	errcode_t err;

	memset(zero, 0, sizeof(zero));
	err = odf_file_create(fs, EXT2_ROOT_INO, ODF_PATH_SUPER,
			      &v->ino_super);
	if (!err)	/* table of empty slots, then headers */
		err = odf_file_pwrite(fs, v->ino_super, ODF_SB_BACKUP_OFFSET,
				      zero, ODF_BLOCK_SIZE);
	if (!err)
		err = odf_sb_write(v, sb, 1);
	if (!err)
		err = odf_mkdir(fs, EXT2_ROOT_INO, ODF_PATH_NS, &v->ino_ns);
	if (!err)
		err = odf_mkdir(fs, EXT2_ROOT_INO, ODF_PATH_IMAP, &v->ino_imap);
	if (!err)
		err = odf_map_create(v, ODF_MAP_FORWARD, ODF_MAP_MIN_BUCKETS,
				     odf_map_default_seed(sb, ODF_MAP_FORWARD),
				     NULL, 0);
	if (!err)
		err = odf_map_create(v, ODF_MAP_REVERSE, ODF_MAP_MIN_BUCKETS,
				     odf_map_default_seed(sb, ODF_MAP_REVERSE),
				     NULL, 0);
	if (!err)
		err = odf_mkdir(fs, EXT2_ROOT_INO, ODF_PATH_READDIR,
				&v->ino_readdir);
	if (!err)
		err = odf_mkdir(fs, EXT2_ROOT_INO, ODF_PATH_RECLAIM,
				&v->ino_reclaim);
	return err;
}
