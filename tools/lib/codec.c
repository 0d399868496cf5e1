// SPDX-License-Identifier: GPL-2.0
/*
 * codec.c - checksums, encoding and validation of ODF structures held
 * in memory.  Nothing here touches a device: these are the parsers the
 * fuzz target drives, so every length and index is checked before use.
 */
#include <string.h>
#include <stdlib.h>
#include "libodf.h"

const char *odf_bad_str(int bad)
{
	switch (bad) {
	case ODF_GOOD:		return "good";
	case ODF_BAD_MAGIC:	return "bad magic number";
	case ODF_BAD_CSUM:	return "checksum mismatch";
	case ODF_BAD_VERSION:	return "unsupported version";
	case ODF_BAD_SIZE:	return "bad size";
	case ODF_BAD_FIELD:	return "invalid field";
	case ODF_BAD_FEATURE:	return "unsupported feature";
	case ODF_BAD_TYPE:	return "invalid type bits";
	case ODF_BAD_REDIRECT:	return "malformed redirect entry";
	case ODF_BAD_NAME:	return "invalid name or hint";
	}
	return "unknown problem";
}

__u32 odf_crc32c(const void *p, size_t n)
{
	return ext2fs_crc32c_le(~0U, (unsigned char const *)p, n);
}

/* CRC of a structure whose 32-bit checksum field sits at crc_off. */
static __u32 csum_with_hole(const void *p, size_t n, size_t crc_off)
{
	__u32 zero = 0, crc;

	crc = ext2fs_crc32c_le(~0U, (unsigned char const *)p, crc_off);
	crc = ext2fs_crc32c_le(crc, (unsigned char const *)&zero, 4);
	return ext2fs_crc32c_le(crc, (unsigned char const *)p + crc_off + 4,
				n - crc_off - 4);
}

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* fuzz builds only: lets the fuzzer past checksums on some inputs */
int odf_fuzz_ignore_csum;
#endif

/* Does the stored checksum differ from the one computed? */
static int csum_bad(const void *p, size_t n, size_t crc_off, __le32 stored)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (odf_fuzz_ignore_csum)
		return 0;
#endif
	return csum_with_hole(p, n, crc_off) != ext2fs_le32_to_cpu(stored);
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		if (*c++)
			return 0;
	return 1;
}

static int str_terminated(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

/* ---- union inode numbers -------------------------------------------- */

__u64 odf_uino_det(unsigned branch, __u64 lower_ino)
{
	if (branch == 0 || branch > ODF_BRANCH_ID_MAX)
		return 0;
	if (lower_ino == 0 || lower_ino > ODF_UINO_LOW_MASK)
		return 0;
	return ((__u64)branch << ODF_UINO_SHIFT) | lower_ino;
}

int odf_uino_is_alloc(__u64 uino)
{
	return (uino >> ODF_UINO_SHIFT) == 0;
}

unsigned odf_uino_branch(__u64 uino)
{
	return (unsigned)(uino >> ODF_UINO_SHIFT) & 0xffff;
}

/* ---- superblock ----------------------------------------------------- */

void odf_sb_init(struct odf_super *sb, const __u8 uuid[16], const char *label,
		 __u64 now)
{
	memset(sb, 0, sizeof(*sb));
	sb->s_magic = ext2fs_cpu_to_le32(ODF_SB_MAGIC);
	sb->s_version = ext2fs_cpu_to_le16(ODF_FORMAT_VERSION);
	sb->s_state = ext2fs_cpu_to_le16(ODF_STATE_CLEAN);
	sb->s_hdr_size = ext2fs_cpu_to_le32(ODF_SB_HDR_SIZE);
	memcpy(sb->s_uuid, uuid, ODF_UUID_SIZE);
	if (label)
		strncpy(sb->s_label, label, ODF_LABEL_MAX - 1);
	sb->s_mkfs_time = ext2fs_cpu_to_le64(now);
	sb->s_write_time = ext2fs_cpu_to_le64(now);
	sb->s_next_ino = ext2fs_cpu_to_le64(ODF_UINO_ALLOC_FIRST);
	sb->s_next_branch_id = ext2fs_cpu_to_le16(1);
	sb->s_branch_slots = ext2fs_cpu_to_le16(ODF_BRANCH_SLOTS);
	sb->s_branch_offset = ext2fs_cpu_to_le32(ODF_BRANCH_OFFSET);
	sb->s_branch_size = ext2fs_cpu_to_le32(ODF_BRANCH_SIZE);
	sb->s_ino_shift = ext2fs_cpu_to_le32(ODF_UINO_SHIFT);
	odf_sb_csum_set(sb);
}

void odf_sb_csum_set(struct odf_super *sb)
{
	sb->s_crc = ext2fs_cpu_to_le32(csum_with_hole(sb, sizeof(*sb),
				offsetof(struct odf_super, s_crc)));
}

/*
 * Structural validity only; feature flags are judged by the caller,
 * which knows whether it is going to write.
 */
int odf_sb_verify(const struct odf_super *sb)
{
	return odf_sb_verify_version(sb, ODF_FORMAT_VERSION);
}

int odf_sb_verify_version(const struct odf_super *sb, unsigned version)
{
	if (ext2fs_le32_to_cpu(sb->s_magic) != ODF_SB_MAGIC)
		return ODF_BAD_MAGIC;
	if (csum_bad(sb, sizeof(*sb), offsetof(struct odf_super, s_crc),
		     sb->s_crc))
		return ODF_BAD_CSUM;
	if (ext2fs_le16_to_cpu(sb->s_version) != version)
		return ODF_BAD_VERSION;
	if (ext2fs_le32_to_cpu(sb->s_hdr_size) != ODF_SB_HDR_SIZE ||
	    ext2fs_le16_to_cpu(sb->s_branch_slots) != ODF_BRANCH_SLOTS ||
	    ext2fs_le32_to_cpu(sb->s_branch_offset) != ODF_BRANCH_OFFSET ||
	    ext2fs_le32_to_cpu(sb->s_branch_size) != ODF_BRANCH_SIZE ||
	    ext2fs_le32_to_cpu(sb->s_ino_shift) != ODF_UINO_SHIFT)
		return ODF_BAD_SIZE;
	return ODF_GOOD;
}

/* ---- branch table --------------------------------------------------- */

int odf_branch_unused(const struct odf_branch *b)
{
	return all_zero(b, sizeof(*b));
}

void odf_branch_csum_set(struct odf_branch *b)
{
	b->b_crc = ext2fs_cpu_to_le32(csum_with_hole(b, sizeof(*b),
				offsetof(struct odf_branch, b_crc)));
}

int odf_branch_verify(const struct odf_branch *b)
{
	unsigned flags, mode, id;

	if (odf_branch_unused(b))
		return ODF_GOOD;
	if (csum_bad(b, sizeof(*b), offsetof(struct odf_branch, b_crc),
		     b->b_crc))
		return ODF_BAD_CSUM;
	id = ext2fs_le16_to_cpu(b->b_id);
	flags = ext2fs_le16_to_cpu(b->b_flags);
	mode = ext2fs_le16_to_cpu(b->b_mode);
	if (id == 0 || id > ODF_BRANCH_ID_MAX)
		return ODF_BAD_FIELD;
	if (flags != ODF_BRANCH_PRESENT && flags != ODF_BRANCH_REMOVED)
		return ODF_BAD_FIELD;
	if (mode != ODF_MODE_RW && mode != ODF_MODE_RO)
		return ODF_BAD_FIELD;
	if (!str_terminated(b->b_fstype, sizeof(b->b_fstype)) ||
	    !str_terminated(b->b_path, sizeof(b->b_path)))
		return ODF_BAD_FIELD;
	if (b->b_pad0 || !all_zero(b->b_reserved, sizeof(b->b_reserved)))
		return ODF_BAD_FIELD;
	return ODF_GOOD;
}

/* ---- inode maps ----------------------------------------------------- */

__u32 odf_map_hash(__u32 seed, unsigned branch, __u64 ino)
{
	unsigned char key[10];
	__u16 b = ext2fs_cpu_to_le16((__u16)branch);
	__u64 i = ext2fs_cpu_to_le64(ino);

	memcpy(key, &b, 2);
	memcpy(key + 2, &i, 8);
	return ext2fs_crc32c_le(seed, key, sizeof(key));
}

__u32 odf_map_default_seed(const struct odf_super *sb, int kind)
{
	return ext2fs_crc32c_le(~0U ^ (__u32)kind, sb->s_uuid,
				sizeof(sb->s_uuid));
}

void odf_map_hdr_init(struct odf_map_header *h, int kind, __u32 nbuckets,
		      __u32 seed)
{
	memset(h, 0, sizeof(*h));
	h->mh_magic = ext2fs_cpu_to_le32(ODF_MAP_MAGIC);
	h->mh_version = ext2fs_cpu_to_le16(ODF_MAP_VERSION);
	h->mh_kind = ext2fs_cpu_to_le16(kind);
	h->mh_rec_size = ext2fs_cpu_to_le32(ODF_MAP_REC_SIZE);
	h->mh_bucket_size = ext2fs_cpu_to_le32(ODF_BLOCK_SIZE);
	h->mh_nbuckets = ext2fs_cpu_to_le32(nbuckets);
	h->mh_hash_seed = ext2fs_cpu_to_le32(seed);
	odf_map_hdr_csum_set(h);
}

void odf_map_hdr_csum_set(struct odf_map_header *h)
{
	h->mh_crc = ext2fs_cpu_to_le32(csum_with_hole(h, sizeof(*h),
				offsetof(struct odf_map_header, mh_crc)));
}

static int is_pow2(__u32 x)
{
	return x && !(x & (x - 1));
}

int odf_map_hdr_verify(const struct odf_map_header *h, int kind)
{
	__u32 nb = ext2fs_le32_to_cpu(h->mh_nbuckets);

	if (ext2fs_le32_to_cpu(h->mh_magic) != ODF_MAP_MAGIC)
		return ODF_BAD_MAGIC;
	if (csum_bad(h, sizeof(*h), offsetof(struct odf_map_header, mh_crc),
		     h->mh_crc))
		return ODF_BAD_CSUM;
	if (ext2fs_le16_to_cpu(h->mh_version) != ODF_MAP_VERSION)
		return ODF_BAD_VERSION;
	if (ext2fs_le16_to_cpu(h->mh_kind) != kind ||
	    ext2fs_le32_to_cpu(h->mh_rec_size) != ODF_MAP_REC_SIZE ||
	    ext2fs_le32_to_cpu(h->mh_bucket_size) != ODF_BLOCK_SIZE ||
	    !is_pow2(nb) || nb < ODF_MAP_MIN_BUCKETS ||
	    nb > ODF_MAP_MAX_BUCKETS || h->mh_pad0 ||
	    !all_zero(h->mh_reserved, sizeof(h->mh_reserved)))
		return ODF_BAD_FIELD;
	return ODF_GOOD;
}

void odf_map_rec_csum_set(struct odf_map_rec *r)
{
	r->mr_crc = ext2fs_cpu_to_le32(csum_with_hole(r, sizeof(*r),
				offsetof(struct odf_map_rec, mr_crc)));
}

void odf_map_rec_init(struct odf_map_rec *r, int kind, unsigned key_branch,
		      __u64 key_ino, __u64 uino, unsigned tgt_branch,
		      __u64 tgt_ino)
{
	memset(r, 0, sizeof(*r));
	r->mr_state = ODF_MREC_USED;
	r->mr_kind = kind;
	r->mr_key_branch = ext2fs_cpu_to_le16(key_branch);
	r->mr_key_ino = ext2fs_cpu_to_le64(key_ino);
	r->mr_union_ino = ext2fs_cpu_to_le64(uino);
	r->mr_tgt_branch = ext2fs_cpu_to_le16(tgt_branch);
	r->mr_tgt_ino = ext2fs_cpu_to_le64(tgt_ino);
	odf_map_rec_csum_set(r);
}

/*
 * A USED record must have a good checksum and fields that make sense
 * for its map; a DELETED slot is the state byte alone.
 */
int odf_map_rec_verify(const struct odf_map_rec *r, int kind)
{
	unsigned k = r->mr_kind, kb = ext2fs_le16_to_cpu(r->mr_key_branch);
	unsigned tb = ext2fs_le16_to_cpu(r->mr_tgt_branch);
	__u64 key = ext2fs_le64_to_cpu(r->mr_key_ino);
	__u64 u = ext2fs_le64_to_cpu(r->mr_union_ino);
	__u64 t = ext2fs_le64_to_cpu(r->mr_tgt_ino);

	if (r->mr_state == ODF_MREC_EMPTY || r->mr_state == ODF_MREC_DELETED)
		return all_zero((const char *)r + 1, sizeof(*r) - 1) ?
			ODF_GOOD : ODF_BAD_FIELD;
	if (r->mr_state != ODF_MREC_USED)
		return ODF_BAD_FIELD;
	if (csum_bad(r, sizeof(*r), offsetof(struct odf_map_rec, mr_crc),
		     r->mr_crc))
		return ODF_BAD_CSUM;
	if (ext2fs_le16_to_cpu(r->mr_handle_bytes) > ODF_HANDLE_MAX ||
	    !all_zero(r->mr_reserved, sizeof(r->mr_reserved)) || r->mr_pad1 ||
	    (r->mr_lower_links && r->mr_kind != ODF_MK_UPPER) ||
	    (ext2fs_le32_to_cpu(r->mr_flags) & ~ODF_MREC_HAVE_HANDLE) ||
	    (!(ext2fs_le32_to_cpu(r->mr_flags) & ODF_MREC_HAVE_HANDLE) &&
	     r->mr_handle_bytes))
		return ODF_BAD_FIELD;
	if (u == 0 || (u >> 63) ||
	    (odf_uino_is_alloc(u) && u < ODF_UINO_ALLOC_FIRST))
		return ODF_BAD_FIELD;	/* 1..15 are reserved (2: root) */
	if (kind == ODF_MAP_REVERSE) {
		if (k != ODF_MK_REVERSE || kb != 0 || key != u)
			return ODF_BAD_FIELD;
		if (tb == 0 || tb > ODF_BRANCH_ID_MAX || t == 0)
			return ODF_BAD_FIELD;
		return ODF_GOOD;
	}
	if (kb == 0 || kb > ODF_BRANCH_ID_MAX || key == 0)
		return ODF_BAD_FIELD;
	switch (k) {
	case ODF_MK_UPPER:	/* origin (tgt) optional */
		if (tb > ODF_BRANCH_ID_MAX)
			return ODF_BAD_FIELD;
		return ODF_GOOD;
	case ODF_MK_COPIED:
		/* the number: det(key), allocated, or (a copy copied
		 * again) its copy's, which pass 3 checks */
		if (tb == 0 || tb > ODF_BRANCH_ID_MAX || t == 0)
			return ODF_BAD_FIELD;
		return ODF_GOOD;
	case ODF_MK_BIGINO:
		if (!odf_uino_is_alloc(u) || u < ODF_UINO_ALLOC_FIRST ||
		    tb || t)
			return ODF_BAD_FIELD;
		return ODF_GOOD;
	}
	return ODF_BAD_FIELD;
}

__u32 odf_map_scan(const void *buf, size_t len, int kind,
		   struct odf_map_header *hdr, int *hdr_bad,
		   odf_map_scan_fn cb, void *priv)
{
	const unsigned char *p = buf;
	__u32 nb, b;
	unsigned s;

	memset(hdr, 0, sizeof(*hdr));
	if (len < sizeof(*hdr)) {
		*hdr_bad = ODF_BAD_SIZE;
		return 0;
	}
	memcpy(hdr, p, sizeof(*hdr));
	*hdr_bad = odf_map_hdr_verify(hdr, kind);
	if (*hdr_bad == ODF_GOOD && !all_zero(p + sizeof(*hdr),
					      ODF_BLOCK_SIZE - sizeof(*hdr) <
					      len - sizeof(*hdr) ?
					      ODF_BLOCK_SIZE - sizeof(*hdr) :
					      len - sizeof(*hdr)))
		*hdr_bad = ODF_BAD_FIELD;
	if (len < ODF_BLOCK_SIZE)
		return 0;
	if (*hdr_bad == ODF_GOOD) {
		nb = ext2fs_le32_to_cpu(hdr->mh_nbuckets);
		if ((__u64)(nb + 1) * ODF_BLOCK_SIZE != len)
			*hdr_bad = ODF_BAD_SIZE;
	}
	/* whatever the header says, walk what the file holds */
	nb = (__u32)(len / ODF_BLOCK_SIZE - 1);
	for (b = 0; b < nb; b++) {
		const unsigned char *bk = p + (size_t)(b + 1) * ODF_BLOCK_SIZE;

		for (s = 0; s < ODF_MAP_RECS_PER_BUCKET; s++) {
			struct odf_map_rec r;

			memcpy(&r, bk + s * ODF_MAP_REC_SIZE, sizeof(r));
			if (all_zero(&r, sizeof(r)))
				continue;
			if (cb)
				cb(priv, b, s, &r, odf_map_rec_verify(&r, kind));
		}
	}
	return nb;
}

/* ---- paths and names ------------------------------------------------ */

int odf_path_valid(const char *p, size_t len, int root_ok)
{
	size_t i, start;

	if (root_ok && len == 1 && p[0] == '/')
		return 1;
	if (len < 2 || p[0] != '/' || p[len - 1] == '/')
		return 0;
	if (memchr(p, 0, len))
		return 0;
	for (i = 1, start = 1; i <= len; i++) {
		if (i == len || p[i] == '/') {
			size_t cl = i - start;

			if (cl == 0 || cl > 255 ||
			    (cl == 1 && p[start] == '.') ||
			    (cl == 2 && p[start] == '.' && p[start + 1] == '.'))
				return 0;
			start = i + 1;
		}
	}
	return 1;
}

int odf_name_valid(const char *p, size_t len)
{
	if (len == 0 || len > 255 || memchr(p, '/', len) || memchr(p, 0, len))
		return 0;
	if ((len == 1 && p[0] == '.') ||
	    (len == 2 && p[0] == '.' && p[1] == '.'))
		return 0;
	return 1;
}

/* ---- namespace nodes, format 2 --------------------------------------- */

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

size_t odf_node_encode(void *buf, const struct odf_node_info *ni,
		       const struct odf_redir_ent *ents)
{
	struct odf_node n;
	unsigned char *p = buf;
	size_t len = sizeof(n);
	unsigned i;

	for (i = 0; i < ni->nredirect; i++) {
		if (ents[i].len == 0 || ents[i].len > ODF_REDIRECT_PATH_MAX)
			return 0;
		len += sizeof(struct odf_redirect) + pad4(ents[i].len);
		if (len > ODF_NODE_MAX)
			return 0;
	}
	memset(buf, 0, len);
	memset(&n, 0, sizeof(n));
	n.n_magic = ext2fs_cpu_to_le32(ODF_NODE_MAGIC);
	n.n_version = ext2fs_cpu_to_le16(ODF_NODE_VERSION);
	n.n_type = ext2fs_cpu_to_le16(ni->type);
	n.n_nredirect = ext2fs_cpu_to_le16(ni->nredirect);
	n.n_size = ext2fs_cpu_to_le16(len);
	n.n_time = ext2fs_cpu_to_le64(ni->time);
	n.n_uino = ext2fs_cpu_to_le64(ni->uino);
	n.n_owner_ino = ext2fs_cpu_to_le64(ni->owner_ino);
	n.n_owner_gen = ext2fs_cpu_to_le32(ni->owner_gen);
	memcpy(p, &n, sizeof(n));
	p += sizeof(n);
	for (i = 0; i < ni->nredirect; i++) {
		struct odf_redirect r;

		r.r_branch = ext2fs_cpu_to_le16(ents[i].branch);
		r.r_len = ext2fs_cpu_to_le16(ents[i].len);
		memcpy(p, &r, sizeof(r));
		memcpy(p + sizeof(r), ents[i].path, ents[i].len);
		p += sizeof(r) + pad4(ents[i].len);
	}
	n.n_crc = ext2fs_cpu_to_le32(csum_with_hole(buf, len,
				offsetof(struct odf_node, n_crc)));
	memcpy(buf, &n, sizeof(n));
	return len;
}

int odf_node_decode(const void *buf, size_t len, struct odf_node_info *ni,
		    struct odf_redir_ent *ents, unsigned max)
{
	const unsigned char *p = buf;
	struct odf_node n;
	size_t off;
	unsigned t, nr, i, j;
	unsigned seen[ODF_NODE_MAX_REDIRECTS];

	memset(ni, 0, sizeof(*ni));
	if (len < sizeof(n) || len > ODF_NODE_MAX)
		return ODF_BAD_SIZE;
	memcpy(&n, buf, sizeof(n));
	if (ext2fs_le32_to_cpu(n.n_magic) != ODF_NODE_MAGIC)
		return ODF_BAD_MAGIC;
	if (ext2fs_le16_to_cpu(n.n_size) != len)
		return ODF_BAD_SIZE;
	if (csum_bad(buf, len, offsetof(struct odf_node, n_crc), n.n_crc))
		return ODF_BAD_CSUM;
	if (ext2fs_le16_to_cpu(n.n_version) != ODF_NODE_VERSION)
		return ODF_BAD_VERSION;
	t = ext2fs_le16_to_cpu(n.n_type);
	nr = ext2fs_le16_to_cpu(n.n_nredirect);
	ni->type = t;
	ni->nredirect = nr;
	ni->time = ext2fs_le64_to_cpu(n.n_time);
	ni->uino = ext2fs_le64_to_cpu(n.n_uino);
	ni->owner_ino = ext2fs_le64_to_cpu(n.n_owner_ino);
	ni->owner_gen = ext2fs_le32_to_cpu(n.n_owner_gen);
	if (n.n_pad0 || ni->uino == 0 || (ni->uino >> 63) ||
	    (!ni->owner_ino && ni->owner_gen))
		return ODF_BAD_FIELD;
	if (nr > ODF_NODE_MAX_REDIRECTS)
		return ODF_BAD_REDIRECT;
	for (i = 0, off = sizeof(n); i < nr; i++) {
		struct odf_redirect r;
		size_t rl;
		unsigned b;

		if (off + sizeof(r) > len)
			return ODF_BAD_REDIRECT;
		memcpy(&r, p + off, sizeof(r));
		b = ext2fs_le16_to_cpu(r.r_branch);
		rl = ext2fs_le16_to_cpu(r.r_len);
		off += sizeof(r);
		if (b == 0 || b > ODF_BRANCH_ID_MAX || rl == 0 ||
		    rl > ODF_REDIRECT_PATH_MAX || off + pad4(rl) > len ||
		    !odf_path_valid((const char *)p + off, rl, 0) ||
		    !all_zero(p + off + rl, pad4(rl) - rl))
			return ODF_BAD_REDIRECT;
		for (j = 0; j < i; j++)
			if (seen[j] == b)
				return ODF_BAD_REDIRECT;
		seen[i] = b;
		if (ents && i < max) {
			ents[i].branch = b;
			ents[i].len = rl;
			ents[i].path = (const char *)p + off;
		}
		off += pad4(rl);
	}
	if (off != len)
		return ODF_BAD_REDIRECT;
	/* entries are whole: the type bits are judged last, so that a
	 * repair of the type can keep them */
	if (t != 0 && t != ODF_NODE_OPAQUE &&
	    t != (ODF_NODE_OPAQUE | ODF_NODE_REDIRECT))
		return ODF_BAD_TYPE;
	if (!!(t & ODF_NODE_REDIRECT) != !!nr)
		return ODF_BAD_REDIRECT;
	return ODF_GOOD;
}

/* ---- namespace nodes, format 1 (conversion) -------------------------- */

size_t odf_node_v1_encode(void *buf, unsigned type, __u64 time,
			  const char *redirect, size_t redirect_len)
{
	struct odf_node_v1 n;
	size_t len;

	if (!redirect)
		redirect_len = 0;
	if (redirect_len > ODF_REDIRECT_MAX)
		redirect_len = ODF_REDIRECT_MAX;
	memset(&n, 0, sizeof(n));
	n.n_magic = ext2fs_cpu_to_le32(ODF_NODE_MAGIC);
	n.n_version = ext2fs_cpu_to_le16(ODF_FORMAT_V1);
	n.n_type = ext2fs_cpu_to_le16(type);
	n.n_redirect_len = ext2fs_cpu_to_le16(redirect_len);
	n.n_time = ext2fs_cpu_to_le64(time);
	memcpy(buf, &n, sizeof(n));
	if (redirect_len)
		memcpy((char *)buf + sizeof(n), redirect, redirect_len);
	len = sizeof(n) + redirect_len;
	n.n_crc = ext2fs_cpu_to_le32(csum_with_hole(buf, len,
				offsetof(struct odf_node_v1, n_crc)));
	memcpy(buf, &n, sizeof(n));
	return len;
}

int odf_node_v1_decode(const void *buf, size_t len, unsigned *type,
		       const char **redirect, size_t *redirect_len)
{
	struct odf_node_v1 n;
	size_t rl;
	unsigned t;

	*type = 0;
	*redirect = NULL;
	*redirect_len = 0;
	if (len < sizeof(n))
		return ODF_BAD_SIZE;
	memcpy(&n, buf, sizeof(n));
	if (ext2fs_le32_to_cpu(n.n_magic) != ODF_NODE_MAGIC)
		return ODF_BAD_MAGIC;
	rl = ext2fs_le16_to_cpu(n.n_redirect_len);
	if (rl > ODF_REDIRECT_MAX || sizeof(n) + rl != len)
		return ODF_BAD_SIZE;
	if (csum_bad(buf, len, offsetof(struct odf_node_v1, n_crc), n.n_crc))
		return ODF_BAD_CSUM;
	if (ext2fs_le16_to_cpu(n.n_version) != ODF_FORMAT_V1)
		return ODF_BAD_VERSION;
	t = ext2fs_le16_to_cpu(n.n_type);
	if (t & ~(ODF_NODE_WHITEOUT | ODF_NODE_OPAQUE | ODF_NODE_REDIRECT) ||
	    n.n_pad0 || n.n_reserved)
		return ODF_BAD_FIELD;
	if (!!(t & ODF_NODE_REDIRECT) != !!rl)
		return ODF_BAD_FIELD;
	if (rl && !odf_path_valid((const char *)buf + sizeof(n), rl, 0))
		return ODF_BAD_FIELD;
	*type = t;
	*redirect = rl ? (const char *)buf + sizeof(n) : NULL;
	*redirect_len = rl;
	return ODF_GOOD;
}

/* ---- intents, format 2 ----------------------------------------------- */

size_t odf_intent_encode(void *buf, const struct odf_intent_info *in)
{
	struct odf_intent h;
	char *p = buf;
	size_t len;

	if (in->src_len > ODF_INTENT_NAME_MAX ||
	    in->dst_len > ODF_INTENT_NAME_MAX ||
	    in->src_hint_len > ODF_INTENT_HINT_MAX ||
	    in->dst_hint_len > ODF_INTENT_HINT_MAX)
		return 0;
	memset(&h, 0, sizeof(h));
	h.i_magic = ext2fs_cpu_to_le32(ODF_INTENT_MAGIC);
	h.i_version = ext2fs_cpu_to_le16(ODF_INTENT_VERSION);
	h.i_op = ext2fs_cpu_to_le16(in->op);
	h.i_src_len = ext2fs_cpu_to_le16(in->src_len);
	h.i_dst_len = ext2fs_cpu_to_le16(in->dst_len);
	h.i_seq = ext2fs_cpu_to_le64(in->seq);
	h.i_time = ext2fs_cpu_to_le64(in->time);
	h.i_ino = ext2fs_cpu_to_le64(in->ino);
	h.i_gen = ext2fs_cpu_to_le32(in->gen);
	h.i_src_hint_len = ext2fs_cpu_to_le16(in->src_hint_len);
	h.i_dst_hint_len = ext2fs_cpu_to_le16(in->dst_hint_len);
	h.i_src_dir = ext2fs_cpu_to_le64(in->src_dir);
	h.i_dst_dir = ext2fs_cpu_to_le64(in->dst_dir);
	len = sizeof(h);
	memcpy(p + len, in->src, in->src_len);
	len += in->src_len;
	memcpy(p + len, in->dst, in->dst_len);
	len += in->dst_len;
	memcpy(p + len, in->src_hint, in->src_hint_len);
	len += in->src_hint_len;
	memcpy(p + len, in->dst_hint, in->dst_hint_len);
	len += in->dst_hint_len;
	memcpy(p, &h, sizeof(h));
	h.i_crc = ext2fs_cpu_to_le32(csum_with_hole(buf, len,
				offsetof(struct odf_intent, i_crc)));
	memcpy(p, &h, sizeof(h));
	return len;
}

int odf_intent_decode(const void *buf, size_t len,
		      struct odf_intent_info *out)
{
	const char *p = buf;
	struct odf_intent h;
	size_t sl, dl, shl, dhl;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return ODF_BAD_SIZE;
	memcpy(&h, buf, sizeof(h));
	if (ext2fs_le32_to_cpu(h.i_magic) != ODF_INTENT_MAGIC)
		return ODF_BAD_MAGIC;
	sl = ext2fs_le16_to_cpu(h.i_src_len);
	dl = ext2fs_le16_to_cpu(h.i_dst_len);
	shl = ext2fs_le16_to_cpu(h.i_src_hint_len);
	dhl = ext2fs_le16_to_cpu(h.i_dst_hint_len);
	if (sl > ODF_INTENT_NAME_MAX || dl > ODF_INTENT_NAME_MAX ||
	    sizeof(h) + sl + dl + shl + dhl != len)
		return ODF_BAD_SIZE;
	if (csum_bad(buf, len, offsetof(struct odf_intent, i_crc), h.i_crc))
		return ODF_BAD_CSUM;
	if (ext2fs_le16_to_cpu(h.i_version) != ODF_INTENT_VERSION)
		return ODF_BAD_VERSION;
	out->op = ext2fs_le16_to_cpu(h.i_op);
	out->seq = ext2fs_le64_to_cpu(h.i_seq);
	out->time = ext2fs_le64_to_cpu(h.i_time);
	out->ino = ext2fs_le64_to_cpu(h.i_ino);
	out->gen = ext2fs_le32_to_cpu(h.i_gen);
	out->src_dir = ext2fs_le64_to_cpu(h.i_src_dir);
	out->dst_dir = ext2fs_le64_to_cpu(h.i_dst_dir);
	if ((out->op != ODF_INTENT_RENAME && out->op != ODF_INTENT_COPYUP) ||
	    out->ino == 0 ||
	    out->src_dir == 0 || out->dst_dir == 0 ||
	    (out->src_dir >> 63) || (out->dst_dir >> 63))
		return ODF_BAD_FIELD;
	out->src = p + sizeof(h);
	out->dst = out->src + sl;
	out->src_hint = out->dst + dl;
	out->dst_hint = out->src_hint + shl;
	out->src_len = sl;
	out->dst_len = dl;
	out->src_hint_len = shl;
	out->dst_hint_len = dhl;
	if (!odf_name_valid(out->src, sl) || !odf_name_valid(out->dst, dl) ||
	    !odf_path_valid(out->src_hint, shl, 1) ||
	    !odf_path_valid(out->dst_hint, dhl, 1))
		return ODF_BAD_NAME;
	/* A copy-up names one object: both sides are the same. */
	if (out->op == ODF_INTENT_COPYUP &&
	    (out->src_dir != out->dst_dir || sl != dl || shl != dhl ||
	     memcmp(out->src, out->dst, sl) ||
	     memcmp(out->src_hint, out->dst_hint, shl)))
		return ODF_BAD_FIELD;
	return ODF_GOOD;
}

/* ---- intents, format 1 (conversion) ---------------------------------- */

struct odf_intent_v1 {
	__le32	i_magic;
	__le32	i_crc;
	__le16	i_version;
	__le16	i_op;
	__le16	i_src_len;
	__le16	i_dst_len;
	__le64	i_seq;
	__le64	i_time;
	__le64	i_ino;
	__le32	i_gen;
	__le32	i_reserved;
};

ODF_ASSERT_SIZE(struct odf_intent_v1, 48);

size_t odf_intent_v1_encode(void *buf, __u64 seq, __u64 time, __u64 ino,
			    __u32 gen, const char *src, const char *dst)
{
	struct odf_intent_v1 in;
	size_t sl = strlen(src), dl = strlen(dst), len;

	if (sl > ODF_INTENT_V1_PATH_MAX)
		sl = ODF_INTENT_V1_PATH_MAX;
	if (dl > ODF_INTENT_V1_PATH_MAX)
		dl = ODF_INTENT_V1_PATH_MAX;
	memset(&in, 0, sizeof(in));
	in.i_magic = ext2fs_cpu_to_le32(ODF_INTENT_MAGIC);
	in.i_version = ext2fs_cpu_to_le16(ODF_FORMAT_V1);
	in.i_op = ext2fs_cpu_to_le16(ODF_INTENT_RENAME);
	in.i_src_len = ext2fs_cpu_to_le16(sl);
	in.i_dst_len = ext2fs_cpu_to_le16(dl);
	in.i_seq = ext2fs_cpu_to_le64(seq);
	in.i_time = ext2fs_cpu_to_le64(time);
	in.i_ino = ext2fs_cpu_to_le64(ino);
	in.i_gen = ext2fs_cpu_to_le32(gen);
	memcpy(buf, &in, sizeof(in));
	memcpy((char *)buf + sizeof(in), src, sl);
	memcpy((char *)buf + sizeof(in) + sl, dst, dl);
	len = sizeof(in) + sl + dl;
	in.i_crc = ext2fs_cpu_to_le32(csum_with_hole(buf, len,
				offsetof(struct odf_intent_v1, i_crc)));
	memcpy(buf, &in, sizeof(in));
	return len;
}

int odf_intent_v1_decode(const void *buf, size_t len, __u64 *seq,
			 __u64 *ino, __u32 *gen, const char **src,
			 size_t *slen, const char **dst, size_t *dlen)
{
	struct odf_intent_v1 in;
	size_t sl, dl;

	if (len < sizeof(in))
		return ODF_BAD_SIZE;
	memcpy(&in, buf, sizeof(in));
	if (ext2fs_le32_to_cpu(in.i_magic) != ODF_INTENT_MAGIC)
		return ODF_BAD_MAGIC;
	sl = ext2fs_le16_to_cpu(in.i_src_len);
	dl = ext2fs_le16_to_cpu(in.i_dst_len);
	if (sl > ODF_INTENT_V1_PATH_MAX || dl > ODF_INTENT_V1_PATH_MAX ||
	    sizeof(in) + sl + dl != len)
		return ODF_BAD_SIZE;
	if (csum_bad(buf, len, offsetof(struct odf_intent_v1, i_crc),
		     in.i_crc))
		return ODF_BAD_CSUM;
	if (ext2fs_le16_to_cpu(in.i_version) != ODF_FORMAT_V1)
		return ODF_BAD_VERSION;
	if (ext2fs_le16_to_cpu(in.i_op) != ODF_INTENT_RENAME || in.i_reserved)
		return ODF_BAD_FIELD;
	if (!odf_path_valid((const char *)buf + sizeof(in), sl, 0) ||
	    !odf_path_valid((const char *)buf + sizeof(in) + sl, dl, 0))
		return ODF_BAD_FIELD;
	*seq = ext2fs_le64_to_cpu(in.i_seq);
	*ino = ext2fs_le64_to_cpu(in.i_ino);
	*gen = ext2fs_le32_to_cpu(in.i_gen);
	*src = (const char *)buf + sizeof(in);
	*slen = sl;
	*dst = (const char *)buf + sizeof(in) + sl;
	*dlen = dl;
	return ODF_GOOD;
}

/* ---- readdir state -------------------------------------------------- */

__u32 odf_rd_hash(__u32 seed, const char *name, size_t len)
{
	return ext2fs_crc32c_le(seed, (unsigned char const *)name, len);
}

unsigned odf_rd_nslots(size_t name_len)
{
	if (name_len <= ODF_RD_HEAD_NAME)
		return 1;
	return 1 + (unsigned)((name_len - ODF_RD_HEAD_NAME +
			       ODF_RD_CONT_NAME - 1) / ODF_RD_CONT_NAME);
}

#define RD_FAIL(info, bad, ...) do {					\
	snprintf((info)->why, sizeof((info)->why), __VA_ARGS__);	\
	ret = (bad);							\
	goto out;							\
} while (0)

struct rd_live {
	__u32	hash;
	__u32	slot;
};

static int cmp_live(const void *x, const void *y)
{
	const struct rd_live *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* Name of the (already verified) entry whose head is at p. */
static size_t rd_name_at(const unsigned char *p, char *out)
{
	const struct odf_rd_ent *e = (const void *)p;
	size_t nl = e->re_name_len, k;

	memcpy(out, e->re_name, nl < ODF_RD_HEAD_NAME ? nl : ODF_RD_HEAD_NAME);
	for (k = 1; k < e->re_nslots; k++) {
		size_t off = ODF_RD_HEAD_NAME + (k - 1) * ODF_RD_CONT_NAME;
		size_t take = nl - off < ODF_RD_CONT_NAME ? nl - off :
			      ODF_RD_CONT_NAME;

		memcpy(out + off, p + k * ODF_RD_SLOT_SIZE + 1, take);
	}
	return nl;
}

int odf_rd_check(const void *buf, size_t len, struct odf_rd_info *info,
		 odf_rd_entry_fn cb, void *priv)
{
	const unsigned char *p = buf;
	struct odf_rd_header h;
	__u32 nb, rec_start, next, slot, live = 0, tomb = 0, seed, b;
	__u64 area;
	unsigned i, ns;
	unsigned char *mark = NULL;
	struct rd_live *lv = NULL;
	int ret = ODF_GOOD;

	memset(info, 0, sizeof(*info));
	if (len < ODF_BLOCK_SIZE || len % ODF_BLOCK_SIZE)
		RD_FAIL(info, ODF_BAD_SIZE, "file size %zu is not a whole "
			"number of blocks", len);
	memcpy(&h, p, sizeof(h));
	if (ext2fs_le32_to_cpu(h.rh_magic) != ODF_RD_MAGIC)
		RD_FAIL(info, ODF_BAD_MAGIC, "bad header magic");
	if (csum_bad(p, ODF_BLOCK_SIZE,
		     offsetof(struct odf_rd_header, rh_crc), h.rh_crc))
		RD_FAIL(info, ODF_BAD_CSUM, "header checksum mismatch");
	if (ext2fs_le16_to_cpu(h.rh_version) != ODF_RD_VERSION)
		RD_FAIL(info, ODF_BAD_VERSION, "unsupported version");
	info->dir_ino = ext2fs_le64_to_cpu(h.rh_dir_ino);
	ns = ext2fs_le16_to_cpu(h.rh_nstamps);
	info->nstamps = ns;
	nb = ext2fs_le32_to_cpu(h.rh_index_buckets);
	rec_start = ext2fs_le32_to_cpu(h.rh_rec_start);
	next = ext2fs_le32_to_cpu(h.rh_next_slot);
	seed = ext2fs_le32_to_cpu(h.rh_hash_seed);
	info->next_slot = next;
	if (ns > ODF_RD_MAX_STAMPS)
		RD_FAIL(info, ODF_BAD_FIELD, "%u branch stamps", ns);
	if (!all_zero(p + sizeof(h) + ns * sizeof(struct odf_rd_stamp),
		      ODF_BLOCK_SIZE - sizeof(h) -
		      ns * sizeof(struct odf_rd_stamp)))
		RD_FAIL(info, ODF_BAD_FIELD, "garbage after the stamps");
	if (ext2fs_le32_to_cpu(h.rh_flags) & ~ODF_RD_COMPLETE)
		RD_FAIL(info, ODF_BAD_FIELD, "unknown header flags");
	if (!all_zero(h.rh_reserved, sizeof(h.rh_reserved)))
		RD_FAIL(info, ODF_BAD_FIELD, "reserved header fields in use");
	/* Blocks between the index and the records are holes (7.1). */
	if (ext2fs_le32_to_cpu(h.rh_index_start) != 1 || !is_pow2(nb) ||
	    nb > (1U << 20) || rec_start < 1 + nb ||
	    rec_start > 1 + (1U << 20))
		RD_FAIL(info, ODF_BAD_FIELD, "bad index geometry");
	if (next > ODF_RD_OFF_MAX - ODF_RD_OFF_FIRST)
		RD_FAIL(info, ODF_BAD_FIELD, "next slot %u out of range", next);
	area = len / ODF_BLOCK_SIZE - rec_start;
	if ((__u64)rec_start * ODF_BLOCK_SIZE > len ||
	    area * ODF_RD_SLOTS_PER_BLOCK < next ||
	    area * ODF_RD_SLOTS_PER_BLOCK >= (__u64)next +
	    ODF_RD_SLOTS_PER_BLOCK)
		RD_FAIL(info, ODF_BAD_SIZE, "record area does not match "
			"next slot %u", next);

	mark = calloc(next ? next : 1, 1);
	if (!mark)
		RD_FAIL(info, ODF_BAD_SIZE, "out of memory");

	/* record area: heads, continuations, padding, holes */
	for (slot = 0; slot < next;) {
		const unsigned char *s = p + (size_t)rec_start * ODF_BLOCK_SIZE +
					 (size_t)slot * ODF_RD_SLOT_SIZE;
		struct odf_rd_ent e;
		struct odf_rd_entry out;
		unsigned n, k, nl, room;

		switch (s[0]) {
		case ODF_RS_FREE:
			if (!all_zero(s, ODF_RD_SLOT_SIZE))
				RD_FAIL(info, ODF_BAD_FIELD,
					"garbage in free slot %u", slot);
			slot++;
			continue;
		case ODF_RS_PAD:
			if (!all_zero(s + 1, ODF_RD_SLOT_SIZE - 1))
				RD_FAIL(info, ODF_BAD_FIELD,
					"garbage in pad slot %u", slot);
			slot++;
			continue;
		case ODF_RS_HEAD:
			break;
		default:
			RD_FAIL(info, ODF_BAD_FIELD, "slot %u has kind %u",
				slot, s[0]);
		}
		memcpy(&e, s, sizeof(e));
		n = e.re_nslots;
		nl = e.re_name_len;
		room = ODF_RD_SLOTS_PER_BLOCK - slot % ODF_RD_SLOTS_PER_BLOCK;
		if (n == 0 || n > ODF_RD_MAX_NSLOTS || n > room ||
		    slot + n > next || nl == 0 || odf_rd_nslots(nl) != n)
			RD_FAIL(info, ODF_BAD_FIELD, "entry at slot %u has "
				"bad length", slot);
		if (e.re_flags & ~ODF_RE_TOMBSTONE || e.re_pad0 ||
		    e.re_dtype > 14)
			RD_FAIL(info, ODF_BAD_FIELD, "entry at slot %u has "
				"bad flags", slot);
		if (csum_bad(s, (size_t)n * ODF_RD_SLOT_SIZE,
			     offsetof(struct odf_rd_ent, re_crc), e.re_crc))
			RD_FAIL(info, ODF_BAD_CSUM, "entry at slot %u: "
				"checksum mismatch", slot);
		memset(&out, 0, sizeof(out));
		out.ordinal = slot + ODF_RD_OFF_FIRST;
		out.flags = e.re_flags;
		out.dtype = e.re_dtype;
		out.branch = ext2fs_le16_to_cpu(e.re_branch);
		out.ino = ext2fs_le64_to_cpu(e.re_ino);
		out.name_len = nl;
		memcpy(out.name, e.re_name, nl < ODF_RD_HEAD_NAME ? nl :
		       ODF_RD_HEAD_NAME);
		for (k = 1; k < n; k++) {
			const unsigned char *c = s + k * ODF_RD_SLOT_SIZE;
			size_t off = ODF_RD_HEAD_NAME +
				     (k - 1) * ODF_RD_CONT_NAME;
			size_t take = nl - off < ODF_RD_CONT_NAME ?
				      nl - off : ODF_RD_CONT_NAME;

			if (c[0] != ODF_RS_CONT)
				RD_FAIL(info, ODF_BAD_FIELD, "entry at slot "
					"%u: bad continuation", slot);
			memcpy(out.name + off, c + 1, take);
			if (!all_zero(c + 1 + take, ODF_RD_CONT_NAME - take))
				RD_FAIL(info, ODF_BAD_FIELD, "entry at slot "
					"%u: garbage after name", slot);
		}
		if (n == 1 && !all_zero(e.re_name + nl, ODF_RD_HEAD_NAME - nl))
			RD_FAIL(info, ODF_BAD_FIELD, "entry at slot %u: "
				"garbage after name", slot);
		if (memchr(out.name, '/', nl) || memchr(out.name, 0, nl) ||
		    (nl == 1 && out.name[0] == '.') ||
		    (nl == 2 && out.name[0] == '.' && out.name[1] == '.'))
			RD_FAIL(info, ODF_BAD_FIELD, "entry at slot %u: "
				"invalid name", slot);
		if (odf_rd_hash(seed, out.name, nl) !=
		    ext2fs_le32_to_cpu(e.re_hash))
			RD_FAIL(info, ODF_BAD_FIELD, "entry at slot %u: "
				"wrong name hash", slot);
		if (out.ino == 0)
			RD_FAIL(info, ODF_BAD_FIELD, "entry at slot %u: "
				"inode number 0", slot);
		if (e.re_flags & ODF_RE_TOMBSTONE) {
			tomb++;
		} else {
			live++;
			mark[slot] = 1;
		}
		if (cb)
			cb(priv, &out);
		slot += n;
	}
	/* the tail of the last block must be free */
	area *= ODF_RD_SLOTS_PER_BLOCK;
	if (!all_zero(p + (size_t)rec_start * ODF_BLOCK_SIZE +
		      (size_t)next * ODF_RD_SLOT_SIZE,
		      (size_t)(area - next) * ODF_RD_SLOT_SIZE))
		RD_FAIL(info, ODF_BAD_FIELD, "data beyond the last slot");
	if (live != ext2fs_le32_to_cpu(h.rh_live) ||
	    tomb != ext2fs_le32_to_cpu(h.rh_tombstones))
		RD_FAIL(info, ODF_BAD_FIELD, "header counts %u live, %u "
			"tombstones; found %u, %u",
			ext2fs_le32_to_cpu(h.rh_live),
			ext2fs_le32_to_cpu(h.rh_tombstones), live, tomb);
	info->live = live;
	info->tombstones = tomb;

	/* name index: every live entry exactly once, nothing else */
	for (b = 0; b < nb; b++) {
		struct odf_rdix_bucket bk;
		unsigned used = 0;

		memcpy(&bk, p + (size_t)(1 + b) * ODF_BLOCK_SIZE, sizeof(bk));
		if (csum_bad(&bk, sizeof(bk),
			     offsetof(struct odf_rdix_bucket, ib_crc),
			     bk.ib_crc))
			RD_FAIL(info, ODF_BAD_CSUM, "index bucket %u: "
				"checksum mismatch", b);
		for (i = 0; i < ODF_RDIX_ENTRIES; i++) {
			__u32 v = ext2fs_le32_to_cpu(bk.ib_ent[i].ie_slot);
			__u32 hh = ext2fs_le32_to_cpu(bk.ib_ent[i].ie_hash);
			struct odf_rd_ent e;

			if (v == ODF_RDIX_EMPTY || v == ODF_RDIX_DELETED) {
				if (hh)
					RD_FAIL(info, ODF_BAD_FIELD, "index "
						"bucket %u: stray hash", b);
				continue;
			}
			used++;
			v--;
			if (v >= next || mark[v] != 1)
				RD_FAIL(info, ODF_BAD_FIELD, "index bucket %u "
					"points to slot %u, not a live entry",
					b, v);
			memcpy(&e, p + (size_t)rec_start * ODF_BLOCK_SIZE +
			       (size_t)v * ODF_RD_SLOT_SIZE, sizeof(e));
			if (ext2fs_le32_to_cpu(e.re_hash) != hh)
				RD_FAIL(info, ODF_BAD_FIELD, "index bucket %u: "
					"hash mismatch for slot %u", b, v);
			mark[v] = 2;
		}
		if (used != ext2fs_le16_to_cpu(bk.ib_count) || bk.ib_pad0)
			RD_FAIL(info, ODF_BAD_FIELD, "index bucket %u: "
				"count mismatch", b);
	}
	for (slot = 0; slot < next; slot++)
		if (mark[slot] == 1)
			RD_FAIL(info, ODF_BAD_FIELD, "live entry at slot %u is "
				"missing from the index", slot);

	/* the listing is deduplicated: no two live entries share a name */
	lv = malloc((live ? live : 1) * sizeof(*lv));
	if (!lv)
		RD_FAIL(info, ODF_BAD_SIZE, "out of memory");
	for (slot = 0, i = 0; slot < next; slot++) {
		const unsigned char *s = p + (size_t)rec_start * ODF_BLOCK_SIZE +
					 (size_t)slot * ODF_RD_SLOT_SIZE;
		struct odf_rd_ent e;

		if (mark[slot] != 2)
			continue;
		memcpy(&e, s, sizeof(e));
		lv[i].hash = ext2fs_le32_to_cpu(e.re_hash);
		lv[i].slot = slot;
		i++;
	}
	qsort(lv, i, sizeof(*lv), cmp_live);
	for (slot = 1; slot < i; slot++) {
		char a[256], b[256];
		size_t la, lb;
		const unsigned char *area = p + (size_t)rec_start *
					    ODF_BLOCK_SIZE;

		if (lv[slot].hash != lv[slot - 1].hash)
			continue;
		la = rd_name_at(area + (size_t)lv[slot - 1].slot *
				ODF_RD_SLOT_SIZE, a);
		lb = rd_name_at(area + (size_t)lv[slot].slot *
				ODF_RD_SLOT_SIZE, b);
		if (la == lb && !memcmp(a, b, la))
			RD_FAIL(info, ODF_BAD_FIELD, "entries at slots %u and "
				"%u have the same name", lv[slot - 1].slot,
				lv[slot].slot);
	}
out:
	free(lv);
	free(mark);
	return ret;
}
