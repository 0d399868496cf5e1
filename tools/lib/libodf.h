/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libodf.h - userland access to ODF volumes through libext2fs.
 *
 * Two layers:
 *  - codec functions (odf_*_verify, odf_*_csum_set, odf_map_scan,
 *    odf_rd_check, odf_node_decode) work on byte buffers only; they are
 *    what odfck trusts and what the fuzz target exercises;
 *  - volume functions open the ext4 filesystem with libext2fs and read
 *    or write the files of the layout in docs/odf-format.md.
 *
 * Errors from libext2fs are errcode_t (print them with com_err); codec
 * results are enum odf_bad.
 */
#ifndef _LIBODF_H
#define _LIBODF_H

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>
#include <odf/odf_format.h>

/* ---- why a structure was rejected ---------------------------------- */
enum odf_bad {
	ODF_GOOD = 0,
	ODF_BAD_MAGIC,
	ODF_BAD_CSUM,
	ODF_BAD_VERSION,
	ODF_BAD_SIZE,
	ODF_BAD_FIELD,
	ODF_BAD_FEATURE,
	ODF_BAD_TYPE,		/* node record: WHITEOUT or unknown type bits */
	ODF_BAD_REDIRECT,	/* node record: a malformed redirect entry */
	ODF_BAD_NAME,		/* intent: a name or hint breaks section 5/8 */
};
const char *odf_bad_str(int bad);

__u32 odf_crc32c(const void *p, size_t n);

/* ---- union inode numbers -------------------------------------------- */
/* Returns 0 when (branch, ino) has no deterministic number. */
__u64 odf_uino_det(unsigned branch, __u64 lower_ino);
int odf_uino_is_alloc(__u64 uino);
unsigned odf_uino_branch(__u64 uino);

/* ---- superblock and branch table ------------------------------------ */
void odf_sb_init(struct odf_super *sb, const __u8 uuid[16], const char *label,
		 __u64 now);
void odf_sb_csum_set(struct odf_super *sb);
int odf_sb_verify(const struct odf_super *sb);	/* magic, crc, geometry */
/* the same for a given s_version (odfck --convert reads format 1) */
int odf_sb_verify_version(const struct odf_super *sb, unsigned version);
void odf_branch_csum_set(struct odf_branch *b);
int odf_branch_verify(const struct odf_branch *b); /* unused slot: GOOD */
int odf_branch_unused(const struct odf_branch *b);

/* ---- inode maps ----------------------------------------------------- */
__u32 odf_map_hash(__u32 seed, unsigned branch, __u64 ino);
/* seed of a new map: derived from the volume UUID, so two volumes made
 * with the same UUID have the same layout (reproducible tests) */
__u32 odf_map_default_seed(const struct odf_super *sb, int kind);
void odf_map_hdr_init(struct odf_map_header *h, int kind, __u32 nbuckets,
		      __u32 seed);
void odf_map_hdr_csum_set(struct odf_map_header *h);
int odf_map_hdr_verify(const struct odf_map_header *h, int kind);
void odf_map_rec_csum_set(struct odf_map_rec *r);
int odf_map_rec_verify(const struct odf_map_rec *r, int kind);

/*
 * Walk a whole map file image.  The header is decoded into *hdr and its
 * verdict stored in *hdr_bad; records are visited bucket by bucket
 * (when the header is bad, the bucket count is derived from the size).
 * cb gets every non-empty slot with its own verdict.  Returns the
 * number of buckets walked.
 */
typedef void (*odf_map_scan_fn)(void *priv, __u32 bucket, unsigned slot,
				const struct odf_map_rec *r, int bad);
__u32 odf_map_scan(const void *buf, size_t len, int kind,
		   struct odf_map_header *hdr, int *hdr_bad,
		   odf_map_scan_fn cb, void *priv);

/* ---- namespace nodes (format 2, section 5) --------------------------- */
#define ODF_NODE_BUF_MAX	ODF_NODE_MAX
/* r_len: one entry filling a whole record */
#define ODF_REDIRECT_PATH_MAX	(ODF_NODE_MAX - sizeof(struct odf_node) - \
				 sizeof(struct odf_redirect))
/* the most entries a record of ODF_NODE_MAX bytes can hold */
#define ODF_NODE_MAX_REDIRECTS	((ODF_NODE_MAX - sizeof(struct odf_node)) / 8)

struct odf_redir_ent {
	unsigned	branch;
	size_t		len;
	const char	*path;	/* not NUL-terminated */
};

struct odf_node_info {
	unsigned	type;
	unsigned	nredirect;
	__u64		time;
	__u64		uino;
	__u64		owner_ino;
	__u32		owner_gen;
};

/*
 * Encode a record into buf (ODF_NODE_BUF_MAX bytes).  Returns its size,
 * or 0 when the entries do not fit ODF_NODE_MAX or are malformed.
 */
size_t odf_node_encode(void *buf, const struct odf_node_info *ni,
		       const struct odf_redir_ent *ents);
/*
 * Decode and verify a record.  ni is filled as soon as the checksum and
 * version are good, so a caller can repair a record whose type bits
 * (ODF_BAD_TYPE) or entries (ODF_BAD_REDIRECT) are wrong.  ents (may be
 * NULL) receives up to max entries pointing into buf.
 */
int odf_node_decode(const void *buf, size_t len, struct odf_node_info *ni,
		    struct odf_redir_ent *ents, unsigned max);

/* format 1's record (struct odf_node_v1): for odfck --convert, odfedit */
size_t odf_node_v1_encode(void *buf, unsigned type, __u64 time,
			  const char *redirect, size_t redirect_len);
int odf_node_v1_decode(const void *buf, size_t len, unsigned *type,
		       const char **redirect, size_t *redirect_len);
#define ODF_NODE_V1_BUF_MAX (sizeof(struct odf_node_v1) + ODF_REDIRECT_MAX)

/* ---- intents (format 2, section 8) ------------------------------------ */
#define ODF_INTENT_NAME_MAX	255
#define ODF_INTENT_BUF_MAX (sizeof(struct odf_intent) + \
			    2 * ODF_INTENT_NAME_MAX + 2 * ODF_INTENT_HINT_MAX)

struct odf_intent_info {
	unsigned	op;
	__u64		seq;
	__u64		time;
	__u64		ino;		/* upper object renamed, non-zero */
	__u32		gen;
	__u64		src_dir, dst_dir;	/* parents' union inodes */
	const char	*src, *dst;		/* names */
	const char	*src_hint, *dst_hint;	/* parents' upper paths */
	size_t		src_len, dst_len, src_hint_len, dst_hint_len;
};

/* 0 when a length is out of range (nothing written) */
size_t odf_intent_encode(void *buf, const struct odf_intent_info *in);
/* strings point into buf */
int odf_intent_decode(const void *buf, size_t len,
		      struct odf_intent_info *out);

/* format 1's intent: union paths of source and destination */
#define ODF_INTENT_V1_PATH_MAX	4096
#define ODF_INTENT_V1_BUF_MAX	(48 + 2 * ODF_INTENT_V1_PATH_MAX)
size_t odf_intent_v1_encode(void *buf, __u64 seq, __u64 time, __u64 ino,
			    __u32 gen, const char *src, const char *dst);
int odf_intent_v1_decode(const void *buf, size_t len, __u64 *seq,
			 __u64 *ino, __u32 *gen, const char **src,
			 size_t *slen, const char **dst, size_t *dlen);

/* is p (len bytes) an absolute path: "/a/b", no empty, "." or ".."
 * component, no NUL, no trailing "/"; root_ok accepts "/" itself */
int odf_path_valid(const char *p, size_t len, int root_ok);
/* a name in a directory: 1..255 bytes, no "/" or NUL, not "." or ".." */
int odf_name_valid(const char *p, size_t len);

/* ---- readdir state -------------------------------------------------- */
__u32 odf_rd_hash(__u32 seed, const char *name, size_t len);
unsigned odf_rd_nslots(size_t name_len);

struct odf_rd_entry {
	__u32	ordinal;
	__u8	flags;		/* ODF_RE_TOMBSTONE */
	__u8	dtype;
	__u16	branch;
	__u64	ino;
	__u8	name_len;
	char	name[256];
};

struct odf_rd_info {
	__u64	dir_ino;
	__u32	next_slot;
	__u32	live;
	__u32	tombstones;
	__u32	nstamps;
	char	why[160];	/* first problem found, if any */
};

/*
 * Check a whole readdir state file image.  Returns ODF_GOOD or the class
 * of the first problem, described in info->why.  cb (may be NULL) gets
 * each entry of a good file in ordinal order.
 */
typedef void (*odf_rd_entry_fn)(void *priv, const struct odf_rd_entry *e);
int odf_rd_check(const void *buf, size_t len, struct odf_rd_info *info,
		 odf_rd_entry_fn cb, void *priv);

/* ---- a mounted-less ODF volume -------------------------------------- */
#define ODF_OPEN_RW	0x1

struct odf_vol {
	ext2_filsys	fs;
	int		rw;
	ext2_ino_t	ino_super, ino_ns, ino_imap, ino_fwd, ino_rev;
	ext2_ino_t	ino_readdir, ino_reclaim;
};

errcode_t odf_vol_open(const char *dev, int flags, struct odf_vol **ret);
errcode_t odf_vol_wrap(ext2_filsys fs, int rw, struct odf_vol **ret);
errcode_t odf_vol_close(struct odf_vol *v);	/* flushes when rw */
errcode_t odf_vol_find_layout(struct odf_vol *v); /* 0 inos for missing */

/* plain files and directories of the ext4 layer */
errcode_t odf_file_create(ext2_filsys fs, ext2_ino_t dir, const char *name,
			  ext2_ino_t *ret);
errcode_t odf_file_pread(ext2_filsys fs, ext2_ino_t ino, __u64 off,
			 void *buf, size_t len);
errcode_t odf_file_pwrite(ext2_filsys fs, ext2_ino_t ino, __u64 off,
			  const void *buf, size_t len);
errcode_t odf_file_size(ext2_filsys fs, ext2_ino_t ino, __u64 *size);
errcode_t odf_file_truncate(ext2_filsys fs, ext2_ino_t ino, __u64 size);
errcode_t odf_file_read_all(ext2_filsys fs, ext2_ino_t ino, __u64 max,
			    void **buf, size_t *len);
errcode_t odf_mkdir(ext2_filsys fs, ext2_ino_t dir, const char *name,
		    ext2_ino_t *ret);
errcode_t odf_lookup(ext2_filsys fs, ext2_ino_t dir, const char *name,
		     ext2_ino_t *ret);	/* EXT2_ET_FILE_NOT_FOUND if absent */
errcode_t odf_remove(ext2_filsys fs, ext2_ino_t dir, const char *name);
errcode_t odf_rename(ext2_filsys fs, ext2_ino_t sdir, const char *sname,
		     ext2_ino_t ddir, const char *dname);
int odf_is_dir(ext2_filsys fs, ext2_ino_t ino);

struct odf_dirent {
	ext2_ino_t	ino;
	char		name[256];
};
errcode_t odf_list_dir(ext2_filsys fs, ext2_ino_t dir,
		       struct odf_dirent **ents, size_t *n);

/* superblock file */
errcode_t odf_sb_read(struct odf_vol *v, struct odf_super *sb,
		      struct odf_super *backup, struct odf_branch *br);
errcode_t odf_sb_write(struct odf_vol *v, const struct odf_super *sb,
		       int backup_too);
errcode_t odf_branch_write(struct odf_vol *v, unsigned slot,
			   const struct odf_branch *b);
/* add a branch: assigns the next id, returns slot and id */
errcode_t odf_branch_add(struct odf_vol *v, struct odf_super *sb,
			 struct odf_branch *tmpl, unsigned *slot_out);

/* inode maps */
struct odf_map {
	struct odf_vol		*v;
	int			kind;
	ext2_ino_t		ino;
	struct odf_map_header	hdr;
};
errcode_t odf_map_create(struct odf_vol *v, int kind, __u32 nbuckets,
			 __u32 seed, const struct odf_map_rec *recs, size_t n);
errcode_t odf_map_open(struct odf_vol *v, int kind, struct odf_map *m);
errcode_t odf_map_lookup(struct odf_map *m, unsigned branch, __u64 ino,
			 struct odf_map_rec *out, int *found);
errcode_t odf_map_insert(struct odf_map *m, const struct odf_map_rec *r);
errcode_t odf_map_delete(struct odf_map *m, unsigned branch, __u64 ino,
			 int *found);
void odf_map_rec_init(struct odf_map_rec *r, int kind, unsigned key_branch,
		      __u64 key_ino, __u64 uino, unsigned tgt_branch,
		      __u64 tgt_ino);

/* namespace (format 2): nodes /ns/<016llx uino>, whiteouts inside */
void odf_ns_node_name(char buf[ODF_NS_NAME_LEN + 1], __u64 uino);
/* 1 when name is 16 lower-case hex digits of a possible union inode */
int odf_ns_parse_name(const char *name, __u64 *uino);
errcode_t odf_ns_node_lookup(struct odf_vol *v, __u64 uino, ext2_ino_t *ret);
/* create the node if absent and (re)write its record */
errcode_t odf_ns_node_make(struct odf_vol *v, __u64 uino, unsigned type,
			   __u64 owner_ino, __u32 owner_gen,
			   const struct odf_redir_ent *ents, unsigned nent,
			   ext2_ino_t *ret);
/* whiteout of name in dir_uino; a missing node is made plain, owner 0 */
errcode_t odf_ns_whiteout(struct odf_vol *v, __u64 dir_uino,
			  const char *name);
errcode_t odf_ns_whiteout_remove(struct odf_vol *v, __u64 dir_uino,
				 const char *name);
/* the node moves to /reclaim (its directory was removed) */
errcode_t odf_ns_node_reclaim(struct odf_vol *v, __u64 uino);
/* same as above, with the /ns directory given (odfck --convert) */
errcode_t odf_ns_node_make_in(struct odf_vol *v, ext2_ino_t ns, __u64 uino,
			      const struct odf_node_info *ni,
			      const struct odf_redir_ent *ents,
			      ext2_ino_t *ret);
/* move any ext4 object to /reclaim/<its inode number> */
errcode_t odf_reclaim_move(struct odf_vol *v, ext2_ino_t dir,
			   const char *name);

/* records: trusted.odf on an ext4 inode */
errcode_t odf_node_get(ext2_filsys fs, ext2_ino_t ino, void *buf,
		       size_t *len, int *present);
errcode_t odf_node_write(ext2_filsys fs, ext2_ino_t ino,
			 const struct odf_node_info *ni,
			 const struct odf_redir_ent *ents);
errcode_t odf_node_put_raw(ext2_filsys fs, ext2_ino_t ino, const void *buf,
			   size_t len);
errcode_t odf_node_clear(ext2_filsys fs, ext2_ino_t ino);
/* number of extended attributes of any name; remove them all */
errcode_t odf_xattr_count(ext2_filsys fs, ext2_ino_t ino, size_t *n);
errcode_t odf_xattr_clear_all(ext2_filsys fs, ext2_ino_t ino);

/* format 1's namespace tree (odfedit v1-*, odfck --convert) */
errcode_t odf_ns_v1_lookup(struct odf_vol *v, const char *path,
			   ext2_ino_t *ret);
errcode_t odf_ns_v1_mkpath(struct odf_vol *v, const char *path,
			   ext2_ino_t *parent, const char **last);
errcode_t odf_ns_v1_whiteout(struct odf_vol *v, const char *path);
errcode_t odf_ns_v1_mark_dir(struct odf_vol *v, const char *path,
			     unsigned type, const char *redirect);

/* readdir state */
void odf_rd_name(char buf[ODF_RD_NAME_LEN + 1], __u64 dir_ino);
errcode_t odf_rd_build(struct odf_vol *v, __u64 dir_ino,
		       const struct odf_rd_stamp *stamps, unsigned nstamps,
		       const struct odf_rd_entry *ents, size_t n);
/* EXT2_ET_FILE_EXISTS if a live entry already has the name */
errcode_t odf_rd_append(struct odf_vol *v, __u64 dir_ino,
			const struct odf_rd_entry *e, __u32 *ordinal);
errcode_t odf_rd_tombstone(struct odf_vol *v, __u64 dir_ino,
			   const char *name, size_t len, int *found);
/* entry at ordinal or the next live one after it; *eod at the end */
errcode_t odf_rd_seek(struct odf_vol *v, __u64 dir_ino, __u32 ordinal,
		      struct odf_rd_entry *out, int *eod);
errcode_t odf_rd_end(struct odf_vol *v, __u64 dir_ino, __u32 *end);

/* intents in /reclaim: written completely under a temporary name, then
 * renamed into place, so a visible intent is always whole.  in->time 0
 * means now. */
errcode_t odf_intent_add(struct odf_vol *v, const struct odf_intent_info *in);
/* an encoded intent (any version) into dir as intent-<016llx seq> */
errcode_t odf_intent_put(struct odf_vol *v, ext2_ino_t dir, __u64 seq,
			 const void *buf, size_t len);
void odf_intent_name(char *buf, size_t n, __u64 seq);
errcode_t odf_intent_done(struct odf_vol *v, __u64 seq);

/* layout */
errcode_t odf_layout_create(struct odf_vol *v, const struct odf_super *sb);
errcode_t odf_random_bytes(void *buf, size_t len);

#endif /* _LIBODF_H */
