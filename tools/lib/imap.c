// SPDX-License-Identifier: GPL-2.0
/*
 * imap.c - the forward and reverse inode maps: hash tables of 256-byte
 * records in 4096-byte buckets, probed linearly bucket by bucket.  A
 * lookup reads one bucket at a time, which is what the module does with
 * kernel_read; growth rebuilds the table into "<name>.new" and renames
 * it over the old file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libodf.h"

static const char *map_name(int kind)
{
	return kind == ODF_MAP_FORWARD ? ODF_PATH_IMAP_FWD : ODF_PATH_IMAP_REV;
}

static ext2_ino_t *map_ino(struct odf_vol *v, int kind)
{
	return kind == ODF_MAP_FORWARD ? &v->ino_fwd : &v->ino_rev;
}

static int rec_key_eq(const struct odf_map_rec *r, unsigned branch, __u64 ino)
{
	return r->mr_state == ODF_MREC_USED &&
	       ext2fs_le16_to_cpu(r->mr_key_branch) == branch &&
	       ext2fs_le64_to_cpu(r->mr_key_ino) == ino;
}

/* Place r in an in-memory image; returns 0 if the table is full. */
static int image_place(unsigned char *img, __u32 nb, __u32 seed,
		       const struct odf_map_rec *r)
{
	unsigned branch = ext2fs_le16_to_cpu(r->mr_key_branch);
	__u64 ino = ext2fs_le64_to_cpu(r->mr_key_ino);
	__u32 b = odf_map_hash(seed, branch, ino) & (nb - 1), i;
	unsigned s;

	for (i = 0; i < nb; i++, b = (b + 1) & (nb - 1)) {
		unsigned char *bk = img + (size_t)(b + 1) * ODF_BLOCK_SIZE;

		for (s = 0; s < ODF_MAP_RECS_PER_BUCKET; s++) {
			unsigned char *slot = bk + s * ODF_MAP_REC_SIZE;

			if (slot[0] == ODF_MREC_EMPTY) {
				memcpy(slot, r, sizeof(*r));
				return 1;
			}
		}
	}
	return 0;
}

errcode_t odf_map_create(struct odf_vol *v, int kind, __u32 nbuckets,
			 __u32 seed, const struct odf_map_rec *recs, size_t n)
{
	ext2_filsys fs = v->fs;
	struct odf_map_header h;
	unsigned char *img;
	size_t len, i;
	char tmp[64];
	ext2_ino_t ino;
	errcode_t err;

	if (nbuckets < ODF_MAP_MIN_BUCKETS)
		nbuckets = ODF_MAP_MIN_BUCKETS;
	/* leave room for growth: a rebuilt table is at most 3/8 full */
	while ((__u64)n * 8 > (__u64)nbuckets * ODF_MAP_RECS_PER_BUCKET * 3 &&
	       nbuckets < ODF_MAP_MAX_BUCKETS)
		nbuckets <<= 1;
	len = ((size_t)nbuckets + 1) * ODF_BLOCK_SIZE;
	img = calloc(1, len);
	if (!img)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		struct odf_map_rec r = recs[i];

		r.mr_state = ODF_MREC_USED;
		odf_map_rec_csum_set(&r);
		if (!image_place(img, nbuckets, seed, &r)) {
			free(img);
			return EXT2_ET_DIR_NO_SPACE;
		}
	}
	odf_map_hdr_init(&h, kind, nbuckets, seed);
	h.mh_nrecords = ext2fs_cpu_to_le64(n);
	odf_map_hdr_csum_set(&h);
	memcpy(img, &h, sizeof(h));

	if (!v->ino_imap) {
		free(img);
		return EXT2_ET_FILE_NOT_FOUND;
	}
	snprintf(tmp, sizeof(tmp), "%s%s", map_name(kind), ODF_TMP_SUFFIX);
	if (!odf_lookup(fs, v->ino_imap, tmp, &ino)) {
		err = odf_remove(fs, v->ino_imap, tmp);
		if (err)
			goto out;
	}
	/* complete file under a temporary name, then rename over */
	err = odf_file_create(fs, v->ino_imap, tmp, &ino);
	if (!err)
		err = odf_file_pwrite(fs, ino, 0, img, len);
	if (err)
		goto out;
	if (!odf_lookup(fs, v->ino_imap, map_name(kind), &ino)) {
		err = odf_remove(fs, v->ino_imap, map_name(kind));
		if (err)
			goto out;
	}
	err = odf_rename(fs, v->ino_imap, tmp, v->ino_imap, map_name(kind));
	if (!err)
		err = odf_lookup(fs, v->ino_imap, map_name(kind),
				 map_ino(v, kind));
out:
	free(img);
	return err;
}

errcode_t odf_map_open(struct odf_vol *v, int kind, struct odf_map *m)
{
	errcode_t err;
	int bad;

	memset(m, 0, sizeof(*m));
	m->v = v;
	m->kind = kind;
	m->ino = *map_ino(v, kind);
	if (!m->ino)
		return EXT2_ET_FILE_NOT_FOUND;
	err = odf_file_pread(v->fs, m->ino, 0, &m->hdr, sizeof(m->hdr));
	if (err)
		return err;
	bad = odf_map_hdr_verify(&m->hdr, kind);
	return bad ? EXT2_ET_BAD_MAGIC : 0;
}

static errcode_t read_bucket(struct odf_map *m, __u32 b, unsigned char *blk)
{
	return odf_file_pread(m->v->fs, m->ino,
			      (__u64)(b + 1) * ODF_BLOCK_SIZE, blk,
			      ODF_BLOCK_SIZE);
}

/*
 * Probe for a key.  *fb and *fs_ receive its position (found) or the
 * first reusable slot on the chain (not found; *fb = ~0 if none).
 */
static errcode_t probe(struct odf_map *m, unsigned branch, __u64 ino,
		       unsigned char *blk, int *found, __u32 *fb,
		       unsigned *fs_)
{
	__u32 nb = ext2fs_le32_to_cpu(m->hdr.mh_nbuckets);
	__u32 seed = ext2fs_le32_to_cpu(m->hdr.mh_hash_seed);
	__u32 b = odf_map_hash(seed, branch, ino) & (nb - 1), i;
	__u32 free_b = ~0U;
	unsigned s, free_s = 0;
	errcode_t err;

	*found = 0;
	for (i = 0; i < nb; i++, b = (b + 1) & (nb - 1)) {
		int saw_empty = 0;

		err = read_bucket(m, b, blk);
		if (err)
			return err;
		for (s = 0; s < ODF_MAP_RECS_PER_BUCKET; s++) {
			const struct odf_map_rec *r = (const void *)
				(blk + s * ODF_MAP_REC_SIZE);

			if (rec_key_eq(r, branch, ino)) {
				*found = 1;
				*fb = b;
				*fs_ = s;
				return 0;
			}
			if (r->mr_state != ODF_MREC_USED && free_b == ~0U) {
				free_b = b;
				free_s = s;
			}
			if (r->mr_state == ODF_MREC_EMPTY)
				saw_empty = 1;
		}
		if (saw_empty)
			break;
	}
	*fb = free_b;
	*fs_ = free_s;
	return 0;
}

errcode_t odf_map_lookup(struct odf_map *m, unsigned branch, __u64 ino,
			 struct odf_map_rec *out, int *found)
{
	unsigned char blk[ODF_BLOCK_SIZE];
	__u32 b;
	unsigned s;
	errcode_t err;

	err = probe(m, branch, ino, blk, found, &b, &s);
	if (err || !*found)
		return err;
	err = read_bucket(m, b, blk);
	if (!err)
		memcpy(out, blk + s * ODF_MAP_REC_SIZE, sizeof(*out));
	if (!err && odf_map_rec_verify(out, m->kind))
		err = EXT2_ET_BAD_CRC;
	return err;
}

static errcode_t write_hdr(struct odf_map *m)
{
	odf_map_hdr_csum_set(&m->hdr);
	return odf_file_pwrite(m->v->fs, m->ino, 0, &m->hdr, sizeof(m->hdr));
}

struct collect {
	struct odf_map_rec	*recs;
	size_t			n, cap;
	int			oom;
};

static void collect_cb(void *priv, __u32 b, unsigned s,
		       const struct odf_map_rec *r, int bad)
{
	struct collect *c = priv;

	(void)b; (void)s;
	if (bad || r->mr_state != ODF_MREC_USED)
		return;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		void *p = realloc(c->recs, ncap * sizeof(*c->recs));

		if (!p) {
			c->oom = 1;
			return;
		}
		c->recs = p;
		c->cap = ncap;
	}
	c->recs[c->n++] = *r;
}

/* Rebuild the table with room for more, dropping tombstones. */
static errcode_t grow(struct odf_map *m)
{
	struct collect c = { 0 };
	struct odf_map_header h;
	void *buf;
	size_t len;
	int bad;
	errcode_t err;

	err = odf_file_read_all(m->v->fs, m->ino, ~0ULL, &buf, &len);
	if (err)
		return err;
	odf_map_scan(buf, len, m->kind, &h, &bad, collect_cb, &c);
	free(buf);
	if (c.oom) {
		free(c.recs);
		return ENOMEM;
	}
	err = odf_map_create(m->v, m->kind,
			     ext2fs_le32_to_cpu(m->hdr.mh_nbuckets),
			     ext2fs_le32_to_cpu(m->hdr.mh_hash_seed),
			     c.recs, c.n);
	free(c.recs);
	if (!err)
		err = odf_map_open(m->v, m->kind, m);
	return err;
}

errcode_t odf_map_insert(struct odf_map *m, const struct odf_map_rec *r)
{
	unsigned char blk[ODF_BLOCK_SIZE];
	unsigned branch = ext2fs_le16_to_cpu(r->mr_key_branch);
	__u64 ino = ext2fs_le64_to_cpu(r->mr_key_ino);
	__u64 used = ext2fs_le64_to_cpu(m->hdr.mh_nrecords);
	__u64 del = ext2fs_le64_to_cpu(m->hdr.mh_ndeleted);
	__u64 cap = (__u64)ext2fs_le32_to_cpu(m->hdr.mh_nbuckets) *
		    ODF_MAP_RECS_PER_BUCKET;
	struct odf_map_rec rec = *r;
	int found;
	__u32 b;
	unsigned s;
	errcode_t err;

	if ((used + del + 1) * ODF_MAP_LOAD_DEN > cap * ODF_MAP_LOAD_NUM) {
		err = grow(m);
		if (err)
			return err;
	}
	rec.mr_state = ODF_MREC_USED;
	odf_map_rec_csum_set(&rec);
	err = probe(m, branch, ino, blk, &found, &b, &s);
	if (err)
		return err;
	if (b == ~0U)
		return EXT2_ET_DIR_NO_SPACE;
	err = read_bucket(m, b, blk);
	if (err)
		return err;
	if (!found) {
		if (blk[s * ODF_MAP_REC_SIZE] == ODF_MREC_DELETED)
			m->hdr.mh_ndeleted = ext2fs_cpu_to_le64(del - 1);
		m->hdr.mh_nrecords = ext2fs_cpu_to_le64(used + 1);
	}
	/* record first, then the counters that describe it */
	err = odf_file_pwrite(m->v->fs, m->ino, (__u64)(b + 1) *
			      ODF_BLOCK_SIZE + s * ODF_MAP_REC_SIZE,
			      &rec, sizeof(rec));
	if (!err && !found)
		err = write_hdr(m);
	return err;
}

errcode_t odf_map_delete(struct odf_map *m, unsigned branch, __u64 ino,
			 int *found)
{
	unsigned char blk[ODF_BLOCK_SIZE];
	struct odf_map_rec tomb;
	__u32 b;
	unsigned s;
	errcode_t err;

	err = probe(m, branch, ino, blk, found, &b, &s);
	if (err || !*found)
		return err;
	memset(&tomb, 0, sizeof(tomb));
	tomb.mr_state = ODF_MREC_DELETED;
	err = odf_file_pwrite(m->v->fs, m->ino, (__u64)(b + 1) *
			      ODF_BLOCK_SIZE + s * ODF_MAP_REC_SIZE,
			      &tomb, sizeof(tomb));
	if (err)
		return err;
	m->hdr.mh_nrecords = ext2fs_cpu_to_le64(
		ext2fs_le64_to_cpu(m->hdr.mh_nrecords) - 1);
	m->hdr.mh_ndeleted = ext2fs_cpu_to_le64(
		ext2fs_le64_to_cpu(m->hdr.mh_ndeleted) + 1);
	return write_hdr(m);
}
