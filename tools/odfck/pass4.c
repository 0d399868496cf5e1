// SPDX-License-Identifier: GPL-2.0
/*
 * pass4.c - readdir state.  It is a cache: anything that does not
 * verify completely is dropped, and the module rebuilds it on the next
 * opendir.  Nothing in it is ever patched.
 */
#include <stdlib.h>
#include <string.h>
#include "odfck.h"

#define RD_MAX_BYTES	(ODF_BLOCK_SIZE * (1ULL + (1ULL << 20)) + \
			 (ODF_RD_OFF_MAX / ODF_RD_SLOTS_PER_BLOCK + 1) * \
			 (__u64)ODF_BLOCK_SIZE)

static int name_to_ino(const char *name, __u64 *ino)
{
	size_t i;

	if (strlen(name) != ODF_RD_NAME_LEN)
		return -1;
	*ino = 0;
	for (i = 0; i < ODF_RD_NAME_LEN; i++) {
		char c = name[i];

		if (c >= '0' && c <= '9')
			*ino = *ino << 4 | (__u64)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*ino = *ino << 4 | (__u64)(c - 'a' + 10);
		else
			return -1;
	}
	return 0;
}

static int drop(struct odfck_ctx *ctx, int code, struct problem_context *pc,
		const char *name)
{
	errcode_t err;

	if (!fix_problem(ctx, code, pc))
		return 0;
	err = odf_remove(ctx->v->fs, ctx->v->ino_readdir, name);
	if (err) {
		odfck_com_err(ctx, err, "deleting readdir state");
		return FSCK_ERROR;
	}
	return 0;
}

int odfck_pass4(struct odfck_ctx *ctx)
{
	struct odf_dirent *ents;
	size_t n, i, sl = strlen(ODF_TMP_SUFFIX);
	errcode_t err;
	int st = 0;

	if (!ctx->v->ino_readdir)
		return 0;
	err = odf_list_dir(ctx->v->fs, ctx->v->ino_readdir, &ents, &n);
	if (err) {
		odfck_com_err(ctx, err, "reading /readdir");
		return FSCK_ERROR;
	}
	for (i = 0; i < n && !st; i++) {
		const char *name = ents[i].name;
		struct problem_context pc;
		struct odf_rd_info info;
		size_t l = strlen(name), len;
		__u64 dir_ino;
		void *buf;
		int bad;

		memset(&pc, 0, sizeof(pc));
		pc.str = name;
		if (l > sl && !strcmp(name + l - sl, ODF_TMP_SUFFIX)) {
			st = drop(ctx, PR_4_TMP, &pc, name);
			continue;
		}
		if (name_to_ino(name, &dir_ino)) {
			st = drop(ctx, PR_4_BAD_NAME, &pc, name);
			continue;
		}
		if (odf_is_dir(ctx->v->fs, ents[i].ino)) {
			st = drop(ctx, PR_4_NOT_FILE, &pc, name);
			continue;
		}
		err = odf_file_read_all(ctx->v->fs, ents[i].ino, RD_MAX_BYTES,
					&buf, &len);
		if (err == EXT2_ET_FILE_TOO_BIG) {
			pc.str2 = "too large";
			st = drop(ctx, PR_4_BAD_STATE, &pc, name);
			continue;
		}
		if (err) {
			odfck_com_err(ctx, err, "reading readdir state");
			st = FSCK_ERROR;
			break;
		}
		bad = odf_rd_check(buf, len, &info, NULL, NULL);
		free(buf);
		if (!bad && info.dir_ino != dir_ino) {
			bad = ODF_BAD_FIELD;
			snprintf(info.why, sizeof(info.why), "header is for "
				 "directory %016llx",
				 (unsigned long long)info.dir_ino);
		}
		if (!bad) {
			ctx->n_rd++;
			continue;
		}
		pc.str2 = info.why;
		st = drop(ctx, PR_4_BAD_STATE, &pc, name);
	}
	free(ents);
	return st;
}
