// SPDX-License-Identifier: GPL-2.0
/*
 * libodf_test - round trips of every ODF structure through tools/lib,
 * on byte buffers and on real volumes made by mkodf.  Prints one TAP
 * line per test.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <et/com_err.h>
#include "libodf.h"

static char tmpdir[] = "/tmp/libodf-test.XXXXXX";
static const char *topdir;

/* A fresh 32 MiB volume made by the real mkodf. */
static struct odf_vol *fresh_volume(const char *name)
{
	char cmd[1024], img[512];
	struct odf_vol *v;
	errcode_t err;

	snprintf(img, sizeof(img), "%s/%s.img", tmpdir, name);
	unlink(img);
	snprintf(cmd, sizeof(cmd), "%s/tools/mkodf/mkodf -q %s 32M", topdir,
		 img);
	ck_assert_int_eq(system(cmd), 0);
	err = odf_vol_open(img, ODF_OPEN_RW, &v);
	ck_assert_msg(!err, "open %s: %s", img, error_message(err));
	return v;
}

static int odfck_status(const char *name)
{
	char cmd[1024];
	int st;

	snprintf(cmd, sizeof(cmd), "%s/tools/odfck/odfck -fn %s/%s.img "
		 ">/dev/null 2>&1", topdir, tmpdir, name);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- codec round trips ---------------------------------------------- */

START_TEST(test_super_roundtrip)
{
	struct odf_super sb, t;
	__u8 uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	size_t i;

	odf_sb_init(&sb, uuid, "label", 1234);
	ck_assert_int_eq(odf_sb_verify(&sb), ODF_GOOD);
	ck_assert_str_eq(sb.s_label, "label");
	ck_assert_int_eq(ext2fs_le64_to_cpu(sb.s_next_ino),
			 ODF_UINO_ALLOC_FIRST);
	ck_assert_int_eq(ext2fs_le16_to_cpu(sb.s_next_branch_id), 1);
	/* every single-byte change is caught */
	for (i = 0; i < sizeof(sb); i++) {
		t = sb;
		((unsigned char *)&t)[i] ^= 0x5a;
		ck_assert_msg(odf_sb_verify(&t) != ODF_GOOD, "byte %zu", i);
	}
	ck_assert_uint_eq(ext2fs_le16_to_cpu(sb.s_version), 2);
	t = sb;
	t.s_version = ext2fs_cpu_to_le16(ODF_FORMAT_V1);
	odf_sb_csum_set(&t);
	ck_assert_int_eq(odf_sb_verify(&t), ODF_BAD_VERSION);
	/* odfck --convert reads a format 1 header */
	ck_assert_int_eq(odf_sb_verify_version(&t, ODF_FORMAT_V1), ODF_GOOD);
	t.s_version = ext2fs_cpu_to_le16(3);
	odf_sb_csum_set(&t);
	ck_assert_int_eq(odf_sb_verify(&t), ODF_BAD_VERSION);
	t = sb;
	t.s_magic = 0;
	ck_assert_int_eq(odf_sb_verify(&t), ODF_BAD_MAGIC);
}
END_TEST

START_TEST(test_branch_roundtrip)
{
	struct odf_branch b;

	memset(&b, 0, sizeof(b));
	ck_assert(odf_branch_unused(&b));
	ck_assert_int_eq(odf_branch_verify(&b), ODF_GOOD);
	b.b_id = ext2fs_cpu_to_le16(3);
	b.b_flags = ext2fs_cpu_to_le16(ODF_BRANCH_PRESENT);
	b.b_mode = ext2fs_cpu_to_le16(ODF_MODE_RW);
	strcpy(b.b_path, "/srv/upper");
	strcpy(b.b_fstype, "xfs");
	odf_branch_csum_set(&b);
	ck_assert_int_eq(odf_branch_verify(&b), ODF_GOOD);
	b.b_path[0] = 'x';
	ck_assert_int_eq(odf_branch_verify(&b), ODF_BAD_CSUM);
	b.b_mode = ext2fs_cpu_to_le16(3);
	odf_branch_csum_set(&b);
	ck_assert_int_eq(odf_branch_verify(&b), ODF_BAD_FIELD);
	b.b_mode = ext2fs_cpu_to_le16(ODF_MODE_RO);
	b.b_flags = ext2fs_cpu_to_le16(ODF_BRANCH_PRESENT | ODF_BRANCH_REMOVED);
	odf_branch_csum_set(&b);
	ck_assert_int_eq(odf_branch_verify(&b), ODF_BAD_FIELD);
	b.b_flags = ext2fs_cpu_to_le16(ODF_BRANCH_REMOVED);
	memset(b.b_path, 'p', sizeof(b.b_path));
	odf_branch_csum_set(&b);
	ck_assert_int_eq(odf_branch_verify(&b), ODF_BAD_FIELD);
}
END_TEST

START_TEST(test_uino)
{
	ck_assert_uint_eq(odf_uino_det(1, 5), (1ULL << 48) | 5);
	ck_assert_uint_eq(odf_uino_det(0, 5), 0);
	ck_assert_uint_eq(odf_uino_det(ODF_BRANCH_ID_MAX + 1, 5), 0);
	ck_assert_uint_eq(odf_uino_det(ODF_BRANCH_ID_MAX, ODF_UINO_LOW_MASK),
			  0x7fffffffffffffffULL);
	ck_assert_uint_eq(odf_uino_det(1, 1ULL << 48), 0);
	ck_assert_uint_eq(odf_uino_det(1, 0), 0);
	ck_assert(odf_uino_is_alloc(ODF_UINO_ALLOC_FIRST));
	ck_assert(!odf_uino_is_alloc(odf_uino_det(2, 7)));
	ck_assert_uint_eq(odf_uino_branch(odf_uino_det(77, 9)), 77);
}
END_TEST

START_TEST(test_map_codec)
{
	struct odf_map_header h;
	struct odf_map_rec r;

	odf_map_hdr_init(&h, ODF_MAP_FORWARD, 64, 99);
	ck_assert_int_eq(odf_map_hdr_verify(&h, ODF_MAP_FORWARD), ODF_GOOD);
	ck_assert_int_eq(odf_map_hdr_verify(&h, ODF_MAP_REVERSE),
			 ODF_BAD_FIELD);
	odf_map_hdr_init(&h, ODF_MAP_FORWARD, 48, 99);	/* not a power of 2 */
	ck_assert_int_eq(odf_map_hdr_verify(&h, ODF_MAP_FORWARD),
			 ODF_BAD_FIELD);

	odf_map_rec_init(&r, ODF_MK_UPPER, 1, 500, odf_uino_det(2, 100), 2, 100);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD), ODF_GOOD);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_REVERSE),
			 ODF_BAD_FIELD);
	r.mr_handle_bytes = ext2fs_cpu_to_le16(ODF_HANDLE_MAX);
	memset(r.mr_handle, 0xab, ODF_HANDLE_MAX);
	r.mr_flags = ext2fs_cpu_to_le32(ODF_MREC_HAVE_HANDLE);
	odf_map_rec_csum_set(&r);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD), ODF_GOOD);
	r.mr_handle[5] ^= 1;
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD), ODF_BAD_CSUM);
	r.mr_handle_bytes = ext2fs_cpu_to_le16(ODF_HANDLE_MAX + 1);
	odf_map_rec_csum_set(&r);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD),
			 ODF_BAD_FIELD);

	/*
	 * COPIED carries the deterministic number of its key, or (a copy
	 * copied again, 6.3) its copy's, which pass 3 checks against the
	 * copy's UPPER record: any number verifies alone; a target is needed.
	 */
	odf_map_rec_init(&r, ODF_MK_COPIED, 2, 100, odf_uino_det(2, 100), 1, 500);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD), ODF_GOOD);
	odf_map_rec_init(&r, ODF_MK_COPIED, 2, 100, odf_uino_det(2, 101), 1, 500);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD), ODF_GOOD);
	odf_map_rec_init(&r, ODF_MK_COPIED, 2, 100, odf_uino_det(2, 100), 0, 0);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD),
			 ODF_BAD_FIELD);
	/* BIGINO numbers come from the allocated range */
	odf_map_rec_init(&r, ODF_MK_BIGINO, 2, 1ULL << 50, 20, 0, 0);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD), ODF_GOOD);
	odf_map_rec_init(&r, ODF_MK_BIGINO, 2, 1ULL << 50, odf_uino_det(2, 9),
			 0, 0);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD),
			 ODF_BAD_FIELD);
	/* reverse: key is the union inode */
	odf_map_rec_init(&r, ODF_MK_REVERSE, 0, 20, 20, 2, 1ULL << 50);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_REVERSE), ODF_GOOD);
	odf_map_rec_init(&r, ODF_MK_REVERSE, 0, 21, 20, 2, 1ULL << 50);
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_REVERSE),
			 ODF_BAD_FIELD);
	/* deleted slot: state byte only */
	memset(&r, 0, sizeof(r));
	r.mr_state = ODF_MREC_DELETED;
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD), ODF_GOOD);
	r.mr_kind = 1;
	ck_assert_int_eq(odf_map_rec_verify(&r, ODF_MAP_FORWARD),
			 ODF_BAD_FIELD);
}
END_TEST

static size_t node(unsigned char *buf, unsigned type, __u64 uino,
		   const struct odf_redir_ent *e, unsigned n)
{
	struct odf_node_info ni;

	memset(&ni, 0, sizeof(ni));
	ni.type = type;
	ni.nredirect = n;
	ni.time = 7;
	ni.uino = uino;
	ni.owner_ino = 12;
	ni.owner_gen = 34;
	return odf_node_encode(buf, &ni, e);
}

START_TEST(test_node_codec)
{
	unsigned char buf[ODF_NODE_BUF_MAX];
	struct odf_redir_ent e[3], out[3];
	struct odf_node_info ni;
	size_t len, i;
	static const char *const bad[] = {
		"a", "/", "/a/", "/a//b", "/a/../b", "/./a", "/a/..",
	};

	/* plain: header only */
	len = node(buf, 0, 0x1000000000011ULL, NULL, 0);
	ck_assert_uint_eq(len, sizeof(struct odf_node));
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0), ODF_GOOD);
	ck_assert_uint_eq(ni.type, 0);
	ck_assert_uint_eq(ni.uino, 0x1000000000011ULL);
	ck_assert_uint_eq(ni.owner_ino, 12);
	ck_assert_uint_eq(ni.owner_gen, 34);

	/* two entries, padded to 4 bytes each */
	e[0].branch = 2; e[0].path = "/usr/share/old"; e[0].len = 14;
	e[1].branch = 3; e[1].path = "/x"; e[1].len = 2;
	len = node(buf, ODF_NODE_OPAQUE | ODF_NODE_REDIRECT, 5, e, 2);
	ck_assert_uint_eq(len, 48 + 4 + 16 + 4 + 4);
	ck_assert_uint_eq(ext2fs_le16_to_cpu(((struct odf_node *)buf)->n_size),
			  len);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, out, 3), ODF_GOOD);
	ck_assert_uint_eq(ni.nredirect, 2);
	ck_assert(out[0].branch == 2 && out[0].len == 14 &&
		  !memcmp(out[0].path, "/usr/share/old", 14));
	ck_assert(out[1].branch == 3 && out[1].len == 2 &&
		  !memcmp(out[1].path, "/x", 2));
	ck_assert_int_eq(odf_node_decode(buf, len - 1, &ni, NULL, 0),
			 ODF_BAD_SIZE);
	buf[len - 1] ^= 1;
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_CSUM);
	/* every single-byte change of a good record is caught */
	len = node(buf, ODF_NODE_OPAQUE | ODF_NODE_REDIRECT, 5, e, 2);
	for (i = 0; i < len; i++) {
		buf[i] ^= 0x5a;
		ck_assert_msg(odf_node_decode(buf, len, &ni, NULL, 0) !=
			      ODF_GOOD, "byte %zu", i);
		buf[i] ^= 0x5a;
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e[2].branch = 2; e[2].path = bad[i]; e[2].len = strlen(bad[i]);
		len = node(buf, ODF_NODE_OPAQUE | ODF_NODE_REDIRECT, 5, &e[2],
			   1);
		ck_assert_msg(odf_node_decode(buf, len, &ni, NULL, 0) ==
			      ODF_BAD_REDIRECT, "redirect %s accepted", bad[i]);
	}
	/* a branch twice, branch 0 */
	e[2] = e[0];
	len = node(buf, ODF_NODE_OPAQUE | ODF_NODE_REDIRECT, 5, &e[1], 2);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0), ODF_GOOD);
	e[2].branch = 3;
	len = node(buf, ODF_NODE_OPAQUE | ODF_NODE_REDIRECT, 5, &e[1], 2);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_REDIRECT);
	e[2].branch = 0;
	len = node(buf, ODF_NODE_OPAQUE | ODF_NODE_REDIRECT, 5, &e[1], 2);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_REDIRECT);
	/* REDIRECT iff entries; WHITEOUT, REDIRECT alone, unknown bits */
	len = node(buf, ODF_NODE_OPAQUE | ODF_NODE_REDIRECT, 5, NULL, 0);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_REDIRECT);
	len = node(buf, ODF_NODE_OPAQUE, 5, e, 1);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_REDIRECT);
	len = node(buf, ODF_NODE_WHITEOUT, 5, NULL, 0);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_TYPE);
	ck_assert_uint_eq(ni.type, ODF_NODE_WHITEOUT);	/* for repair */
	len = node(buf, ODF_NODE_REDIRECT, 5, e, 1);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_TYPE);
	len = node(buf, 0x80, 5, NULL, 0);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_TYPE);
	/* uino 0 */
	len = node(buf, 0, 0, NULL, 0);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0),
			 ODF_BAD_FIELD);
	/* a record larger than ODF_NODE_MAX is not written */
	{
		static struct odf_redir_ent big[2];
		static char path[ODF_REDIRECT_PATH_MAX];

		memset(path, 'a', sizeof(path));
		path[0] = '/';
		big[0].branch = 2; big[0].path = path;
		big[0].len = ODF_REDIRECT_PATH_MAX;
		big[1].branch = 3; big[1].path = path; big[1].len = 100;
		ck_assert_uint_ne(node(buf, 6, 5, big, 1), 0);
		ck_assert_uint_eq(node(buf, 6, 5, big, 2), 0);
	}
	/* format 1's record still decodes, for odfck --convert */
	{
		unsigned char b1[ODF_NODE_V1_BUF_MAX];
		const char *r;
		size_t rl;
		unsigned t;

		len = odf_node_v1_encode(b1, ODF_NODE_REDIRECT, 7, "/x/old",
					 6);
		ck_assert_int_eq(odf_node_v1_decode(b1, len, &t, &r, &rl),
				 ODF_GOOD);
		ck_assert(t == ODF_NODE_REDIRECT && rl == 6 &&
			  !memcmp(r, "/x/old", 6));
		ck_assert_int_ne(odf_node_decode(b1, len, &ni, NULL, 0),
				 ODF_GOOD);
	}
}
END_TEST

static size_t intent(unsigned char *buf, unsigned op, __u64 seq, __u64 ino,
		     const char *s, const char *d, const char *sh,
		     const char *dh)
{
	struct odf_intent_info in;

	memset(&in, 0, sizeof(in));
	in.op = op;
	in.seq = seq;
	in.time = 1;
	in.ino = ino;
	in.gen = 0xdeadbeef;
	in.src_dir = 0x1000000000011ULL;
	in.dst_dir = op == ODF_INTENT_COPYUP ? in.src_dir : 2;
	in.src = s; in.src_len = strlen(s);
	in.dst = d; in.dst_len = strlen(d);
	in.src_hint = sh; in.src_hint_len = strlen(sh);
	in.dst_hint = dh; in.dst_hint_len = strlen(dh);
	return odf_intent_encode(buf, &in);
}

START_TEST(test_intent_codec)
{
	static unsigned char buf[ODF_INTENT_BUF_MAX];
	struct odf_intent_info in;
	size_t len;

	len = intent(buf, ODF_INTENT_RENAME, 42, 1ULL << 40, "old", "new",
		     "/a", "/");
	ck_assert_uint_eq(len, sizeof(struct odf_intent) + 9);
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_GOOD);
	ck_assert_uint_eq(in.op, ODF_INTENT_RENAME);
	ck_assert_uint_eq(in.seq, 42);
	ck_assert_uint_eq(in.ino, 1ULL << 40);
	ck_assert_uint_eq(in.gen, 0xdeadbeef);
	ck_assert_uint_eq(in.src_dir, 0x1000000000011ULL);
	ck_assert_uint_eq(in.dst_dir, 2);
	ck_assert(in.src_len == 3 && !memcmp(in.src, "old", 3));
	ck_assert(in.dst_len == 3 && !memcmp(in.dst, "new", 3));
	ck_assert(in.src_hint_len == 2 && !memcmp(in.src_hint, "/a", 2));
	ck_assert(in.dst_hint_len == 1 && !memcmp(in.dst_hint, "/", 1));
	ck_assert_int_eq(odf_intent_decode(buf, len - 1, &in), ODF_BAD_SIZE);
	buf[len - 1] ^= 1;
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_CSUM);
	len = intent(buf, 9, 42, 5, "a", "b", "/", "/");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_FIELD);
	/* a copy-up names one object: both sides the same */
	len = intent(buf, ODF_INTENT_COPYUP, 43, 0x1000000000012ULL, "sub",
		     "sub", "/a", "/a");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_GOOD);
	ck_assert_uint_eq(in.op, ODF_INTENT_COPYUP);
	ck_assert_uint_eq(in.ino, 0x1000000000012ULL);
	ck_assert_uint_eq(in.src_dir, in.dst_dir);
	len = intent(buf, ODF_INTENT_COPYUP, 43, 5, "sub", "bus", "/a", "/a");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_FIELD);
	len = intent(buf, ODF_INTENT_COPYUP, 43, 5, "sub", "sub", "/a", "/");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_FIELD);
	len = intent(buf, ODF_INTENT_COPYUP, 43, 0, "sub", "sub", "/a", "/a");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_FIELD);
	/* inode 0 was format 1's "unknown": invalid now */
	len = intent(buf, ODF_INTENT_RENAME, 42, 0, "a", "b", "/", "/");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_FIELD);
	/* names are names, hints are paths */
	len = intent(buf, ODF_INTENT_RENAME, 42, 5, "a/b", "b", "/", "/");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_NAME);
	len = intent(buf, ODF_INTENT_RENAME, 42, 5, "..", "b", "/", "/");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_NAME);
	len = intent(buf, ODF_INTENT_RENAME, 42, 5, "a", "b", "/x/..", "/");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_NAME);
	len = intent(buf, ODF_INTENT_RENAME, 42, 5, "a", "b", "/", "");
	ck_assert_int_eq(odf_intent_decode(buf, len, &in), ODF_BAD_NAME);
	/* format 1's intent still decodes, for odfck --convert */
	{
		static unsigned char b1[ODF_INTENT_V1_BUF_MAX];
		const char *s, *d;
		size_t sl, dl;
		__u64 seq, ino;
		__u32 gen;

		len = odf_intent_v1_encode(b1, 9, 1, 0, 0, "/a/old", "/b/new");
		ck_assert_int_eq(odf_intent_v1_decode(b1, len, &seq, &ino,
						      &gen, &s, &sl, &d, &dl),
				 ODF_GOOD);
		ck_assert(seq == 9 && ino == 0 && sl == 6 && dl == 6);
		ck_assert_int_ne(odf_intent_decode(b1, len, &in), ODF_GOOD);
	}
}
END_TEST

START_TEST(test_rd_nslots)
{
	ck_assert_uint_eq(odf_rd_nslots(1), 1);
	ck_assert_uint_eq(odf_rd_nslots(40), 1);
	ck_assert_uint_eq(odf_rd_nslots(41), 2);
	ck_assert_uint_eq(odf_rd_nslots(103), 2);
	ck_assert_uint_eq(odf_rd_nslots(104), 3);
	ck_assert_uint_eq(odf_rd_nslots(255), ODF_RD_MAX_NSLOTS);
}
END_TEST

/* ---- volumes -------------------------------------------------------- */

START_TEST(test_vol_layout)
{
	struct odf_vol *v = fresh_volume("layout");
	struct odf_super sb, backup;
	struct odf_branch br[ODF_BRANCH_SLOTS];
	struct odf_map m;
	int i;

	ck_assert(v->ino_super && v->ino_ns && v->ino_imap && v->ino_fwd &&
		  v->ino_rev && v->ino_readdir && v->ino_reclaim);
	ck_assert_int_eq(odf_sb_read(v, &sb, &backup, br), 0);
	ck_assert_int_eq(odf_sb_verify(&sb), ODF_GOOD);
	ck_assert_int_eq(odf_sb_verify(&backup), ODF_GOOD);
	ck_assert(!memcmp(&sb, &backup, sizeof(sb)));
	ck_assert_int_eq(ext2fs_le16_to_cpu(sb.s_state), ODF_STATE_CLEAN);
	for (i = 0; i < ODF_BRANCH_SLOTS; i++)
		ck_assert(odf_branch_unused(&br[i]));
	ck_assert_int_eq(odf_map_open(v, ODF_MAP_FORWARD, &m), 0);
	ck_assert_int_eq(odf_map_open(v, ODF_MAP_REVERSE, &m), 0);
	ck_assert(ext2fs_has_feature_journal(v->fs->super));
	ck_assert_int_eq(odf_vol_close(v), 0);
}
END_TEST

START_TEST(test_vol_branches)
{
	struct odf_vol *v = fresh_volume("branches");
	struct odf_super sb;
	struct odf_branch b, br[ODF_BRANCH_SLOTS];
	unsigned slot, i;

	ck_assert_int_eq(odf_sb_read(v, &sb, NULL, NULL), 0);
	for (i = 0; i < 3; i++) {
		memset(&b, 0, sizeof(b));
		snprintf(b.b_path, sizeof(b.b_path), "/b%u", i);
		b.b_order = ext2fs_cpu_to_le16(i);
		ck_assert_int_eq(odf_branch_add(v, &sb, &b, &slot), 0);
		ck_assert_uint_eq(slot, i);
	}
	ck_assert_int_eq(odf_sb_read(v, &sb, NULL, br), 0);
	ck_assert_int_eq(ext2fs_le16_to_cpu(sb.s_next_branch_id), 4);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(odf_branch_verify(&br[i]), ODF_GOOD);
		ck_assert_int_eq(ext2fs_le16_to_cpu(br[i].b_id), i + 1);
	}
	/* removal keeps the id; a new branch never gets it again */
	br[1].b_flags = ext2fs_cpu_to_le16(ODF_BRANCH_REMOVED);
	odf_branch_csum_set(&br[1]);
	ck_assert_int_eq(odf_branch_write(v, 1, &br[1]), 0);
	/* priorities of present branches stay dense: 0..n-1 */
	br[2].b_order = ext2fs_cpu_to_le16(1);
	odf_branch_csum_set(&br[2]);
	ck_assert_int_eq(odf_branch_write(v, 2, &br[2]), 0);
	memset(&b, 0, sizeof(b));
	b.b_order = ext2fs_cpu_to_le16(2);
	ck_assert_int_eq(odf_branch_add(v, &sb, &b, &slot), 0);
	ck_assert_uint_eq(slot, 3);
	ck_assert_int_eq(ext2fs_le16_to_cpu(b.b_id), 4);
	ck_assert_int_eq(odf_vol_close(v), 0);
	ck_assert_int_eq(odfck_status("branches"), 0);
}
END_TEST

START_TEST(test_vol_maps)
{
	struct odf_vol *v = fresh_volume("maps");
	struct odf_super sb;
	struct odf_branch b;
	struct odf_map f, r;
	struct odf_map_rec rec;
	const unsigned n = 3000;
	unsigned i;
	int found;

	ck_assert_int_eq(odf_sb_read(v, &sb, NULL, NULL), 0);
	for (i = 0; i < 2; i++) {
		memset(&b, 0, sizeof(b));
		b.b_order = ext2fs_cpu_to_le16(i);
		ck_assert_int_eq(odf_branch_add(v, &sb, &b, NULL), 0);
	}
	ck_assert_int_eq(odf_map_open(v, ODF_MAP_FORWARD, &f), 0);
	ck_assert_int_eq(odf_map_open(v, ODF_MAP_REVERSE, &r), 0);
	/* n copy-ups: upper (1, 10000+i) of lower (2, i+1); grows twice */
	for (i = 0; i < n; i++) {
		__u64 u = odf_uino_det(2, i + 1);

		odf_map_rec_init(&rec, ODF_MK_UPPER, 1, 10000 + i, u, 2, i + 1);
		ck_assert_int_eq(odf_map_insert(&f, &rec), 0);
		odf_map_rec_init(&rec, ODF_MK_REVERSE, 0, u, u, 1, 10000 + i);
		ck_assert_int_eq(odf_map_insert(&r, &rec), 0);
		odf_map_rec_init(&rec, ODF_MK_COPIED, 2, i + 1, u, 1, 10000 + i);
		ck_assert_int_eq(odf_map_insert(&f, &rec), 0);
	}
	ck_assert_uint_gt(ext2fs_le32_to_cpu(f.hdr.mh_nbuckets),
			  ODF_MAP_MIN_BUCKETS);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(odf_map_lookup(&f, 1, 10000 + i, &rec,
						&found), 0);
		ck_assert(found);
		ck_assert_uint_eq(ext2fs_le64_to_cpu(rec.mr_union_ino),
				  odf_uino_det(2, i + 1));
		ck_assert_int_eq(odf_map_lookup(&r, 0, odf_uino_det(2, i + 1),
						&rec, &found), 0);
		ck_assert(found);
		ck_assert_uint_eq(ext2fs_le64_to_cpu(rec.mr_tgt_ino),
				  10000 + i);
	}
	ck_assert_int_eq(odf_map_lookup(&f, 1, 9999, &rec, &found), 0);
	ck_assert(!found);
	/* the copies of odd files are deleted (unlink of the last link) */
	for (i = 1; i < n; i += 2) {
		ck_assert_int_eq(odf_map_delete(&f, 1, 10000 + i, &found), 0);
		ck_assert(found);
		ck_assert_int_eq(odf_map_delete(&f, 2, i + 1, &found), 0);
		ck_assert(found);
		ck_assert_int_eq(odf_map_delete(&r, 0, odf_uino_det(2, i + 1),
						&found), 0);
		ck_assert(found);
	}
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(odf_map_lookup(&f, 1, 10000 + i, &rec,
						&found), 0);
		ck_assert_int_eq(found, !(i & 1));
	}
	/* insert replaces a record with the same key */
	odf_map_rec_init(&rec, ODF_MK_UPPER, 1, 10000, odf_uino_det(2, 1), 0, 0);
	ck_assert_int_eq(odf_map_insert(&f, &rec), 0);
	ck_assert_int_eq(odf_map_lookup(&f, 1, 10000, &rec, &found), 0);
	ck_assert_uint_eq(ext2fs_le16_to_cpu(rec.mr_tgt_branch), 0);
	odf_map_rec_init(&rec, ODF_MK_UPPER, 1, 10000, odf_uino_det(2, 1), 2, 1);
	ck_assert_int_eq(odf_map_insert(&f, &rec), 0);
	ck_assert_uint_eq(ext2fs_le64_to_cpu(f.hdr.mh_nrecords), n);
	ck_assert_int_eq(odf_vol_close(v), 0);
	ck_assert_int_eq(odfck_status("maps"), 0);
}
END_TEST

START_TEST(test_vol_namespace)
{
	struct odf_vol *v = fresh_volume("ns");
	unsigned char buf[ODF_NODE_BUF_MAX];
	struct odf_redir_ent e[1], out[1];
	struct odf_node_info ni;
	char name[ODF_NS_NAME_LEN + 1];
	size_t len;
	int present;
	ext2_ino_t ino, wh;
	struct odf_dirent *ents;
	size_t n;
	__u64 u;
	struct odf_intent_info in;

	odf_ns_node_name(name, 0x1000000000011ULL);
	ck_assert_str_eq(name, "0001000000000011");
	ck_assert(odf_ns_parse_name(name, &u) && u == 0x1000000000011ULL);
	ck_assert(!odf_ns_parse_name("0001000000000ABC", &u));
	ck_assert(!odf_ns_parse_name("000100000000001", &u));
	ck_assert(!odf_ns_parse_name("0000000000000000", &u));
	ck_assert(!odf_ns_parse_name("8000000000000002", &u));

	/* a whiteout makes a plain node (owner 0) */
	ck_assert_int_eq(odf_ns_whiteout(v, 0x1000000000011ULL, "c"), 0);
	ck_assert_int_eq(odf_ns_whiteout(v, 0x1000000000011ULL, "c"), 0);
	ck_assert_int_eq(odf_ns_whiteout(v, 0x1000000000011ULL, "a/b"),
			 EXT2_ET_INVALID_ARGUMENT);
	ck_assert_int_eq(odf_ns_node_lookup(v, 0x1000000000011ULL, &ino), 0);
	ck_assert(odf_is_dir(v->fs, ino));
	ck_assert_int_eq(odf_lookup(v->fs, ino, "c", &wh), 0);
	ck_assert(!odf_is_dir(v->fs, wh));
	ck_assert_int_eq(odf_node_get(v->fs, wh, buf, &len, &present), 0);
	ck_assert(!present);	/* whiteouts carry no record */
	ck_assert_int_eq(odf_node_get(v->fs, ino, buf, &len, &present), 0);
	ck_assert(present);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, NULL, 0), ODF_GOOD);
	ck_assert(ni.type == 0 && ni.uino == 0x1000000000011ULL &&
		  ni.owner_ino == 0 && ni.owner_gen == 0);

	/* opaque and redirected nodes, with owners */
	ck_assert_int_eq(odf_ns_node_make(v, 0x1000000000012ULL,
					  ODF_NODE_OPAQUE, 18, 7, NULL, 0,
					  NULL), 0);
	e[0].branch = 2; e[0].path = "/x/old"; e[0].len = 6;
	ck_assert_int_eq(odf_ns_node_make(v, 0x1000000000013ULL,
					  ODF_NODE_OPAQUE | ODF_NODE_REDIRECT,
					  19, 8, e, 1, &ino), 0);
	ck_assert_int_eq(odf_node_get(v->fs, ino, buf, &len, &present), 0);
	ck_assert_int_eq(odf_node_decode(buf, len, &ni, out, 1), ODF_GOOD);
	ck_assert(ni.type == (ODF_NODE_OPAQUE | ODF_NODE_REDIRECT) &&
		  ni.owner_ino == 19 && ni.owner_gen == 8 &&
		  ni.nredirect == 1 && out[0].branch == 2 &&
		  out[0].len == 6 && !memcmp(out[0].path, "/x/old", 6));
	/* rewriting a node keeps its whiteouts */
	ck_assert_int_eq(odf_ns_node_make(v, 0x1000000000011ULL,
					  ODF_NODE_OPAQUE, 17, 1, NULL, 0,
					  &ino), 0);
	ck_assert_int_eq(odf_lookup(v->fs, ino, "c", &wh), 0);
	ck_assert_int_eq(odf_ns_whiteout_remove(v, 0x1000000000011ULL, "c"),
			 0);
	ck_assert_int_eq(odf_lookup(v->fs, ino, "c", &wh),
			 EXT2_ET_FILE_NOT_FOUND);
	/* removing the directory moves its node to reclaim */
	ck_assert_int_eq(odf_ns_node_reclaim(v, 0x1000000000012ULL), 0);
	ck_assert_int_eq(odf_ns_node_lookup(v, 0x1000000000012ULL, &ino),
			 EXT2_ET_FILE_NOT_FOUND);
	ck_assert_int_eq(odf_list_dir(v->fs, v->ino_reclaim, &ents, &n), 0);
	ck_assert_uint_eq(n, 1);
	free(ents);

	/* an intent is kept by odfck; a finished one is gone */
	memset(&in, 0, sizeof(in));
	in.op = ODF_INTENT_RENAME;
	in.seq = 5;
	in.ino = 77;
	in.src_dir = in.dst_dir = 2;
	in.src = "p"; in.src_len = 1;
	in.dst = "q"; in.dst_len = 1;
	in.src_hint = in.dst_hint = "/";
	in.src_hint_len = in.dst_hint_len = 1;
	ck_assert_int_eq(odf_intent_add(v, &in), 0);
	in.seq = 6;
	ck_assert_int_eq(odf_intent_add(v, &in), 0);
	ck_assert_int_eq(odf_intent_done(v, 6), 0);
	ck_assert_int_eq(odf_list_dir(v->fs, v->ino_reclaim, &ents, &n), 0);
	ck_assert_uint_eq(n, 2);	/* the node and intent 5 */
	free(ents);
	ck_assert_int_eq(odf_vol_close(v), 0);
	/* the reclaim entry is pending work: odfck -n reports it */
	ck_assert_int_eq(odfck_status("ns"), 4);
}
END_TEST

static void name_of(char *out, unsigned i)
{
	snprintf(out, 8, "n%05u", i);
}

START_TEST(test_vol_readdir)
{
	struct odf_vol *v = fresh_volume("rd");
	static struct odf_rd_entry ents[600];
	static __u32 ord_of[4000];
	struct odf_rd_entry e;
	struct odf_rd_stamp st;
	char longname[256];
	__u32 end, o;
	unsigned i;
	int eod, found;
	void *buf;
	size_t len;
	struct odf_rd_info info;
	ext2_ino_t ino;

	memset(&st, 0, sizeof(st));
	st.st_branch = ext2fs_cpu_to_le16(1);
	for (i = 0; i < 600; i++) {
		memset(&ents[i], 0, sizeof(ents[i]));
		if (i % 50 == 7) {	/* some maximal names */
			memset(ents[i].name, 'a' + i % 26, 255);
			snprintf(ents[i].name, 8, "L%05u", i);
			ents[i].name[6] = 'x';
			ents[i].name_len = 255;
		} else {
			name_of(ents[i].name, i);
			ents[i].name_len = strlen(ents[i].name);
		}
		ents[i].ino = odf_uino_det(1, 1000 + i);
		ents[i].dtype = 8;
		ents[i].branch = 1;
	}
	ck_assert_int_eq(odf_rd_build(v, 77, &st, 1, ents, 600), 0);
	/* ordinals of the initial listing */
	for (i = 0, o = 0; i < 600; i++) {
		ck_assert_int_eq(odf_rd_seek(v, 77, o, &e, &eod), 0);
		ck_assert(!eod);
		ck_assert_uint_eq(e.name_len, ents[i].name_len);
		ck_assert(!memcmp(e.name, ents[i].name, e.name_len));
		ck_assert_uint_lt(e.ordinal, ODF_RD_OFF_MAX);
		ord_of[i] = e.ordinal;
		o = e.ordinal + 1;
	}
	ck_assert_int_eq(odf_rd_seek(v, 77, o, &e, &eod), 0);
	ck_assert(eod);
	/* append 1400 more (the index grows), tombstone every third */
	for (i = 600; i < 2000; i++) {
		memset(&e, 0, sizeof(e));
		name_of(e.name, i);
		e.name_len = strlen(e.name);
		e.ino = odf_uino_det(1, 1000 + i);
		ck_assert_int_eq(odf_rd_append(v, 77, &e, &ord_of[i]), 0);
	}
	for (i = 0; i < 2000; i += 3) {
		char nm[256];
		size_t nl;

		if (i < 600) {
			nl = ents[i].name_len;
			memcpy(nm, ents[i].name, nl);
		} else {
			name_of(nm, i);
			nl = strlen(nm);
		}
		ck_assert_int_eq(odf_rd_tombstone(v, 77, nm, nl, &found), 0);
		ck_assert_msg(found, "entry %u not found", i);
	}
	ck_assert_int_eq(odf_rd_tombstone(v, 77, "nope", 4, &found), 0);
	ck_assert(!found);
	/* a live name cannot be listed twice; a removed one comes back
	 * with a new offset, the old one stays dead */
	memset(&e, 0, sizeof(e));
	name_of(e.name, 1);
	e.name_len = strlen(e.name);
	e.ino = 5;
	ck_assert_int_eq(odf_rd_append(v, 77, &e, &o), EXT2_ET_FILE_EXISTS);
	name_of(e.name, 3);
	ck_assert_int_eq(odf_rd_append(v, 77, &e, &o), 0);
	ck_assert_uint_gt(o, ord_of[1999]);
	ck_assert_int_eq(odf_rd_tombstone(v, 77, e.name, e.name_len, &found),
			 0);
	ck_assert(found);
	/* survivors keep their offsets; dead ones lead to the next live */
	for (i = 0; i < 2000; i++) {
		ck_assert_int_eq(odf_rd_seek(v, 77, ord_of[i], &e, &eod), 0);
		if (i % 3) {
			ck_assert(!eod);
			ck_assert_uint_eq(e.ordinal, ord_of[i]);
		} else if (i + 1 < 2000) {
			ck_assert_uint_eq(e.ordinal, ord_of[i + 1]);
		}
	}
	ck_assert_int_eq(odf_rd_end(v, 77, &end), 0);
	ck_assert_uint_gt(end, ord_of[1999]);
	ck_assert_int_eq(odf_rd_seek(v, 77, end, &e, &eod), 0);
	ck_assert(eod);
	/* the file verifies, and its counts add up */
	odf_rd_name(longname, 77);
	ck_assert_int_eq(odf_lookup(v->fs, v->ino_readdir, longname, &ino), 0);
	ck_assert_int_eq(odf_file_read_all(v->fs, ino, 1ULL << 30, &buf, &len),
			 0);
	ck_assert_int_eq(odf_rd_check(buf, len, &info, NULL, NULL), ODF_GOOD);
	ck_assert_uint_eq(info.live + info.tombstones, 2001);
	ck_assert_uint_eq(info.tombstones, 668);
	/*
	 * The record area may start after holes (spec 7.1: the module's
	 * builds that do not count first), never inside the index.
	 */
	{
		struct odf_rd_header *h = buf;
		__u32 rs = ext2fs_le32_to_cpu(h->rh_rec_start);
		__u32 nb = ext2fs_le32_to_cpu(h->rh_index_buckets);
		size_t at = (size_t)rs * ODF_BLOCK_SIZE, gap = 3 * ODF_BLOCK_SIZE;
		unsigned char *g = calloc(1, len + gap);
		struct odf_rd_header *gh = (void *)g;

		ck_assert_ptr_nonnull(g);
		ck_assert_uint_eq(rs, 1 + nb);
		memcpy(g, buf, at);
		memcpy(g + at + gap, (unsigned char *)buf + at, len - at);
		gh->rh_rec_start = ext2fs_cpu_to_le32(rs + 3);
		gh->rh_crc = 0;
		gh->rh_crc = ext2fs_cpu_to_le32(ext2fs_crc32c_le(~0U, g,
							      ODF_BLOCK_SIZE));
		ck_assert_int_eq(odf_rd_check(g, len + gap, &info, NULL, NULL),
				 ODF_GOOD);
		ck_assert_uint_eq(info.live + info.tombstones, 2001);
		ck_assert_uint_eq(info.tombstones, 668);
		gh->rh_rec_start = ext2fs_cpu_to_le32(nb);
		gh->rh_crc = 0;
		gh->rh_crc = ext2fs_cpu_to_le32(ext2fs_crc32c_le(~0U, g,
							      ODF_BLOCK_SIZE));
		ck_assert_int_ne(odf_rd_check(g, len + gap, &info, NULL, NULL),
				 ODF_GOOD);
		free(g);
	}
	free(buf);
	ck_assert_int_eq(odf_vol_close(v), 0);
	ck_assert_int_eq(odfck_status("rd"), 0);
}
END_TEST

/* ---- runner: one TAP line per test ---------------------------------- */

#define ADD(s, fn) do {						\
	TCase *tc = tcase_create(#fn);				\
	tcase_set_timeout(tc, 120);				\
	tcase_add_test(tc, fn);					\
	suite_add_tcase(s, tc);					\
} while (0)

int main(void)
{
	Suite *s = suite_create("libodf");
	SRunner *sr;
	TestResult **res;
	int i, n, failed = 0;
	char cmd[600];

	add_error_table(&et_ext2_error_table);
	topdir = getenv("TOPDIR");
	if (!topdir)
		topdir = "../..";
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	ADD(s, test_super_roundtrip);
	ADD(s, test_branch_roundtrip);
	ADD(s, test_uino);
	ADD(s, test_map_codec);
	ADD(s, test_node_codec);
	ADD(s, test_intent_codec);
	ADD(s, test_rd_nslots);
	ADD(s, test_vol_layout);
	ADD(s, test_vol_branches);
	ADD(s, test_vol_maps);
	ADD(s, test_vol_namespace);
	ADD(s, test_vol_readdir);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_SILENT);
	n = srunner_ntests_run(sr);
	res = srunner_results(sr);
	for (i = 0; i < n; i++) {
		if (tr_rtype(res[i]) == CK_PASS) {
			printf("ok - libodf %s\n", tr_tcname(res[i]));
		} else {
			failed++;
			printf("not ok - libodf %s\n# %s:%d: %s\n",
			       tr_tcname(res[i]), tr_lfile(res[i]),
			       tr_lno(res[i]), tr_msg(res[i]));
		}
	}
	free(res);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return failed ? 1 : 0;
}
