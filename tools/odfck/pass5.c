// SPDX-License-Identifier: GPL-2.0
/*
 * pass5.c - reclaim area and summary: finish deferred deletions, then
 * move the counters forward and mark the volume clean.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "odfck.h"

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

		memset(&pc, 0, sizeof(pc));
		pc.str = ents[i].name;
		ctx->n_reclaim++;
		if (!fix_problem(ctx, PR_5_RECLAIM, &pc))
			continue;
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
