/* SPDX-License-Identifier: GPL-2.0 */
/*
 * odf_format.h - ODF on-disk format, version 2.
 *
 * This header mirrors docs/odf-format.md, which is normative.  Every
 * integer is little-endian; every structure has explicit padding and an
 * asserted size; there are no bitfields.  Checksums are CRC32C computed
 * the way ext4 metadata_csum does it: crc32c_le(~0U, bytes) over the
 * structure with its checksum field zeroed, stored without a final
 * inversion (kernel: crc32c(~0, p, n); userland: ext2fs_crc32c_le(~0, p, n)).
 */
#ifndef _ODF_FORMAT_H
#define _ODF_FORMAT_H

#include "odf_types.h"

#define ODF_FORMAT_VERSION	2	/* s_version: the volume's format */
#define ODF_FORMAT_V1		1	/* namespace keyed by union path (odfck --convert) */
#define ODF_MAP_VERSION		1	/* mh_version: unchanged since format 1 */
#define ODF_RD_VERSION		1	/* rh_version: unchanged since format 1 */
#define ODF_NODE_VERSION	2	/* n_version */
#define ODF_INTENT_VERSION	2	/* i_version */
#define ODF_BLOCK_SIZE		4096	/* unit of random access in ODF files */

/* ------------------------------------------------------------------ */
/* Layout of the ODF volume (paths inside the ext4 filesystem)         */
/* ------------------------------------------------------------------ */
#define ODF_PATH_SUPER		"superblock"	/* regular file in / */
#define ODF_PATH_SUPER_NEW	"superblock.new" /* a branch change's (3.5) */
#define ODF_PATH_NS		"ns"		/* directory in / */
#define ODF_PATH_IMAP		"imap"		/* directory in / */
#define ODF_PATH_IMAP_FWD	"forward"	/* regular file in /imap */
#define ODF_PATH_IMAP_REV	"reverse"	/* regular file in /imap */
#define ODF_PATH_READDIR	"readdir"	/* directory in / */
#define ODF_PATH_RECLAIM	"reclaim"	/* directory in / */
#define ODF_TMP_SUFFIX		".new"		/* file being rebuilt */

/* ------------------------------------------------------------------ */
/* Superblock file: header at 0, branch table at 4096, backup header   */
/* at the end.                                                          */
/* ------------------------------------------------------------------ */
#define ODF_SB_MAGIC		0x5346444fU	/* "ODFS" */
#define ODF_SB_HDR_SIZE		1024
#define ODF_BRANCH_OFFSET	4096
#define ODF_BRANCH_SLOTS	64
#define ODF_BRANCH_SIZE		512
#define ODF_SB_BACKUP_OFFSET	(ODF_BRANCH_OFFSET + \
				 ODF_BRANCH_SLOTS * ODF_BRANCH_SIZE)
#define ODF_SB_FILE_SIZE	(ODF_SB_BACKUP_OFFSET + ODF_BLOCK_SIZE)

/* s_state */
#define ODF_STATE_CLEAN		0x0001	/* unmounted cleanly */
#define ODF_STATE_MOUNTED	0x0002	/* in use by the module */
#define ODF_STATE_ERRORS	0x0004	/* module or odfck found errors */
#define ODF_STATE_VALID_MASK	0x0007

/*
 * Feature flags.  Version 1 defines none; the masks below are what this
 * implementation understands.  Unknown compat: ignore and preserve.
 * Unknown ro_compat: mount read-only only; odfck checks with -n only.
 * Unknown incompat: refuse to mount, refuse to check.
 */
#define ODF_FEATURE_COMPAT_SUPP		0x00000000U
#define ODF_FEATURE_RO_COMPAT_SUPP	0x00000000U
#define ODF_FEATURE_INCOMPAT_SUPP	0x00000000U

#define ODF_LABEL_MAX		64
#define ODF_UUID_SIZE		16

struct odf_super {
	__le32	s_magic;		/*   0 ODF_SB_MAGIC */
	__le32	s_crc;			/*   4 CRC32C of the 1024 bytes */
	__le16	s_version;		/*   8 ODF_FORMAT_VERSION */
	__le16	s_state;		/*  10 ODF_STATE_* */
	__le32	s_hdr_size;		/*  12 ODF_SB_HDR_SIZE */
	__le32	s_feature_compat;	/*  16 */
	__le32	s_feature_ro_compat;	/*  20 */
	__le32	s_feature_incompat;	/*  24 */
	__le32	s_mnt_count;		/*  28 mounts since mkodf */
	__u8	s_uuid[ODF_UUID_SIZE];	/*  32 */
	char	s_label[ODF_LABEL_MAX];	/*  48 NUL-padded, NUL-terminated */
	__le64	s_mkfs_time;		/* 112 seconds since the epoch */
	__le64	s_mount_time;		/* 120 last mount */
	__le64	s_write_time;		/* 128 last write of this header */
	__le64	s_check_time;		/* 136 last odfck */
	__le64	s_next_ino;		/* 144 next allocated union ino */
	__le16	s_next_branch_id;	/* 152 never decreases */
	__le16	s_branch_slots;		/* 154 ODF_BRANCH_SLOTS */
	__le32	s_branch_offset;	/* 156 ODF_BRANCH_OFFSET */
	__le32	s_branch_size;		/* 160 ODF_BRANCH_SIZE */
	__le32	s_ino_shift;		/* 164 ODF_UINO_SHIFT */
	__le32	s_error_count;		/* 168 errors recorded by the module */
	__le32	s_pad0;			/* 172 */
	__le64	s_reserved[106];	/* 176 zero */
};

ODF_ASSERT_SIZE(struct odf_super, 1024);

/* Branch table entry (slot).  A slot with b_id == 0 is unused (all zero). */
#define ODF_BRANCH_PRESENT	0x0001	/* part of the union */
#define ODF_BRANCH_REMOVED	0x0002	/* removed; id is never reused */
#define ODF_BRANCH_FLAGS_MASK	0x0003

#define ODF_MODE_RW		1
#define ODF_MODE_RO		2

#define ODF_BRANCH_ID_MAX	0x7fff
#define ODF_FSTYPE_MAX		32
#define ODF_BPATH_MAX		384

struct odf_branch {
	__le16	b_id;			/*   0 1..ODF_BRANCH_ID_MAX, 0 = unused */
	__le16	b_flags;		/*   2 ODF_BRANCH_PRESENT or _REMOVED */
	__le16	b_mode;			/*   4 ODF_MODE_RW / ODF_MODE_RO */
	__le16	b_order;		/*   6 0 = highest priority */
	__le32	b_crc;			/*   8 CRC32C of the 512 bytes */
	__le32	b_fs_magic;		/*  12 statfs f_type of the branch fs */
	__u8	b_fs_uuid[16];		/*  16 sb->s_uuid of the branch fs or 0 */
	__le64	b_root_ino;		/*  32 inode number of the branch root */
	__le32	b_root_gen;		/*  40 i_generation of the branch root */
	__le32	b_pad0;			/*  44 */
	__le64	b_added_time;		/*  48 */
	__le64	b_removed_time;		/*  56 */
	char	b_fstype[ODF_FSTYPE_MAX]; /* 64 e.g. "ext4", NUL-terminated */
	char	b_path[ODF_BPATH_MAX];	/*  96 path given at mount */
	__le64	b_reserved[4];		/* 480 zero */
};

ODF_ASSERT_SIZE(struct odf_branch, ODF_BRANCH_SIZE);

/* ------------------------------------------------------------------ */
/* Union inode numbers                                                  */
/* ------------------------------------------------------------------ */
/*
 * bits 63      : always 0
 * bits 62..48  : branch id (1..0x7fff) for deterministic numbers,
 *                0 for numbers allocated from s_next_ino
 * bits 47..0   : lower inode number (deterministic) or counter
 */
#define ODF_UINO_SHIFT		48
#define ODF_UINO_LOW_MASK	((1ULL << ODF_UINO_SHIFT) - 1)
#define ODF_UINO_ROOT		2ULL	/* the union's root directory */
#define ODF_UINO_ALLOC_FIRST	16ULL	/* first allocated number */
#define ODF_UINO_ALLOC_MAX	ODF_UINO_LOW_MASK

/* ------------------------------------------------------------------ */
/* Inode maps: /imap/forward and /imap/reverse                          */
/* ------------------------------------------------------------------ */
#define ODF_MAP_MAGIC		0x4d46444fU	/* "ODFM" */
#define ODF_MAP_FORWARD		1
#define ODF_MAP_REVERSE		2
#define ODF_MAP_REC_SIZE	256
#define ODF_MAP_RECS_PER_BUCKET	(ODF_BLOCK_SIZE / ODF_MAP_REC_SIZE)
#define ODF_MAP_MIN_BUCKETS	16
#define ODF_MAP_MAX_BUCKETS	(1U << 24)
#define ODF_MAP_LOAD_NUM	3	/* rebuild when used+deleted > 3/4 */
#define ODF_MAP_LOAD_DEN	4

struct odf_map_header {
	__le32	mh_magic;		/*   0 ODF_MAP_MAGIC */
	__le32	mh_crc;			/*   4 CRC32C of these 128 bytes */
	__le16	mh_version;		/*   8 ODF_MAP_VERSION */
	__le16	mh_kind;		/*  10 ODF_MAP_FORWARD / _REVERSE */
	__le32	mh_rec_size;		/*  12 ODF_MAP_REC_SIZE */
	__le32	mh_bucket_size;		/*  16 ODF_BLOCK_SIZE */
	__le32	mh_nbuckets;		/*  20 power of two */
	__le64	mh_nrecords;		/*  24 USED records */
	__le64	mh_ndeleted;		/*  32 DELETED records */
	__le32	mh_hash_seed;		/*  40 seed of the bucket hash */
	__le32	mh_pad0;		/*  44 */
	__le64	mh_reserved[10];	/*  48 zero */
};

ODF_ASSERT_SIZE(struct odf_map_header, 128);

/* mr_state */
#define ODF_MREC_EMPTY		0	/* never used: ends a probe chain */
#define ODF_MREC_USED		1
#define ODF_MREC_DELETED	2	/* tombstone: probe chains go on */

/* mr_kind */
#define ODF_MK_UPPER		1	/* fwd: upper copy -> union ino */
#define ODF_MK_COPIED		2	/* fwd: lower original -> upper copy */
#define ODF_MK_BIGINO		3	/* fwd: lower ino >= 2^48 -> allocated */
#define ODF_MK_REVERSE		4	/* rev: union ino -> backing object */

#define ODF_MREC_HAVE_HANDLE	0x0001	/* mr_handle is valid */
#define ODF_HANDLE_MAX		128	/* MAX_HANDLE_SZ */

struct odf_map_rec {
	__u8	mr_state;		/*   0 ODF_MREC_* */
	__u8	mr_kind;		/*   1 ODF_MK_* */
	__le16	mr_key_branch;		/*   2 0 in the reverse map */
	__le32	mr_crc;			/*   4 CRC32C of the 256 bytes */
	__le64	mr_key_ino;		/*   8 lower ino, or union ino (rev) */
	__le64	mr_union_ino;		/*  16 */
	__le64	mr_tgt_ino;		/*  24 see docs/odf-format.md */
	__le16	mr_tgt_branch;		/*  32 */
	__le16	mr_handle_bytes;	/*  34 0..ODF_HANDLE_MAX */
	__le32	mr_handle_type;		/*  36 exportfs fileid type */
	__le32	mr_tgt_gen;		/*  40 i_generation of the target */
	__le32	mr_flags;		/*  44 ODF_MREC_HAVE_HANDLE */
	__u8	mr_handle[ODF_HANDLE_MAX]; /* 48 */
	__le32	mr_lower_links;		/* 176 UPPER: lower names still shown */
	__le32	mr_pad1;		/* 180 zero */
	__le64	mr_reserved[9];		/* 184 zero */
};

ODF_ASSERT_SIZE(struct odf_map_rec, ODF_MAP_REC_SIZE);

/* ------------------------------------------------------------------ */
/* Namespace: /ns/<016llx union dir ino>/, whiteouts inside; xattr on it */
/* ------------------------------------------------------------------ */
#define ODF_NS_NAME_LEN		16	/* "%016llx", like /readdir */
#define ODF_NODE_XATTR		"trusted.odf"
#define ODF_NODE_MAGIC		0x4e46444fU	/* "ODFN" */
#define ODF_NODE_WHITEOUT	0x0001	/* format 1 only; invalid in a v2 record */
#define ODF_NODE_OPAQUE		0x0002
#define ODF_NODE_REDIRECT	0x0004
#define ODF_NODE_TYPE_MASK	0x0006	/* bits a v2 record may carry */
#define ODF_NODE_MAX		65532	/* a whole record (xattr in an EA inode) */
#define ODF_REDIRECT_MAX	1024	/* format 1: bytes of the redirect path */

/* Value of trusted.odf on /ns/<uino>: header, then n_nredirect entries. */
struct odf_node {
	__le32	n_magic;		/*   0 ODF_NODE_MAGIC */
	__le32	n_crc;			/*   4 CRC32C of the whole record */
	__le16	n_version;		/*   8 ODF_NODE_VERSION */
	__le16	n_type;			/*  10 0, OPAQUE, OPAQUE|REDIRECT */
	__le16	n_nredirect;		/*  12 entries; non-zero iff REDIRECT */
	__le16	n_size;			/*  14 bytes of the record, header incl. */
	__le64	n_time;			/*  16 when the record was written */
	__le64	n_uino;			/*  24 the union directory (= the name) */
	__le64	n_owner_ino;		/*  32 its upper directory; 0 = none */
	__le32	n_owner_gen;		/*  40 that directory's i_generation */
	__le32	n_pad0;			/*  44 zero */
	/* followed by n_nredirect struct odf_redirect entries */
};

ODF_ASSERT_SIZE(struct odf_node, 48);

/*
 * A redirect entry: where the renamed directory's lower part on branch
 * r_branch is, as a path from that branch's root ("/a/b", no NUL), then
 * zero padding to a multiple of 4 bytes.
 */
struct odf_redirect {
	__le16	r_branch;		/*   0 branch id */
	__le16	r_len;			/*   2 bytes of the path */
};

ODF_ASSERT_SIZE(struct odf_redirect, 4);

/* Format 1's record (odfck --convert reads it): header, then the path. */
struct odf_node_v1 {
	__le32	n_magic;		/*   0 ODF_NODE_MAGIC */
	__le32	n_crc;			/*   4 CRC32C of header + redirect */
	__le16	n_version;		/*   8 ODF_FORMAT_V1 */
	__le16	n_type;			/*  10 ODF_NODE_* */
	__le16	n_redirect_len;		/*  12 bytes following the header */
	__le16	n_pad0;			/*  14 */
	__le64	n_time;			/*  16 */
	__le64	n_reserved;		/*  24 zero */
};

ODF_ASSERT_SIZE(struct odf_node_v1, 32);

/* ------------------------------------------------------------------ */
/* Readdir state: /readdir/<016llx union dir ino>                      */
/* ------------------------------------------------------------------ */
#define ODF_RD_MAGIC		0x5246444fU	/* "ODFR" */
#define ODF_RD_MAX_STAMPS	64
#define ODF_RD_COMPLETE		0x0001	/* listing fully merged */
#define ODF_RD_NAME_LEN		16	/* "%016llx" */

#define ODF_RD_SLOT_SIZE	64
#define ODF_RD_SLOTS_PER_BLOCK	(ODF_BLOCK_SIZE / ODF_RD_SLOT_SIZE)
#define ODF_RD_HEAD_NAME	40	/* name bytes in a head slot */
#define ODF_RD_CONT_NAME	63	/* name bytes in a continuation slot */
#define ODF_RD_MAX_NSLOTS	5	/* 40 + 4 * 63 >= 255 */

#define ODF_RD_OFF_DOT		0	/* "." */
#define ODF_RD_OFF_DOTDOT	1	/* ".." */
#define ODF_RD_OFF_FIRST	2	/* ordinal of slot 0 */
#define ODF_RD_OFF_MAX		0x7fffffffU	/* offsets are < 2^31 */

/* slot kinds (byte 0 of every slot) */
#define ODF_RS_FREE		0	/* unused, or hole punched */
#define ODF_RS_HEAD		1
#define ODF_RS_CONT		2
#define ODF_RS_PAD		3	/* end-of-block padding */

#define ODF_RE_TOMBSTONE	0x01

/* index buckets */
#define ODF_RDIX_ENTRIES	511
#define ODF_RDIX_EMPTY		0U
#define ODF_RDIX_DELETED	0xffffffffU

struct odf_rd_stamp {
	__le16	st_branch;		/*  0 branch id, 0 = the ODF ns dir */
	__le16	st_flags;		/*  2 zero */
	__le32	st_pad0;		/*  4 */
	__le64	st_dir_ino;		/*  8 lower directory inode */
	__le64	st_mtime_ns;		/* 16 */
	__le64	st_ctime_ns;		/* 24 */
	__le64	st_version;		/* 32 i_version, 0 if unsupported */
	__le64	st_size;		/* 40 */
};

ODF_ASSERT_SIZE(struct odf_rd_stamp, 48);

struct odf_rd_header {
	__le32	rh_magic;		/*   0 ODF_RD_MAGIC */
	__le32	rh_crc;			/*   4 CRC32C of the whole block 0 */
	__le16	rh_version;		/*   8 ODF_RD_VERSION */
	__le16	rh_nstamps;		/*  10 <= ODF_RD_MAX_STAMPS */
	__le32	rh_flags;		/*  12 ODF_RD_COMPLETE */
	__le64	rh_dir_ino;		/*  16 union ino of the directory */
	__le64	rh_generation;		/*  24 bumped when offsets restart */
	__le32	rh_index_start;		/*  32 block of the first bucket (1) */
	__le32	rh_index_buckets;	/*  36 power of two */
	__le32	rh_rec_start;		/*  40 first block of the record area */
	__le32	rh_next_slot;		/*  44 slots allocated so far */
	__le32	rh_live;		/*  48 live entries */
	__le32	rh_tombstones;		/*  52 tombstoned entries */
	__le32	rh_hash_seed;		/*  56 seed of the name hash */
	__le32	rh_session;		/*  60 s_mnt_count when built or reconciled */
	__le64	rh_reserved[8];		/*  64 zero */
	/* followed at offset 128 by rh_nstamps struct odf_rd_stamp */
};

ODF_ASSERT_SIZE(struct odf_rd_header, 128);
ODF_STATIC_ASSERT(sizeof(struct odf_rd_header) +
		  ODF_RD_MAX_STAMPS * sizeof(struct odf_rd_stamp) <=
		  ODF_BLOCK_SIZE, "readdir header block overflows");

struct odf_rd_ent {
	__u8	re_kind;		/*  0 ODF_RS_HEAD */
	__u8	re_flags;		/*  1 ODF_RE_TOMBSTONE */
	__u8	re_dtype;		/*  2 DT_* */
	__u8	re_nslots;		/*  3 1..ODF_RD_MAX_NSLOTS */
	__u8	re_name_len;		/*  4 1..255 */
	__u8	re_pad0;		/*  5 */
	__le16	re_branch;		/*  6 branch the entry was found on */
	__le64	re_ino;			/*  8 union ino */
	__le32	re_hash;		/* 16 name hash */
	__le32	re_crc;			/* 20 CRC32C of all re_nslots slots */
	__u8	re_name[ODF_RD_HEAD_NAME]; /* 24 */
};

ODF_ASSERT_SIZE(struct odf_rd_ent, ODF_RD_SLOT_SIZE);

struct odf_rd_cont {
	__u8	rc_kind;		/*  0 ODF_RS_CONT */
	__u8	rc_name[ODF_RD_CONT_NAME]; /* 1 */
};

ODF_ASSERT_SIZE(struct odf_rd_cont, ODF_RD_SLOT_SIZE);

struct odf_rdix_ent {
	__le32	ie_hash;		/* 0 name hash */
	__le32	ie_slot;		/* 4 slot + 1, or EMPTY / DELETED */
};

ODF_ASSERT_SIZE(struct odf_rdix_ent, 8);

struct odf_rdix_bucket {
	__le32	ib_crc;			/* 0 CRC32C of the 4096 bytes */
	__le16	ib_count;		/* 4 USED entries */
	__le16	ib_pad0;		/* 6 */
	struct odf_rdix_ent ib_ent[ODF_RDIX_ENTRIES]; /* 8 */
};

ODF_ASSERT_SIZE(struct odf_rdix_bucket, ODF_BLOCK_SIZE);

/* ------------------------------------------------------------------ */
/* Intents: /reclaim/intent-<016llx seq>, work the module rolls forward */
/* ------------------------------------------------------------------ */
#define ODF_INTENT_MAGIC	0x4946444fU	/* "ODFI" */
#define ODF_INTENT_PREFIX	"intent-"
#define ODF_INTENT_RENAME	1	/* a name renamed (section 9.5, 9.7) */
#define ODF_INTENT_COPYUP	2	/* a copy built at its name (section 9.6) */
#define ODF_INTENT_HINT_MAX	65535

struct odf_intent {
	__le32	i_magic;		/*  0 ODF_INTENT_MAGIC */
	__le32	i_crc;			/*  4 CRC32C of header + strings */
	__le16	i_version;		/*  8 ODF_INTENT_VERSION */
	__le16	i_op;			/* 10 ODF_INTENT_* */
	__le16	i_src_len;		/* 12 bytes of the source name */
	__le16	i_dst_len;		/* 14 bytes of the destination name */
	__le64	i_seq;			/* 16 equals the name's number */
	__le64	i_time;			/* 24 */
	__le64	i_ino;			/* 32 upper inode renamed */
	__le32	i_gen;			/* 40 its i_generation */
	__le16	i_src_hint_len;		/* 44 bytes of the source parent's hint */
	__le16	i_dst_hint_len;		/* 46 bytes of the dest parent's hint */
	__le64	i_src_dir;		/* 48 union inode of the source parent */
	__le64	i_dst_dir;		/* 56 union inode of the dest parent */
	/* then src name, dst name, src hint, dst hint (no NULs) */
};

ODF_ASSERT_SIZE(struct odf_intent, 64);

/* ------------------------------------------------------------------ */
/* NFS file handles (section 13): kept by NFS clients, not on the ODF  */
/* ------------------------------------------------------------------ */
#define ODF_FH_MAGIC		0xd5
#define ODF_FH_VERSION		1
#define ODF_FH_TYPE		0xd5	/* the fileid type encode_fh returns */
#define ODF_FH_CONNECTABLE	0x01	/* fh_parent is set */
#define ODF_FH_REAL_MAX		104	/* MAX_HANDLE_SZ - 24 */

struct odf_fh {
	__u8	fh_magic;		/*  0 ODF_FH_MAGIC */
	__u8	fh_version;		/*  1 ODF_FH_VERSION */
	__u8	fh_flags;		/*  2 ODF_FH_* */
	__u8	fh_real_type;		/*  3 exportfs fileid type of the branch handle */
	__le16	fh_branch;		/*  4 persistent id of that branch */
	__le16	fh_real_bytes;		/*  6 its length, a multiple of 4 */
	__le64	fh_uino;		/*  8 union inode number */
	__le64	fh_parent;		/* 16 parent's union inode number, or 0 */
	/* 24: the branch handle, fh_real_bytes bytes */
};

ODF_ASSERT_SIZE(struct odf_fh, 24);

#endif /* _ODF_FORMAT_H */
