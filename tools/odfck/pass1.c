// SPDX-License-Identifier: GPL-2.0
/*
 * pass1.c - the ODF superblock (primary and backup), its state and
 * features, the branch table, and the top-level layout.
 */
#include <stdlib.h>
#include <string.h>
#include "odfck.h"

/* Fields that must agree between the primary and the backup header. */
static int backup_differs(const struct odf_super *a, const struct odf_super *b)
{
	return a->s_feature_compat != b->s_feature_compat ||
	       a->s_feature_ro_compat != b->s_feature_ro_compat ||
	       a->s_feature_incompat != b->s_feature_incompat ||
	       memcmp(a->s_uuid, b->s_uuid, sizeof(a->s_uuid)) ||
	       memcmp(a->s_label, b->s_label, sizeof(a->s_label)) ||
	       a->s_mkfs_time != b->s_mkfs_time;
}

static int check_header(struct odfck_ctx *ctx)
{
	struct problem_context pc;
	struct odf_super backup;
	__u64 size;
	int pv, bv;
	errcode_t err;

	memset(&pc, 0, sizeof(pc));
	if (!ctx->v->ino_super) {
		fix_problem(ctx, PR_1_NO_SUPER, &pc);
		return FSCK_ERROR;
	}
	err = odf_sb_read(ctx->v, &ctx->sb, &backup, ctx->br);
	if (err) {
		odfck_com_err(ctx, err, "reading /superblock");
		return FSCK_ERROR;
	}
	/* format 1: only odfck --convert goes on (section 12) */
	ctx->fmt = ODF_FORMAT_VERSION;
	if (odf_sb_verify_version(&ctx->sb, ODF_FORMAT_V1) == ODF_GOOD ||
	    (odf_sb_verify(&ctx->sb) != ODF_GOOD &&
	     odf_sb_verify_version(&backup, ODF_FORMAT_V1) == ODF_GOOD)) {
		if (!ctx->convert) {
			pc.str = ctx->dev;
			fix_problem(ctx, PR_1_FORMAT_V1, &pc);
			return FSCK_ERROR;
		}
		ctx->fmt = ODF_FORMAT_V1;
		ctx->check_forced = 1;
	} else if (ctx->convert) {
		fix_problem(ctx, PR_1_ALREADY_V2, &pc);
	}
	pv = odf_sb_verify_version(&ctx->sb, ctx->fmt);
	bv = odf_sb_verify_version(&backup, ctx->fmt);
	if (pv == ODF_BAD_MAGIC && bv == ODF_BAD_MAGIC) {
		fix_problem(ctx, PR_1_NOT_ODF, &pc);
		return FSCK_ERROR;
	}
	if (pv == ODF_BAD_VERSION || (pv != ODF_GOOD && bv == ODF_BAD_VERSION)) {
		const struct odf_super *s = pv == ODF_BAD_VERSION ? &ctx->sb :
								    &backup;

		pc.num = ext2fs_le16_to_cpu(s->s_version);
		pc.num2 = ODF_FORMAT_VERSION;
		fix_problem(ctx, PR_1_VERSION, &pc);
		return FSCK_ERROR;
	}
	if (pv != ODF_GOOD) {
		pc.str = odf_bad_str(pv);
		if (bv != ODF_GOOD) {
			/* both damaged: a copy whose only fault is its
			 * checksum can still be trusted by a human (-y) */
			struct odf_super t = ctx->sb;

			odf_sb_csum_set(&t);
			pc.str2 = "primary";
			if (odf_sb_verify_version(&t, ctx->fmt) != ODF_GOOD) {
				t = backup;
				odf_sb_csum_set(&t);
				pc.str2 = "backup";
			}
			if (odf_sb_verify_version(&t, ctx->fmt) != ODF_GOOD) {
				pc.str2 = odf_bad_str(bv);
				fix_problem(ctx, PR_1_SB_BOTH_BAD, &pc);
				return FSCK_ERROR;
			}
			if (fix_problem(ctx, PR_1_SB_CSUM_ONLY, &pc))
				ctx->sb_dirty = ctx->backup_dirty = 1;
			ctx->sb = t;
			ctx->check_forced = 1;
			goto features;
		}
		/* with -n, go on with the backup in memory */
		if (fix_problem(ctx, PR_1_SB_BAD, &pc))
			ctx->sb_dirty = 1;
		ctx->sb = backup;
		ctx->check_forced = 1;
	} else if (bv != ODF_GOOD || backup_differs(&ctx->sb, &backup)) {
		pc.str = bv != ODF_GOOD ? odf_bad_str(bv) : "differs from "
			 "the primary";
		if (fix_problem(ctx, PR_1_BACKUP_BAD, &pc))
			ctx->backup_dirty = ctx->sb_dirty = 1;
		ctx->check_forced = 1;
	}

features:
	memset(&pc, 0, sizeof(pc));
	pc.num = ext2fs_le32_to_cpu(ctx->sb.s_feature_incompat) &
		 ~ODF_FEATURE_INCOMPAT_SUPP;
	if (pc.num) {
		fix_problem(ctx, PR_1_INCOMPAT, &pc);
		return FSCK_ERROR;
	}
	pc.num = ext2fs_le32_to_cpu(ctx->sb.s_feature_ro_compat) &
		 ~ODF_FEATURE_RO_COMPAT_SUPP;
	if (pc.num && !odfck_readonly(ctx)) {
		fix_problem(ctx, PR_1_RO_COMPAT, &pc);
		return FSCK_ERROR;
	}

	err = odf_file_size(ctx->v->fs, ctx->v->ino_super, &size);
	if (err) {
		odfck_com_err(ctx, err, "reading /superblock");
		return FSCK_ERROR;
	}
	if (size != ODF_SB_FILE_SIZE) {
		pc.num = size;
		pc.num2 = ODF_SB_FILE_SIZE;
		if (fix_problem(ctx, PR_1_SB_SIZE, &pc)) {
			err = odf_file_truncate(ctx->v->fs, ctx->v->ino_super,
						ODF_SB_FILE_SIZE);
			if (err) {
				odfck_com_err(ctx, err, "resizing /superblock");
				return FSCK_ERROR;
			}
			ctx->backup_dirty = ctx->sb_dirty = 1;
		}
	}
	return 0;
}

static void check_state(struct odfck_ctx *ctx)
{
	struct problem_context pc;
	unsigned st = ext2fs_le16_to_cpu(ctx->sb.s_state);
	unsigned i;
	int reserved = ctx->sb.s_pad0 != 0;

	memset(&pc, 0, sizeof(pc));
	if ((st & ~ODF_STATE_VALID_MASK) ||
	    !(st & (ODF_STATE_CLEAN | ODF_STATE_MOUNTED)) ||
	    ((st & ODF_STATE_CLEAN) && (st & ODF_STATE_MOUNTED))) {
		pc.num = st;
		/* unknown state: treat it as an unclean shutdown */
		if (fix_problem(ctx, PR_1_STATE_INVALID, &pc))
			ctx->mark_clean = 1;
		ctx->check_forced = 1;
	} else if (st & ODF_STATE_MOUNTED) {
		if (fix_problem(ctx, PR_1_NOT_CLEAN, &pc))
			ctx->mark_clean = 1;
		ctx->check_forced = 1;
	}
	if (st & ODF_STATE_ERRORS) {
		pc.num = ext2fs_le32_to_cpu(ctx->sb.s_error_count);
		if (fix_problem(ctx, PR_1_ERRORS, &pc))
			ctx->mark_clean = 1;
		ctx->check_forced = 1;
	}
	if (!memchr(ctx->sb.s_label, 0, sizeof(ctx->sb.s_label))) {
		if (fix_problem(ctx, PR_1_LABEL, &pc)) {
			ctx->sb.s_label[ODF_LABEL_MAX - 1] = 0;
			ctx->sb_dirty = ctx->backup_dirty = 1;
		}
	}
	for (i = 0; i < sizeof(ctx->sb.s_reserved) / 8; i++)
		if (ctx->sb.s_reserved[i])
			reserved = 1;
	if (reserved && fix_problem(ctx, PR_1_RESERVED, &pc)) {
		ctx->sb.s_pad0 = 0;
		memset(ctx->sb.s_reserved, 0, sizeof(ctx->sb.s_reserved));
		ctx->sb_dirty = ctx->backup_dirty = 1;
	}
}

/* Would the entry verify if only its checksum were recomputed? */
static int sane_but_csum(const struct odf_branch *b)
{
	struct odf_branch t = *b;

	odf_branch_csum_set(&t);
	return odf_branch_verify(&t) == ODF_GOOD;
}

static int cmp_order(const void *a, const void *b)
{
	const unsigned *x = a, *y = b;

	return (int)(x[0] - y[0]) ? (x[0] < y[0] ? -1 : 1) :
	       (x[1] < y[1] ? -1 : x[1] > y[1]);
}

static void check_branches(struct odfck_ctx *ctx)
{
	struct problem_context pc;
	unsigned i, j, maxid = 0, npresent = 0, next;
	unsigned order[ODF_BRANCH_SLOTS][2];
	int renumber = 0;

	for (i = 0; i < ODF_BRANCH_SLOTS; i++) {
		struct odf_branch *b = &ctx->br[i];
		int v;

		if (odf_branch_unused(b))
			continue;
		v = odf_branch_verify(b);
		if (v == ODF_GOOD)
			continue;
		memset(&pc, 0, sizeof(pc));
		pc.num = i;
		pc.num2 = ext2fs_le16_to_cpu(b->b_id);
		if (v == ODF_BAD_CSUM && sane_but_csum(b)) {
			pc.str = b->b_path;
			if (fix_problem(ctx, PR_1_BRANCH_CSUM, &pc)) {
				odf_branch_csum_set(b);
				ctx->br_dirty = 1;
			}
			continue;
		}
		pc.str = v == ODF_BAD_CSUM ? "checksum mismatch and invalid "
			 "fields" : odf_bad_str(v);
		if (fix_problem(ctx, PR_1_BRANCH_BAD, &pc)) {
			memset(b, 0, sizeof(*b));
			ctx->br_dirty = 1;
		}
	}
	for (i = 0; i < ODF_BRANCH_SLOTS; i++) {
		unsigned id = ext2fs_le16_to_cpu(ctx->br[i].b_id);

		if (odf_branch_unused(&ctx->br[i]))
			continue;
		for (j = 0; j < i; j++) {
			if (odf_branch_unused(&ctx->br[j]) ||
			    ext2fs_le16_to_cpu(ctx->br[j].b_id) != id)
				continue;
			memset(&pc, 0, sizeof(pc));
			pc.num = i;
			pc.num2 = id;
			pc.num3 = j;
			if (fix_problem(ctx, PR_1_BRANCH_DUP, &pc)) {
				memset(&ctx->br[i], 0, sizeof(ctx->br[i]));
				ctx->br_dirty = 1;
			}
			break;
		}
	}
	for (i = 0; i < ODF_BRANCH_SLOTS; i++) {
		unsigned id = ext2fs_le16_to_cpu(ctx->br[i].b_id);

		if (odf_branch_unused(&ctx->br[i]))
			continue;
		if (id > maxid && id <= ODF_BRANCH_ID_MAX)
			maxid = id;
		if (ext2fs_le16_to_cpu(ctx->br[i].b_flags) ==
		    ODF_BRANCH_PRESENT) {
			order[npresent][0] =
				ext2fs_le16_to_cpu(ctx->br[i].b_order);
			order[npresent][1] = i;
			npresent++;
		}
	}
	next = ext2fs_le16_to_cpu(ctx->sb.s_next_branch_id);
	if (next <= maxid || next == 0) {
		memset(&pc, 0, sizeof(pc));
		pc.num = next;
		pc.num2 = maxid;
		if (fix_problem(ctx, PR_1_NEXT_BRANCH_ID, &pc)) {
			ctx->sb.s_next_branch_id =
				ext2fs_cpu_to_le16(maxid + 1);
			ctx->sb_dirty = ctx->backup_dirty = 1;
		}
	}
	qsort(order, npresent, sizeof(order[0]), cmp_order);
	for (i = 0; i < npresent; i++)
		if (order[i][0] != i)
			renumber = 1;
	if (renumber) {
		memset(&pc, 0, sizeof(pc));
		pc.num = npresent ? npresent - 1 : 0;
		if (fix_problem(ctx, PR_1_BRANCH_ORDER, &pc)) {
			for (i = 0; i < npresent; i++) {
				struct odf_branch *b = &ctx->br[order[i][1]];

				b->b_order = ext2fs_cpu_to_le16(i);
				odf_branch_csum_set(b);
			}
			ctx->br_dirty = 1;
		}
	}
	ctx->n_branches = npresent;
}

/* /ns, /imap, /readdir and /reclaim: present and directories. */
static int check_layout(struct odfck_ctx *ctx)
{
	static const char *const dirs[] = {
		ODF_PATH_NS, ODF_PATH_IMAP, ODF_PATH_READDIR, ODF_PATH_RECLAIM,
	};
	ext2_filsys fs = ctx->v->fs;
	unsigned i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct problem_context pc;
		ext2_ino_t ino;
		int exists = !odf_lookup(fs, EXT2_ROOT_INO, dirs[i], &ino);
		int code;
		errcode_t err = 0;

		if (exists && odf_is_dir(fs, ino))
			continue;
		memset(&pc, 0, sizeof(pc));
		pc.str = dirs[i];
		code = i == 0 ? PR_1_NS_MISSING : exists ? PR_1_LAYOUT_TYPE :
		       PR_1_LAYOUT_MISSING;
		if (!fix_problem(ctx, code, &pc))
			continue;
		if (exists)
			err = odf_remove(fs, EXT2_ROOT_INO, dirs[i]);
		if (!err)
			err = odf_mkdir(fs, EXT2_ROOT_INO, dirs[i], NULL);
		if (err) {
			odfck_com_err(ctx, err, "recreating the ODF layout");
			return FSCK_ERROR;
		}
	}
	/* A branch change's new superblock file, never renamed (3.5). */
	{
		struct problem_context pc;
		ext2_ino_t ino;
		errcode_t err;

		if (!odf_lookup(fs, EXT2_ROOT_INO, ODF_PATH_SUPER_NEW, &ino)) {
			memset(&pc, 0, sizeof(pc));
			pc.str = ODF_PATH_SUPER_NEW;
			if (fix_problem(ctx, PR_1_SUPER_NEW, &pc)) {
				err = odf_remove(fs, EXT2_ROOT_INO,
						 ODF_PATH_SUPER_NEW);
				if (err) {
					odfck_com_err(ctx, err, "deleting /"
						      ODF_PATH_SUPER_NEW);
					return FSCK_ERROR;
				}
			}
		}
	}
	odf_vol_find_layout(ctx->v);
	return 0;
}

int odfck_pass1(struct odfck_ctx *ctx)
{
	errcode_t err;
	int st;

	st = check_header(ctx);
	if (st)
		return st;
	check_state(ctx);
	check_branches(ctx);
	if (ctx->fmt == ODF_FORMAT_V1) {
		st = odfck_convert_prepare(ctx);
		if (st)
			return st;
	}
	st = check_layout(ctx);
	if (st)
		return st;
	if (odfck_readonly(ctx))
		return 0;
	if (ctx->br_dirty) {
		unsigned i;

		for (i = 0; i < ODF_BRANCH_SLOTS; i++) {
			err = odf_branch_write(ctx->v, i, &ctx->br[i]);
			if (err) {
				odfck_com_err(ctx, err, "writing the branch "
					      "table");
				return FSCK_ERROR;
			}
		}
		ctx->br_dirty = 0;
	}
	if (ctx->sb_dirty || ctx->backup_dirty) {
		err = write_super(ctx);
		if (err) {
			odfck_com_err(ctx, err, "writing the ODF superblock");
			return FSCK_ERROR;
		}
	}
	return 0;
}
