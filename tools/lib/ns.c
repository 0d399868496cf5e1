// SPDX-License-Identifier: GPL-2.0
/*
 * ns.c - the namespace under /ns (section 5).  Format 2: one directory
 * per union directory with metadata, /ns/<016llx uino>, carrying the
 * "trusted.odf" record; the regular files inside are whiteouts of
 * names in that directory.  The format 1 tree (nodes mirroring union
 * paths) is kept only for odfck --convert and odfedit's v1-* commands.
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

errcode_t odf_node_write(ext2_filsys fs, ext2_ino_t ino,
			 const struct odf_node_info *ni,
			 const struct odf_redir_ent *ents)
{
	unsigned char buf[ODF_NODE_BUF_MAX];
	size_t len = odf_node_encode(buf, ni, ents);

	if (!len)
		return EXT2_ET_INVALID_ARGUMENT;
	return odf_node_put_raw(fs, ino, buf, len);
}

struct xattr_names {
	char	**names;
	size_t	n;
};

static int collect_name(char *name, char *value, size_t value_len,
			void *data)
{
	struct xattr_names *x = data;
	char **nn = realloc(x->names, (x->n + 1) * sizeof(*nn));

	(void)value; (void)value_len;
	if (!nn)
		return XATTR_ABORT;
	x->names = nn;
	x->names[x->n] = strdup(name);
	if (x->names[x->n])
		x->n++;
	return 0;
}

errcode_t odf_xattr_count(ext2_filsys fs, ext2_ino_t ino, size_t *n)
{
	struct ext2_xattr_handle *h;
	errcode_t err;

	*n = 0;
	err = ext2fs_xattrs_open(fs, ino, &h);
	if (err)
		return err;
	err = ext2fs_xattrs_read(h);
	if (!err)
		err = ext2fs_xattrs_count(h, n);
	ext2fs_xattrs_close(&h);
	return err;
}

errcode_t odf_xattr_clear_all(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_xattr_handle *h;
	struct xattr_names x = { NULL, 0 };
	errcode_t err, err2;
	size_t i;

	err = ext2fs_xattrs_open(fs, ino, &h);
	if (err)
		return err;
	err = ext2fs_xattrs_read(h);
	if (!err)
		err = ext2fs_xattrs_iterate(h, collect_name, &x);
	for (i = 0; i < x.n; i++) {
		if (!err)
			err = ext2fs_xattr_remove(h, x.names[i]);
		free(x.names[i]);
	}
	free(x.names);
	err2 = ext2fs_xattrs_close(&h);
	return err ? err : err2;
}

/* ---- format 2 nodes --------------------------------------------------- */

void odf_ns_node_name(char buf[ODF_NS_NAME_LEN + 1], __u64 uino)
{
	snprintf(buf, ODF_NS_NAME_LEN + 1, "%016llx", (unsigned long long)uino);
}

int odf_ns_parse_name(const char *name, __u64 *uino)
{
	__u64 u = 0;
	unsigned i;

	for (i = 0; i < ODF_NS_NAME_LEN; i++) {
		char c = name[i];

		if (c >= '0' && c <= '9')
			u = u << 4 | (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			u = u << 4 | (unsigned)(c - 'a' + 10);
		else
			return 0;
	}
	if (name[i] || u == 0 || (u >> 63))
		return 0;
	*uino = u;
	return 1;
}

errcode_t odf_ns_node_lookup(struct odf_vol *v, __u64 uino, ext2_ino_t *ret)
{
	char name[ODF_NS_NAME_LEN + 1];

	if (!v->ino_ns)
		return EXT2_ET_FILE_NOT_FOUND;
	odf_ns_node_name(name, uino);
	return odf_lookup(v->fs, v->ino_ns, name, ret);
}

errcode_t odf_ns_node_make_in(struct odf_vol *v, ext2_ino_t ns, __u64 uino,
			      const struct odf_node_info *ni,
			      const struct odf_redir_ent *ents,
			      ext2_ino_t *ret)
{
	char name[ODF_NS_NAME_LEN + 1];
	struct odf_node_info n = *ni;
	ext2_ino_t ino;
	errcode_t err;

	if (!ns)
		return EXT2_ET_FILE_NOT_FOUND;
	odf_ns_node_name(name, uino);
	err = odf_lookup(v->fs, ns, name, &ino);
	if (!err && !odf_is_dir(v->fs, ino)) {
		err = odf_remove(v->fs, ns, name);
		if (!err)
			err = EXT2_ET_FILE_NOT_FOUND;
	}
	if (err == EXT2_ET_FILE_NOT_FOUND)
		err = odf_mkdir(v->fs, ns, name, &ino);
	if (err)
		return err;
	n.uino = uino;
	if (!n.time)
		n.time = time(NULL);
	err = odf_node_write(v->fs, ino, &n, ents);
	if (!err && ret)
		*ret = ino;
	return err;
}

errcode_t odf_ns_node_make(struct odf_vol *v, __u64 uino, unsigned type,
			   __u64 owner_ino, __u32 owner_gen,
			   const struct odf_redir_ent *ents, unsigned nent,
			   ext2_ino_t *ret)
{
	struct odf_node_info ni;

	memset(&ni, 0, sizeof(ni));
	ni.type = type;
	ni.nredirect = nent;
	ni.owner_ino = owner_ino;
	ni.owner_gen = owner_ino ? owner_gen : 0;
	return odf_ns_node_make_in(v, v->ino_ns, uino, &ni, ents, ret);
}

errcode_t odf_ns_whiteout(struct odf_vol *v, __u64 dir_uino, const char *name)
{
	ext2_ino_t node, ino;
	errcode_t err;

	if (!odf_name_valid(name, strlen(name)))
		return EXT2_ET_INVALID_ARGUMENT;
	err = odf_ns_node_lookup(v, dir_uino, &node);
	if (err == EXT2_ET_FILE_NOT_FOUND)
		err = odf_ns_node_make(v, dir_uino, 0, 0, 0, NULL, 0, &node);
	if (err)
		return err;
	err = odf_lookup(v->fs, node, name, &ino);
	if (!err)
		return odf_is_dir(v->fs, ino) ? EXT2_ET_FILE_EXISTS : 0;
	if (err == EXT2_ET_FILE_NOT_FOUND)
		err = odf_file_create(v->fs, node, name, NULL);
	return err;
}

errcode_t odf_ns_whiteout_remove(struct odf_vol *v, __u64 dir_uino,
				 const char *name)
{
	ext2_ino_t node;
	errcode_t err = odf_ns_node_lookup(v, dir_uino, &node);

	if (!err)
		err = odf_remove(v->fs, node, name);
	return err;
}

errcode_t odf_reclaim_move(struct odf_vol *v, ext2_ino_t dir, const char *name)
{
	char rname[32];
	ext2_ino_t ino;
	errcode_t err;

	if (!v->ino_reclaim)
		return odf_remove(v->fs, dir, name);
	err = odf_lookup(v->fs, dir, name, &ino);
	if (err)
		return err;
	snprintf(rname, sizeof(rname), "%u", ino);
	return odf_rename(v->fs, dir, name, v->ino_reclaim, rname);
}

errcode_t odf_ns_node_reclaim(struct odf_vol *v, __u64 uino)
{
	char name[ODF_NS_NAME_LEN + 1];

	odf_ns_node_name(name, uino);
	return odf_reclaim_move(v, v->ino_ns, name);
}

/* ---- format 1 ------------------------------------------------------ */

static errcode_t node_v1_set(ext2_filsys fs, ext2_ino_t ino, unsigned type,
			    __u64 time, const char *redirect)
{
	unsigned char buf[ODF_NODE_V1_BUF_MAX];
	size_t len = odf_node_v1_encode(buf, type, time, redirect,
					redirect ? strlen(redirect) : 0);

	return odf_node_put_raw(fs, ino, buf, len);
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

errcode_t odf_ns_v1_lookup(struct odf_vol *v, const char *path, ext2_ino_t *ret)
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
errcode_t odf_ns_v1_mkpath(struct odf_vol *v, const char *path,
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

errcode_t odf_ns_v1_whiteout(struct odf_vol *v, const char *path)
{
	ext2_ino_t dir, ino;
	const char *last;
	char name[256], rname[32];
	errcode_t err;

	err = odf_ns_v1_mkpath(v, path, &dir, &last);
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
	return node_v1_set(v->fs, ino, ODF_NODE_WHITEOUT, time(NULL), NULL);
}

errcode_t odf_ns_v1_mark_dir(struct odf_vol *v, const char *path,
			  unsigned type, const char *redirect)
{
	ext2_ino_t dir, ino;
	const char *last;
	char name[256];
	errcode_t err;

	err = odf_ns_v1_mkpath(v, path, &dir, &last);
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
	return node_v1_set(v->fs, ino, type, time(NULL), redirect);
}

/* ---- intents ------------------------------------------------------- */

void odf_intent_name(char *buf, size_t n, __u64 seq)
{
	snprintf(buf, n, "%s%016llx", ODF_INTENT_PREFIX,
		 (unsigned long long)seq);
}

errcode_t odf_intent_put(struct odf_vol *v, ext2_ino_t dir, __u64 seq,
			 const void *buf, size_t len)
{
	char name[40], tmp[48];
	ext2_ino_t ino;
	errcode_t err;

	if (!dir)
		return EXT2_ET_FILE_NOT_FOUND;
	odf_intent_name(name, sizeof(name), seq);
	/* a damaged intent is deleted by odfck, so a torn write is
	 * harmless, but a whole file under its final name is simpler */
	snprintf(tmp, sizeof(tmp), "%llu.tmp", (unsigned long long)seq);
	err = odf_file_create(v->fs, dir, tmp, &ino);
	if (!err)
		err = odf_file_pwrite(v->fs, ino, 0, buf, len);
	if (!err)
		err = odf_rename(v->fs, dir, tmp, dir, name);
	return err;
}

errcode_t odf_intent_add(struct odf_vol *v, const struct odf_intent_info *in)
{
	struct odf_intent_info t = *in;
	unsigned char *buf;
	size_t len;
	errcode_t err;

	buf = malloc(ODF_INTENT_BUF_MAX);
	if (!buf)
		return ENOMEM;
	if (!t.time)
		t.time = time(NULL);
	len = odf_intent_encode(buf, &t);
	err = len ? odf_intent_put(v, v->ino_reclaim, t.seq, buf, len) :
		    EXT2_ET_INVALID_ARGUMENT;
	free(buf);
	return err;
}

errcode_t odf_intent_done(struct odf_vol *v, __u64 seq)
{
	char name[40];

	odf_intent_name(name, sizeof(name), seq);
	return odf_remove(v->fs, v->ino_reclaim, name);
}
