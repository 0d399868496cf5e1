// SPDX-License-Identifier: GPL-2.0
/*
 * pass5.c - reclaim area and summary: finish deferred deletions, then
 * move the counters forward and mark the volume clean.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "odfck.h"

/*
 * An intent is work only the module can finish (it needs the branches).
 * Returns -1 for a valid intent (keep it), 0 when the caller must
 * delete it, or an exit code.
 */
static int check_intent(struct odfck_ctx *ctx, const struct odf_dirent *de,
			struct problem_context *pc)
{
	const char *src, *dst, *num = de->name + strlen(ODF_INTENT_PREFIX);
	char srcb[ODF_INTENT_PATH_MAX + 1], dstb[ODF_INTENT_PATH_MAX + 1];
	size_t len, sl, dl;
	unsigned op;
	__u64 seq, want;
	void *buf = NULL;
	char *end;
	int bad = ODF_BAD_FIELD;
	errcode_t err;

	want = strtoull(num, &end, 16);
	if (odf_is_dir(ctx->v->fs, de->ino) || strlen(num) != 16 || *end) {
		pc->str2 = "not an intent file";
	} else {
		err = odf_file_read_all(ctx->v->fs, de->ino,
					ODF_INTENT_BUF_MAX, &buf, &len);
		if (err == EXT2_ET_FILE_TOO_BIG) {
			pc->str2 = "too large";
		} else if (err) {
			odfck_com_err(ctx, err, "reading an intent");
			return FSCK_ERROR;
		} else {
			bad = odf_intent_decode(buf, len, &op, &seq, &src, &sl,
						&dst, &dl);
			if (!bad && seq != want)
				bad = ODF_BAD_FIELD;
			pc->str2 = odf_bad_str(bad);
		}
	}
	if (!bad) {
		memcpy(srcb, src, sl);
		srcb[sl] = 0;
		memcpy(dstb, dst, dl);
		dstb[dl] = 0;
		pc->path = srcb;
		pc->str2 = dstb;
		ctx->n_intents++;
		fix_problem(ctx, PR_5_INTENT_PENDING, pc);
		free(buf);
		return -1;
	}
	free(buf);
	return fix_problem(ctx, PR_5_INTENT_BAD, pc) ? 0 : -1;
}

static int finish_reclaim(struct odfck_ctx *ctx)
{
	struct odf_dirent *ents;
	size_t n, i;
	errcode_t err;

	if (!ctx->v->ino_reclaim)
		return 0;
	err = odf_list_dir(ctx->v->fs, ctx->v->ino_reclaim, &ents, &n);
	if (err) {
		odfck_com_err(ctx, err, "reading /reclaim");
		return FSCK_ERROR;
	}
	for (i = 0; i < n; i++) {
		struct problem_context pc;
		int st;

		memset(&pc, 0, sizeof(pc));
		pc.str = ents[i].name;
		if (!strncmp(ents[i].name, ODF_INTENT_PREFIX,
			     strlen(ODF_INTENT_PREFIX))) {
			st = check_intent(ctx, &ents[i], &pc);
			if (st < 0)
				continue;	/* valid: kept for the mount */
			if (st) {
				free(ents);
				return st;
			}
		} else {
			ctx->n_reclaim++;
			if (!fix_problem(ctx, PR_5_RECLAIM, &pc))
				continue;
		}
		err = odf_remove(ctx->v->fs, ctx->v->ino_reclaim,
				 ents[i].name);
		if (err) {
			odfck_com_err(ctx, err, "finishing reclaim");
			free(ents);
			return FSCK_ERROR;
		}
	}
	free(ents);
	return 0;
}

int odfck_pass5(struct odfck_ctx *ctx)
{
	unsigned state;
	int st;
	errcode_t err;

	st = finish_reclaim(ctx);
	if (st || odfck_readonly(ctx))
		return st;
	/*
	 * Clean only when nothing is left: a volume with problems the
	 * user declined keeps its state so the next check is forced.
	 */
	state = ext2fs_le16_to_cpu(ctx->sb.s_state);
	if (!ctx->unfixed) {
		if (ctx->mark_clean || state != ODF_STATE_CLEAN) {
			state = ODF_STATE_CLEAN;
			ctx->sb.s_error_count = 0;
		}
		ctx->sb.s_state = ext2fs_cpu_to_le16(state);
	}
	ctx->sb.s_check_time = ext2fs_cpu_to_le64(time(NULL));
	err = write_super(ctx);
	if (err) {
		odfck_com_err(ctx, err, "writing the ODF superblock");
		return FSCK_ERROR;
	}
	return 0;
}
