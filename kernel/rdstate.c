// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: the persistent readdir state of merged directories,
 * /readdir/<016llx union inode> on the ODF (docs/odf-format.md section 7).
 *
 * The state is the merged, deduplicated, whiteout-filtered listing of a
 * directory.  Every entry has a stable ordinal, its directory offset:
 * slots are appended and tombstoned, never moved, so a seek is one
 * division and one block read, and an offset a program holds stays valid
 * across reopen, remount and changes.  The file is read and written
 * through the ODF's page cache in 4096-byte blocks; no operation holds
 * more than a few blocks in memory, whatever the directory's size.
 *
 * The state is a cache, never trusted: it is checked against the change
 * stamps of every branch directory that contributes (and of the
 * directory's namespace node) at every read.  A stale state is
 * reconciled (surviving entries keep their ordinals); a damaged one is
 * rebuilt (the only event that renumbers, with rh_generation + 1).
 * Changes made through the union update it in place (append, tombstone,
 * new inode number) and restamp it, provided it was fresh before.
 *
 * Locking: the union directory's i_rwsem (shared for readdir, exclusive
 * for namespace changes), then the state's rw_semaphore, then branch and
 * ODF locks.  Readers that find the state missing or stale upgrade to the
 * write side to build or reconcile it, inside unionfs_odf_write_begin()
 * (SRCU: it blocks nothing, and remount,ro waits for the build).
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/crc32c.h>
#include <linux/cred.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/iversion.h>
#include <linux/log2.h>
#include <linux/highmem.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/random.h>
#include <linux/slab.h>
#include "unionfs.h"

#define RD_BLK		ODF_BLOCK_SIZE
#define RD_SPB		ODF_RD_SLOTS_PER_BLOCK
#define RD_SLOT		ODF_RD_SLOT_SIZE
#define RD_MAX_SLOTS	(ODF_RD_OFF_MAX - ODF_RD_OFF_FIRST)
#define RD_MAX_BUCKETS	BIT(20)
#define RD_NAME_MAX	(ODF_RD_NAME_LEN + sizeof(ODF_TMP_SUFFIX))
#define RD_CHECKED_BLOCKS 4096	/* 512 bytes a stream: 262,144 slots */

/*
 * A state built in memory holds at most this many record blocks (16 MiB,
 * 262,144 names of up to 40 bytes); a bigger directory's state is
 * written as it is built.
 */
#define RD_MEM_BLOCKS	4096
/* and all of a union's such states waiting to be written, about 64 MiB */
#define RD_MEM_TOTAL	16384

struct unionfs_rdstate {
	struct rw_semaphore sem;
	struct file *file;	/* the open state file, NULL until known */
	/*
	 * Looked for and not there: sbi->rd_installs + 1 at that time, 0
	 * when not known.  Only a build installs a state file, so the file
	 * is still absent while no state was installed since.  (Not just
	 * this directory's builds: after add= a directory in use can have
	 * a second inode of its number, with its own rdstate.)
	 */
	u64 absent;
	/*
	 * Bumped (under sem, for writing) after every change of the state
	 * file or of which file it is: a directory stream's view of it
	 * (unionfs_rd_iterate()) is good while the number stays.
	 */
	u64 seq;
	/*
	 * A state built in memory by a listing and not written yet
	 * (unionfs_rd_settle()): under sem.  @work writes it; every use of
	 * the state's file writes it first.  @file_mem: the id of the
	 * memory @file was written from, 0 if it was not.
	 */
	struct unionfs_rdpend *pending;
	u64 file_mem;
	bool mem_failed;	/* the last one was not written: build in the file */
	struct inode *inode;
	struct work_struct work;
};

/*
 * The record area of a state built in memory, a block at a time:
 * immutable once the build is over, shared by the directory streams
 * that list from it until it is written.
 */
struct unionfs_rdmem {
	refcount_t ref;
	u64 id;			/* unionfs_rdmem_ids: which state this is */
	u32 nblk, cap;
	u8 **blk;
};

static atomic64_t unionfs_rdmem_ids = ATOMIC64_INIT(0);

/* One entry as decoded from its slots. */
struct unionfs_rd_ent {
	u32 slot;
	unsigned int nslots;
	bool live;
	unsigned int type;
	u64 ino;
	u16 branch;
	u32 hash;
	int len;
	char name[NAME_MAX + 1];
};

/* An open state file and the blocks an operation on it needs. */
struct unionfs_rdio {
	struct file *f;
	struct odf_rd_header *h;	/* block 0: header and stamps */
	void *ibuf;			/* one index bucket */
	void *rbuf;			/* one record block */
	u8 ebuf[ODF_RD_MAX_NSLOTS * RD_SLOT];	/* one entry's slots */
	struct unionfs_rd_ent ent;	/* the entry found last */
	u32 nb, next, seed;
	loff_t rec_pos;			/* byte offset of the record area */
	bool oversize;			/* blocks past rh_next_slot */
	/* the record area is this, in memory (f is NULL until written) */
	struct unionfs_rdmem *mem;
	/* builds: the block being appended to, kept in memory */
	u32 cur_blk;
	bool cur_valid;
	/* a directory stream's view: rd->seq and sbi->br_gen it is good for */
	u64 seq;
	unsigned int br_gen;
	/*
	 * Reads only (unionfs_rd_ready()), RD_CHECKED_BLOCKS bits: record
	 * blocks this view has checked whole (every entry's checksum),
	 * listed again without checking (unionfs_rd_emit()).  Blocks past
	 * the map, or every block without a map, are checked at every read.
	 */
	unsigned long *checked;
	struct unionfs_sb_info *sbi;	/* reads: where checks are counted */
};

static struct lock_class_key unionfs_rd_keys[FILESYSTEM_MAX_STACK_DEPTH + 1];

/* ------------------------------------------------------------------ */
/* Files                                                                */
/* ------------------------------------------------------------------ */

static void unionfs_rd_fname(char *buf, u64 ino, bool tmp)
{
	snprintf(buf, RD_NAME_MAX, "%016llx%s", ino, tmp ? ODF_TMP_SUFFIX : "");
}

static struct file *unionfs_rd_open_file(struct unionfs_sb_info *sbi, u64 ino)
{
	char name[RD_NAME_MAX];
	struct file *f;
	struct path p;
	int err;

	unionfs_rd_fname(name, ino, false);
	err = vfs_path_lookup(sbi->readdir.dentry, sbi->readdir.mnt, name, 0, &p);
	if (err)
		return ERR_PTR(err);
	if (!d_is_reg(p.dentry)) {
		path_put(&p);
		return ERR_PTR(-EUCLEAN);
	}
	f = dentry_open(&p, (sbi->super_file ? O_RDWR : O_RDONLY) |
			O_LARGEFILE | O_NOATIME, current_cred());
	path_put(&p);
	return f;
}

/* Unlink /readdir/@name if it exists. */
static int unionfs_rd_unlink(struct unionfs_sb_info *sbi, const char *name)
{
	return unionfs_do_unlink_name(&sbi->readdir, name);
}

/* A new, empty /readdir/<ino>.new, opened for writing. */
static struct file *unionfs_rd_create(struct unionfs_sb_info *sbi, u64 ino)
{
	char name[RD_NAME_MAX];

	unionfs_rd_fname(name, ino, true);
	return unionfs_do_create_file(&sbi->readdir, name, O_NOATIME);
}

/* Rename /readdir/<ino>.new over /readdir/<ino>. */
static int unionfs_rd_install(struct unionfs_sb_info *sbi, u64 ino)
{
	char tmp[RD_NAME_MAX], name[RD_NAME_MAX];

	int err;

	unionfs_rd_fname(tmp, ino, true);
	unionfs_rd_fname(name, ino, false);
	err = unionfs_do_rename_name(&sbi->readdir, tmp, name, 0);
	atomic64_inc(&sbi->rd_installs);
	return err;
}

/* Is @rd's directory known to have no state file? */
static bool unionfs_rd_known_absent(struct unionfs_rdstate *rd,
				    struct unionfs_sb_info *sbi)
{
	return rd->absent == atomic64_read(&sbi->rd_installs) + 1;
}

/* ------------------------------------------------------------------ */
/* Blocks: header, stamps, slots, index                                 */
/* ------------------------------------------------------------------ */

static void unionfs_rdmem_put(struct unionfs_rdmem *m)
{
	u32 i;

	if (!m || !refcount_dec_and_test(&m->ref))
		return;
	for (i = 0; i < m->nblk; i++)
		kfree(m->blk[i]);
	kvfree(m->blk);
	kfree(m);
}

static struct unionfs_rdmem *unionfs_rdmem_get(struct unionfs_rdmem *m)
{
	refcount_inc(&m->ref);
	return m;
}

/* Block @blk of a state in memory: @buf (a kmalloc'd block) from now on. */
static int unionfs_rdmem_add(struct unionfs_rdmem *m, u32 blk, u8 *buf)
{
	if (blk != m->nblk)
		return -EUCLEAN;	/* blocks come in order */
	if (m->nblk == m->cap) {
		u32 cap = max_t(u32, 64, 2 * m->cap);
		u8 **b = kvmalloc_array(cap, sizeof(*b), GFP_KERNEL);

		if (!b)
			return -ENOMEM;
		if (m->nblk)
			memcpy(b, m->blk, m->nblk * sizeof(*b));
		kvfree(m->blk);
		m->blk = b;
		m->cap = cap;
	}
	m->blk[m->nblk++] = buf;
	return 0;
}

static void unionfs_rdio_free(struct unionfs_rdio *io)
{
	if (!io)
		return;
	unionfs_rdmem_put(io->mem);
	kfree(io->h);
	kfree(io->ibuf);
	kfree(io->rbuf);
	bitmap_free(io->checked);
	kfree(io);
}

static struct unionfs_rdio *unionfs_rdio_alloc(struct file *f)
{
	struct unionfs_rdio *io = kzalloc(sizeof(*io), GFP_KERNEL);

	if (!io)
		return NULL;
	io->f = f;
	io->h = kmalloc(RD_BLK, GFP_KERNEL);
	io->ibuf = kmalloc(RD_BLK, GFP_KERNEL);
	io->rbuf = kmalloc(RD_BLK, GFP_KERNEL);
	if (io->h && io->ibuf && io->rbuf)
		return io;
	unionfs_rdio_free(io);
	return NULL;
}

static unsigned int unionfs_rd_nslots(int len)
{
	return len <= ODF_RD_HEAD_NAME ? 1 :
	       1 + DIV_ROUND_UP(len - ODF_RD_HEAD_NAME, ODF_RD_CONT_NAME);
}

static u32 unionfs_rd_hash(u32 seed, const char *name, int len)
{
	return crc32c(seed, name, len);
}

static loff_t unionfs_rd_slot_pos(const struct unionfs_rdio *io, u32 slot)
{
	return io->rec_pos + (loff_t)slot * RD_SLOT;
}

static loff_t unionfs_rd_bucket_pos(u32 b)
{
	return (loff_t)(1 + b) * RD_BLK;
}

/* The checksums of section 7: header block, bucket, an entry's slots. */
static u32 unionfs_rd_hdr_crc(const void *blk)
{
	return unionfs_odf_crc(blk, RD_BLK, offsetof(struct odf_rd_header, rh_crc));
}

static u32 unionfs_rd_bucket_crc(const void *blk)
{
	return unionfs_odf_crc(blk, RD_BLK, offsetof(struct odf_rdix_bucket, ib_crc));
}

static u32 unionfs_rd_ent_crc(const void *p, unsigned int nslots)
{
	return unionfs_odf_crc(p, nslots * RD_SLOT,
			       offsetof(struct odf_rd_ent, re_crc));
}

static void unionfs_rd_csum_header(struct odf_rd_header *h)
{
	h->rh_crc = cpu_to_le32(unionfs_rd_hdr_crc(h));
}

static void unionfs_rd_csum_bucket(struct odf_rdix_bucket *b)
{
	b->ib_crc = cpu_to_le32(unionfs_rd_bucket_crc(b));
}

/* Read and check the header (section 7.2), everything but the stamps. */
static int unionfs_rd_load(struct unionfs_rdio *io, u64 dir_ino)
{
	struct odf_rd_header *h = io->h;
	loff_t size = i_size_read(file_inode(io->f));
	u32 nb, rec, next, ns;
	int err;

	err = unionfs_odf_read(io->f, h, RD_BLK, 0);
	if (err)
		return err;
	nb = le32_to_cpu(h->rh_index_buckets);
	rec = le32_to_cpu(h->rh_rec_start);
	next = le32_to_cpu(h->rh_next_slot);
	ns = le16_to_cpu(h->rh_nstamps);
	if (le32_to_cpu(h->rh_magic) != ODF_RD_MAGIC ||
	    le32_to_cpu(h->rh_crc) != unionfs_rd_hdr_crc(h) ||
	    le16_to_cpu(h->rh_version) != ODF_RD_VERSION ||
	    le32_to_cpu(h->rh_flags) != ODF_RD_COMPLETE ||
	    le64_to_cpu(h->rh_dir_ino) != dir_ino ||
	    ns > ODF_RD_MAX_STAMPS ||
	    le32_to_cpu(h->rh_index_start) != 1 ||
	    !is_power_of_2(nb) || nb > RD_MAX_BUCKETS ||
	    rec < 1 + nb || rec > 1 + RD_MAX_BUCKETS ||
	    next > RD_MAX_SLOTS ||
	    size < ((loff_t)rec + DIV_ROUND_UP(next, RD_SPB)) * RD_BLK)
		return -EUCLEAN;
	/* A block appended without its header (a crash): reconcile. */
	io->oversize = size != ((loff_t)rec + DIV_ROUND_UP(next, RD_SPB)) *
			       RD_BLK;
	io->nb = nb;
	io->next = next;
	io->seed = le32_to_cpu(h->rh_hash_seed);
	io->rec_pos = (loff_t)rec * RD_BLK;
	return 0;
}

static void unionfs_rd_stamp(struct odf_rd_stamp *st, u16 branch,
			     struct inode *inode)
{
	struct timespec64 now, mtime, ctime;

	memset(st, 0, sizeof(*st));
	st->st_branch = cpu_to_le16(branch);
	if (!inode)
		return;
	st->st_dir_ino = cpu_to_le64(inode->i_ino);
	mtime = unionfs_inode_mtime(inode);
	ctime = unionfs_inode_ctime(inode);
	st->st_mtime_ns = cpu_to_le64(timespec64_to_ns(&mtime));
	st->st_ctime_ns = cpu_to_le64(timespec64_to_ns(&ctime));
	if (IS_I_VERSION(inode)) {
		/*
		 * The version says it all, and the size would lie: XFS keeps
		 * a directory's in-memory i_size at what it read (0 for a
		 * new one), so a state stamped then would look stale once
		 * the inode is read again.
		 */
		st->st_version = cpu_to_le64(inode_query_iversion(inode));
		return;
	}
	st->st_size = cpu_to_le64(i_size_read(inode));
	/*
	 * Without i_version, a change in the same clock tick as the one
	 * stamped would leave every field equal: such a stamp cannot
	 * match, so the next read reconciles.
	 */
	now = current_time(inode);
	if (timespec64_compare(&ctime, &now) >= 0 ||
	    timespec64_compare(&mtime, &now) >= 0)
		st->st_ctime_ns = 0;
}

/* The stamps of the directory as it is now: namespace node, then parts. */
static int unionfs_rd_take_stamps(struct dentry *dentry,
				  struct odf_rd_stamp *st, unsigned int *n)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	unsigned int k = 0, bindex, i = 0;
	struct path p;
	int err;

	err = unionfs_ns_lookup_dir(dentry, &p);
	if (err && err != -ENOENT)
		return err;
	unionfs_rd_stamp(&st[i++], 0, err ? NULL : d_inode(p.dentry));
	if (!err)
		path_put(&p);
	while (unionfs_dir_next_part(dentry, &k, &p, &bindex)) {
		if (i == ODF_RD_MAX_STAMPS)
			return -E2BIG;
		unionfs_rd_stamp(&st[i++], sbi->branches[bindex].id,
				 d_inode(p.dentry));
	}
	*n = i;
	return 0;
}

static struct odf_rd_stamp *unionfs_rd_stamps(struct odf_rd_header *h)
{
	return (void *)h + sizeof(*h);
}

/* Do the stamps in the header match the directory as it is now? */
static int unionfs_rd_fresh(struct unionfs_rdio *io, struct dentry *dentry)
{
	struct odf_rd_stamp *now;
	unsigned int n;
	int err;

	now = kmalloc_array(ODF_RD_MAX_STAMPS, sizeof(*now), GFP_KERNEL);
	if (!now)
		return -ENOMEM;
	err = unionfs_rd_take_stamps(dentry, now, &n);
	if (!err)
		err = n == le16_to_cpu(io->h->rh_nstamps) &&
		      !memcmp(now, unionfs_rd_stamps(io->h), n * sizeof(*now));
	kfree(now);
	return err;
}

/* Rewrite the stamps and counts of the header, and the header. */
static int unionfs_rd_write_header(struct unionfs_rdio *io,
				   struct dentry *dentry)
{
	struct odf_rd_header *h = io->h;
	unsigned int n;
	int err;

	memset((void *)h + sizeof(*h), 0, RD_BLK - sizeof(*h));
	err = unionfs_rd_take_stamps(dentry, unionfs_rd_stamps(h), &n);
	if (err)
		return err;
	h->rh_nstamps = cpu_to_le16(n);
	h->rh_next_slot = cpu_to_le32(io->next);
	unionfs_rd_csum_header(h);
	return unionfs_odf_write(io->f, h, RD_BLK, 0);
}

/*
 * Decode the entry whose head is the first of @avail slots at @p; the
 * checksum covers all its slots.
 */
static int unionfs_rd_decode_checked(const u8 *p, unsigned int avail,
				     u32 seed, bool hash,
				     struct unionfs_rd_ent *e)
{
	const struct odf_rd_ent *h = (const void *)p;
	unsigned int n = h->re_nslots, len = h->re_name_len, k, off;

	if (h->re_kind != ODF_RS_HEAD || !n || n > avail || !len ||
	    unionfs_rd_nslots(len) != n || (h->re_flags & ~ODF_RE_TOMBSTONE) ||
	    h->re_dtype > 14 ||
	    le32_to_cpu(h->re_crc) != unionfs_rd_ent_crc(p, n))
		return -EUCLEAN;
	memcpy(e->name, h->re_name, min_t(unsigned int, len, ODF_RD_HEAD_NAME));
	for (k = 1, off = ODF_RD_HEAD_NAME; k < n; k++, off += ODF_RD_CONT_NAME) {
		const u8 *c = p + k * RD_SLOT;

		if (c[0] != ODF_RS_CONT)
			return -EUCLEAN;
		memcpy(e->name + off, c + 1,
		       min_t(unsigned int, len - off, ODF_RD_CONT_NAME));
	}
	e->name[len] = 0;
	/* Names never hold '/' or NUL and are never "." or ".." (7.3). */
	if (memchr(e->name, 0, len) || memchr(e->name, '/', len) ||
	    (e->name[0] == '.' && (len == 1 || (len == 2 && e->name[1] == '.'))))
		return -EUCLEAN;
	/*
	 * A name that is not the one hashed (the index finds by hash): a
	 * writer's fault, not damage (the checksum covers both), looked for
	 * where the index is used.
	 */
	if (hash && le32_to_cpu(h->re_hash) != unionfs_rd_hash(seed, e->name, len))
		return -EUCLEAN;
	e->len = len;
	e->nslots = n;
	e->live = !(h->re_flags & ODF_RE_TOMBSTONE);
	e->type = h->re_dtype;
	e->ino = le64_to_cpu(h->re_ino);
	e->branch = le16_to_cpu(h->re_branch);
	e->hash = le32_to_cpu(h->re_hash);
	return 0;
}

static int unionfs_rd_decode(const u8 *p, unsigned int avail, u32 seed,
			     struct unionfs_rd_ent *e)
{
	return unionfs_rd_decode_checked(p, avail, seed, true, e);
}

/* Encode an entry into its slots at @p (zeroed here); returns nslots. */
static unsigned int unionfs_rd_encode(u8 *p, const char *name, int len,
				      u64 ino, unsigned int type, u16 branch,
				      u32 hash, bool live)
{
	struct odf_rd_ent *h = (void *)p;
	unsigned int n = unionfs_rd_nslots(len), k, off;

	memset(p, 0, n * RD_SLOT);
	h->re_kind = ODF_RS_HEAD;
	h->re_flags = live ? 0 : ODF_RE_TOMBSTONE;
	h->re_dtype = type > 14 ? DT_UNKNOWN : type;
	h->re_nslots = n;
	h->re_name_len = len;
	h->re_branch = cpu_to_le16(branch);
	h->re_ino = cpu_to_le64(ino);
	h->re_hash = cpu_to_le32(hash);
	memcpy(h->re_name, name, min_t(int, len, ODF_RD_HEAD_NAME));
	for (k = 1, off = ODF_RD_HEAD_NAME; k < n; k++, off += ODF_RD_CONT_NAME) {
		p[k * RD_SLOT] = ODF_RS_CONT;
		memcpy(p + k * RD_SLOT + 1, name + off,
		       min_t(int, len - off, ODF_RD_CONT_NAME));
	}
	/* re_crc is still zero here: the checksum of the slots as they are */
	h->re_crc = cpu_to_le32(crc32c(~0U, p, n * RD_SLOT));
	return n;
}

/* Rewrite an entry's head after a change of its fields (slots in ebuf). */
static void unionfs_rd_reseal(u8 *p, unsigned int n)
{
	struct odf_rd_ent *h = (void *)p;

	h->re_crc = cpu_to_le32(unionfs_rd_ent_crc(p, n));
}

/* The slots of the entry with its head at @slot, into io->ebuf. */
static int unionfs_rd_read_ent(struct unionfs_rdio *io, u32 slot)
{
	unsigned int avail = min_t(u32, ODF_RD_MAX_NSLOTS,
				   RD_SPB - slot % RD_SPB);
	int err;

	if (slot >= io->next)
		return -EUCLEAN;
	avail = min_t(u32, avail, io->next - slot);
	if (io->cur_valid && slot / RD_SPB == io->cur_blk) {
		memcpy(io->ebuf, io->rbuf + (slot % RD_SPB) * RD_SLOT,
		       avail * RD_SLOT);
	} else if (io->mem) {
		memcpy(io->ebuf, io->mem->blk[slot / RD_SPB] +
		       (slot % RD_SPB) * RD_SLOT, avail * RD_SLOT);
	} else {
		err = unionfs_odf_read(io->f, io->ebuf, avail * RD_SLOT,
				       unionfs_rd_slot_pos(io, slot));
		if (err)
			return err;
	}
	io->ent.slot = slot;
	return unionfs_rd_decode(io->ebuf, avail, io->seed, &io->ent);
}

/* Write @n slots from @p at @slot (into the current block if it is there). */
static int unionfs_rd_write_slots(struct unionfs_rdio *io, u32 slot,
				  const void *p, unsigned int n)
{
	if (io->cur_valid && slot / RD_SPB == io->cur_blk) {
		memcpy(io->rbuf + (slot % RD_SPB) * RD_SLOT, p, n * RD_SLOT);
		return 0;
	}
	if (io->mem) {
		memcpy(io->mem->blk[slot / RD_SPB] + (slot % RD_SPB) * RD_SLOT,
		       p, n * RD_SLOT);
		return 0;
	}
	return unionfs_odf_write(io->f, p, n * RD_SLOT,
				 unionfs_rd_slot_pos(io, slot));
}

/*
 * Find the live entry named @name through the index.  0: found, the
 * entry in io->ent and io->ebuf, its bucket in io->ibuf as *bucket, its
 * index entry *idx.  -ENOENT: absent; *bucket (in io->ibuf) and *idx say
 * where it would go, *bucket == io->nb when the index is full.
 */
static int unionfs_rd_find(struct unionfs_rdio *io, const char *name, int len,
			   u32 hash, u32 *bucket, unsigned int *idx)
{
	struct odf_rdix_bucket *bk = io->ibuf;
	u32 b = hash & (io->nb - 1), probe, cur = io->nb;
	unsigned int k;
	int err;

	*bucket = io->nb;
	for (probe = 0; probe < io->nb; probe++, b = (b + 1) & (io->nb - 1)) {
		err = unionfs_odf_read(io->f, bk, RD_BLK, unionfs_rd_bucket_pos(b));
		if (err)
			return err;
		cur = b;
		if (le32_to_cpu(bk->ib_crc) != unionfs_rd_bucket_crc(bk))
			return -EUCLEAN;
		for (k = 0; k < ODF_RDIX_ENTRIES; k++) {
			u32 v = le32_to_cpu(bk->ib_ent[k].ie_slot);

			if (v == ODF_RDIX_EMPTY || v == ODF_RDIX_DELETED) {
				if (*bucket == io->nb) {
					*bucket = b;
					*idx = k;
				}
				if (v == ODF_RDIX_EMPTY)
					goto absent;
				continue;
			}
			if (le32_to_cpu(bk->ib_ent[k].ie_hash) != hash)
				continue;
			/*
			 * An entry past the end or not live is what a crash
			 * between the writes of 7.3 leaves: not this name.
			 */
			if (v - 1 >= io->next)
				continue;
			/* reading the entry leaves io->ibuf alone */
			err = unionfs_rd_read_ent(io, v - 1);
			if (err)
				return err;
			if (!io->ent.live || io->ent.hash != hash)
				continue;
			if (io->ent.len == len &&
			    !memcmp(io->ent.name, name, len)) {
				*bucket = b;
				*idx = k;
				return 0;
			}
		}
	}
absent:
	if (*bucket != io->nb && *bucket != cur) {
		err = unionfs_odf_read(io->f, bk, RD_BLK,
				       unionfs_rd_bucket_pos(*bucket));
		if (err)
			return err;
	}
	return -ENOENT;
}

/* Set index entry @idx of bucket @b (in io->ibuf) and write the bucket. */
static int unionfs_rd_set_index(struct unionfs_rdio *io, u32 b, unsigned int idx,
				u32 hash, u32 slot_plus1)
{
	struct odf_rdix_bucket *bk = io->ibuf;
	u32 old = le32_to_cpu(bk->ib_ent[idx].ie_slot);
	bool was_used = old != ODF_RDIX_EMPTY && old != ODF_RDIX_DELETED;
	bool used = slot_plus1 != ODF_RDIX_DELETED;

	bk->ib_ent[idx].ie_hash = cpu_to_le32(used ? hash : 0);
	bk->ib_ent[idx].ie_slot = cpu_to_le32(slot_plus1);
	le16_add_cpu(&bk->ib_count, (int)used - (int)was_used);
	unionfs_rd_csum_bucket(bk);
	return unionfs_odf_write(io->f, bk, RD_BLK, unionfs_rd_bucket_pos(b));
}

/* ------------------------------------------------------------------ */
/* Changes in place (section 7.3): append, tombstone, new inode number  */
/* ------------------------------------------------------------------ */

static void unionfs_rd_count(struct unionfs_rdio *io, int dlive, int dtomb)
{
	le32_add_cpu(&io->h->rh_live, dlive);
	le32_add_cpu(&io->h->rh_tombstones, dtomb);
}

/*
 * A build's current block (io->rbuf) is complete: to the file, or kept
 * in memory (then io->rbuf is a new block).  io->rbuf is zeroed.
 */
static int unionfs_rd_put_block(struct unionfs_rdio *io)
{
	u8 *buf;
	int err;

	if (!io->mem) {
		err = unionfs_odf_write(io->f, io->rbuf, RD_BLK,
					io->rec_pos + (loff_t)io->cur_blk * RD_BLK);
		if (!err)
			memset(io->rbuf, 0, RD_BLK);
		return err;
	}
	if (io->mem->nblk >= RD_MEM_BLOCKS)
		return -EFBIG;
	buf = kzalloc(RD_BLK, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = unionfs_rdmem_add(io->mem, io->cur_blk, io->rbuf);
	if (err) {
		kfree(buf);
		return err;
	}
	io->rbuf = buf;
	return 0;
}

/*
 * Append an entry at the end of the record area.  In a build the last
 * block stays in io->rbuf (io->cur_valid); in place, slots go to the file
 * and a new block is written whole, so the file is always whole blocks.
 */
static int unionfs_rd_append_slots(struct unionfs_rdio *io, const u8 *p,
				   unsigned int n, u32 *slot)
{
	u32 s = io->next;
	int err;

	if (s % RD_SPB + n > RD_SPB) {
		/* Pad the rest of the block: entries never cross blocks. */
		u32 pad = RD_SPB - s % RD_SPB, i;

		if (io->cur_valid) {
			for (i = 0; i < pad; i++) {
				memset(io->rbuf + (s % RD_SPB + i) * RD_SLOT, 0,
				       RD_SLOT);
				*(u8 *)(io->rbuf + (s % RD_SPB + i) * RD_SLOT) =
					ODF_RS_PAD;
			}
		} else {
			u8 *padbuf = kzalloc(pad * RD_SLOT, GFP_KERNEL);

			if (!padbuf)
				return -ENOMEM;
			for (i = 0; i < pad; i++)
				padbuf[i * RD_SLOT] = ODF_RS_PAD;
			err = unionfs_odf_write(io->f, padbuf, pad * RD_SLOT,
						unionfs_rd_slot_pos(io, s));
			kfree(padbuf);
			if (err)
				return err;
		}
		s += pad;
	}
	if (s + n > RD_MAX_SLOTS)
		return -EOVERFLOW;
	if (io->cur_valid) {
		if (s / RD_SPB != io->cur_blk) {
			err = unionfs_rd_put_block(io);
			if (err)
				return err;
			io->cur_blk = s / RD_SPB;
		}
		memcpy(io->rbuf + (s % RD_SPB) * RD_SLOT, p, n * RD_SLOT);
	} else if (s % RD_SPB == 0) {
		memset(io->rbuf, 0, RD_BLK);
		memcpy(io->rbuf, p, n * RD_SLOT);
		err = unionfs_odf_write(io->f, io->rbuf, RD_BLK,
					unionfs_rd_slot_pos(io, s));
		if (err)
			return err;
	} else {
		err = unionfs_odf_write(io->f, p, n * RD_SLOT,
					unionfs_rd_slot_pos(io, s));
		if (err)
			return err;
	}
	io->next = s + n;
	*slot = s;
	return 0;
}

/*
 * Make @name a live entry with inode @ino: append it, or update the
 * entry it has.  The header is written by the caller.
 */
static int unionfs_rd_put(struct unionfs_rdio *io, const char *name, int len,
			  u64 ino, unsigned int type, u16 branch)
{
	u32 hash = unionfs_rd_hash(io->seed, name, len), b, slot;
	u8 p[ODF_RD_MAX_NSLOTS * RD_SLOT];
	unsigned int idx, n;
	int err;

	err = unionfs_rd_find(io, name, len, hash, &b, &idx);
	if (!err) {
		struct odf_rd_ent *h = (void *)io->ebuf;

		if (io->ent.ino == ino && io->ent.type == type)
			return 0;
		h->re_ino = cpu_to_le64(ino);
		h->re_dtype = type > 14 ? DT_UNKNOWN : type;
		h->re_branch = cpu_to_le16(branch);
		unionfs_rd_reseal(io->ebuf, io->ent.nslots);
		return unionfs_rd_write_slots(io, io->ent.slot, io->ebuf, 1);
	}
	if (err != -ENOENT)
		return err;
	/* Grow first (section 7.4): the caller reconciles into a bigger file. */
	if (b == io->nb || (u64)(le32_to_cpu(io->h->rh_live) + 1) * 4 >
	    (u64)io->nb * ODF_RDIX_ENTRIES * 3)
		return -ENOSPC;
	n = unionfs_rd_encode(p, name, len, ino, type, branch, hash, true);
	err = unionfs_rd_append_slots(io, p, n, &slot);
	if (!err)
		err = unionfs_rd_set_index(io, b, idx, hash, slot + 1);
	if (!err)
		unionfs_rd_count(io, 1, 0);
	return err;
}

/*
 * Compaction without renumbering (section 7.3): a block of the record
 * area left with no live entry is deallocated; it reads back as free
 * slots.  The last block is kept: appends go on in it.
 */
static void unionfs_rd_punch(struct unionfs_rdio *io, u32 slot)
{
	u32 blk = slot / RD_SPB, i, tombs = 0;
	loff_t pos = io->rec_pos + (loff_t)blk * RD_BLK;

	if ((u64)(blk + 1) * RD_SPB >= io->next ||
	    unionfs_odf_read(io->f, io->rbuf, RD_BLK, pos))
		return;
	for (i = 0; i < RD_SPB; i++) {
		const struct odf_rd_ent *h = io->rbuf + i * RD_SLOT;

		if (h->re_kind != ODF_RS_HEAD)
			continue;
		if (!(h->re_flags & ODF_RE_TOMBSTONE))
			return;
		tombs++;
	}
	/* Its tombstones go with it; a failure leaves them counted. */
	if (!vfs_fallocate(io->f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			   pos, RD_BLK))
		unionfs_rd_count(io, 0, -(int)tombs);
}

/* Tombstone the live entry @name, if there is one. */
static int unionfs_rd_tomb(struct unionfs_rdio *io, const char *name, int len)
{
	u32 hash = unionfs_rd_hash(io->seed, name, len), b;
	struct odf_rd_ent *h = (void *)io->ebuf;
	unsigned int idx;
	int err;

	err = unionfs_rd_find(io, name, len, hash, &b, &idx);
	if (err)
		return err == -ENOENT ? 0 : err;
	h->re_flags |= ODF_RE_TOMBSTONE;
	unionfs_rd_reseal(io->ebuf, io->ent.nslots);
	err = unionfs_rd_write_slots(io, io->ent.slot, io->ebuf, 1);
	if (!err)
		err = unionfs_rd_set_index(io, b, idx, 0, ODF_RDIX_DELETED);
	if (!err) {
		unionfs_rd_count(io, -1, 1);
		unionfs_rd_punch(io, io->ent.slot);
	}
	return err;
}

/* ------------------------------------------------------------------ */
/* Build and reconcile (section 7.5)                                    */
/* ------------------------------------------------------------------ */

/*
 * A build's index entries wait here and go to the file a bucket at a
 * time (unionfs_rdb_flush()): one write per bucket per flush, not one
 * per name.  A directory whose bound is up to RD_STAGE_ALL names stages
 * them all and sizes its index from what it found, at the end (spec
 * 7.4); the stage starts at RD_STAGE_MAX entries at most and doubles as
 * names come, up to the bound, so its memory follows the names found,
 * not the bound.  A bigger one is counted first and flushes every
 * RD_STAGE_MAX entries.
 */
#define RD_STAGE_MAX	16384
#define RD_STAGE_ALL	1048576

#define RD_FILTER_BITS	BIT(19)		/* 64 KiB */

struct unionfs_rdstage {
	u32 cap, n, tmask;
	u32 limit;		/* deferred: the most entries it may grow to */
	bool flushed;		/* the file's index holds entries */
	/*
	 * Names in the file's index, two bits each by hash: a name whose
	 * bits are not both set is not there, and the index is not read.
	 * Made by the first flush that more names follow (none follow a
	 * deferred build's only flush).
	 */
	unsigned long *filter;
	u32 *hash, *slot;	/* the entries, in order of arrival */
	u32 *tab;		/* hash table of the entries: entry + 1 */
};

struct unionfs_rdbuild {
	struct super_block *sb;
	struct unionfs_rdstage st;
	bool deferred;			/* the index is sized at the end */
	bool overflow;			/* deferred, and the names did not fit */
	struct dentry *dir;		/* the union directory */
	struct unionfs_rdio *n;		/* the new file, <ino>.new */
	struct unionfs_rdio *o;		/* the old one (reconcile), or NULL */
	u32 live, tomb;
	int first;			/* the branch index of the first part */
	/*
	 * Lower directories a lower branch below gave again, by slot: the
	 * branch id of the part the entry is numbered after, shifted left
	 * by one, bit 0 set once a non-directory ended the parts (rare: a
	 * name in two lower branches).
	 */
	struct xarray parts;
};

static void unionfs_rdb_stage_free(struct unionfs_rdstage *st)
{
	kvfree(st->hash);
	kvfree(st->slot);
	kvfree(st->tab);
	kvfree(st->filter);
	memset(st, 0, sizeof(*st));
}

/*
 * Room for @cap entries (a power of two), the @n staged so far kept:
 * their hash table is made again at the new size.
 */
static int unionfs_rdb_stage_size(struct unionfs_rdstage *st, u32 cap)
{
	u32 *hash, *slot, *tab, i, t;

	hash = kvmalloc_array(cap, sizeof(u32), GFP_KERNEL);
	slot = kvmalloc_array(cap, sizeof(u32), GFP_KERNEL);
	tab = kvcalloc(2 * cap, sizeof(u32), GFP_KERNEL);
	if (!hash || !slot || !tab) {
		kvfree(hash);
		kvfree(slot);
		kvfree(tab);
		return -ENOMEM;
	}
	if (st->n) {
		memcpy(hash, st->hash, st->n * sizeof(u32));
		memcpy(slot, st->slot, st->n * sizeof(u32));
	}
	for (i = 0; i < st->n; i++) {
		for (t = hash[i] & (2 * cap - 1); tab[t];
		     t = (t + 1) & (2 * cap - 1))
			;
		tab[t] = i + 1;
	}
	kvfree(st->hash);
	kvfree(st->slot);
	kvfree(st->tab);
	st->hash = hash;
	st->slot = slot;
	st->tab = tab;
	st->cap = cap;
	st->tmask = 2 * cap - 1;
	return 0;
}

/*
 * Room for @cap entries now and, deferred, up to @limit (powers of
 * two, @cap <= @limit).
 */
static int unionfs_rdb_stage_init(struct unionfs_rdstage *st, u32 cap,
				  u32 limit)
{
	st->limit = limit;
	if (!unionfs_rdb_stage_size(st, cap))
		return 0;
	unionfs_rdb_stage_free(st);
	return -ENOMEM;
}

static u32 unionfs_rdb_filter_bit(u32 hash, int which)
{
	return (which ? hash * 0x9e3779b1U >> 7 : hash) & (RD_FILTER_BITS - 1);
}

/*
 * The staged entries in order of home bucket, each bucket's in order of
 * arrival: a counting sort, linear in the entries and the buckets.  A
 * counted build flushes every RD_STAGE_MAX names into an index sized
 * for all of them, so its flushes cost O(buckets) each: 16 KiB of
 * counts a flush at a million names, 256 KiB at ten million.
 */
static u32 *unionfs_rdb_sort(const struct unionfs_rdstage *st, u32 nb)
{
	u32 *order, *start, e, b;

	order = kvmalloc_array(st->n, sizeof(u32), GFP_KERNEL);
	start = kvcalloc(nb + 1, sizeof(u32), GFP_KERNEL);
	if (!order || !start) {
		kvfree(order);
		kvfree(start);
		return NULL;
	}
	for (e = 0; e < st->n; e++)
		start[(st->hash[e] & (nb - 1)) + 1]++;
	for (b = 0; b < nb; b++)
		start[b + 1] += start[b];
	for (e = 0; e < st->n; e++)
		order[start[st->hash[e] & (nb - 1)]++] = e;
	kvfree(start);
	return order;
}

/*
 * The number of used entries of bucket @b (modulo the index size) of a
 * build's index.  In a build they are a prefix of the bucket (entries are
 * only added, each at the first EMPTY one): found by bisection in the
 * page cache.
 */
static int unionfs_rdb_bucket_used(struct unionfs_rdio *io, u64 b,
				   unsigned int *used)
{
	const struct odf_rdix_bucket *bk;
	unsigned int lo = 0, hi = ODF_RDIX_ENTRIES;
	struct page *page;

	page = read_mapping_page(io->f->f_mapping, 1 + (b & (io->nb - 1)),
				 NULL);
	if (IS_ERR(page))
		return PTR_ERR(page);
	bk = kmap_local_page(page);
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (bk->ib_ent[mid].ie_slot != cpu_to_le32(ODF_RDIX_EMPTY))
			lo = mid + 1;
		else
			hi = mid;
	}
	kunmap_local(bk);
	put_page(page);
	*used = lo;
	return 0;
}

/*
 * The last @nrun of the @used entries of bucket @u (taken modulo the
 * index size), staged in io->ibuf, to the file.
 */
static int unionfs_rdb_write_run(struct unionfs_rdio *io, u64 u,
				 unsigned int used, unsigned int nrun)
{
	size_t sz = sizeof(struct odf_rdix_ent);

	if (!nrun)
		return 0;
	return unionfs_odf_write(io->f, io->ibuf, nrun * sz,
				 unionfs_rd_bucket_pos(u & (io->nb - 1)) +
				 offsetof(struct odf_rdix_bucket, ib_ent) +
				 (used - nrun) * sz);
}

/*
 * Put the staged entries into the file's index: in order of home bucket,
 * each at the first free place from its home on (linear probing, as
 * unionfs_rd_find() looks).  Places are never freed during a build, so
 * the buckets an entry probes past stay full and a later entry starts at
 * the furthest one reached; the entries a batch adds to a bucket follow
 * its used ones and are written in one piece.
 */
static int unionfs_rdb_flush(struct unionfs_rdio *io, struct unionfs_rdstage *st,
			     bool last)
{
	struct odf_rdix_ent *run = io->ibuf;	/* a bucket's new entries */
	unsigned int used = 0, nrun = 0;
	u64 cur = U64_MAX, u = 0;
	u32 e, *order;
	int err = 0;

	BUILD_BUG_ON(ODF_RDIX_ENTRIES * sizeof(*run) > RD_BLK);
	if (!st->n)
		return 0;
	if (!last && !st->filter) {
		st->filter = kvcalloc(BITS_TO_LONGS(RD_FILTER_BITS),
				      sizeof(long), GFP_KERNEL);
		if (!st->filter)
			return -ENOMEM;
	}
	order = unionfs_rdb_sort(st, io->nb);
	if (!order)
		return -ENOMEM;
	for (e = 0; !err && e < st->n; e++) {
		u32 x = order[e];
		u64 home = st->hash[x] & (io->nb - 1);

		if (u < home)
			u = home;
		for (;;) {
			if (u - home >= io->nb) {
				err = -ENOSPC;	/* sized from a count */
				break;
			}
			if (cur != u) {
				err = unionfs_rdb_write_run(io, cur, used, nrun);
				if (!err)
					err = unionfs_rdb_bucket_used(io, u, &used);
				if (err)
					break;
				cur = u;
				nrun = 0;
			}
			if (used < ODF_RDIX_ENTRIES)
				break;
			u++;
		}
		if (err)
			break;
		run[nrun].ie_hash = cpu_to_le32(st->hash[x]);
		run[nrun].ie_slot = cpu_to_le32(st->slot[x] + 1);
		nrun++;
		used++;
		if (st->filter) {
			__set_bit(unionfs_rdb_filter_bit(st->hash[x], 0),
				  st->filter);
			__set_bit(unionfs_rdb_filter_bit(st->hash[x], 1),
				  st->filter);
		}
	}
	kvfree(order);
	if (!err)
		err = unionfs_rdb_write_run(io, cur, used, nrun);
	memset(st->tab, 0, (st->tmask + 1) * sizeof(u32));
	st->n = 0;
	st->flushed = true;
	return err;
}

/* During a build index entries are staged; counts at the end. */
static int unionfs_rdb_index_add(struct unionfs_rdbuild *rb, u32 hash, u32 slot)
{
	struct unionfs_rdstage *st = &rb->st;
	u32 t;
	int err;

	if (st->n == st->cap && rb->deferred) {
		if (st->cap == st->limit) {
			/* More names than the bound (added meanwhile). */
			rb->overflow = true;
			return -ENOSPC;
		}
		/* No memory for more: count them, in bounded memory. */
		if (unionfs_rdb_stage_size(st, 2 * st->cap)) {
			rb->overflow = true;
			return -ENOSPC;
		}
	} else if (st->n == st->cap) {
		err = unionfs_rdb_flush(rb->n, st, false);
		if (err)
			return err;
	}
	st->hash[st->n] = hash;
	st->slot[st->n] = slot;
	for (t = hash & st->tmask; st->tab[t]; t = (t + 1) & st->tmask)
		;
	st->tab[t] = ++st->n;
	return 0;
}

/*
 * Find @name among the names of a build so far: in the staged entries,
 * then in the file's index, whose checksums are not written yet.  The
 * new file is private until it is installed and its index is in the page
 * cache: buckets are looked at in place, not copied.
 */
static int unionfs_rdb_find(struct unionfs_rdbuild *rb, const char *name,
			    int len, u32 hash)
{
	struct unionfs_rdstage *st = &rb->st;
	struct unionfs_rdio *io = rb->n;
	struct address_space *mapping;
	u32 b = hash & (io->nb - 1), probe, t;
	unsigned int k;
	int err;

	for (t = hash & st->tmask; st->tab[t]; t = (t + 1) & st->tmask) {
		u32 x = st->tab[t] - 1;

		if (st->hash[x] != hash)
			continue;
		err = unionfs_rd_read_ent(io, st->slot[x]);
		if (err)
			return err;
		if (io->ent.len == len && !memcmp(io->ent.name, name, len))
			return 0;
	}
	if (!st->flushed)
		return -ENOENT;
	/* Without a filter (after the last flush) the index is read. */
	if (st->filter &&
	    (!test_bit(unionfs_rdb_filter_bit(hash, 0), st->filter) ||
	     !test_bit(unionfs_rdb_filter_bit(hash, 1), st->filter)))
		return -ENOENT;
	BUILD_BUG_ON(RD_BLK != PAGE_SIZE);
	mapping = io->f->f_mapping;	/* flushed: never in memory */
	for (probe = 0; probe < io->nb; probe++, b = (b + 1) & (io->nb - 1)) {
		unsigned int from = 0;
		bool end = false;

		while (from < ODF_RDIX_ENTRIES) {
			const struct odf_rdix_bucket *bk;
			unsigned int nmatch = 0, i;
			struct page *page;
			u32 match[8];

			page = read_mapping_page(mapping, 1 + b, NULL);
			if (IS_ERR(page))
				return PTR_ERR(page);
			bk = kmap_local_page(page);
			for (k = from; k < ODF_RDIX_ENTRIES &&
			     nmatch < ARRAY_SIZE(match); k++) {
				u32 v = le32_to_cpu(bk->ib_ent[k].ie_slot);

				if (v == ODF_RDIX_EMPTY) {
					end = true;
					break;
				}
				if (le32_to_cpu(bk->ib_ent[k].ie_hash) == hash)
					match[nmatch++] = v - 1;
			}
			kunmap_local(bk);
			put_page(page);
			from = end ? ODF_RDIX_ENTRIES : k;
			/* Same hash: compare the names (rare). */
			for (i = 0; i < nmatch; i++) {
				err = unionfs_rd_read_ent(io, match[i]);
				if (err)
					return err;
				if (io->ent.len == len &&
				    !memcmp(io->ent.name, name, len))
					return 0;
			}
		}
		if (end)
			return -ENOENT;
	}
	return -ENOENT;
}

/*
 * A name a higher branch gave already (its entry is n->ent): if both are
 * lower directories, this one is a part of the same union directory,
 * which is numbered after its part on the oldest branch (lowest id), as
 * lookup numbers it (namei.c, unionfs_dir_number_part()).  The branch of
 * the part the entry's number stands for is in the number's top bits.
 */
static int unionfs_rdb_dir_part(struct unionfs_rdbuild *rb, u64 ino,
				unsigned int type, unsigned int bindex)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(rb->sb);
	struct unionfs_rdio *n = rb->n;
	struct odf_rd_ent *h = (void *)n->ebuf;
	u16 branch = sbi->branches[bindex].id, cur;
	u32 slot = n->ent.slot;
	void *v;
	u64 uino;
	int err;

	/* Branch 0 is numbered by unionfs_ino_of() in lookup: not here. */
	if (n->ent.type != DT_DIR || n->ent.branch == sbi->branches[0].id)
		return 0;
	v = xa_load(&rb->parts, slot);
	if (v && (xa_to_value(v) & 1))
		return 0;	/* below a non-directory: not merged */
	if (type != DT_DIR)
		return xa_err(xa_store(&rb->parts, slot, xa_mk_value(1),
				       GFP_KERNEL));
	cur = v ? xa_to_value(v) >> 1 : n->ent.branch;
	if (branch >= cur)
		return 0;
	err = unionfs_uino_det(rb->sb, bindex, ino, &uino);
	if (!err)
		err = unionfs_rd_read_ent(n, slot);
	if (err)
		return err;
	h->re_ino = cpu_to_le64(uino);
	unionfs_rd_reseal(n->ebuf, n->ent.nslots);
	err = unionfs_rd_write_slots(n, slot, n->ebuf, 1);
	if (err)
		return err;
	return xa_err(xa_store(&rb->parts, slot,
			       xa_mk_value((unsigned long)branch << 1),
			       GFP_KERNEL));
}

/* One name of the merged listing, in a build or a reconcile. */
static int unionfs_rdb_name(void *arg, const char *name, int len, u64 ino,
			    unsigned int type, unsigned int bindex)
{
	struct unionfs_rdbuild *rb = arg;
	struct unionfs_rdio *n = rb->n;
	u32 hash = unionfs_rd_hash(n->seed, name, len), slot;
	u16 branch = UNIONFS_SB(rb->sb)->branches[bindex].id;
	u8 p[ODF_RD_MAX_NSLOTS * RD_SLOT];
	unsigned int ns;
	u64 uino;
	int err;

	/*
	 * Names of the first part are unique in it and come before any
	 * other: nothing to look for.
	 */
	if (rb->first < 0)
		rb->first = bindex;
	err = bindex == rb->first ? -ENOENT :
	      unionfs_rdb_find(rb, name, len, hash);
	if (!err)	/* a higher branch gave the name */
		return unionfs_rdb_dir_part(rb, ino, type, bindex);
	if (err != -ENOENT)
		return err;
	err = unionfs_uino_entry(rb->sb, bindex, unionfs_part_on(rb->dir, bindex),
				 name, len, ino, &uino);
	if (err)
		return err;
	if (rb->o) {
		u32 ob;
		unsigned int oidx;

		err = unionfs_rd_find(rb->o, name, len,
				      unionfs_rd_hash(rb->o->seed, name, len),
				      &ob, &oidx);
		if (!err) {
			/* A surviving entry: alive again at its ordinal. */
			struct odf_rd_ent *h = (void *)n->ebuf;

			slot = rb->o->ent.slot;
			err = unionfs_rd_read_ent(n, slot);
			if (err)
				return err;
			h->re_flags &= ~ODF_RE_TOMBSTONE;
			h->re_ino = cpu_to_le64(uino);
			h->re_dtype = type > 14 ? DT_UNKNOWN : type;
			h->re_branch = cpu_to_le16(branch);
			h->re_hash = cpu_to_le32(hash);
			unionfs_rd_reseal(n->ebuf, n->ent.nslots);
			err = unionfs_rd_write_slots(n, slot, n->ebuf, 1);
			if (err)
				return err;
			rb->live++;
			rb->tomb--;
			return unionfs_rdb_index_add(rb, hash, slot);
		}
		if (err != -ENOENT)
			return err;
	}
	ns = unionfs_rd_encode(p, name, len, uino, type, branch, hash, true);
	err = unionfs_rd_append_slots(n, p, ns, &slot);
	if (err)
		return err;
	rb->live++;
	return unionfs_rdb_index_add(rb, hash, slot);
}

/*
 * Reconcile: the old record area, byte for byte but with every live
 * entry tombstoned, starts the new file; the names of the listing bring
 * their entries back (unionfs_rdb_name).  The hash seed stays.
 */
static int unionfs_rdb_copy(struct unionfs_rdbuild *rb)
{
	struct unionfs_rdio *o = rb->o, *n = rb->n;
	u32 blocks = DIV_ROUND_UP(o->next, RD_SPB), blk, i;
	int err;

	for (blk = 0; blk < blocks; blk++) {
		u8 *p = n->rbuf;
		u32 end = min_t(u32, RD_SPB, o->next - blk * RD_SPB);

		err = unionfs_odf_read(o->f, p, RD_BLK,
				       o->rec_pos + (loff_t)blk * RD_BLK);
		if (err)
			return err;
		/* Slots past the end are free (a crash may have left some). */
		memset(p + end * RD_SLOT, 0, (RD_SPB - end) * RD_SLOT);
		for (i = 0; i < end;) {
			struct odf_rd_ent *h = (void *)(p + i * RD_SLOT);
			struct unionfs_rd_ent *e = &n->ent;

			if (h->re_kind != ODF_RS_HEAD) {
				if (h->re_kind > ODF_RS_PAD ||
				    h->re_kind == ODF_RS_CONT)
					return -EUCLEAN;
				i++;
				continue;
			}
			err = unionfs_rd_decode((u8 *)h, end - i, o->seed, e);
			if (err)
				return err;
			rb->tomb++;
			h->re_flags |= ODF_RE_TOMBSTONE;
			unionfs_rd_reseal((u8 *)h, e->nslots);
			i += e->nslots;
		}
		if (blk + 1 < blocks) {
			/* A punched (all free) block is not written. */
			if (!memchr_inv(p, 0, RD_BLK))
				continue;
			err = unionfs_odf_write(n->f, p, RD_BLK,
						n->rec_pos + (loff_t)blk * RD_BLK);
			if (err)
				return err;
		} else {
			n->cur_blk = blk;	/* appends go on in it */
		}
	}
	n->next = o->next;
	return 0;
}

/*
 * After a reconcile, every block of the record area but the last that
 * holds no live entry becomes a hole (section 7.3): those a tombstone
 * had punched (the new file was preallocated whole) and those whose
 * names are all gone now.  Their tombstones leave the count.
 */
static int unionfs_rdb_punch_dead(struct unionfs_rdbuild *rb)
{
	struct unionfs_rdio *n = rb->n;
	u32 blocks = DIV_ROUND_UP(n->next, RD_SPB), blk, i, tombs;
	u8 *p = n->rbuf;
	loff_t pos;
	int err;

	for (blk = 0; blk + 1 < blocks; blk++) {
		pos = n->rec_pos + (loff_t)blk * RD_BLK;
		err = unionfs_odf_read(n->f, p, RD_BLK, pos);
		if (err)
			return err;
		for (i = 0, tombs = 0; i < RD_SPB; i++) {
			const struct odf_rd_ent *h = (void *)(p + i * RD_SLOT);

			if (h->re_kind != ODF_RS_HEAD)
				continue;
			if (!(h->re_flags & ODF_RE_TOMBSTONE))
				break;
			tombs++;
		}
		if (i < RD_SPB)
			continue;	/* a live entry */
		err = vfs_fallocate(n->f, FALLOC_FL_PUNCH_HOLE |
				    FALLOC_FL_KEEP_SIZE, pos, RD_BLK);
		if (err)
			return err;
		rb->tomb -= tombs;
	}
	return 0;
}

/*
 * Counts and checksums of every bucket, once the entries are in: the
 * checksum is taken in the page cache, only the bucket's head written.
 */
static int unionfs_rdb_seal_index(struct unionfs_rdio *io)
{
	struct {
		__le32 crc;
		__le16 count;
		__le16 pad;
	} head;
	unsigned int used;
	struct page *page;
	const u8 *p;
	u32 b, crc;
	int err;

	BUILD_BUG_ON(offsetof(struct odf_rdix_bucket, ib_crc) != 0 ||
		     offsetof(struct odf_rdix_bucket, ib_count) != 4 ||
		     offsetof(struct odf_rdix_bucket, ib_ent) != sizeof(head));
	for (b = 0; b < io->nb; b++) {
		err = unionfs_rdb_bucket_used(io, b, &used);
		if (err)
			return err;
		page = read_mapping_page(io->f->f_mapping, 1 + b, NULL);
		if (IS_ERR(page))
			return PTR_ERR(page);
		p = kmap_local_page(page);
		memcpy(&head, p, 8);
		head.crc = 0;
		head.count = cpu_to_le16(used);
		crc = crc32c(~0U, &head, 8);
		crc = crc32c(crc, p + 8, RD_BLK - 8);
		kunmap_local(p);
		put_page(page);
		head.crc = cpu_to_le32(crc);
		err = unionfs_odf_write(io->f, &head, 8, unionfs_rd_bucket_pos(b));
		if (err)
			return err;
		cond_resched();
	}
	return 0;
}

static u32 unionfs_rd_buckets_for(u64 names)
{
	u32 nb = 1;

	/* At most half full when built; grown when three quarters full. */
	while ((u64)nb * ODF_RDIX_ENTRIES < names * 2 && nb < RD_MAX_BUCKETS)
		nb <<= 1;
	return nb;
}

/*
 * A state a listing built in memory (unionfs_rd_build_for() with
 * @pendp), written after the listing by unionfs_rd_write_pending(): its
 * header complete in n->h, its records in n->mem, its index entries
 * staged in @st.
 */
struct unionfs_rdpend {
	refcount_t ref;
	struct unionfs_sb_info *sbi;	/* counts its blocks in rd_mem_blocks */
	struct unionfs_rdio *n;
	struct unionfs_rdstage st;
	u64 ino;
	/*
	 * Written under @lock, without the state's: readers list from
	 * memory meanwhile, even while a frozen ODF holds the write.
	 */
	struct mutex lock;
	bool done;		/* written (@err 0, @f the file) or failed */
	bool dropped;		/* the directory went: not written */
	int err;
	struct file *f;
};

static void unionfs_rd_pend_put(struct unionfs_rdpend *p)
{
	if (!p || !refcount_dec_and_test(&p->ref))
		return;
	if (p->f)
		fput(p->f);
	atomic_sub(p->n->mem->nblk, &p->sbi->rd_mem_blocks);
	unionfs_rdb_stage_free(&p->st);
	unionfs_rdio_free(p->n);
	kfree(p);
}

/* The header of the complete state rb->n, checksummed, in rb->n->h. */
static void unionfs_rdb_header(struct unionfs_rdbuild *rb, unsigned int ns,
			       u64 ino, u64 gen)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(rb->sb);
	struct unionfs_rdio *n = rb->n;
	struct odf_rd_header *h = n->h;

	h->rh_magic = cpu_to_le32(ODF_RD_MAGIC);
	h->rh_version = cpu_to_le16(ODF_RD_VERSION);
	h->rh_nstamps = cpu_to_le16(ns);
	h->rh_flags = cpu_to_le32(ODF_RD_COMPLETE);
	h->rh_dir_ino = cpu_to_le64(ino);
	h->rh_generation = cpu_to_le64(gen);
	h->rh_index_start = cpu_to_le32(1);
	h->rh_index_buckets = cpu_to_le32(n->nb);
	h->rh_rec_start = cpu_to_le32(n->rec_pos / RD_BLK);
	h->rh_next_slot = cpu_to_le32(n->next);
	h->rh_live = cpu_to_le32(rb->live);
	h->rh_tombstones = cpu_to_le32(rb->tomb);
	h->rh_hash_seed = cpu_to_le32(n->seed);
	/* Checked in this session (section 10.2): not again after a crash. */
	h->rh_session = sbi->odf_sb->s_mnt_count;
	unionfs_rd_csum_header(h);
}

/*
 * Write a complete state for @dentry as <ino>.new and rename it over the
 * old one.  With @old (a loaded header), a reconcile that keeps every
 * surviving ordinal; without, a build from slot 0 with generation @gen.
 * On success *fp is the new file, open.
 *
 * The index comes before the records and is sized for the names
 * (7.4).  Unless @counted, the names are not counted first: every index
 * entry is staged and the index sized at the end, and the records start
 * after the largest index the stage could need (blocks between stay
 * holes); 1 if the names do not fit the stage (a directory above
 * RD_STAGE_ALL names, or names added meanwhile).  @counted counts them
 * first, and the index takes the blocks right after the header.
 *
 * With @pendp (a build, not counted), nothing is written: the state is
 * built in memory, its records right after its index, and *pendp is
 * what unionfs_rd_write_pending() writes; 1 if it does not fit
 * (RD_MEM_BLOCKS, or no memory for it).
 */
static int unionfs_rd_build_for(struct dentry *dentry,
				struct unionfs_rdio *old, u64 gen,
				struct file **fp, bool counted,
				struct unionfs_rdpend **pendp)
{
	struct super_block *sb = dentry->d_sb;
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	u64 ino = d_inode(dentry)->i_ino, count;
	struct unionfs_rdbuild rb = { .sb = sb, .o = old, .first = -1,
				      .dir = dentry,
				      .deferred = !counted };
	struct unionfs_rdpend *p;
	char tmp[RD_NAME_MAX];
	struct unionfs_rdio *n;
	struct file *f = NULL;
	unsigned int ns;
	loff_t prealloc;
	u32 cap;
	int err;

	err = unionfs_dir_count(dentry, &count, counted);
	if (err)
		return err;
	if (old)
		count = max_t(u64, count, le32_to_cpu(old->h->rh_live) + 1);
	if (!counted && count > RD_STAGE_ALL)
		return 1;	/* maybe more than fit: count them */
	cap = clamp_t(u64, roundup_pow_of_two(max_t(u64, count, 1)), 64,
		      counted ? RD_STAGE_MAX : RD_STAGE_ALL);
	if (!pendp) {
		f = unionfs_rd_create(sbi, ino);
		if (IS_ERR(f))
			return PTR_ERR(f);
	}
	xa_init(&rb.parts);
	err = unionfs_rdb_stage_init(&rb.st, min_t(u32, cap, RD_STAGE_MAX),
				     cap);
	if (err)
		goto out_put;
	err = -ENOMEM;
	n = unionfs_rdio_alloc(f);
	if (!n)
		goto out_put;
	rb.n = n;
	if (pendp) {
		n->mem = kzalloc(sizeof(*n->mem), GFP_KERNEL);
		if (!n->mem)
			goto out;
		refcount_set(&n->mem->ref, 1);
	}
	memset(n->h, 0, RD_BLK);
	/* Stamps before the listing is read: a change after them shows. */
	err = unionfs_rd_take_stamps(dentry, unionfs_rd_stamps(n->h), &ns);
	if (err)
		goto out;
	/* Deferred: the most buckets the staged names can need. */
	n->nb = unionfs_rd_buckets_for(counted ? count : cap);
	n->seed = old ? old->seed : get_random_u32();
	n->rec_pos = ((loff_t)1 + n->nb) * RD_BLK;
	n->cur_valid = true;
	n->cur_blk = 0;
	memset(n->rbuf, 0, RD_BLK);
	/*
	 * The index reads back as zeroes (EMPTY) until written, holes or
	 * not.  The record area is allocated for one slot per name: appends
	 * within the file size cost no size update each; the file is cut
	 * to its exact size at the end.
	 */
	prealloc = counted ? 0 : n->rec_pos;
	err = pendp ? 0 :
	      vfs_fallocate(f, 0, prealloc, n->rec_pos - prealloc +
			    (loff_t)RD_BLK *
			    (DIV_ROUND_UP(min_t(u64, count, cap) +
					  (old ? old->next : 0), RD_SPB) + 1));
	if (err) {
		/* Room for the bound but maybe for the names: count them. */
		if (!counted && (err == -ENOSPC || err == -EDQUOT))
			rb.overflow = true;
		goto out;
	}
	if (old) {
		err = unionfs_rdb_copy(&rb);
		if (err)
			goto out;
		gen = le64_to_cpu(old->h->rh_generation);
	}
	err = unionfs_dir_stream(dentry, unionfs_rdb_name, &rb);
	/* The last block, unless it is empty. */
	if (!err && n->next > n->cur_blk * RD_SPB)
		err = unionfs_rd_put_block(n);
	n->cur_valid = false;
	/* Deferred: every entry is staged; the index for what was found. */
	if (!err && !counted)
		n->nb = unionfs_rd_buckets_for(rb.st.n);
	if (pendp) {
		if (err)
			goto out;
		n->rec_pos = ((loff_t)1 + n->nb) * RD_BLK;
		unionfs_rdb_header(&rb, ns, ino, gen);
		err = -ENOMEM;
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			goto out;
		refcount_set(&p->ref, 1);
		mutex_init(&p->lock);
		p->sbi = sbi;
		atomic_add(n->mem->nblk, &sbi->rd_mem_blocks);
		p->n = n;
		p->st = rb.st;
		p->ino = ino;
		n->mem->id = atomic64_inc_return(&unionfs_rdmem_ids);
		xa_destroy(&rb.parts);
		*pendp = p;
		return 0;
	}
	if (!err) {
		err = unionfs_rdb_flush(n, &rb.st, true);
		/* No memory to sort them all: count them, flushing as they come. */
		if (err == -ENOMEM && !counted)
			rb.overflow = true;
	}
	if (!err && old)
		err = unionfs_rdb_punch_dead(&rb);
	if (!err)
		err = unionfs_rdb_seal_index(n);
	if (!err)
		err = vfs_truncate(&f->f_path, n->rec_pos + (loff_t)RD_BLK *
				   DIV_ROUND_UP(n->next, RD_SPB));
	if (err)
		goto out;
	unionfs_rdb_header(&rb, ns, ino, gen);
	err = unionfs_odf_write(f, n->h, RD_BLK, 0);
	if (!err)
		err = unionfs_rd_install(sbi, ino);
out:
	unionfs_rdio_free(n);
	if (!err) {
		unionfs_rdb_stage_free(&rb.st);
		xa_destroy(&rb.parts);
		*fp = f;
		return 0;
	}
out_put:
	unionfs_rdb_stage_free(&rb.st);
	xa_destroy(&rb.parts);
	if (f) {
		fput(f);
		/* Do not leave a half-built state taking room on the ODF. */
		unionfs_rd_fname(tmp, ino, true);
		unionfs_rd_unlink(sbi, tmp);
	}
	/* In memory: too big, or no memory for it; written as it is built. */
	if (pendp && (err == -ENOMEM || err == -EFBIG))
		return 1;
	return rb.overflow ? 1 : err;
}

/*
 * Build or reconcile the state of @dentry.  With @pendp, a build is made
 * in memory when it fits, to be written after the listing (*pendp set,
 * *fp not); otherwise it is written now (*fp).
 */
static int unionfs_rd_build(struct dentry *dentry, struct unionfs_rdio *old,
			    u64 gen, struct file **fp,
			    struct unionfs_rdpend **pendp)
{
	int err = 1;

	if (pendp && !old)
		err = unionfs_rd_build_for(dentry, NULL, gen, fp, false, pendp);
	if (err > 0)
		err = unionfs_rd_build_for(dentry, old, gen, fp, false, NULL);
	if (err > 0)
		err = unionfs_rd_build_for(dentry, old, gen, fp, true, NULL);
	return err;
}

/*
 * Write the state a listing built in memory as <ino>.new and rename it
 * into place, as unionfs_rd_build_for() would have: the records right
 * after the index, the index from the staged entries.
 */
static int unionfs_rd_write_pending(struct unionfs_sb_info *sbi,
				    struct unionfs_rdpend *p, struct file **fp)
{
	struct unionfs_rdio *n = p->n;
	struct unionfs_rdmem *m = n->mem;
	char tmp[RD_NAME_MAX];
	struct file *f;
	u32 blk;
	int err;

	f = unionfs_rd_create(sbi, p->ino);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n->f = f;
	/* The index stays holes (EMPTY) where no entry is written. */
	err = vfs_truncate(&f->f_path, n->rec_pos + (loff_t)m->nblk * RD_BLK);
	if (!err && m->nblk)
		err = vfs_fallocate(f, 0, n->rec_pos, (loff_t)m->nblk * RD_BLK);
	for (blk = 0; !err && blk < m->nblk; blk++)
		err = unionfs_odf_write(f, m->blk[blk], RD_BLK,
					n->rec_pos + (loff_t)blk * RD_BLK);
	if (!err)
		err = unionfs_rdb_flush(n, &p->st, true);
	if (!err)
		err = unionfs_rdb_seal_index(n);
	if (!err)
		err = unionfs_odf_write(f, n->h, RD_BLK, 0);
	if (!err)
		err = unionfs_rd_install(sbi, p->ino);
	n->f = NULL;
	if (!err) {
		*fp = f;
		return 0;
	}
	fput(f);
	unionfs_rd_fname(tmp, p->ino, true);
	unionfs_rd_unlink(sbi, tmp);
	return err;
}

/* ------------------------------------------------------------------ */
/* The state of one directory                                           */
/* ------------------------------------------------------------------ */

static void unionfs_rd_detach(struct unionfs_rdstate *rd)
{
	if (rd->file)
		fput(rd->file);
	rd->file = NULL;
	rd->file_mem = 0;
}

/* Write @p once, whoever asks first (@p->lock). */
static void unionfs_rd_write_once(struct super_block *sb,
				  struct unionfs_rdpend *p)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	const struct cred *old_cred;
	int idx;

	mutex_lock(&p->lock);
	if (!p->done && !p->dropped) {
		p->err = -EROFS;
		old_cred = unionfs_override_creds(sb);
		if (unionfs_odf_write_begin(sbi, &idx)) {
			p->err = unionfs_rd_write_pending(sbi, p, &p->f);
			unionfs_odf_write_end(sbi, idx);
		}
		revert_creds(old_cred);
		p->done = true;
		if (p->err && p->err != -EROFS)
			pr_warn_ratelimited("ODF '%s': cannot write the readdir state of directory %llu (error %d): its next listing builds it again\n",
					    sbi->odf_name, p->ino, p->err);
	}
	mutex_unlock(&p->lock);
}

/*
 * @p, written (or not), is no longer the directory's state in memory; rd->sem
 * held for writing.  It is the state that its listing and streams use
 * already: rd->seq does not move.  Not written (a full or read-only
 * ODF), it is dropped: the next listing builds it again.
 */
static void unionfs_rd_settled(struct unionfs_rdstate *rd,
			       struct unionfs_rdpend *p)
{
	if (rd->pending != p)
		return;
	rd->pending = NULL;
	if (p->err && p->err != -EROFS)
		rd->mem_failed = true;
	if (!p->err && p->f) {
		unionfs_rd_detach(rd);
		rd->file = p->f;
		p->f = NULL;
		rd->file_mem = p->n->mem->id;
		rd->absent = 0;
	}
	unionfs_rd_pend_put(p);
}

/* Write the state waiting in memory, if any, now; rd->sem held for writing. */
static void unionfs_rd_settle(struct unionfs_rdstate *rd)
{
	struct unionfs_rdpend *p = rd->pending;

	if (!p)
		return;
	unionfs_rd_write_once(rd->inode->i_sb, p);
	unionfs_rd_settled(rd, p);
}

/*
 * The work that writes a state built in memory, soon after its listing:
 * the file is written without the state's lock, which is taken only to
 * put it in place of the memory.
 */
static void unionfs_rd_work(struct work_struct *work)
{
	struct unionfs_rdstate *rd = container_of(work, struct unionfs_rdstate,
						  work);
	struct inode *inode = rd->inode;
	struct unionfs_rdpend *p;

	down_read(&rd->sem);
	p = rd->pending;
	if (p)
		refcount_inc(&p->ref);
	up_read(&rd->sem);
	if (p) {
		unionfs_rd_write_once(inode->i_sb, p);
		down_write(&rd->sem);
		unionfs_rd_settled(rd, p);
		up_write(&rd->sem);
		unionfs_rd_pend_put(p);
	}
	iput(inode);	/* may free rd: nothing of it after this */
}

/* @p, just built in memory, is the state of rd's directory until written. */
static void unionfs_rd_defer(struct unionfs_rdstate *rd,
			     struct unionfs_rdpend *p)
{
	rd->pending = p;
	/* The inode stays until the work ran: it holds rd. */
	ihold(rd->inode);
	if (!queue_work(UNIONFS_SB(rd->inode->i_sb)->rd_wq, &rd->work))
		iput(rd->inode);	/* queued already: that run writes it */
}

/*
 * Wait until every state built in memory so far is written (or dropped).
 * Unless @always, not while the ODF is frozen: they would wait for the
 * thaw, and they are a cache.
 */
void unionfs_rd_flush(struct super_block *sb, bool always)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);

	if (!sbi || !sbi->rd_wq)
		return;
	if (!always && sbi->odf.mnt &&
	    READ_ONCE(sbi->odf.mnt->mnt_sb->s_writers.frozen) != SB_UNFROZEN)
		return;
	flush_workqueue(sbi->rd_wq);
}

/*
 * At a remount: the states built in memory so far are written, under the
 * branch set they were listed in.  Before remount,ro ends the session
 * (@ro), listings build their states in the file from now on (until the
 * remount fails or the union is rw again: sbi->rd_sync cleared), and a
 * listing that was building one in memory when that was set is inside
 * unionfs_odf_write_begin(): SRCU waits for it before the flush.
 */
void unionfs_rd_quiesce(struct super_block *sb, bool ro)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);

	if (ro) {
		WRITE_ONCE(sbi->rd_sync, true);
		synchronize_srcu(&sbi->odf_srcu);
	}
	unionfs_rd_flush(sb, false);
}

/* A view of the state in memory @p, as unionfs_rd_load() gives of a file. */
static void unionfs_rd_view_pending(struct unionfs_rdio *io,
				    const struct unionfs_rdpend *p)
{
	memcpy(io->h, p->n->h, RD_BLK);
	io->f = NULL;
	io->nb = p->n->nb;
	io->next = p->n->next;
	io->seed = p->n->seed;
	io->rec_pos = p->n->rec_pos;
	io->oversize = false;
	io->mem = unionfs_rdmem_get(p->n->mem);
}

static struct unionfs_rdstate *unionfs_rd_get(struct inode *inode)
{
	struct unionfs_inode_info *ui = UNIONFS_I(inode);
	struct unionfs_rdstate *rd = READ_ONCE(ui->rd), *old;

	if (rd)
		return rd;
	rd = kzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd)
		return NULL;
	init_rwsem(&rd->sem);
	rd->inode = inode;
	INIT_WORK(&rd->work, unionfs_rd_work);
	/* Nested unions: a state's lock may be taken inside a lower one's. */
	lockdep_set_class(&rd->sem,
			  &unionfs_rd_keys[min(inode->i_sb->s_stack_depth,
					       FILESYSTEM_MAX_STACK_DEPTH)]);
	old = cmpxchg(&ui->rd, NULL, rd);
	if (old) {
		kfree(rd);
		return old;
	}
	return rd;
}

void unionfs_rd_free(struct inode *inode)
{
	struct unionfs_rdstate *rd = UNIONFS_I(inode)->rd;

	if (!rd)
		return;
	/* The work holds the inode while a state waits: none does now. */
	WARN_ON_ONCE(rd->pending);
	unionfs_rd_pend_put(rd->pending);
	if (rd->file)
		fput(rd->file);
	kfree(rd);
	UNIONFS_I(inode)->rd = NULL;
}

/*
 * The file of the state, written first if it waits in memory, opened if
 * needed (write side).  0 or -ENOENT.
 */
static int unionfs_rd_attach(struct unionfs_rdstate *rd, struct inode *inode)
{
	struct file *f;

	struct unionfs_sb_info *sbi = UNIONFS_SB(inode->i_sb);
	u64 installs;

	unionfs_rd_settle(rd);
	if (rd->file)
		return 0;
	if (unionfs_rd_known_absent(rd, sbi))
		return -ENOENT;
	/* Read before looking: an install meanwhile makes the mark lapse. */
	installs = atomic64_read(&sbi->rd_installs);
	f = unionfs_rd_open_file(sbi, inode->i_ino);
	if (IS_ERR(f)) {
		rd->absent = PTR_ERR(f) == -ENOENT ? installs + 1 : 0;
		return PTR_ERR(f);
	}
	rd->file = f;
	return 0;
}

/* Is the state in io (header loaded) usable as it is? */
static int unionfs_rd_check(struct unionfs_rdstate *rd, struct unionfs_rdio *io,
			    struct dentry *dentry)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);

	/*
	 * Section 10.2 step 3: a crash may have lost part of any state not
	 * built or reconciled since (in this session, whose number the
	 * state keeps: an inode read again does not reconcile it again).
	 */
	if ((sbi->odf_was_mounted &&
	     io->h->rh_session != sbi->odf_sb->s_mnt_count) || io->oversize)
		return 0;
	return unionfs_rd_fresh(io, dentry);
}

static void unionfs_rd_damaged(struct dentry *dentry, const char *what)
{
	pr_warn_ratelimited("ODF '%s': readdir state of '%pd' %s: rebuilding it\n",
			    UNIONFS_SB(dentry->d_sb)->odf_name, dentry, what);
}

/*
 * Make the state of @dentry present and fresh: open it, check it, and
 * build, rebuild or reconcile it as needed.  Called with rd->sem held for
 * writing; on success io->f is the state and io holds its header.
 */
static int unionfs_rd_prepare(struct unionfs_rdstate *rd, struct dentry *dentry,
			      struct unionfs_rdio *io)
{
	struct inode *inode = d_inode(dentry);
	struct unionfs_sb_info *sbi = UNIONFS_SB(inode->i_sb);
	struct unionfs_rdpend *p = NULL, **pp;
	enum unionfs_stat what;
	u64 gen = 1;
	struct file *f;
	int err, idx;

	err = unionfs_rd_attach(rd, inode);
	if (err && err != -ENOENT && err != -EUCLEAN)
		return err;
	if (!err) {
		io->f = rd->file;
		err = unionfs_rd_load(io, inode->i_ino);
		if (!err) {
			err = unionfs_rd_check(rd, io, dentry);
			if (err > 0)
				return 0;
			if (err < 0)
				return err;
		}
	}
	/* A read-only union writes nothing; remount,ro waits for a build. */
	if (!unionfs_odf_write_begin(sbi, &idx))
		return -EROFS;
	/*
	 * A build is made in memory and written after the listing, unless
	 * remount,ro is near (read inside the section it waits for), memory
	 * for such states is used up, or this directory's last one could
	 * not be written (a full ODF: the build below fails the same way,
	 * and the directory is listed from memory per stream).
	 */
	pp = READ_ONCE(sbi->rd_sync) || rd->mem_failed ||
	     atomic_read(&sbi->rd_mem_blocks) >= RD_MEM_TOTAL ? NULL : &p;
	if (err == -EUCLEAN) {
		if (le32_to_cpu(io->h->rh_magic) == ODF_RD_MAGIC)
			gen = le64_to_cpu(io->h->rh_generation) + 1;
		unionfs_rd_damaged(dentry, "is damaged");
	}
	if (!err) {
		/* Stale: reconcile, keeping every surviving ordinal. */
		what = UNIONFS_ST_RD_RECONCILED;
		gen = le64_to_cpu(io->h->rh_generation) + 1;
		err = unionfs_rd_build(dentry, io, 0, &f, NULL);
		if (err == -EUCLEAN || err == -EOVERFLOW) {
			unionfs_rd_damaged(dentry, err == -EUCLEAN ?
					   "is damaged" : "is full");
			err = unionfs_rd_build(dentry, NULL, gen, &f, pp);
			what = UNIONFS_ST_RD_REBUILT;
		}
	} else {
		what = err == -EUCLEAN ? UNIONFS_ST_RD_REBUILT :
					 UNIONFS_ST_RD_BUILT;
		err = unionfs_rd_build(dentry, NULL, gen, &f, pp);
	}
	if (!err) {
		unionfs_count(sbi, what);
		unionfs_rd_detach(rd);
		rd->absent = 0;
		WRITE_ONCE(rd->seq, rd->seq + 1);
	}
	if (!err && p) {
		/*
		 * Listed from memory now, written after the listing; queued
		 * inside the section, so remount,ro's flush finds the work.
		 */
		unionfs_rd_view_pending(io, p);
		unionfs_rd_defer(rd, p);
	}
	unionfs_odf_write_end(sbi, idx);
	if (err || p)
		return err;
	rd->mem_failed = false;
	rd->file = f;
	io->f = f;
	err = unionfs_rd_load(io, inode->i_ino);
	/* Its record blocks are what this build wrote: no check needed. */
	if (!err && io->checked)
		bitmap_fill(io->checked, min_t(u32, RD_CHECKED_BLOCKS,
					       DIV_ROUND_UP(io->next, RD_SPB)));
	return err;
}

/*
 * The state of a directory ready for reading: on success rd->sem is held
 * for reading and *iop holds the fresh header.
 */
static int unionfs_rd_ready(struct dentry *dentry, struct unionfs_rdstate **rdp,
			    struct unionfs_rdio **iop)
{
	struct unionfs_rdstate *rd = unionfs_rd_get(d_inode(dentry));
	struct unionfs_rdio *io;
	int err;

	if (!rd)
		return -ENOMEM;
	io = unionfs_rdio_alloc(NULL);
	if (!io)
		return -ENOMEM;
	/* Without it every block is checked at every read: still right. */
	io->checked = bitmap_zalloc(RD_CHECKED_BLOCKS, GFP_KERNEL);
	io->sbi = UNIONFS_SB(dentry->d_sb);
	*rdp = rd;
	*iop = io;
	down_read(&rd->sem);
	if (rd->file) {
		io->f = rd->file;
		if (!unionfs_rd_load(io, d_inode(dentry)->i_ino) &&
		    unionfs_rd_check(rd, io, dentry) > 0)
			return 0;
	} else if (rd->pending) {
		/* Built in memory and fresh: listed from there. */
		unionfs_rd_view_pending(io, rd->pending);
		if (unionfs_rd_check(rd, io, dentry) > 0)
			return 0;
		unionfs_rdmem_put(io->mem);
		io->mem = NULL;
	}
	up_read(&rd->sem);
	down_write(&rd->sem);
	err = unionfs_rd_prepare(rd, dentry, io);
	if (err) {
		up_write(&rd->sem);
		unionfs_rdio_free(io);
		return err;
	}
	downgrade_write(&rd->sem);
	return 0;
}

/* Can a read-only union list @dentry from its state as it is? */
bool unionfs_rd_usable(struct dentry *dentry)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	struct unionfs_rdstate *rd;
	const struct cred *old_cred;
	struct unionfs_rdio *io;
	int err;

	if (unionfs_odf_rw(sbi))
		return true;
	old_cred = unionfs_override_creds(dentry->d_sb);
	err = unionfs_rd_ready(dentry, &rd, &io);
	revert_creds(old_cred);
	if (err)
		return false;
	up_read(&rd->sem);
	unionfs_rdio_free(io);
	return true;
}

/*
 * Has @dentry a readdir state on the ODF (or is one being built)?  A
 * directory that has one is always listed from it (section 7), so that
 * offsets handed out once stay valid when it has one part again.  An
 * error other than "no such file" says yes: the state path reports it.
 */
bool unionfs_rd_exists(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct unionfs_sb_info *sbi = UNIONFS_SB(inode->i_sb);
	struct unionfs_rdstate *rd = READ_ONCE(UNIONFS_I(inode)->rd);
	const struct cred *old_cred;
	char name[RD_NAME_MAX];
	struct dentry *d;
	bool ret;

	if (rd && (READ_ONCE(rd->file) || READ_ONCE(rd->pending)))
		return true;
	unionfs_rd_fname(name, inode->i_ino, false);
	old_cred = unionfs_override_creds(inode->i_sb);
	d = lookup_one_len_unlocked(name, sbi->readdir.dentry, strlen(name));
	revert_creds(old_cred);
	if (IS_ERR(d))
		return PTR_ERR(d) != -ENOENT;
	ret = d_really_is_positive(d);
	dput(d);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */
/* ------------------------------------------------------------------ */

/*
 * Check every entry of record block @blk (@end slots in use) at @p once
 * for this view: a damaged entry anywhere in it fails the read.
 */
static int unionfs_rd_check_block(struct unionfs_rdio *io, const u8 *p,
				  u32 blk, u32 end)
{
	bool mapped = io->checked && blk < RD_CHECKED_BLOCKS;
	u32 i = 0;
	int err;

	if (mapped && test_bit(blk, io->checked))
		return 0;
	while (i < end) {
		if (p[i * RD_SLOT] != ODF_RS_HEAD) {
			/*
			 * padding, free (punched) slots; a continuation
			 * slot belongs to the head before it
			 */
			if (p[i * RD_SLOT] > ODF_RS_PAD ||
			    p[i * RD_SLOT] == ODF_RS_CONT)
				return -EUCLEAN;
			i++;
			continue;
		}
		err = unionfs_rd_decode_checked(p + i * RD_SLOT, end - i,
						io->seed, false, &io->ent);
		if (err)
			return err;
		i += io->ent.nslots;
	}
	if (mapped)
		set_bit(blk, io->checked);
	if (io->sbi)
		unionfs_count(io->sbi, UNIONFS_ST_RD_CHECKS);
	return 0;
}

/*
 * Emit the live entries of a checked record block from slot @i on.
 * Returns false when the caller's buffer is full.
 */
static bool unionfs_rd_emit_block(struct unionfs_rdio *io, const u8 *p,
				  u32 blk, u32 i, u32 end,
				  struct dir_context *ctx)
{
	while (i < end) {
		const struct odf_rd_ent *h = (const void *)(p + i * RD_SLOT);
		unsigned int n = h->re_nslots, len = h->re_name_len, k, off;
		const char *name = h->re_name;

		if (h->re_kind != ODF_RS_HEAD) {
			i++;
			continue;
		}
		if (!(h->re_flags & ODF_RE_TOMBSTONE)) {
			if (n > 1) {
				/* a long name: put its pieces together */
				memcpy(io->ent.name, h->re_name, ODF_RD_HEAD_NAME);
				for (k = 1, off = ODF_RD_HEAD_NAME; k < n;
				     k++, off += ODF_RD_CONT_NAME)
					memcpy(io->ent.name + off,
					       p + (i + k) * RD_SLOT + 1,
					       min_t(unsigned int, len - off,
						     ODF_RD_CONT_NAME));
				name = io->ent.name;
			}
			ctx->pos = ODF_RD_OFF_FIRST + blk * RD_SPB + i;
			if (!dir_emit(ctx, name, len, le64_to_cpu(h->re_ino),
				      h->re_dtype))
				return false;
		}
		i += n;
		ctx->pos = ODF_RD_OFF_FIRST + blk * RD_SPB + i;
	}
	return true;
}

/*
 * Record block @index of the state, referenced.  A listing reads the
 * blocks in order, and read_mapping_page() reads one block per I/O:
 * before a block that is not in the page cache, ask for it and the
 * blocks after it that the listing will read (@left; the readahead
 * window caps the request), as a read(2) of the file would, so that a
 * state listed cold after a mount costs a few I/Os, not one per 64
 * names.  A cached block costs one page cache lookup, as before.
 */
static struct page *unionfs_rd_block(struct unionfs_rdio *io, pgoff_t index,
				     unsigned long left)
{
	struct address_space *mapping = io->f->f_mapping;
	struct page *page = find_get_page(mapping, index);

	if (page && PageUptodate(page))
		return page;
	if (page)
		put_page(page);	/* being read: read_mapping_page() waits */
	else	/* f_ra is shared by the streams of the state: racy, harmless */
		page_cache_sync_readahead(mapping, &io->f->f_ra, io->f, index,
					  left);
	return read_mapping_page(mapping, index, NULL);
}

/*
 * List from ctx->pos on.  Record blocks are read in place in the page
 * cache; each is checked whole the first time this view reads it
 * (io->checked) and listed without checking again after that: a view
 * lives only as long as the state file does not change (rd->seq).
 */
static int unionfs_rd_emit(struct unionfs_rdio *io, struct dir_context *ctx)
{
	u32 slot = ctx->pos - ODF_RD_OFF_FIRST;
	u32 nblk = DIV_ROUND_UP(io->next, RD_SPB);
	bool more = true;
	int err = 0;

	BUILD_BUG_ON(RD_BLK != PAGE_SIZE);
	while (more && slot < io->next) {
		u32 blk = slot / RD_SPB, i = slot % RD_SPB;
		u32 end = min_t(u32, RD_SPB, io->next - blk * RD_SPB);
		struct page *page;
		const u8 *p;

		if (io->mem) {
			/* Built by this union in memory: nothing to check. */
			more = unionfs_rd_emit_block(io, io->mem->blk[blk], blk,
						     i, end, ctx);
			slot = (blk + 1) * RD_SPB;
			continue;
		}
		page = unionfs_rd_block(io, (io->rec_pos >> PAGE_SHIFT) + blk,
					nblk - blk);
		if (IS_ERR(page))
			return PTR_ERR(page);
		p = kmap_local_page(page);
		err = unionfs_rd_check_block(io, p, blk, end);
		if (!err)
			more = unionfs_rd_emit_block(io, p, blk, i, end, ctx);
		kunmap_local(p);
		put_page(page);
		if (err)
			return err;
		slot = (blk + 1) * RD_SPB;
	}
	/* The end: where SEEK_END points (never backwards from past it). */
	if (more && ctx->pos < ODF_RD_OFF_FIRST + io->next)
		ctx->pos = ODF_RD_OFF_FIRST + io->next;
	return 0;
}

/* Delete a state found damaged while reading; the next read rebuilds it. */
static void unionfs_rd_discard(struct unionfs_rdstate *rd, struct dentry *dentry)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	char name[RD_NAME_MAX];
	int idx;

	down_write(&rd->sem);
	unionfs_rd_detach(rd);
	WRITE_ONCE(rd->seq, rd->seq + 1);
	unionfs_rd_damaged(dentry, "is damaged");
	unionfs_rd_fname(name, d_inode(dentry)->i_ino, false);
	if (unionfs_odf_write_begin(sbi, &idx)) {
		unionfs_rd_unlink(sbi, name);
		unionfs_odf_write_end(sbi, idx);
	}
	up_write(&rd->sem);
}

/* A directory stream's view of the state (unionfs_rd_iterate()). */
void unionfs_rd_stream_free(struct unionfs_rdio *io)
{
	if (!io)
		return;
	if (io->f)
		fput(io->f);
	unionfs_rdio_free(io);
}

/*
 * A stream listing a state from memory goes on in its file once it is
 * written (the same entries at the same offsets: rd->seq did not move),
 * so that an open stream holds no more than page cache.
 */
static void unionfs_rd_unmem(struct unionfs_rdio *io, struct dentry *dentry)
{
	struct unionfs_rdstate *rd = READ_ONCE(UNIONFS_I(d_inode(dentry))->rd);

	if (!io->mem || !rd || READ_ONCE(rd->pending) ||
	    !down_read_trylock(&rd->sem))
		return;
	if (!rd->pending && rd->file && rd->file_mem == io->mem->id &&
	    io->seq == rd->seq) {
		io->f = get_file(rd->file);
		/* Its record blocks are what the build made: no check. */
		if (io->checked)
			bitmap_fill(io->checked,
				    min_t(u32, RD_CHECKED_BLOCKS,
					  DIV_ROUND_UP(io->next, RD_SPB)));
		unionfs_rdmem_put(io->mem);
		io->mem = NULL;
	}
	up_read(&rd->sem);
}

/*
 * Is the view @io a stream kept still that of the state as it is?  The
 * state's number moves at every change of its file, the branch
 * generation at every branch change.
 */
static bool unionfs_rd_kept_good(struct unionfs_rdio *io, struct dentry *dentry)
{
	struct unionfs_rdstate *rd = READ_ONCE(UNIONFS_I(d_inode(dentry))->rd);

	return io && rd && io->seq == READ_ONCE(rd->seq) &&
	       io->br_gen == READ_ONCE(UNIONFS_SB(dentry->d_sb)->br_gen);
}

/*
 * List @file's directory from its state.  A stream keeps its view of the
 * state in *@keep between reads: a read that does not start the listing
 * over (offset 0, rewinddir) uses it as long as the state did not change
 * through the union and the branch set is the same, without checking the
 * stamps again; so a change made directly in a branch shows from the next
 * rewind or open on, as readdir(3) allows.  Seeks within an open stream
 * then cost a block read, or none.
 */
int unionfs_rd_iterate(struct file *file, struct dir_context *ctx,
		       struct unionfs_rdio **keep)
{
	struct dentry *dentry = file->f_path.dentry;
	struct unionfs_sb_info *sbi = UNIONFS_SB(dentry->d_sb);
	bool rewind = ctx->pos == ODF_RD_OFF_DOT;
	struct unionfs_rdstate *rd;
	const struct cred *old_cred;
	struct unionfs_rdio *io;
	int err, tries = 0;

	if (!unionfs_emit_dots(file, ctx))
		return 0;
	if (ctx->pos > ODF_RD_OFF_MAX)
		return 0;
	old_cred = unionfs_override_creds(dentry->d_sb);
	if (!rewind && unionfs_rd_kept_good(*keep, dentry)) {
		unionfs_rd_unmem(*keep, dentry);
		err = unionfs_rd_emit(*keep, ctx);
		if (err != -EUCLEAN) {
			revert_creds(old_cred);
			return err;
		}
	}
	unionfs_rd_stream_free(*keep);
	*keep = NULL;
	do {
		unsigned int br_gen = READ_ONCE(sbi->br_gen);

		err = unionfs_rd_ready(dentry, &rd, &io);
		if (err)
			break;
		/*
		 * Entries are copied to the caller (which may fault) without
		 * the state's lock: the blocks of this file change in place
		 * only through namespace changes, which the directory's
		 * i_rwsem (held shared by our caller) keeps out; a reconcile
		 * writes another file.
		 */
		if (io->f)
			get_file(io->f);
		io->seq = rd->seq;
		io->br_gen = br_gen;
		up_read(&rd->sem);
		err = unionfs_rd_emit(io, ctx);
		if (!err) {
			/* What emit does not need goes now. */
			kfree(io->h);
			kfree(io->ibuf);
			kfree(io->rbuf);	/* emit reads in place */
			io->h = NULL;
			io->ibuf = NULL;
			io->rbuf = NULL;
			*keep = io;
			break;
		}
		unionfs_rd_stream_free(io);
		if (err == -EUCLEAN)
			unionfs_rd_discard(rd, dentry);
	} while (err == -EUCLEAN && ++tries < 2);
	revert_creds(old_cred);
	return err == -EUCLEAN ? -EIO : err;
}

/*
 * The live names of @dentry's state at offsets below @pos, read as the
 * state is (stale or not), for a listing that goes on from memory
 * (readdir.c).  -ENOENT when there is no state to read.
 */
int unionfs_rd_names_before(struct dentry *dentry, loff_t pos,
			    int (*fn)(void *arg, const char *name, int len),
			    void *arg)
{
	struct unionfs_rdstate *rd = unionfs_rd_get(d_inode(dentry));
	const struct cred *old_cred;
	struct unionfs_rdio *io;
	u32 slot = 0, limit;
	int err;

	if (!rd)
		return -ENOMEM;
	io = unionfs_rdio_alloc(NULL);
	if (!io)
		return -ENOMEM;
	old_cred = unionfs_override_creds(dentry->d_sb);
	down_read(&rd->sem);
	err = -ENOENT;
	if (rd->pending) {
		unionfs_rd_view_pending(io, rd->pending);
	} else {
		if (!rd->file)
			goto out;
		io->f = rd->file;
		err = unionfs_rd_load(io, d_inode(dentry)->i_ino);
		if (err)
			goto out;
	}
	err = 0;
	limit = min_t(loff_t, max_t(loff_t, pos - ODF_RD_OFF_FIRST, 0),
		      io->next);
	while (!err && slot < limit) {
		u32 blk = slot / RD_SPB, i = slot % RD_SPB;
		u32 end = min_t(u32, RD_SPB, limit - blk * RD_SPB);

		if (io->mem)
			memcpy(io->rbuf, io->mem->blk[blk], RD_BLK);
		else
			err = unionfs_odf_read(io->f, io->rbuf, RD_BLK,
					       io->rec_pos + (loff_t)blk * RD_BLK);
		while (!err && i < end) {
			u8 *p = io->rbuf + i * RD_SLOT;

			if (p[0] != ODF_RS_HEAD) {
				i++;
				continue;
			}
			/* An entry may run on past @limit: decode it whole. */
			err = unionfs_rd_decode(p, RD_SPB - i, io->seed,
						&io->ent);
			if (!err && io->ent.live)
				err = fn(arg, io->ent.name, io->ent.len);
			i += io->ent.nslots;
		}
		slot = (blk + 1) * RD_SPB;
	}
out:
	up_read(&rd->sem);
	revert_creds(old_cred);
	unionfs_rdio_free(io);
	return err;
}

/* SEEK_END: the offset after the last entry. */
loff_t unionfs_rd_end_offset(struct file *file)
{
	struct dentry *dentry = file->f_path.dentry;
	struct inode *inode = d_inode(dentry);
	struct unionfs_rdstate *rd;
	const struct cred *old_cred;
	struct unionfs_rdio *io;
	loff_t ret;
	int err;

	inode_lock_shared(inode);
	old_cred = unionfs_override_creds(dentry->d_sb);
	err = unionfs_rd_ready(dentry, &rd, &io);
	revert_creds(old_cred);
	if (!err) {
		ret = ODF_RD_OFF_FIRST + io->next;
		up_read(&rd->sem);
		unionfs_rdio_free(io);
	} else {
		ret = err;
	}
	inode_unlock_shared(inode);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Changes through the union                                            */
/* ------------------------------------------------------------------ */

/*
 * Before a change of @dir's entries (or of its branch directories)
 * through the union: is there a fresh state to keep fresh?  The state's
 * lock is held until unionfs_rd_end(); @subclass orders two of them
 * (rename: the ancestor, or the old directory, first).
 */
void unionfs_rd_begin(struct unionfs_rd_txn *t, struct dentry *dir,
		      int subclass)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dir->d_sb);
	struct inode *inode = d_inode(dir);
	struct unionfs_rdstate *rd;
	const struct cred *old_cred;

	memset(t, 0, sizeof(*t));
	if (!unionfs_odf_rw(sbi) || !inode || !unionfs_dir_has_lower(dir))
		return;
	rd = unionfs_rd_get(inode);
	if (!rd)
		return;
	down_write_nested(&rd->sem, subclass);
	t->rd = rd;
	t->dir = dir;
	/* One built in memory is written first, then kept fresh. */
	unionfs_rd_settle(rd);
	/* No state: the next listing builds one; nothing to update. */
	if (unionfs_rd_known_absent(rd, sbi)) {
		t->stale = true;
		return;
	}
	old_cred = unionfs_override_creds(dir->d_sb);
	t->io = unionfs_rdio_alloc(NULL);
	if (!t->io || unionfs_rd_attach(rd, inode)) {
		t->stale = true;
	} else {
		t->io->f = rd->file;
		t->stale = unionfs_rd_load(t->io, inode->i_ino) ||
			   unionfs_rd_check(rd, t->io, dir) <= 0;
	}
	revert_creds(old_cred);
}

/* @name now shows @inode (created, linked, renamed to, renamed over). */
void unionfs_rd_add(struct unionfs_rd_txn *t, const struct qstr *name,
		    struct inode *inode)
{
	const struct cred *old_cred;
	int err;

	if (!t->rd || t->stale)
		return;
	old_cred = unionfs_override_creds(t->dir->d_sb);
	err = unionfs_rd_put(t->io, name->name, name->len, inode->i_ino,
			     S_DT(inode->i_mode),
			     UNIONFS_SB(t->dir->d_sb)->branches[0].id);
	revert_creds(old_cred);
	if (err)
		t->stale = true;	/* left stale: reconciled when read */
}

/* @name is gone. */
void unionfs_rd_del(struct unionfs_rd_txn *t, const struct qstr *name)
{
	const struct cred *old_cred;
	int err;

	if (!t->rd || t->stale)
		return;
	old_cred = unionfs_override_creds(t->dir->d_sb);
	err = unionfs_rd_tomb(t->io, name->name, name->len);
	revert_creds(old_cred);
	if (err)
		t->stale = true;
}

/*
 * After the change: restamp a state that was fresh, and let go of it.
 * After a failed change (@err) the old stamps stay: if the branches did
 * change, the next read reconciles.
 */
void unionfs_rd_end(struct unionfs_rd_txn *t, int err)
{
	const struct cred *old_cred;

	if (!t->rd)
		return;
	if (!t->stale && !err) {
		old_cred = unionfs_override_creds(t->dir->d_sb);
		/* On failure the old stamps stay: reconciled when read. */
		if (unionfs_rd_write_header(t->io, t->dir))
			pr_warn_ratelimited("ODF '%s': cannot update the readdir state of '%pd'\n",
					    UNIONFS_SB(t->dir->d_sb)->odf_name,
					    t->dir);
		revert_creds(old_cred);
	}
	unionfs_rdio_free(t->io);
	WRITE_ONCE(t->rd->seq, t->rd->seq + 1);
	up_write(&t->rd->sem);
	t->rd = NULL;
}

/* @dir was removed: its state goes too. */
void unionfs_rd_drop(struct dentry *dir)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(dir->d_sb);
	struct inode *inode = d_inode(dir);
	struct unionfs_rdstate *rd = READ_ONCE(UNIONFS_I(inode)->rd);
	const struct cred *old_cred;
	char name[RD_NAME_MAX];

	if (!unionfs_odf_rw(sbi))
		return;
	if (rd) {
		down_write(&rd->sem);
		/* One waiting in memory is not written, or goes below. */
		if (rd->pending) {
			mutex_lock(&rd->pending->lock);
			rd->pending->dropped = true;
			mutex_unlock(&rd->pending->lock);
			unionfs_rd_pend_put(rd->pending);
			rd->pending = NULL;
		}
		unionfs_rd_detach(rd);
		WRITE_ONCE(rd->seq, rd->seq + 1);
	}
	unionfs_rd_fname(name, inode->i_ino, false);
	old_cred = unionfs_override_creds(dir->d_sb);
	if (unionfs_rd_unlink(sbi, name))
		pr_warn_ratelimited("ODF '%s': cannot delete the readdir state of '%pd'\n",
				    sbi->odf_name, dir);
	revert_creds(old_cred);
	if (rd)
		up_write(&rd->sem);
}

/* ------------------------------------------------------------------ */
/* After del=: states of lower-only directories follow their number    */
/* ------------------------------------------------------------------ */

struct unionfs_rd_names {
	struct dir_context ctx;
	u64 *ino;
	unsigned int n, cap;
	int err;
};

static bool unionfs_rd_names_actor(struct dir_context *ctx, const char *name,
				   int len, loff_t off, u64 ino,
				   unsigned int type)
{
	struct unionfs_rd_names *rn = container_of(ctx, struct unionfs_rd_names,
						   ctx);
	char buf[ODF_RD_NAME_LEN + 1];
	u64 v;

	if (len != ODF_RD_NAME_LEN)
		return true;	/* ".", "..", "<ino>.new" */
	memcpy(buf, name, len);
	buf[len] = 0;
	if (kstrtou64(buf, 16, &v))
		return true;
	if (rn->n == rn->cap) {
		unsigned int cap = rn->cap ? 2 * rn->cap : 256;
		u64 *p = kvmalloc_array(cap, sizeof(u64), GFP_KERNEL);

		if (!p) {
			rn->err = -ENOMEM;
			return false;
		}
		if (rn->n)
			memcpy(p, rn->ino, rn->n * sizeof(u64));
		kvfree(rn->ino);
		rn->ino = p;
		rn->cap = cap;
	}
	rn->ino[rn->n++] = v;
	return true;
}

/* The slot of the branch with id @id in the union, or -1. */
static int unionfs_rd_slot_of(struct unionfs_sb_info *sbi, u16 id)
{
	unsigned int i;

	for (i = 0; i < sbi->nbranches; i++)
		if (sbi->branches[i].id == id)
			return i;
	return -1;
}

/*
 * The number the directory of state @h has after branches left, or 0 if
 * the state stays where it is: only a lower-only directory (no stamp of
 * the upper branch) that was numbered after its part on a branch now
 * gone (its oldest stamp) moves, to the number of its oldest part left
 * (namei.c, unionfs_dir_number_part()).
 */
static u64 unionfs_rd_new_number(struct super_block *sb,
				 struct odf_rd_header *h, u64 ino)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct odf_rd_stamp *st = unionfs_rd_stamps(h);
	unsigned int i, ns = le16_to_cpu(h->rh_nstamps);
	int old = -1, now = -1, slot;
	u64 uino;

	for (i = 0; i < ns; i++) {
		u16 id = le16_to_cpu(st[i].st_branch);

		if (!id)
			continue;	/* the namespace stamp */
		slot = unionfs_rd_slot_of(sbi, id);
		if (slot < 0 || (sbi->has_upper && slot == 0))
			return 0;	/* unknown, or an upper part */
		if (old < 0 || id < le16_to_cpu(st[old].st_branch))
			old = i;
		if (!sbi->branches[slot].gone &&
		    (now < 0 || id < le16_to_cpu(st[now].st_branch)))
			now = i;
	}
	if (old < 0 || now < 0 || old == now)
		return 0;
	/* Its number as a deterministic one (a big one is not looked up). */
	uino = le64_to_cpu(st[old].st_dir_ino);
	if (uino > ODF_UINO_LOW_MASK ||
	    ((u64)le16_to_cpu(st[old].st_branch) << ODF_UINO_SHIFT | uino) !=
	    ino)
		return 0;
	slot = unionfs_rd_slot_of(sbi, le16_to_cpu(st[now].st_branch));
	if (unionfs_uino_det(sb, slot, le64_to_cpu(st[now].st_dir_ino),
			     &uino))
		return 0;
	return uino;
}

static int unionfs_rd_ino_test(struct inode *inode, void *data)
{
	return inode->i_ino == *(u64 *)data;
}

/*
 * Move state @ino to the number its directory has now, if it changed.
 * Not while an inode of the old number is in use (a working directory,
 * an open stream: the branch change did not drop it): it may be
 * writing the state meanwhile; that directory's next listing then
 * rebuilds its state.
 */
static void unionfs_rd_rekey_one(struct super_block *sb, u64 ino)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	char name[RD_NAME_MAX], to[RD_NAME_MAX];
	struct unionfs_rdio *io;
	struct inode *busy;
	struct file *f;
	u64 nino;
	int err;

	busy = ilookup5_nowait(sb, ino, unionfs_rd_ino_test, &ino);
	if (busy) {
		iput(busy);
		return;
	}
	f = unionfs_rd_open_file(sbi, ino);
	if (IS_ERR(f))
		return;
	io = unionfs_rdio_alloc(f);
	if (!io || unionfs_rd_load(io, ino))
		goto out;
	nino = unionfs_rd_new_number(sb, io->h, ino);
	if (!nino || nino == ino)
		goto out;
	unionfs_rd_fname(name, ino, false);
	unionfs_rd_fname(to, nino, false);
	/*
	 * The header names the new number on disk before the file does
	 * (a crash between: a state for another directory under the old
	 * name, which nothing reads and odfck drops).  A state of the new
	 * number (a listing since the change built it) is not replaced.
	 */
	io->h->rh_dir_ino = cpu_to_le64(nino);
	unionfs_rd_csum_header(io->h);
	err = unionfs_odf_write(f, io->h, RD_BLK, 0);
	if (!err)
		err = vfs_fsync(f, 1);
	if (!err)
		err = unionfs_do_rename_name(&sbi->readdir, name, to,
					     RENAME_NOREPLACE);
	if (err) {
		io->h->rh_dir_ino = cpu_to_le64(ino);
		unionfs_rd_csum_header(io->h);
		unionfs_odf_write(f, io->h, RD_BLK, 0);
		if (err != -EEXIST)
			pr_warn_ratelimited("readdir state %s: not moved to %s after del= (error %d): its listing gets new offsets\n",
					    name, to, err);
		goto out;
	}
	/* A directory that found no state for its new number looks again. */
	atomic64_inc(&sbi->rd_installs);
out:
	unionfs_rdio_free(io);
	fput(f);
}

/*
 * After a remount removed branches (remount.c): a lower-only directory
 * numbered after its part on a removed branch has the number of its next
 * part now, and its state moves there, so the offsets of the names that
 * stay hold (spec 3.5).  Best effort, after the new branch set is
 * durable: a state not moved is rebuilt at the next listing (new
 * offsets), as a crash before the move leaves it.
 */
void unionfs_rd_rekey(struct super_block *sb)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct unionfs_rd_names rn = { .ctx.actor = unionfs_rd_names_actor };
	struct file *dir;
	unsigned int i;
	int err;

	dir = dentry_open(&sbi->readdir, O_RDONLY | O_DIRECTORY,
			  current_cred());
	if (IS_ERR(dir))
		return;
	err = iterate_dir(dir, &rn.ctx);
	fput(dir);
	if (!err)
		err = rn.err;
	if (err)
		pr_warn("readdir states not moved after del= (error %d): listings of lower-only directories numbered after a removed branch get new offsets\n",
			err);
	for (i = 0; !err && i < rn.n; i++) {
		int slot = unionfs_rd_slot_of(sbi, rn.ino[i] >> ODF_UINO_SHIFT);

		/* Only a number made of a removed branch's part can move. */
		if (slot > 0 && sbi->branches[slot].gone)
			unionfs_rd_rekey_one(sb, rn.ino[i]);
		cond_resched();
	}
	kvfree(rn.ino);
}

