// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: the inode maps /imap/forward and /imap/reverse
 * (docs/odf-format.md section 6).
 *
 * Two hash tables of 256-byte records in 4096-byte buckets, probed
 * linearly bucket by bucket; one bucket is read per probe, so memory does
 * not grow with the map.  Records exist only for the exceptions to the
 * deterministic numbers: copies (UPPER, COPIED, REVERSE) and lower inode
 * numbers too large for 48 bits (BIGINO).
 *
 * A lookup of a key the forward map has no record of (nearly every
 * lookup: most objects were never copied) is answered by an in-memory
 * filter, one bit per hashed key, without imap_lock or an ODF read; the
 * filter is built at mount from every record and only ever gains bits.
 *
 * Locking: changes run one at a time under imap_change, a mutex;
 * lookups (unionfs_imap_find()) do not take it: they read buckets in
 * place in the page cache under imap_lock held shared, so a lookup never
 * waits for a change's writes or its fsync.  A lookup that meets a record
 * being written sees its checksum fail and looks again under
 * imap_change.  imap_lock is taken exclusive only to put a grown map in
 * the old one's place (the file and its header), for no longer than
 * that.  imap_change is never taken while a branch lock is held (readdir
 * translates numbers after the branch directory is unlocked), because
 * growing a map locks the ODF's /imap.  Writes that lookups make (BIGINO
 * allocations, dropping a stale copy's records) run inside
 * unionfs_odf_write_begin(), entered before imap_change, so that
 * remount,ro waits for them.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/crc32c.h>
#include <linux/exportfs.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include "unionfs.h"

static const char *const unionfs_imap_names[2] = {
	ODF_PATH_IMAP_FWD, ODF_PATH_IMAP_REV
};

static u32 unionfs_imap_hash(u32 seed, u16 branch, u64 ino)
{
	u8 key[10];

	put_unaligned_le16(branch, key);
	put_unaligned_le64(ino, key + 2);
	return crc32c(seed, key, sizeof(key));
}

static u32 unionfs_mrec_crc(const struct odf_map_rec *r)
{
	return unionfs_odf_crc(r, sizeof(*r), offsetof(struct odf_map_rec, mr_crc));
}

static bool unionfs_mrec_is(const struct odf_map_rec *r, u16 branch, u64 ino)
{
	return r->mr_state == ODF_MREC_USED &&
	       le16_to_cpu(r->mr_key_branch) == branch &&
	       le64_to_cpu(r->mr_key_ino) == ino;
}

static int unionfs_imap_check_header(const struct odf_map_header *h, int kind,
				     loff_t size)
{
	u32 nb = le32_to_cpu(h->mh_nbuckets);

	if (le32_to_cpu(h->mh_magic) != ODF_MAP_MAGIC ||
	    le32_to_cpu(h->mh_crc) != UNIONFS_CRC(h, sizeof(*h), mh_crc) ||
	    le16_to_cpu(h->mh_version) != ODF_MAP_VERSION ||
	    le16_to_cpu(h->mh_kind) != kind ||
	    le32_to_cpu(h->mh_rec_size) != ODF_MAP_REC_SIZE ||
	    le32_to_cpu(h->mh_bucket_size) != ODF_BLOCK_SIZE ||
	    nb < ODF_MAP_MIN_BUCKETS || nb > ODF_MAP_MAX_BUCKETS ||
	    (nb & (nb - 1)) || size != ((loff_t)nb + 1) * ODF_BLOCK_SIZE)
		return -EUCLEAN;
	/*
	 * Counts that do not fit the slots: each insertion would rebuild
	 * the map (a damaged count once made every copy-up rebuild a map
	 * of 2^24 buckets, minutes per call).
	 */
	if (le64_to_cpu(h->mh_nrecords) + le64_to_cpu(h->mh_ndeleted) >
	    (u64)nb * ODF_MAP_RECS_PER_BUCKET)
		return -EUCLEAN;
	return 0;
}

static int unionfs_imap_write_header(struct file *f, struct odf_map_header *h)
{
	h->mh_crc = 0;
	h->mh_crc = cpu_to_le32(UNIONFS_CRC(h, sizeof(*h), mh_crc));
	return unionfs_odf_write(f, h, sizeof(*h), 0);
}

static struct file *unionfs_imap_open_file(struct unionfs_sb_info *sbi,
					   const char *name)
{
	struct path p;
	struct file *f;
	int err;

	err = vfs_path_lookup(sbi->imap_dir.dentry, sbi->imap_dir.mnt, name, 0,
			      &p);
	if (err)
		return ERR_PTR(err);
	f = dentry_open(&p, (sbi->super_file ? O_RDWR : O_RDONLY) | O_LARGEFILE |
			O_NOATIME, current_cred());
	path_put(&p);
	return f;
}

static loff_t unionfs_bucket_pos(u32 b)
{
	return ((loff_t)b + 1) * ODF_BLOCK_SIZE;
}

/* The filter bit of a forward-map key. */
static unsigned long unionfs_imap_filter_bit(const struct unionfs_sb_info *sbi,
					     u16 branch, u64 ino)
{
	return hash_64(ino ^ ((u64)branch << ODF_UINO_SHIFT),
		       sbi->imap_filter_shift);
}

/*
 * Build the filter of the forward map: four bits per slot the map has
 * now (at least 2^20, at most 2^27: 128 KiB to 16 MiB), from every
 * record.  A map that grows later only makes the filter answer "maybe"
 * more often.  Reads the whole map once, at mount.
 */
static int unionfs_imap_filter_build(struct unionfs_sb_info *sbi)
{
	const struct odf_map_header *h = &sbi->imap_hdr[0];
	u32 nb = le32_to_cpu(h->mh_nbuckets), b, s;
	u64 bits = (u64)nb * ODF_MAP_RECS_PER_BUCKET * 4;
	int err = 0;

	bits = clamp_t(u64, roundup_pow_of_two(bits), 1ULL << 20, 1ULL << 27);
	sbi->imap_filter_shift = ilog2(bits);
	sbi->imap_filter = kvcalloc(BITS_TO_LONGS(bits), sizeof(long),
				    GFP_KERNEL);
	if (!sbi->imap_filter)
		return -ENOMEM;
	for (b = 0; b < nb && h->mh_nrecords && !err; b++) {
		err = unionfs_odf_read(sbi->imap[0], sbi->imap_buf,
				       ODF_BLOCK_SIZE, unionfs_bucket_pos(b));
		for (s = 0; !err && s < ODF_MAP_RECS_PER_BUCKET; s++) {
			const struct odf_map_rec *r =
				sbi->imap_buf + s * ODF_MAP_REC_SIZE;
			unsigned long bit;

			if (r->mr_state != ODF_MREC_USED)
				continue;
			bit = unionfs_imap_filter_bit(sbi,
						      le16_to_cpu(r->mr_key_branch),
						      le64_to_cpu(r->mr_key_ino));
			__set_bit(bit, sbi->imap_filter);
		}
		cond_resched();
	}
	return err;
}

int unionfs_imap_open(struct unionfs_sb_info *sbi)
{
	int m, err;

	err = vfs_path_lookup(sbi->odf.dentry, sbi->odf.mnt, ODF_PATH_IMAP, 0,
			      &sbi->imap_dir);
	if (err)
		return err;
	sbi->imap_buf = kmalloc(ODF_BLOCK_SIZE, GFP_KERNEL);
	if (!sbi->imap_buf)
		return -ENOMEM;
	for (m = 0; m < 2; m++) {
		struct file *f = unionfs_imap_open_file(sbi, unionfs_imap_names[m]);

		if (IS_ERR(f)) {
			pr_err("ODF '%s': cannot open /imap/%s (error %ld)\n",
			       sbi->odf_name, unionfs_imap_names[m], PTR_ERR(f));
			return PTR_ERR(f);
		}
		sbi->imap[m] = f;
		err = unionfs_odf_read(f, &sbi->imap_hdr[m],
				       sizeof(sbi->imap_hdr[m]), 0);
		if (!err)
			err = unionfs_imap_check_header(&sbi->imap_hdr[m], m + 1,
							i_size_read(file_inode(f)));
		if (err) {
			pr_err("ODF '%s': /imap/%s has a bad header: run odfck\n",
			       sbi->odf_name, unionfs_imap_names[m]);
			return err;
		}
	}
	return unionfs_imap_filter_build(sbi);
}

void unionfs_imap_close(struct unionfs_sb_info *sbi)
{
	int m;

	for (m = 0; m < 2; m++) {
		if (sbi->imap[m])
			fput(sbi->imap[m]);
		sbi->imap[m] = NULL;
	}
	kfree(sbi->imap_buf);
	sbi->imap_buf = NULL;
	kvfree(sbi->imap_filter);
	sbi->imap_filter = NULL;
	path_put(&sbi->imap_dir);
	sbi->imap_dir.mnt = NULL;
	sbi->imap_dir.dentry = NULL;
}

/*
 * Walk the probe chain of a key.  Returns the position of the record
 * with that key (copied to @rec) or -ENOENT; @free gets the position of
 * the first EMPTY or DELETED slot met (0 if none).  @racing: a lookup
 * without imap_change, for which a record of the key whose checksum
 * fails may be one being written: -EAGAIN.
 */
static loff_t unionfs_imap_probe_chain(struct unionfs_sb_info *sbi, int m,
				       u16 branch, u64 ino,
				       struct odf_map_rec *rec, loff_t *free,
				       bool racing)
{
	const struct odf_map_header *h = &sbi->imap_hdr[m];
	u32 nb = le32_to_cpu(h->mh_nbuckets);
	u32 b = unionfs_imap_hash(le32_to_cpu(h->mh_hash_seed), branch, ino) &
		(nb - 1);
	loff_t found = -ENOENT;
	struct odf_map_rec *r;
	u32 i, s;

	if (free)
		*free = 0;
	BUILD_BUG_ON(ODF_BLOCK_SIZE != PAGE_SIZE);
	for (i = 0; i < nb; i++, b = (b + 1) & (nb - 1)) {
		bool has_empty = false;
		struct page *page;
		void *blk;

		/* In place: no shared buffer, so lookups run in parallel. */
		page = read_mapping_page(sbi->imap[m]->f_mapping,
					 unionfs_bucket_pos(b) >> PAGE_SHIFT, NULL);
		if (IS_ERR(page))
			return PTR_ERR(page);
		blk = kmap_local_page(page);
		for (s = 0; s < ODF_MAP_RECS_PER_BUCKET; s++) {
			loff_t pos = unionfs_bucket_pos(b) + s * ODF_MAP_REC_SIZE;

			r = blk + s * ODF_MAP_REC_SIZE;
			if (r->mr_state != ODF_MREC_USED) {
				if (free && !*free)
					*free = pos;
				if (r->mr_state == ODF_MREC_EMPTY)
					has_empty = true;
				continue;
			}
			if (!unionfs_mrec_is(r, branch, ino))
				continue;
			if (le32_to_cpu(r->mr_crc) != unionfs_mrec_crc(r)) {
				/* Maybe a change writing it right now. */
				if (racing) {
					found = -EAGAIN;
					break;
				}
				pr_warn_ratelimited("ODF '%s': damaged record in /imap/%s ignored: run odfck\n",
						    sbi->odf_name,
						    unionfs_imap_names[m]);
				continue;
			}
			if (rec)
				memcpy(rec, r, sizeof(*rec));
			found = pos;
			break;
		}
		kunmap_local(blk);
		put_page(page);
		if (found != -ENOENT || has_empty)
			break;
	}
	return found;
}

/* The probe of a change, under imap_change: nothing moves under it. */
static loff_t unionfs_imap_probe(struct unionfs_sb_info *sbi, int m, u16 branch,
				 u64 ino, struct odf_map_rec *rec, loff_t *free)
{
	lockdep_assert_held(&sbi->imap_change);
	return unionfs_imap_probe_chain(sbi, m, branch, ino, rec, free, false);
}

/*
 * May the forward map hold a record for (@branch, @ino)?  false is
 * certain (the filter's bit is clear, or there is no map), with no lock
 * and no read: the lookup of an object without a record stops here.
 */
bool unionfs_imap_may_hold(const struct unionfs_sb_info *sbi, u16 branch,
			   u64 ino)
{
	/* Pairs with the set_bit() before a record is written. */
	return sbi->imap[0] &&
	       test_bit(unionfs_imap_filter_bit(sbi, branch, ino),
			sbi->imap_filter);
}

int unionfs_imap_find(struct unionfs_sb_info *sbi, int m, u16 branch, u64 ino,
		      struct odf_map_rec *rec)
{
	loff_t pos;

	if (!sbi->imap[m])
		return -ENOENT;
	if (!m) {
		if (!unionfs_imap_may_hold(sbi, branch, ino))
			return -ENOENT;
		unionfs_count(sbi, UNIONFS_ST_MAP_READS);
	}
	/* In place, beside the changes (see Locking above). */
	down_read(&sbi->imap_lock);
	if (!READ_ONCE(sbi->imap_hdr[m].mh_nrecords))
		pos = -ENOENT;
	else
		pos = unionfs_imap_probe_chain(sbi, m, branch, ino, rec, NULL,
					       true);
	up_read(&sbi->imap_lock);
	if (pos == -EAGAIN) {
		/* A record half written: again, with the changes held off. */
		mutex_lock(&sbi->imap_change);
		pos = unionfs_imap_probe(sbi, m, branch, ino, rec, NULL);
		mutex_unlock(&sbi->imap_change);
	}
	return pos < 0 ? pos : 0;
}

/* Place @r in the first EMPTY slot of its chain in the rebuilt map @f. */
static int unionfs_imap_place(struct file *f, void *buf, u32 nb, u32 seed,
			      const struct odf_map_rec *r)
{
	u32 b = unionfs_imap_hash(seed, le16_to_cpu(r->mr_key_branch),
				  le64_to_cpu(r->mr_key_ino)) & (nb - 1);
	u32 i, s;
	int err;

	for (i = 0; i < nb; i++, b = (b + 1) & (nb - 1)) {
		err = unionfs_odf_read(f, buf, ODF_BLOCK_SIZE,
				       unionfs_bucket_pos(b));
		if (err)
			return err;
		for (s = 0; s < ODF_MAP_RECS_PER_BUCKET; s++) {
			struct odf_map_rec *slot = buf + s * ODF_MAP_REC_SIZE;

			if (slot->mr_state == ODF_MREC_EMPTY)
				return unionfs_odf_write(f, r, sizeof(*r),
					unionfs_bucket_pos(b) + s * ODF_MAP_REC_SIZE);
		}
	}
	return -ENOSPC;
}

/*
 * Rebuild map @m with more buckets into "<name>.new", then rename it over
 * the map (section 6.4): a crash leaves the old map or the new one.
 */
static int unionfs_imap_grow(struct unionfs_sb_info *sbi, int m)
{
	struct odf_map_header h = sbi->imap_hdr[m];
	const char *name = unionfs_imap_names[m];
	u64 used = le64_to_cpu(h.mh_nrecords);
	u32 oldnb = le32_to_cpu(h.mh_nbuckets), nb = oldnb, b, s;
	u64 placed = 0;
	char tmpname[32];
	struct file *nf;
	void *obuf;
	int err;

	while ((used + 1) * 8 > (u64)nb * ODF_MAP_RECS_PER_BUCKET * 3 &&
	       nb < ODF_MAP_MAX_BUCKETS)
		nb <<= 1;
	if (nb == oldnb && nb < ODF_MAP_MAX_BUCKETS)
		nb <<= 1;
	snprintf(tmpname, sizeof(tmpname), "%s%s", name, ODF_TMP_SUFFIX);

	nf = unionfs_do_create_file(&sbi->imap_dir, tmpname, O_NOATIME);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	obuf = kmalloc(ODF_BLOCK_SIZE, GFP_KERNEL);
	err = obuf ? vfs_truncate(&nf->f_path, unionfs_bucket_pos(nb)) : -ENOMEM;
	h.mh_nbuckets = cpu_to_le32(nb);
	h.mh_ndeleted = 0;
	for (b = 0; !err && b < oldnb; b++) {
		err = unionfs_odf_read(sbi->imap[m], obuf, ODF_BLOCK_SIZE,
				       unionfs_bucket_pos(b));
		for (s = 0; !err && s < ODF_MAP_RECS_PER_BUCKET; s++) {
			struct odf_map_rec *r = obuf + s * ODF_MAP_REC_SIZE;

			if (r->mr_state == ODF_MREC_USED &&
			    le32_to_cpu(r->mr_crc) == unionfs_mrec_crc(r)) {
				err = unionfs_imap_place(nf, sbi->imap_buf, nb,
							 le32_to_cpu(h.mh_hash_seed), r);
				placed++;
			}
		}
	}
	/* The count of what the new map holds, not the old header's. */
	h.mh_nrecords = cpu_to_le64(placed);
	if (!err)
		err = unionfs_imap_write_header(nf, &h);
	if (!err)
		err = vfs_fsync(nf, 0);
	kfree(obuf);
	if (err)
		goto out;

	/* The rename commits the new map in one step. */
	err = unionfs_do_rename_name(&sbi->imap_dir, tmpname, name, 0);
	if (err)
		goto out;
	/* Lookups read the map without imap_change: not while it moves. */
	down_write(&sbi->imap_lock);
	swap(sbi->imap[m], nf);
	sbi->imap_hdr[m] = h;
	up_write(&sbi->imap_lock);
	fput(nf);
	return 0;
out:
	fput(nf);
	return err;
}

/*
 * Change the counts of the header kept in memory (under imap_change);
 * lookups read mh_nrecords without it (READ_ONCE).
 */
static void unionfs_imap_count(struct odf_map_header *h, int drec, int ddel)
{
	WRITE_ONCE(h->mh_nrecords,
		   cpu_to_le64(le64_to_cpu(h->mh_nrecords) + drec));
	h->mh_ndeleted = cpu_to_le64(le64_to_cpu(h->mh_ndeleted) + ddel);
}

/* Insert or replace the record of @rec's key (section 6.4). */
static int unionfs_imap_put_locked(struct unionfs_sb_info *sbi, int m,
				   const struct odf_map_rec *rec)
{
	struct odf_map_header *h = &sbi->imap_hdr[m];
	u16 branch = le16_to_cpu(rec->mr_key_branch);
	u64 ino = le64_to_cpu(rec->mr_key_ino);
	struct odf_map_rec r = *rec;
	loff_t pos, free;
	u64 used = le64_to_cpu(h->mh_nrecords);
	u64 deleted = le64_to_cpu(h->mh_ndeleted);
	u64 slots = (u64)le32_to_cpu(h->mh_nbuckets) * ODF_MAP_RECS_PER_BUCKET;
	bool was_deleted;
	int err;

	lockdep_assert_held(&sbi->imap_change);
	pos = unionfs_imap_probe(sbi, m, branch, ino, NULL, &free);
	if (pos == -ENOENT && (used + deleted + 1) * ODF_MAP_LOAD_DEN >
			      slots * ODF_MAP_LOAD_NUM) {
		err = unionfs_imap_grow(sbi, m);
		if (err)
			return err;
		pos = unionfs_imap_probe(sbi, m, branch, ino, NULL, &free);
	}
	if (pos < 0 && pos != -ENOENT)
		return pos;

	/*
	 * In the filter before the record is on the ODF: a lookup that
	 * finds the bit clear ran before this insert (the object the
	 * record stands for is published after it).
	 */
	if (!m)
		set_bit(unionfs_imap_filter_bit(sbi, branch, ino),
			sbi->imap_filter);
	r.mr_state = ODF_MREC_USED;
	r.mr_crc = 0;
	r.mr_crc = cpu_to_le32(unionfs_mrec_crc(&r));
	if (pos >= 0) {
		err = unionfs_odf_write(sbi->imap[m], &r, sizeof(r), pos);
		if (!err)
			unionfs_count(sbi, UNIONFS_ST_MAP_RECORDS);
		return err;
	}
	if (!free)
		return -ENOSPC;
	err = unionfs_odf_read(sbi->imap[m], sbi->imap_buf, 1, free);
	if (err)
		return err;
	was_deleted = *(u8 *)sbi->imap_buf == ODF_MREC_DELETED;
	err = unionfs_odf_write(sbi->imap[m], &r, sizeof(r), free);
	if (err)
		return err;
	unionfs_imap_count(h, 1, was_deleted ? -1 : 0);
	err = unionfs_imap_write_header(sbi->imap[m], h);
	if (!err)
		unionfs_count(sbi, UNIONFS_ST_MAP_RECORDS);
	return err;
}

static int unionfs_imap_del_locked(struct unionfs_sb_info *sbi, int m,
				   u16 branch, u64 ino)
{
	struct odf_map_rec r = { .mr_state = ODF_MREC_DELETED };
	struct odf_map_header *h = &sbi->imap_hdr[m];
	loff_t pos;
	int err;

	pos = unionfs_imap_probe(sbi, m, branch, ino, NULL, NULL);
	if (pos < 0)
		return pos == -ENOENT ? 0 : pos;
	err = unionfs_odf_write(sbi->imap[m], &r, sizeof(r), pos);
	if (err)
		return err;
	unionfs_imap_count(h, -1, 1);
	return unionfs_imap_write_header(sbi->imap[m], h);
}

/* An object of the maps: branch id, inode number, generation (0: none). */
struct unionfs_imap_obj {
	u16 bid;
	u64 ino;
	u32 gen;
};

/*
 * The records of a copy (B,b) = @copy of @origin (none if its bid is 0),
 * numbered @uino: UPPER (B,b) -> U with the origin, REVERSE U -> (B,b)
 * with @cd's handle and generation, and COPIED origin -> U, (B,b).
 */
static int unionfs_imap_put_copy_locked(struct unionfs_sb_info *sbi,
					struct odf_map_rec *rec, u64 uino,
					const struct unionfs_imap_obj *origin,
					u16 bid, struct dentry *cd,
					u32 lower_links)
{
	struct inode *cinode = d_inode(cd);
	int len = ODF_HANDLE_MAX / 4, type, err;

	memset(rec, 0, sizeof(*rec));
	rec->mr_kind = ODF_MK_UPPER;
	rec->mr_key_branch = cpu_to_le16(bid);
	rec->mr_key_ino = cpu_to_le64(cinode->i_ino);
	rec->mr_union_ino = cpu_to_le64(uino);
	if (origin->bid) {
		rec->mr_tgt_branch = cpu_to_le16(origin->bid);
		rec->mr_tgt_ino = cpu_to_le64(origin->ino);
		rec->mr_tgt_gen = cpu_to_le32(origin->gen);
	}
	rec->mr_lower_links = cpu_to_le32(lower_links);
	err = unionfs_imap_put_locked(sbi, 0, rec);
	if (err)
		return err;

	memset(rec, 0, sizeof(*rec));
	rec->mr_kind = ODF_MK_REVERSE;
	rec->mr_key_ino = cpu_to_le64(uino);
	rec->mr_union_ino = cpu_to_le64(uino);
	rec->mr_tgt_branch = cpu_to_le16(bid);
	rec->mr_tgt_ino = cpu_to_le64(cinode->i_ino);
	rec->mr_tgt_gen = cpu_to_le32(cinode->i_generation);
	/*
	 * Connectable: a non-directory copy can then be found by name in its
	 * directory after every cache is dropped (NFS handles, export.c).
	 */
	type = exportfs_encode_fh(cd, (struct fid *)rec->mr_handle, &len,
				  UNIONFS_FH_CONNECTABLE);
	if (type > 0 && type != FILEID_INVALID && len <= ODF_HANDLE_MAX / 4) {
		rec->mr_handle_type = cpu_to_le32(type);
		rec->mr_handle_bytes = cpu_to_le16(len * 4);
		rec->mr_flags = cpu_to_le32(ODF_MREC_HAVE_HANDLE);
	} else {
		memset(rec->mr_handle, 0, sizeof(rec->mr_handle));
	}
	err = unionfs_imap_put_locked(sbi, 1, rec);
	if (err || !origin->bid)
		return err;

	memset(rec, 0, sizeof(*rec));
	rec->mr_kind = ODF_MK_COPIED;
	rec->mr_key_branch = cpu_to_le16(origin->bid);
	rec->mr_key_ino = cpu_to_le64(origin->ino);
	rec->mr_union_ino = cpu_to_le64(uino);
	rec->mr_tgt_branch = cpu_to_le16(bid);
	rec->mr_tgt_ino = cpu_to_le64(cinode->i_ino);
	rec->mr_tgt_gen = cpu_to_le32(cinode->i_generation);
	return unionfs_imap_put_locked(sbi, 0, rec);
}

/* COPIED (@key) -> @uino, @copy: a copy that was copied again. */
static int unionfs_imap_put_recopied_locked(struct unionfs_sb_info *sbi,
					    struct odf_map_rec *rec,
					    const struct unionfs_imap_obj *key,
					    u64 uino,
					    const struct unionfs_imap_obj *copy)
{
	memset(rec, 0, sizeof(*rec));
	rec->mr_kind = ODF_MK_COPIED;
	rec->mr_key_branch = cpu_to_le16(key->bid);
	rec->mr_key_ino = cpu_to_le64(key->ino);
	rec->mr_union_ino = cpu_to_le64(uino);
	rec->mr_tgt_branch = cpu_to_le16(copy->bid);
	rec->mr_tgt_ino = cpu_to_le64(copy->ino);
	rec->mr_tgt_gen = cpu_to_le32(copy->gen);
	return unionfs_imap_put_locked(sbi, 0, rec);
}

/*
 * Is (@bid, @ino) a copy numbered @uino: its UPPER record, or the COPIED
 * record of a copy copied before (6.3: its number is not det(@bid,
 * @ino))?  Its origin in @origin then (bid 0: none, or not known).
 */
static bool unionfs_imap_copy_of(struct unionfs_sb_info *sbi,
				 struct odf_map_rec *rec, u16 bid, u64 ino,
				 u64 uino, struct unionfs_imap_obj *origin)
{
	if (unionfs_imap_probe(sbi, 0, bid, ino, rec, NULL) < 0 ||
	    le64_to_cpu(rec->mr_union_ino) != uino)
		return false;
	memset(origin, 0, sizeof(*origin));
	if (rec->mr_kind == ODF_MK_COPIED)
		return ino <= ODF_UINO_LOW_MASK &&
		       uino != ((u64)bid << ODF_UINO_SHIFT | ino);
	if (rec->mr_kind != ODF_MK_UPPER)
		return false;
	origin->bid = le16_to_cpu(rec->mr_tgt_branch);
	origin->ino = le64_to_cpu(rec->mr_tgt_ino);
	origin->gen = le32_to_cpu(rec->mr_tgt_gen);
	return true;
}

/*
 * Is the object (@bindex, @ino), numbered @uino, a copy (of an object of
 * another branch)?  A copy on a writable lower branch made read-only is
 * copied again only to the upper branch (copyup.c).
 */
bool unionfs_imap_is_copy(struct unionfs_sb_info *sbi, unsigned int bindex,
			  u64 ino, u64 uino)
{
	u16 bid = sbi->branches[bindex].id;
	struct unionfs_imap_obj origin;
	struct odf_map_rec *rec;
	bool copy;

	if (!unionfs_imap_may_hold(sbi, bid, ino))
		return false;
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return true;	/* not known: the upper branch, as before */
	mutex_lock(&sbi->imap_change);
	copy = unionfs_imap_copy_of(sbi, rec, bid, ino, uino, &origin);
	mutex_unlock(&sbi->imap_change);
	kfree(rec);
	return copy;
}

/*
 * Copy-up keeps the number (sections 4 and 9.6): UPPER (B,b) -> U with
 * origin (L,l), REVERSE U -> (B,b) with its handle and generation, and
 * COPIED (L,l) -> U, (B,b); committed before the copy is linked in.  B is
 * the upper branch, or the writable lower branch @tbindex a copy of an
 * object of a read-only branch below it goes to (section 3.4).
 *
 * A copy (X,x) copied again (to the upper branch, once X is read-only)
 * gives the new copy its origin (L,l), and its own UPPER record becomes
 * COPIED (X,x) -> U, (B,b), committed first: X keeps the number U
 * whatever a crash keeps of the rest, as lookup takes a COPIED record's
 * number (6.3).  *@recopy then says so: once the new copy is linked,
 * unionfs_imap_copy_linked() drops that record.
 */
int unionfs_imap_record_copy(struct super_block *sb, u64 uino,
			     unsigned int lbindex, struct inode *lower,
			     unsigned int tbindex, struct dentry *upper,
			     u32 lower_links, bool *recopy)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct inode *uinode = d_inode(upper);
	u16 bid = sbi->branches[tbindex].id, lid = sbi->branches[lbindex].id;
	struct unionfs_imap_obj origin;
	const struct unionfs_imap_obj x = {
		.bid = lid, .ino = lower->i_ino, .gen = lower->i_generation,
	}, copy = {
		.bid = bid, .ino = uinode->i_ino, .gen = uinode->i_generation,
	};
	struct file *maps[2], *was[2];
	errseq_t since[2];
	struct odf_map_rec *rec;
	int m, err;

	rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	mutex_lock(&sbi->imap_change);
	/*
	 * Other copy-ups sync the same files: the first fsync after a
	 * failed writeback reports it to its caller only.  What the maps'
	 * pages had from here on is checked against this.
	 */
	for (m = 0; m < 2; m++) {
		was[m] = sbi->imap[m];
		since[m] = errseq_sample(&was[m]->f_mapping->wb_err);
	}
	*recopy = unionfs_imap_copy_of(sbi, rec, lid, lower->i_ino, uino,
				       &origin);
	if (*recopy) {
		/* Rare: committed under imap_change, before the rest. */
		err = unionfs_imap_put_recopied_locked(sbi, rec, &x, uino,
						       &copy);
		if (!err)
			err = vfs_fsync(sbi->imap[0], 0);
		if (!err)
			err = errseq_check(&sbi->imap[0]->f_mapping->wb_err,
					   since[0]);
	} else {
		origin = x;
		err = 0;
	}
	if (!err)
		err = unionfs_imap_put_copy_locked(sbi, rec, uino, &origin,
						   bid, upper, lower_links);
	for (m = 0; !err && m < 2; m++) {
		maps[m] = get_file(sbi->imap[m]);
		if (maps[m] != was[m])	/* grown meanwhile: a new file */
			since[m] = 0;
	}
	mutex_unlock(&sbi->imap_change);
	kfree(rec);
	if (err)
		return err;
	/*
	 * Overwritten blocks of another file are not in a journal commit.
	 * Outside imap_change, so copy-ups share commits: a map grown
	 * meanwhile was synced, with these records, before it replaced
	 * the one synced here.
	 */
	for (m = 1; m >= 0; m--) {
		if (!err)
			err = vfs_fsync(maps[m], 0);
		if (!err)
			err = errseq_check(&maps[m]->f_mapping->wb_err, since[m]);
		fput(maps[m]);
	}
	return err;
}

/*
 * A copy of a copy (unionfs_imap_record_copy(): @recopy) is linked: the
 * first copy, (@lbindex, @lower_ino), hidden by it now, needs no record.
 * Not committed: a crash that keeps it keeps a valid record (6.5).
 */
void unionfs_imap_copy_linked(struct super_block *sb, unsigned int lbindex,
			      u64 lower_ino, unsigned int tbindex, u64 cino)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	u16 lid = sbi->branches[lbindex].id;
	struct odf_map_rec *rec;
	int err = 0;

	if (!unionfs_odf_rw(sbi))
		return;
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return;		/* a valid record stays */
	mutex_lock(&sbi->imap_change);
	if (unionfs_imap_probe(sbi, 0, lid, lower_ino, rec, NULL) >= 0 &&
	    rec->mr_kind == ODF_MK_COPIED &&
	    le16_to_cpu(rec->mr_tgt_branch) == sbi->branches[tbindex].id &&
	    le64_to_cpu(rec->mr_tgt_ino) == cino)
		err = unionfs_imap_del_locked(sbi, 0, lid, lower_ino);
	mutex_unlock(&sbi->imap_change);
	kfree(rec);
	if (err)
		unionfs_odf_error(sb, "cannot update the inode maps", err);
}

/* The number of (@bid, @lower_ino): found, else allocated if @alloc. */
static int unionfs_imap_bigino_get(struct unionfs_sb_info *sbi, u16 bid,
				   u64 lower_ino, u64 *uino, bool alloc)
{
	struct odf_map_rec *rec;
	loff_t pos;
	int err;

	rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	mutex_lock(&sbi->imap_change);
	/* A position: past 2 GiB in a big map, so not into an int. */
	pos = unionfs_imap_probe(sbi, 0, bid, lower_ino, rec, NULL);
	err = pos < 0 ? pos : 0;
	if (!err && rec->mr_kind == ODF_MK_BIGINO) {
		*uino = le64_to_cpu(rec->mr_union_ino);
		goto out;
	}
	if (err >= 0 || err == -ENOENT)
		err = alloc ? 0 : -EOVERFLOW;
	if (!err)
		err = unionfs_odf_alloc_ino(sbi, uino);
	if (err)
		goto out;
	memset(rec, 0, sizeof(*rec));
	rec->mr_kind = ODF_MK_BIGINO;
	rec->mr_key_branch = cpu_to_le16(bid);
	rec->mr_key_ino = cpu_to_le64(lower_ino);
	rec->mr_union_ino = cpu_to_le64(*uino);
	err = unionfs_imap_put_locked(sbi, 0, rec);
	if (err)
		goto out;
	memset(rec, 0, sizeof(*rec));
	rec->mr_kind = ODF_MK_REVERSE;
	rec->mr_key_ino = cpu_to_le64(*uino);
	rec->mr_union_ino = cpu_to_le64(*uino);
	rec->mr_tgt_branch = cpu_to_le16(bid);
	rec->mr_tgt_ino = cpu_to_le64(lower_ino);
	err = unionfs_imap_put_locked(sbi, 1, rec);
out:
	mutex_unlock(&sbi->imap_change);
	kfree(rec);
	return err;
}

/*
 * A lower inode number too large for a deterministic union number gets an
 * allocated one on its first lookup (BIGINO and REVERSE, section 9.2).
 */
int unionfs_imap_bigino(struct super_block *sb, unsigned int bindex,
			u64 lower_ino, u64 *uino)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	u16 bid = sbi->branches[bindex].id;
	int err, idx;

	if (!sbi->imap[0])
		return -EOVERFLOW;
	/* A lookup: remount,ro waits for the allocation (odf.c). */
	if (unionfs_odf_write_begin(sbi, &idx)) {
		err = unionfs_imap_bigino_get(sbi, bid, lower_ino, uino, true);
		unionfs_odf_write_end(sbi, idx);
	} else {
		err = unionfs_imap_bigino_get(sbi, bid, lower_ino, uino, false);
	}
	if (!err)
		unionfs_odf_seen_ino(sbi, *uino);
	else if (err == -EOVERFLOW)
		pr_warn_ratelimited("branch '%s': inode number %llu does not fit in 48 bits and a read-only union cannot allocate one\n",
				    sbi->branches[bindex].name, lower_ino);
	return err;
}

/*
 * Recovery after a crash (section 10.2 step 4): the highest allocated
 * number any REVERSE record holds, so the counter can be moved past it.
 */
int unionfs_imap_max_alloc(struct unionfs_sb_info *sbi, u64 *max)
{
	u32 nb, b, i;
	int err = 0;

	*max = 0;
	if (!sbi->imap[1])
		return 0;
	mutex_lock(&sbi->imap_change);
	nb = le32_to_cpu(sbi->imap_hdr[1].mh_nbuckets);
	for (b = 0; b < nb && !err; b++) {
		err = unionfs_odf_read(sbi->imap[1], sbi->imap_buf,
				       ODF_BLOCK_SIZE, unionfs_bucket_pos(b));
		for (i = 0; !err && i < ODF_MAP_RECS_PER_BUCKET; i++) {
			struct odf_map_rec *r = sbi->imap_buf + i * ODF_MAP_REC_SIZE;
			u64 u = le64_to_cpu(r->mr_union_ino);

			if (r->mr_state == ODF_MREC_USED && !(u >> ODF_UINO_SHIFT) &&
			    u > *max)
				*max = u;
		}
		cond_resched();
	}
	mutex_unlock(&sbi->imap_change);
	return err;
}

static int unionfs_accept_any(void *ctx, struct dentry *d)
{
	return 1;
}

static int unionfs_ilookup_test(struct inode *inode, void *data)
{
	struct inode *lower = unionfs_lower_inode(inode);

	return lower && lower->i_ino == *(u64 *)data && !UNIONFS_I(inode)->bindex;
}

/*
 * A lower hard link whose object was copied up through another name
 * (a COPIED record): find the upper copy, so every name of the object
 * shows the same data and the same union inode.  Returns a positive
 * upper dentry (maybe not connected to the branch tree) or NULL.
 */
struct dentry *unionfs_imap_find_copy(struct super_block *sb,
				      unsigned int bindex, struct inode *lower,
				      u64 *uino)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	u16 bid = sbi->branches[0].id;
	struct dentry *alias = NULL;
	struct odf_map_rec *rec;
	struct inode *inode;
	unsigned int hb;
	u64 b;
	int err;

	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return NULL;
	err = unionfs_imap_find(sbi, 0, sbi->branches[bindex].id, lower->i_ino,
				rec);
	if (err || rec->mr_kind != ODF_MK_COPIED ||
	    le16_to_cpu(rec->mr_tgt_branch) != bid)
		goto out;
	*uino = le64_to_cpu(rec->mr_union_ino);
	b = le64_to_cpu(rec->mr_tgt_ino);

	/* The copy's union inode is cached: its upper inode has a dentry. */
	inode = ilookup5(sb, *uino, unionfs_ilookup_test, &b);
	if (inode) {
		alias = d_find_any_alias(unionfs_lower_inode(inode));
		iput(inode);
		if (alias)
			goto out;
	}
	/* Else open it by the handle of its REVERSE record. */
	err = unionfs_imap_find(sbi, 1, 0, *uino, rec);
	if (err || !(le32_to_cpu(rec->mr_flags) & ODF_MREC_HAVE_HANDLE) ||
	    le64_to_cpu(rec->mr_tgt_ino) != b)
		goto out;
	/* The ODF is input: a handle longer than its field is damage. */
	hb = le16_to_cpu(rec->mr_handle_bytes);
	if (!hb || hb > ODF_HANDLE_MAX || hb % 4) {
		unionfs_odf_error(sb, "a REVERSE record has a bad handle length",
				  -EUCLEAN);
		goto out;
	}
	alias = exportfs_decode_fh(unionfs_upper_mnt(sb),
				   (struct fid *)rec->mr_handle,
				   hb / 4,
				   le32_to_cpu(rec->mr_handle_type),
				   unionfs_accept_any, NULL);
	if (IS_ERR_OR_NULL(alias)) {
		alias = NULL;
		goto out;
	}
	if (d_is_negative(alias) || d_inode(alias)->i_ino != b ||
	    (rec->mr_tgt_gen && d_inode(alias)->i_generation !=
			       le32_to_cpu(rec->mr_tgt_gen))) {
		dput(alias);
		alias = NULL;
	}
out:
	kfree(rec);
	return alias;
}

/*
 * One of the lower names of a copied-up hard link stopped showing the
 * lower object (linked up to the copy, or whited out): one name less in
 * the UPPER record's count (section 4).
 */
void unionfs_imap_lower_link_gone(struct super_block *sb, struct inode *inode)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct unionfs_inode_info *ui = UNIONFS_I(inode);
	struct inode *upper = unionfs_lower_inode(inode);
	u16 bid = sbi->branches[0].id;
	struct odf_map_rec *rec;
	int err = 0;

	if (!ui->lower_links || ui->bindex || !unionfs_odf_rw(sbi))
		return;
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return;
	mutex_lock(&sbi->imap_change);
	if (ui->lower_links)
		ui->lower_links--;
	if (unionfs_imap_probe(sbi, 0, bid, upper->i_ino, rec, NULL) >= 0 &&
	    rec->mr_kind == ODF_MK_UPPER) {
		rec->mr_lower_links = cpu_to_le32(ui->lower_links);
		err = unionfs_imap_put_locked(sbi, 0, rec);
	}
	mutex_unlock(&sbi->imap_change);
	kfree(rec);
	if (err)
		unionfs_odf_error(sb, "cannot update the inode maps", err);
}

/*
 * Delete the records of the copy (B, @upper_ino): its UPPER record, and
 * the COPIED and REVERSE records that still name it (a later copy of the
 * same origin, or a new owner of the number, keeps its own).
 */
static int unionfs_imap_drop_copy_locked(struct unionfs_sb_info *sbi,
					 u16 bid, u64 upper_ino)
{
	struct odf_map_rec *rec, *other;
	int err = 0;

	rec = kmalloc(2 * sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	other = rec + 1;
	if (unionfs_imap_probe(sbi, 0, bid, upper_ino, rec, NULL) < 0)
		goto out;
	if (rec->mr_kind == ODF_MK_COPIED) {
		/* An original (or a copy copied again, 6.3) that is gone. */
		err = unionfs_imap_del_locked(sbi, 0, bid, upper_ino);
		goto out;
	}
	if (rec->mr_kind != ODF_MK_UPPER)
		goto out;
	if (rec->mr_tgt_branch &&
	    unionfs_imap_probe(sbi, 0, le16_to_cpu(rec->mr_tgt_branch),
			       le64_to_cpu(rec->mr_tgt_ino), other, NULL) >= 0 &&
	    other->mr_kind == ODF_MK_COPIED &&
	    le16_to_cpu(other->mr_tgt_branch) == bid &&
	    le64_to_cpu(other->mr_tgt_ino) == upper_ino)
		err = unionfs_imap_del_locked(sbi, 0,
					      le16_to_cpu(rec->mr_tgt_branch),
					      le64_to_cpu(rec->mr_tgt_ino));
	if (!err)
		err = unionfs_imap_del_locked(sbi, 0, bid, upper_ino);
	if (!err &&
	    unionfs_imap_probe(sbi, 1, 0, le64_to_cpu(rec->mr_union_ino), other,
			       NULL) >= 0 &&
	    le16_to_cpu(other->mr_tgt_branch) == bid &&
	    le64_to_cpu(other->mr_tgt_ino) == upper_ino)
		err = unionfs_imap_del_locked(sbi, 1, 0,
					      le64_to_cpu(rec->mr_union_ino));
out:
	kfree(rec);
	return err;
}

/*
 * The last link of a copied-up object, on branch @bindex, is gone
 * (section 9.4 step 3): its UPPER, COPIED and REVERSE records go too.
 */
void unionfs_imap_forget(struct super_block *sb, unsigned int bindex,
			 struct inode *upper)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	u16 bid = sbi->branches[bindex].id;
	int err;

	if (!unionfs_odf_rw(sbi) || !unionfs_imap_may_hold(sbi, bid,
							   upper->i_ino))
		return;
	mutex_lock(&sbi->imap_change);
	err = unionfs_imap_drop_copy_locked(sbi, bid, upper->i_ino);
	mutex_unlock(&sbi->imap_change);
	if (err)
		unionfs_odf_error(sb, "cannot update the inode maps", err);
}

/*
 * A lookup found the UPPER record of (@bid, @upper) at odds with the
 * REVERSE record of its number (unionfs_ino_of()).  It read them without
 * imap_change, maybe between the writes of a copy-up's records: look
 * again with the changes held off.  Still at odds, the records are of an
 * inode number the branch reused: they go (-ESTALE).  In agreement now,
 * 0 with the number and the lower-links count in @uino and @ll.  The
 * ODF is written: remount,ro waits for it (odf.c).
 */
int unionfs_imap_check_copy(struct unionfs_sb_info *sbi, u16 bid,
			    struct inode *upper, u64 *uino, u32 *ll)
{
	struct odf_map_rec *rec;
	loff_t pos;
	int err, idx;

	if (!sbi->imap[0] || !unionfs_odf_write_begin(sbi, &idx))
		return -EROFS;
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec) {
		err = -ENOMEM;
		goto out;
	}
	mutex_lock(&sbi->imap_change);
	pos = unionfs_imap_probe(sbi, 0, bid, upper->i_ino, rec, NULL);
	if (pos >= 0 && rec->mr_kind == ODF_MK_COPIED) {
		/* Copied again meanwhile (6.3): its number stays. */
		*uino = le64_to_cpu(rec->mr_union_ino);
		*ll = 0;
		err = 0;
		goto unlock;
	}
	if (pos >= 0 && rec->mr_kind != ODF_MK_UPPER)
		pos = -ENOENT;
	if (pos < 0) {
		err = pos;
		goto unlock;
	}
	*uino = le64_to_cpu(rec->mr_union_ino);
	*ll = le32_to_cpu(rec->mr_lower_links);
	pos = unionfs_imap_probe(sbi, 1, 0, *uino, rec, NULL);
	err = pos < 0 ? pos : 0;
	if (err == -ENOENT ||
	    (!err && le64_to_cpu(rec->mr_tgt_ino) == upper->i_ino &&
	     le16_to_cpu(rec->mr_tgt_branch) == bid &&
	     (!rec->mr_tgt_gen || !upper->i_generation ||
	      le32_to_cpu(rec->mr_tgt_gen) == upper->i_generation))) {
		err = 0;
		goto unlock;
	}
	if (!err) {
		err = unionfs_imap_drop_copy_locked(sbi, bid, upper->i_ino);
		if (!err)
			err = -ESTALE;
	}
unlock:
	mutex_unlock(&sbi->imap_change);
	kfree(rec);
out:
	unionfs_odf_write_end(sbi, idx);
	return err;
}

/*
 * A copy's records name a copy (@bid, @cino) that is gone (its copy-up
 * failed after they were written).  A copy copied again keeps its
 * COPIED record, and so its number (unionfs_imap_record_copy()).
 */
int unionfs_imap_drop_copy(struct unionfs_sb_info *sbi, u16 bid, u64 cino)
{
	int err, idx;

	if (!sbi->imap[0] || !unionfs_odf_write_begin(sbi, &idx))
		return -EROFS;
	mutex_lock(&sbi->imap_change);
	err = unionfs_imap_drop_copy_locked(sbi, bid, cino);
	mutex_unlock(&sbi->imap_change);
	unionfs_odf_write_end(sbi, idx);
	return err;
}
