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
	const char *num = de->name + strlen(ODF_INTENT_PREFIX);
	struct odf_intent_info in;
	size_t len;
	__u64 want;
	void *buf = NULL;
	char *end, *what;
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
			bad = odf_intent_decode(buf, len, &in);
			if (!bad && in.seq != want)
				bad = ODF_BAD_FIELD;
			pc->str2 = odf_bad_str(bad);
		}
	}
	if (!bad) {
		/* "hint/name" of each side: the upper paths, readable */
		what = malloc(2 * (ODF_INTENT_HINT_MAX + ODF_INTENT_NAME_MAX) +
			      8);
		if (!what) {
			free(buf);
			return FSCK_ERROR;
		}
		pc->path = what;
		pc->str2 = what + ODF_INTENT_HINT_MAX + ODF_INTENT_NAME_MAX + 4;
		sprintf(what, "%.*s%s%.*s", (int)in.src_hint_len, in.src_hint,
			in.src_hint_len == 1 ? "" : "/", (int)in.src_len,
			in.src);
		sprintf((char *)pc->str2, "%.*s%s%.*s", (int)in.dst_hint_len,
			in.dst_hint, in.dst_hint_len == 1 ? "" : "/",
			(int)in.dst_len, in.dst);
		ctx->n_intents++;
		fix_problem(ctx, in.op == ODF_INTENT_COPYUP ?
			    PR_5_INTENT_COPYUP_PENDING : PR_5_INTENT_PENDING,
			    pc);
		free(what);
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
