// SPDX-License-Identifier: GPL-2.0
/*
 * readdir.c - persistent readdir state, one file per merged directory.
 *
 * Block 0 holds the header and the branch change stamps, blocks
 * 1..index_buckets the name index, the rest the append-only record area
 * of 64-byte slots.  An entry's directory offset is 2 + its first slot,
 * so seeking is a division, and offsets never move: removal sets a
 * tombstone flag, never compacts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libodf.h"

void odf_rd_name(char buf[ODF_RD_NAME_LEN + 1], __u64 dir_ino)
{
	snprintf(buf, ODF_RD_NAME_LEN + 1, "%016llx",
		 (unsigned long long)dir_ino);
}

static __u32 csum_hole(const void *p, size_t n, size_t off)
{
	__u32 zero = 0, crc;

	crc = ext2fs_crc32c_le(~0U, p, off);
	crc = ext2fs_crc32c_le(crc, (const unsigned char *)&zero, 4);
	return ext2fs_crc32c_le(crc, (const unsigned char *)p + off + 4,
				n - off - 4);
}

static void hdr_csum(unsigned char *blk0)
{
	struct odf_rd_header *h = (void *)blk0;

	h->rh_crc = 0;
	h->rh_crc = ext2fs_cpu_to_le32(csum_hole(blk0, ODF_BLOCK_SIZE,
				offsetof(struct odf_rd_header, rh_crc)));
}

static void bucket_csum(struct odf_rdix_bucket *b)
{
	b->ib_crc = ext2fs_cpu_to_le32(csum_hole(b, sizeof(*b),
				offsetof(struct odf_rdix_bucket, ib_crc)));
}

/* Encode an entry into n slots at dst (caller zeroed them). */
static unsigned encode_ent(unsigned char *dst, const struct odf_rd_entry *e,
			   __u32 seed)
{
	struct odf_rd_ent *h = (void *)dst;
	unsigned n = odf_rd_nslots(e->name_len), k;

	h->re_kind = ODF_RS_HEAD;
	h->re_flags = e->flags & ODF_RE_TOMBSTONE;
	h->re_dtype = e->dtype;
	h->re_nslots = n;
	h->re_name_len = e->name_len;
	h->re_branch = ext2fs_cpu_to_le16(e->branch);
	h->re_ino = ext2fs_cpu_to_le64(e->ino);
	h->re_hash = ext2fs_cpu_to_le32(odf_rd_hash(seed, e->name,
						     e->name_len));
	memcpy(h->re_name, e->name, e->name_len < ODF_RD_HEAD_NAME ?
	       e->name_len : ODF_RD_HEAD_NAME);
	for (k = 1; k < n; k++) {
		size_t off = ODF_RD_HEAD_NAME + (k - 1) * ODF_RD_CONT_NAME;
		size_t take = e->name_len - off < ODF_RD_CONT_NAME ?
			      e->name_len - off : ODF_RD_CONT_NAME;

		dst[k * ODF_RD_SLOT_SIZE] = ODF_RS_CONT;
		memcpy(dst + k * ODF_RD_SLOT_SIZE + 1, e->name + off, take);
	}
	h->re_crc = ext2fs_cpu_to_le32(csum_hole(dst, n * ODF_RD_SLOT_SIZE,
				offsetof(struct odf_rd_ent, re_crc)));
	return n;
}

/* Put (hash, slot) into an in-memory index. */
static int index_put(unsigned char *idx, __u32 nb, __u32 hash, __u32 slot)
{
	__u32 b = hash & (nb - 1), i;
	unsigned k;

	for (i = 0; i < nb; i++, b = (b + 1) & (nb - 1)) {
		struct odf_rdix_bucket *bk = (void *)(idx +
					(size_t)b * ODF_BLOCK_SIZE);

		for (k = 0; k < ODF_RDIX_ENTRIES; k++) {
			__u32 v = ext2fs_le32_to_cpu(bk->ib_ent[k].ie_slot);

			if (v == ODF_RDIX_EMPTY || v == ODF_RDIX_DELETED) {
				bk->ib_ent[k].ie_hash = ext2fs_cpu_to_le32(hash);
				bk->ib_ent[k].ie_slot =
					ext2fs_cpu_to_le32(slot + 1);
				bk->ib_count = ext2fs_cpu_to_le16(
					ext2fs_le16_to_cpu(bk->ib_count) + 1);
				return 1;
			}
		}
	}
	return 0;
}

static __u32 index_buckets_for(__u64 live)
{
	__u32 nb = 1;

	while ((__u64)nb * ODF_RDIX_ENTRIES < live * 2 && nb < (1U << 20))
		nb <<= 1;
	return nb;
}

/* Write a complete image under "<name>.new" and rename it over. */
static errcode_t install_image(struct odf_vol *v, __u64 dir_ino,
			       const void *img, size_t len)
{
	char name[ODF_RD_NAME_LEN + 1], tmp[ODF_RD_NAME_LEN + 8];
	ext2_ino_t ino;
	errcode_t err;

	if (!v->ino_readdir)
		return EXT2_ET_FILE_NOT_FOUND;
	odf_rd_name(name, dir_ino);
	snprintf(tmp, sizeof(tmp), "%s%s", name, ODF_TMP_SUFFIX);
	if (!odf_lookup(v->fs, v->ino_readdir, tmp, &ino)) {
		err = odf_remove(v->fs, v->ino_readdir, tmp);
		if (err)
			return err;
	}
	err = odf_file_create(v->fs, v->ino_readdir, tmp, &ino);
	if (!err)
		err = odf_file_pwrite(v->fs, ino, 0, img, len);
	if (err)
		return err;
	if (!odf_lookup(v->fs, v->ino_readdir, name, &ino)) {
		err = odf_remove(v->fs, v->ino_readdir, name);
		if (err)
			return err;
	}
	return odf_rename(v->fs, v->ino_readdir, tmp, v->ino_readdir, name);
}

/*
 * Re-index a record area (kept byte for byte, so offsets survive) with
 * nb index buckets.
 */
static errcode_t reindex(struct odf_vol *v, const unsigned char *old,
			 size_t oldlen, __u32 nb)
{
	struct odf_rd_header h;
	__u32 old_start, next, slot;
	size_t area, len;
	unsigned char *img;
	errcode_t err;

	memcpy(&h, old, sizeof(h));
	old_start = ext2fs_le32_to_cpu(h.rh_rec_start);
	next = ext2fs_le32_to_cpu(h.rh_next_slot);
	if ((size_t)old_start * ODF_BLOCK_SIZE > oldlen)
		return EXT2_ET_BAD_MAGIC;
	area = oldlen - (size_t)old_start * ODF_BLOCK_SIZE;
	len = ((size_t)1 + nb) * ODF_BLOCK_SIZE + area;
	img = calloc(1, len);
	if (!img)
		return ENOMEM;
	memcpy(img, old, ODF_BLOCK_SIZE);
	memcpy(img + ((size_t)1 + nb) * ODF_BLOCK_SIZE,
	       old + (size_t)old_start * ODF_BLOCK_SIZE, area);
	for (slot = 0; slot < next;) {
		const struct odf_rd_ent *e = (const void *)(img +
			((size_t)1 + nb) * ODF_BLOCK_SIZE +
			(size_t)slot * ODF_RD_SLOT_SIZE);

		if (e->re_kind != ODF_RS_HEAD || !e->re_nslots) {
			slot++;
			continue;
		}
		if (!(e->re_flags & ODF_RE_TOMBSTONE) &&
		    !index_put(img + ODF_BLOCK_SIZE, nb,
			       ext2fs_le32_to_cpu(e->re_hash), slot)) {
			free(img);
			return EXT2_ET_DIR_NO_SPACE;
		}
		slot += e->re_nslots;
	}
	for (slot = 0; slot < nb; slot++)
		bucket_csum((void *)(img + ((size_t)1 + slot) *
				     ODF_BLOCK_SIZE));
	h.rh_index_buckets = ext2fs_cpu_to_le32(nb);
	h.rh_rec_start = ext2fs_cpu_to_le32(1 + nb);
	memcpy(img, &h, sizeof(h));
	hdr_csum(img);
	err = install_image(v, ext2fs_le64_to_cpu(h.rh_dir_ino), img, len);
	free(img);
	return err;
}

errcode_t odf_rd_build(struct odf_vol *v, __u64 dir_ino,
		       const struct odf_rd_stamp *stamps, unsigned nstamps,
		       const struct odf_rd_entry *ents, size_t n)
{
	struct odf_rd_header h;
	unsigned char *img, *rec;
	__u32 nb, seed, slot = 0, live = 0, tomb = 0;
	size_t i, blocks, len;
	errcode_t err;

	if (nstamps > ODF_RD_MAX_STAMPS)
		return EXT2_ET_INVALID_ARGUMENT;
	/* count slots including end-of-block padding */
	for (i = 0; i < n; i++) {
		unsigned k = odf_rd_nslots(ents[i].name_len);

		if (!ents[i].name_len)
			return EXT2_ET_INVALID_ARGUMENT;
		if (ODF_RD_SLOTS_PER_BLOCK - slot % ODF_RD_SLOTS_PER_BLOCK < k)
			slot += ODF_RD_SLOTS_PER_BLOCK -
				slot % ODF_RD_SLOTS_PER_BLOCK;
		slot += k;
		if (ents[i].flags & ODF_RE_TOMBSTONE)
			tomb++;
		else
			live++;
	}
	err = odf_random_bytes(&seed, sizeof(seed));
	if (err)
		return err;
	nb = index_buckets_for(live);
	blocks = (slot + ODF_RD_SLOTS_PER_BLOCK - 1) / ODF_RD_SLOTS_PER_BLOCK;
	len = (1 + nb + blocks) * ODF_BLOCK_SIZE;
	img = calloc(1, len);
	if (!img)
		return ENOMEM;
	rec = img + ((size_t)1 + nb) * ODF_BLOCK_SIZE;
	for (i = 0, slot = 0; i < n; i++) {
		unsigned k = odf_rd_nslots(ents[i].name_len);

		while (ODF_RD_SLOTS_PER_BLOCK - slot % ODF_RD_SLOTS_PER_BLOCK
		       < k)
			rec[(size_t)slot++ * ODF_RD_SLOT_SIZE] = ODF_RS_PAD;
		encode_ent(rec + (size_t)slot * ODF_RD_SLOT_SIZE, &ents[i],
			   seed);
		if (!(ents[i].flags & ODF_RE_TOMBSTONE))
			index_put(img + ODF_BLOCK_SIZE, nb,
				  odf_rd_hash(seed, ents[i].name,
					      ents[i].name_len), slot);
		slot += k;
	}
	for (i = 0; i < nb; i++)
		bucket_csum((void *)(img + (1 + i) * ODF_BLOCK_SIZE));
	memset(&h, 0, sizeof(h));
	h.rh_magic = ext2fs_cpu_to_le32(ODF_RD_MAGIC);
	h.rh_version = ext2fs_cpu_to_le16(ODF_RD_VERSION);
	h.rh_nstamps = ext2fs_cpu_to_le16(nstamps);
	h.rh_flags = ext2fs_cpu_to_le32(ODF_RD_COMPLETE);
	h.rh_dir_ino = ext2fs_cpu_to_le64(dir_ino);
	h.rh_generation = ext2fs_cpu_to_le64(1);
	h.rh_index_start = ext2fs_cpu_to_le32(1);
	h.rh_index_buckets = ext2fs_cpu_to_le32(nb);
	h.rh_rec_start = ext2fs_cpu_to_le32(1 + nb);
	h.rh_next_slot = ext2fs_cpu_to_le32(slot);
	h.rh_live = ext2fs_cpu_to_le32(live);
	h.rh_tombstones = ext2fs_cpu_to_le32(tomb);
	h.rh_hash_seed = ext2fs_cpu_to_le32(seed);
	memcpy(img, &h, sizeof(h));
	if (nstamps)
		memcpy(img + sizeof(h), stamps, nstamps * sizeof(*stamps));
	hdr_csum(img);
	err = install_image(v, dir_ino, img, len);
	free(img);
	return err;
}

static errcode_t rd_open(struct odf_vol *v, __u64 dir_ino, ext2_ino_t *ino,
			 unsigned char *blk0)
{
	char name[ODF_RD_NAME_LEN + 1];
	const struct odf_rd_header *h = (const void *)blk0;
	errcode_t err;

	if (!v->ino_readdir)
		return EXT2_ET_FILE_NOT_FOUND;
	odf_rd_name(name, dir_ino);
	err = odf_lookup(v->fs, v->ino_readdir, name, ino);
	if (!err)
		err = odf_file_pread(v->fs, *ino, 0, blk0, ODF_BLOCK_SIZE);
	if (err)
		return err;
	if (ext2fs_le32_to_cpu(h->rh_magic) != ODF_RD_MAGIC ||
	    csum_hole(blk0, ODF_BLOCK_SIZE, offsetof(struct odf_rd_header,
						     rh_crc)) !=
	    ext2fs_le32_to_cpu(h->rh_crc) ||
	    ext2fs_le64_to_cpu(h->rh_dir_ino) != dir_ino ||
	    !ext2fs_le32_to_cpu(h->rh_index_buckets))
		return EXT2_ET_BAD_MAGIC;
	return 0;
}

static __u64 slot_pos(const struct odf_rd_header *h, __u32 slot)
{
	return (__u64)ext2fs_le32_to_cpu(h->rh_rec_start) * ODF_BLOCK_SIZE +
	       (__u64)slot * ODF_RD_SLOT_SIZE;
}

errcode_t odf_rd_end(struct odf_vol *v, __u64 dir_ino, __u32 *end)
{
	unsigned char blk0[ODF_BLOCK_SIZE];
	struct odf_rd_header *h = (void *)blk0;
	ext2_ino_t ino;
	errcode_t err = rd_open(v, dir_ino, &ino, blk0);

	if (!err)
		*end = ext2fs_le32_to_cpu(h->rh_next_slot) + ODF_RD_OFF_FIRST;
	return err;
}

static errcode_t find_live(struct odf_vol *v, ext2_ino_t ino,
			   const struct odf_rd_header *h, const char *name,
			   size_t len, unsigned char *raw,
			   struct odf_rdix_bucket *bk, __u32 *bp,
			   unsigned *kp, __u32 *slotp, int *found);

/*
 * Append: slots first, then the index entry, then the header.  A crash
 * in between leaves bytes past rh_next_slot or an index entry to a slot
 * beyond it: odf_rd_check rejects both, and the state is rebuilt.
 */
errcode_t odf_rd_append(struct odf_vol *v, __u64 dir_ino,
			const struct odf_rd_entry *e, __u32 *ordinal)
{
	unsigned char blk0[ODF_BLOCK_SIZE], slots[ODF_BLOCK_SIZE];
	struct odf_rd_header *h = (void *)blk0;
	struct odf_rdix_bucket bk;
	ext2_ino_t ino;
	__u32 next, nb, seed, hash, b, i, live;
	unsigned n, pad, k;
	errcode_t err;

	if (!e->name_len)
		return EXT2_ET_INVALID_ARGUMENT;
	err = rd_open(v, dir_ino, &ino, blk0);
	if (err)
		return err;
	if (!(e->flags & ODF_RE_TOMBSTONE)) {	/* the listing has no dups */
		unsigned char raw[ODF_RD_MAX_NSLOTS * ODF_RD_SLOT_SIZE];
		__u32 fb, fslot;
		unsigned fk;
		int found;

		err = find_live(v, ino, h, e->name, e->name_len, raw, &bk, &fb,
				&fk, &fslot, &found);
		if (err)
			return err;
		if (found)
			return EXT2_ET_FILE_EXISTS;
	}
	next = ext2fs_le32_to_cpu(h->rh_next_slot);
	nb = ext2fs_le32_to_cpu(h->rh_index_buckets);
	seed = ext2fs_le32_to_cpu(h->rh_hash_seed);
	live = ext2fs_le32_to_cpu(h->rh_live);
	if ((__u64)(live + 1) * 4 > (__u64)nb * ODF_RDIX_ENTRIES * 3) {
		void *img;
		size_t len;

		err = odf_file_read_all(v->fs, ino, ~0ULL, &img, &len);
		if (!err)
			err = reindex(v, img, len, nb * 2);
		free(img);
		if (!err)
			err = rd_open(v, dir_ino, &ino, blk0);
		if (err)
			return err;
		nb = ext2fs_le32_to_cpu(h->rh_index_buckets);
	}
	n = odf_rd_nslots(e->name_len);
	pad = ODF_RD_SLOTS_PER_BLOCK - next % ODF_RD_SLOTS_PER_BLOCK;
	pad = pad < n ? pad : 0;
	if ((__u64)next + pad + n + ODF_RD_OFF_FIRST > ODF_RD_OFF_MAX)
		return EXT2_ET_DIR_NO_SPACE;	/* caller regenerates */
	memset(slots, 0, sizeof(slots));
	for (k = 0; k < pad; k++)
		slots[k * ODF_RD_SLOT_SIZE] = ODF_RS_PAD;
	encode_ent(slots + pad * ODF_RD_SLOT_SIZE, e, seed);
	err = odf_file_pwrite(v->fs, ino, slot_pos(h, next), slots,
			      (size_t)(pad + n) * ODF_RD_SLOT_SIZE);
	if (err)
		return err;
	next += pad;
	/* keep the file a whole number of blocks */
	{
		__u64 end = slot_pos(h, next + n);

		end = (end + ODF_BLOCK_SIZE - 1) & ~(__u64)(ODF_BLOCK_SIZE - 1);
		err = odf_file_truncate(v->fs, ino, end);
		if (err)
			return err;
	}
	hash = odf_rd_hash(seed, e->name, e->name_len);
	if (!(e->flags & ODF_RE_TOMBSTONE)) {
		for (i = 0, b = hash & (nb - 1); i < nb;
		     i++, b = (b + 1) & (nb - 1)) {
			err = odf_file_pread(v->fs, ino, (__u64)(1 + b) *
					     ODF_BLOCK_SIZE, &bk, sizeof(bk));
			if (err)
				return err;
			if (index_put((void *)&bk, 1, hash, next))
				break;
		}
		if (i == nb)
			return EXT2_ET_DIR_NO_SPACE;
		bucket_csum(&bk);
		err = odf_file_pwrite(v->fs, ino, (__u64)(1 + b) *
				      ODF_BLOCK_SIZE, &bk, sizeof(bk));
		if (err)
			return err;
		h->rh_live = ext2fs_cpu_to_le32(live + 1);
	} else {
		h->rh_tombstones = ext2fs_cpu_to_le32(
			ext2fs_le32_to_cpu(h->rh_tombstones) + 1);
	}
	h->rh_next_slot = ext2fs_cpu_to_le32(next + n);
	hdr_csum(blk0);
	err = odf_file_pwrite(v->fs, ino, 0, blk0, ODF_BLOCK_SIZE);
	if (!err && ordinal)
		*ordinal = next + ODF_RD_OFF_FIRST;
	return err;
}

/* Read the entry whose head is at slot; 0 if it is not a head. */
static errcode_t read_ent(struct odf_vol *v, ext2_ino_t ino,
			  const struct odf_rd_header *h, __u32 slot,
			  unsigned char *raw, struct odf_rd_entry *out,
			  int *is_head)
{
	const struct odf_rd_ent *e = (const void *)raw;
	__u32 next = ext2fs_le32_to_cpu(h->rh_next_slot);
	unsigned n, k;
	errcode_t err;

	*is_head = 0;
	err = odf_file_pread(v->fs, ino, slot_pos(h, slot), raw,
			     ODF_RD_SLOT_SIZE);
	if (err || e->re_kind != ODF_RS_HEAD)
		return err;
	n = e->re_nslots;
	if (!n || n > ODF_RD_MAX_NSLOTS || slot + n > next ||
	    odf_rd_nslots(e->re_name_len) != n)
		return EXT2_ET_BAD_MAGIC;
	if (n > 1) {
		err = odf_file_pread(v->fs, ino, slot_pos(h, slot + 1),
				     raw + ODF_RD_SLOT_SIZE,
				     (size_t)(n - 1) * ODF_RD_SLOT_SIZE);
		if (err)
			return err;
	}
	if (csum_hole(raw, (size_t)n * ODF_RD_SLOT_SIZE,
		      offsetof(struct odf_rd_ent, re_crc)) !=
	    ext2fs_le32_to_cpu(e->re_crc))
		return EXT2_ET_BAD_CRC;
	memset(out, 0, sizeof(*out));
	out->ordinal = slot + ODF_RD_OFF_FIRST;
	out->flags = e->re_flags;
	out->dtype = e->re_dtype;
	out->branch = ext2fs_le16_to_cpu(e->re_branch);
	out->ino = ext2fs_le64_to_cpu(e->re_ino);
	out->name_len = e->re_name_len;
	memcpy(out->name, e->re_name, out->name_len < ODF_RD_HEAD_NAME ?
	       out->name_len : ODF_RD_HEAD_NAME);
	for (k = 1; k < n; k++) {
		size_t off = ODF_RD_HEAD_NAME + (k - 1) * ODF_RD_CONT_NAME;
		size_t take = out->name_len - off < ODF_RD_CONT_NAME ?
			      out->name_len - off : ODF_RD_CONT_NAME;

		memcpy(out->name + off, raw + k * ODF_RD_SLOT_SIZE + 1, take);
	}
	*is_head = 1;
	return 0;
}

errcode_t odf_rd_seek(struct odf_vol *v, __u64 dir_ino, __u32 ordinal,
		      struct odf_rd_entry *out, int *eod)
{
	unsigned char blk0[ODF_BLOCK_SIZE];
	unsigned char raw[ODF_RD_MAX_NSLOTS * ODF_RD_SLOT_SIZE];
	struct odf_rd_header *h = (void *)blk0;
	ext2_ino_t ino;
	__u32 slot, next;
	int head;
	errcode_t err;

	*eod = 0;
	err = rd_open(v, dir_ino, &ino, blk0);
	if (err)
		return err;
	next = ext2fs_le32_to_cpu(h->rh_next_slot);
	slot = ordinal < ODF_RD_OFF_FIRST ? 0 : ordinal - ODF_RD_OFF_FIRST;
	for (; slot < next; slot++) {
		err = read_ent(v, ino, h, slot, raw, out, &head);
		if (err)
			return err;
		if (head && !(out->flags & ODF_RE_TOMBSTONE))
			return 0;
		if (head)
			slot += odf_rd_nslots(out->name_len) - 1;
	}
	*eod = 1;
	return 0;
}

/*
 * Find the live entry called name through the index.  On success *bp
 * and *kp give its index bucket and entry, bk holds that bucket and raw the
 * entry's slots.
 */
static errcode_t find_live(struct odf_vol *v, ext2_ino_t ino,
			   const struct odf_rd_header *h, const char *name,
			   size_t len, unsigned char *raw,
			   struct odf_rdix_bucket *bk, __u32 *bp,
			   unsigned *kp, __u32 *slotp, int *found)
{
	__u32 nb = ext2fs_le32_to_cpu(h->rh_index_buckets), b, i;
	__u32 hash = odf_rd_hash(ext2fs_le32_to_cpu(h->rh_hash_seed), name,
				 len);
	struct odf_rd_entry ent;
	unsigned k;
	int head, empty_seen;
	errcode_t err;

	*found = 0;
	for (i = 0, b = hash & (nb - 1); i < nb; i++, b = (b + 1) & (nb - 1)) {
		err = odf_file_pread(v->fs, ino, (__u64)(1 + b) *
				     ODF_BLOCK_SIZE, bk, sizeof(*bk));
		if (err)
			return err;
		empty_seen = 0;
		for (k = 0; k < ODF_RDIX_ENTRIES; k++) {
			__u32 s = ext2fs_le32_to_cpu(bk->ib_ent[k].ie_slot);

			if (s == ODF_RDIX_EMPTY) {
				empty_seen = 1;
				continue;
			}
			if (s == ODF_RDIX_DELETED ||
			    ext2fs_le32_to_cpu(bk->ib_ent[k].ie_hash) != hash)
				continue;
			err = read_ent(v, ino, h, s - 1, raw, &ent, &head);
			if (err)
				return err;
			if (!head || ent.name_len != len ||
			    memcmp(ent.name, name, len))
				continue;
			*bp = b;
			*kp = k;
			*slotp = s - 1;
			*found = 1;
			return 0;
		}
		if (empty_seen)
			break;
	}
	return 0;
}

errcode_t odf_rd_tombstone(struct odf_vol *v, __u64 dir_ino,
			   const char *name, size_t len, int *found)
{
	unsigned char blk0[ODF_BLOCK_SIZE];
	unsigned char raw[ODF_RD_MAX_NSLOTS * ODF_RD_SLOT_SIZE];
	struct odf_rd_header *h = (void *)blk0;
	struct odf_rdix_bucket bk;
	struct odf_rd_ent *e = (void *)raw;
	ext2_ino_t ino;
	__u32 b, slot;
	unsigned k;
	errcode_t err;

	*found = 0;
	err = rd_open(v, dir_ino, &ino, blk0);
	if (!err)
		err = find_live(v, ino, h, name, len, raw, &bk, &b, &k, &slot,
				found);
	if (err || !*found)
		return err;
	/* entry first: a crash leaves an index entry to a tombstone,
	 * which the check rejects */
	e->re_flags |= ODF_RE_TOMBSTONE;
	e->re_crc = ext2fs_cpu_to_le32(csum_hole(raw,
			(size_t)e->re_nslots * ODF_RD_SLOT_SIZE,
			offsetof(struct odf_rd_ent, re_crc)));
	err = odf_file_pwrite(v->fs, ino, slot_pos(h, slot), raw,
			      ODF_RD_SLOT_SIZE);
	if (err)
		return err;
	bk.ib_ent[k].ie_hash = 0;
	bk.ib_ent[k].ie_slot = ext2fs_cpu_to_le32(ODF_RDIX_DELETED);
	bk.ib_count = ext2fs_cpu_to_le16(ext2fs_le16_to_cpu(bk.ib_count) - 1);
	bucket_csum(&bk);
	err = odf_file_pwrite(v->fs, ino, (__u64)(1 + b) * ODF_BLOCK_SIZE,
			      &bk, sizeof(bk));
	if (err)
		return err;
	h->rh_live = ext2fs_cpu_to_le32(ext2fs_le32_to_cpu(h->rh_live) - 1);
	h->rh_tombstones = ext2fs_cpu_to_le32(
		ext2fs_le32_to_cpu(h->rh_tombstones) + 1);
	hdr_csum(blk0);
	return odf_file_pwrite(v->fs, ino, 0, blk0, ODF_BLOCK_SIZE);
}
