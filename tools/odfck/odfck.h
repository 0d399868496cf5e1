/* SPDX-License-Identifier: GPL-2.0 */
/*
 * odfck.h - internal header of odfck, sectioned by the file that
 * defines each function.
 */
#ifndef _ODFCK_H
#define _ODFCK_H

#include <stdio.h>
#include "libodf.h"
#include "problem.h"

/* fsck(8) exit codes */
#define FSCK_OK			0
#define FSCK_NONDESTRUCT	1
#define FSCK_REBOOT		2
#define FSCK_UNCORRECTED	4
#define FSCK_ERROR		8
#define FSCK_USAGE		16
#define FSCK_CANCELED		32

enum odfck_mode { MODE_ASK, MODE_NO, MODE_PREEN, MODE_YES };

struct odfck_ctx {
	const char		*prog;
	const char		*dev;
	enum odfck_mode		mode;
	int			force, verbose;
	int			mounted;
	int			convert;	/* --convert */
	const char		*dirs;		/* --dirs=BRANCH[:BRANCH...] */
	unsigned		fmt;		/* s_version found in pass 1 */

	struct odf_vol		*v;
	struct odf_super	sb;
	int			sb_dirty, backup_dirty;
	struct odf_branch	br[ODF_BRANCH_SLOTS];
	int			br_dirty;
	int			check_forced;
	int			mark_clean;	/* pass 5 may mark it clean */

	/* results */
	unsigned		fixed, unfixed, notices;
	int			e2fsck_status;

	/* statistics for the summary */
	unsigned		n_branches, n_whiteouts, n_opaque;
	unsigned		n_redirects, n_plain;
	unsigned long long	n_fwd, n_rev, n_rd, n_reclaim;
	unsigned		n_intents;
	__u64			max_alloc_ino;
};

/* odfck.c */
int odfck_readonly(struct odfck_ctx *ctx);
void odfck_com_err(struct odfck_ctx *ctx, errcode_t err, const char *what);

/* util.c */
int branch_known(struct odfck_ctx *ctx, unsigned id);
errcode_t write_super(struct odfck_ctx *ctx);
void path_join(char *out, size_t n, const char *dir, const char *name);

/* pass1.c .. pass5.c: return 0 to go on, an exit code to stop */
int odfck_pass1(struct odfck_ctx *ctx);
int odfck_pass2(struct odfck_ctx *ctx);
int odfck_pass3(struct odfck_ctx *ctx);
int odfck_pass4(struct odfck_ctx *ctx);
int odfck_pass5(struct odfck_ctx *ctx);

/* convert.c: odfck --convert of a format 1 volume */
int odfck_convert_prepare(struct odfck_ctx *ctx);
int odfck_convert(struct odfck_ctx *ctx);

#endif
