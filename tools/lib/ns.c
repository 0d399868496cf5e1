// SPDX-License-Identifier: GPL-2.0
/*
 * ns.c - the namespace tree under /ns.  A node's meaning is its inode
 * type plus the "trusted.odf" record: a regular file is a whiteout, a
 * directory is opaque and/or redirected, or just the parent of deeper
 * nodes when it has no record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "libodf.h"

errcode_t odf_node_get(ext2_filsys fs, ext2_ino_t ino, void *buf,
		       size_t *len, int *present)
{
	struct ext2_xattr_handle *h;
	void *val = NULL;
	size_t vlen = 0;
	errcode_t err;

	*present = 0;
	err = ext2fs_xattrs_open(fs, ino, &h);
	if (err)
		return err;
	err = ext2fs_xattrs_read(h);
	if (!err) {
		err = ext2fs_xattr_get(h, ODF_NODE_XATTR, &val, &vlen);
		if (err == EXT2_ET_EA_KEY_NOT_FOUND) {
			err = 0;
		} else if (!err) {
			*present = 1;
			if (vlen > ODF_NODE_BUF_MAX)
				vlen = ODF_NODE_BUF_MAX + 1; /* still invalid */
			memcpy(buf, val, vlen > ODF_NODE_BUF_MAX ?
			       ODF_NODE_BUF_MAX : vlen);
			*len = vlen;
			ext2fs_free_mem(&val);
		}
	}
	ext2fs_xattrs_close(&h);
	return err;
}

errcode_t odf_node_put_raw(ext2_filsys fs, ext2_ino_t ino, const void *buf,
			   size_t len)
{
	struct ext2_xattr_handle *h;
	errcode_t err, err2;

	err = ext2fs_xattrs_open(fs, ino, &h);
	if (err)
		return err;
	err = ext2fs_xattrs_read(h);
	if (!err)
		err = ext2fs_xattr_set(h, ODF_NODE_XATTR, buf, len);
	err2 = ext2fs_xattrs_close(&h);
	return err ? err : err2;
}

errcode_t odf_node_set(ext2_filsys fs, ext2_ino_t ino, unsigned type,
		       __u64 time, const char *redirect)
{
	unsigned char buf[ODF_NODE_BUF_MAX];
	size_t len = odf_node_encode(buf, type, time, redirect,
				     redirect ? strlen(redirect) : 0);

	return odf_node_put_raw(fs, ino, buf, len);
}

errcode_t odf_node_clear(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_xattr_handle *h;
	errcode_t err, err2;

	err = ext2fs_xattrs_open(fs, ino, &h);
	if (err)
		return err;
	err = ext2fs_xattrs_read(h);
	if (!err) {
		err = ext2fs_xattr_remove(h, ODF_NODE_XATTR);
		if (err == EXT2_ET_EA_KEY_NOT_FOUND)
			err = 0;
	}
	err2 = ext2fs_xattrs_close(&h);
	return err ? err : err2;
}

/* Next component of *pp into name; 0 at the end. */
static int next_comp(const char **pp, char name[256])
{
	const char *p = *pp, *e;

	while (*p == '/')
		p++;
	if (!*p)
		return 0;
	e = strchr(p, '/');
	if (!e)
		e = p + strlen(p);
	if (e - p > 255)
		return -1;
	memcpy(name, p, e - p);
	name[e - p] = 0;
	*pp = e;
	return 1;
}

errcode_t odf_ns_lookup(struct odf_vol *v, const char *path, ext2_ino_t *ret)
{
	ext2_ino_t dir = v->ino_ns;
	char name[256];
	int r;
	errcode_t err;

	if (!dir)
		return EXT2_ET_FILE_NOT_FOUND;
	while ((r = next_comp(&path, name)) > 0) {
		err = odf_lookup(v->fs, dir, name, &dir);
		if (err)
			return err;
	}
	if (r < 0)
		return EXT2_ET_INVALID_ARGUMENT;
	*ret = dir;
	return 0;
}

/*
 * Create the parents of path as plain directory nodes.  *last points at
 * the final component inside path.
 */
errcode_t odf_ns_mkpath(struct odf_vol *v, const char *path,
			ext2_ino_t *parent, const char **last)
{
	ext2_ino_t dir = v->ino_ns, child;
	char name[256];
	const char *p = path, *prev = NULL;
	int r;
	errcode_t err;

	if (!dir)
		return EXT2_ET_FILE_NOT_FOUND;
	for (;;) {
		const char *before = p;

		r = next_comp(&p, name);
		if (r < 0)
			return EXT2_ET_INVALID_ARGUMENT;
		if (r == 0)
			break;
		while (*before == '/')
			before++;
		if (prev) {
			char pname[256];
			const char *q = prev;

			next_comp(&q, pname);
			err = odf_lookup(v->fs, dir, pname, &child);
			if (err == EXT2_ET_FILE_NOT_FOUND)
				err = odf_mkdir(v->fs, dir, pname, &child);
			if (err)
				return err;
			if (!odf_is_dir(v->fs, child))
				return EXT2_ET_NO_DIRECTORY;
			dir = child;
		}
		prev = before;
	}
	if (!prev)
		return EXT2_ET_INVALID_ARGUMENT;
	*parent = dir;
	*last = prev;
	return 0;
}

static void comp_copy(const char *last, char name[256])
{
	const char *q = last;

	next_comp(&q, name);
}

errcode_t odf_ns_whiteout(struct odf_vol *v, const char *path)
{
	ext2_ino_t dir, ino;
	const char *last;
	char name[256], rname[32];
	errcode_t err;

	err = odf_ns_mkpath(v, path, &dir, &last);
	if (err)
		return err;
	comp_copy(last, name);
	err = odf_lookup(v->fs, dir, name, &ino);
	if (!err && odf_is_dir(v->fs, ino)) {
		/* deeper metadata of a deleted directory goes to reclaim */
		snprintf(rname, sizeof(rname), "%u", ino);
		err = odf_rename(v->fs, dir, name, v->ino_reclaim, rname);
		if (err)
			return err;
		err = EXT2_ET_FILE_NOT_FOUND;
	}
	if (err == EXT2_ET_FILE_NOT_FOUND)
		err = odf_file_create(v->fs, dir, name, &ino);
	if (err)
		return err;
	return odf_node_set(v->fs, ino, ODF_NODE_WHITEOUT, time(NULL), NULL);
}

errcode_t odf_ns_mark_dir(struct odf_vol *v, const char *path,
			  unsigned type, const char *redirect)
{
	ext2_ino_t dir, ino;
	const char *last;
	char name[256];
	errcode_t err;

	err = odf_ns_mkpath(v, path, &dir, &last);
	if (err)
		return err;
	comp_copy(last, name);
	err = odf_lookup(v->fs, dir, name, &ino);
	if (!err && !odf_is_dir(v->fs, ino)) {
		err = odf_remove(v->fs, dir, name);	/* was a whiteout */
		if (!err)
			err = EXT2_ET_FILE_NOT_FOUND;
	}
	if (err == EXT2_ET_FILE_NOT_FOUND)
		err = odf_mkdir(v->fs, dir, name, &ino);
	if (err)
		return err;
	if (!type)
		return odf_node_clear(v->fs, ino);
	return odf_node_set(v->fs, ino, type, time(NULL), redirect);
}

static void intent_name(char *buf, size_t n, __u64 seq)
{
	snprintf(buf, n, "%s%016llx", ODF_INTENT_PREFIX,
		 (unsigned long long)seq);
}

errcode_t odf_intent_add(struct odf_vol *v, unsigned op, __u64 seq,
			 __u64 uino, __u32 gen, const char *src,
			 const char *dst)
{
	unsigned char *buf;
	char name[40], tmp[48];
	ext2_ino_t ino;
	size_t len;
	errcode_t err;

	if (!v->ino_reclaim)
		return EXT2_ET_FILE_NOT_FOUND;
	buf = malloc(ODF_INTENT_BUF_MAX);
	if (!buf)
		return ENOMEM;
	len = odf_intent_encode(buf, op, seq, time(NULL), uino, gen, src, dst);
	intent_name(name, sizeof(name), seq);
	/* a damaged intent is deleted by odfck, so a torn write is
	 * harmless, but a whole file under its final name is simpler */
	snprintf(tmp, sizeof(tmp), "%llu.tmp", (unsigned long long)seq);
	err = odf_file_create(v->fs, v->ino_reclaim, tmp, &ino);
	if (!err)
		err = odf_file_pwrite(v->fs, ino, 0, buf, len);
	if (!err)
		err = odf_rename(v->fs, v->ino_reclaim, tmp, v->ino_reclaim,
				 name);
	free(buf);
	return err;
}

errcode_t odf_intent_done(struct odf_vol *v, __u64 seq)
{
	char name[40];

	intent_name(name, sizeof(name), seq);
	return odf_remove(v->fs, v->ino_reclaim, name);
}
