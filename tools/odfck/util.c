// SPDX-License-Identifier: GPL-2.0
/*
 * util.c - small helpers shared by the passes.
 */
#include <string.h>
#include <time.h>
#include "odfck.h"

/* A branch id that has a slot (present or removed) in the table. */
int branch_known(struct odfck_ctx *ctx, unsigned id)
{
	unsigned i;

	if (!id)
		return 0;
	for (i = 0; i < ODF_BRANCH_SLOTS; i++)
		if (ext2fs_le16_to_cpu(ctx->br[i].b_id) == id)
			return 1;
	return 0;
}

/* Write the primary header (and the backup when it must change). */
errcode_t write_super(struct odfck_ctx *ctx)
{
	errcode_t err;

	ctx->sb.s_write_time = ext2fs_cpu_to_le64(time(NULL));
	odf_sb_csum_set(&ctx->sb);
	err = odf_sb_write(ctx->v, &ctx->sb, ctx->backup_dirty);
	if (!err) {
		ctx->sb_dirty = 0;
		ctx->backup_dirty = 0;
	}
	return err;
}

void path_join(char *out, size_t n, const char *dir, const char *name)
{
	if (!strcmp(dir, "/"))
		snprintf(out, n, "/%s", name);
	else
		snprintf(out, n, "%s/%s", dir, name);
}
