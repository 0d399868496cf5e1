/* SPDX-License-Identifier: GPL-2.0 */
/*
 * problem.h - every inconsistency odfck reports, by code.  The table in
 * problem.c gives each its message, prompt and flags, so -n, -p and -y
 * behave the same for all of them.  Codes are 0xPNNN: P is the pass.
 */
#ifndef _ODFCK_PROBLEM_H
#define _ODFCK_PROBLEM_H

#include <stdio.h>
#include <linux/types.h>

struct problem_context {
	const char	*path;		/* %P */
	const char	*str;		/* %S */
	const char	*str2;		/* %T */
	__u64		num;		/* %N */
	__u64		num2;		/* %M */
	__u64		num3;		/* %K */
	__u64		ino;		/* %X (printed in hex) */
	__u64		ino2;		/* %Y (printed in hex) */
};

/* prompts */
enum {
	PROMPT_NONE, PROMPT_FIX, PROMPT_CLEAR, PROMPT_DELETE, PROMPT_REBUILD,
	PROMPT_RESTORE, PROMPT_DROP, PROMPT_CREATE, PROMPT_FINISH,
	PROMPT_RECONCILE, PROMPT_MOVE, PROMPT_TRUNCATE, PROMPT_CONVERT,
};

/* flags */
#define PR_PREEN_OK	0x01	/* -p may fix it without asking */
#define PR_FATAL	0x02	/* cannot go on: exit 8 */
#define PR_NOTICE	0x04	/* informational: no prompt, not an error */
#define PR_NO_NOMSG	0x08	/* with -n, the answer is still "no" */

/* Pass 1: superblock and branch table */
#define PR_1_NO_SUPER		0x1001
#define PR_1_NOT_ODF		0x1002
#define PR_1_SB_BAD		0x1003
#define PR_1_SB_BOTH_BAD	0x1004
#define PR_1_BACKUP_BAD		0x1005
#define PR_1_VERSION		0x1006
#define PR_1_INCOMPAT		0x1007
#define PR_1_RO_COMPAT		0x1008
#define PR_1_NOT_CLEAN		0x1009
#define PR_1_ERRORS		0x100a
#define PR_1_STATE_INVALID	0x100b
#define PR_1_LABEL		0x100c
#define PR_1_BRANCH_CSUM	0x100d
#define PR_1_BRANCH_BAD		0x100e
#define PR_1_BRANCH_DUP		0x100f
#define PR_1_NEXT_BRANCH_ID	0x1010
#define PR_1_BRANCH_ORDER	0x1011
#define PR_1_LAYOUT_MISSING	0x1012
#define PR_1_LAYOUT_TYPE	0x1013
#define PR_1_NS_MISSING		0x1014
#define PR_1_SB_SIZE		0x1015
#define PR_1_RESERVED		0x1016
#define PR_1_SB_CSUM_ONLY	0x1017
#define PR_1_FORMAT_V1		0x1018
#define PR_1_ALREADY_V2		0x1019
#define PR_1_SUPER_NEW		0x101a

/* Conversion of a format 1 volume (odfck --convert, section 12) */
#define PR_6_CONVERT		0x6001
#define PR_6_NODE_GONE		0x6002
#define PR_6_V1_RECORD		0x6003
#define PR_6_V1_FOREIGN		0x6004
#define PR_6_INTENT_GONE	0x6005
#define PR_6_INTENT_BAD		0x6006
#define PR_6_INTENT_CONVERTED	0x6007
#define PR_6_RESUME		0x6008

/* Pass 2: namespace (format 2: /ns/<016llx uino>/, whiteouts inside) */
#define PR_2_NOT_NODE		0x2001
#define PR_2_BAD_NAME		0x2002
#define PR_2_NO_RECORD		0x2003
#define PR_2_BAD_RECORD		0x2004
#define PR_2_UINO_MISMATCH	0x2005
#define PR_2_BAD_TYPE		0x2006
#define PR_2_REDIRECT_BAD	0x2007
#define PR_2_WH_DATA		0x2008
#define PR_2_WH_XATTR		0x2009
#define PR_2_CHILD_BAD		0x200b
#define PR_2_EMPTY_NODE		0x200c
#define PR_2_REDIRECT_UPPER	0x200d

/* Pass 3: inode maps */
#define PR_3_MAP_MISSING	0x3001
#define PR_3_MAP_HDR		0x3002
#define PR_3_REC_BAD		0x3003
#define PR_3_REC_DUP		0x3004
#define PR_3_REC_MISPLACED	0x3005
#define PR_3_MAP_COUNT		0x3006
#define PR_3_REC_NO_BRANCH	0x3007
#define PR_3_NEXT_INO		0x3008
#define PR_3_UPPER_MISSING	0x3009
#define PR_3_COPY_MISMATCH	0x300a
#define PR_3_UINO_DUP		0x300b
#define PR_3_REV_MISSING	0x300c
#define PR_3_REV_MISMATCH	0x300d
#define PR_3_FWD_MISSING	0x300e
#define PR_3_REV_REDUNDANT	0x300f
#define PR_3_REV_STALE		0x3010
#define PR_3_TMP		0x3011
#define PR_3_MAP_SIZE		0x3012
#define PR_3_COPIED_MISSING	0x3013
#define PR_3_ORIGIN_NO_BRANCH	0x3014
#define PR_3_ORIGIN_MISMATCH	0x3015
#define PR_3_COPY_BAD_TARGET	0x3016

/* Pass 4: readdir state */
#define PR_4_BAD_NAME		0x4001
#define PR_4_BAD_STATE		0x4002
#define PR_4_TMP		0x4003
#define PR_4_NOT_FILE		0x4004

/* Pass 5: reclaim and summary */
#define PR_5_RECLAIM		0x5001
#define PR_5_INTENT_PENDING	0x5003
#define PR_5_INTENT_BAD		0x5004
#define PR_5_INTENT_COPYUP_PENDING	0x5005

struct odfck_ctx;
int fix_problem(struct odfck_ctx *ctx, int code,
		struct problem_context *pctx);
void problem_table_selftest(void);
void problem_table_list(FILE *f);

#endif
