// SPDX-License-Identifier: GPL-2.0
/*
 * problem.c - the problem table and fix_problem(), after e2fsck's.
 *
 * Message escapes: %P path, %S string, %T second string, %N %M %K
 * numbers, %X %Y union inode numbers (hex).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "odfck.h"

struct odf_problem {
	int		code;
	const char	*msg;
	int		prompt;
	int		flags;
};

static const char *const prompts[] = {
	[PROMPT_NONE] = "",
	[PROMPT_FIX] = "Fix",
	[PROMPT_CLEAR] = "Clear",
	[PROMPT_DELETE] = "Delete",
	[PROMPT_REBUILD] = "Rebuild",
	[PROMPT_RESTORE] = "Restore from backup",
	[PROMPT_DROP] = "Drop",
	[PROMPT_CREATE] = "Create",
	[PROMPT_FINISH] = "Finish",
	[PROMPT_RECONCILE] = "Recreate",
	[PROMPT_MOVE] = "Move to reclaim",
	[PROMPT_TRUNCATE] = "Truncate",
	[PROMPT_CONVERT] = "Convert",
};

static const char *const preen_msg[] = {
	[PROMPT_NONE] = "",
	[PROMPT_FIX] = "FIXED",
	[PROMPT_CLEAR] = "CLEARED",
	[PROMPT_DELETE] = "DELETED",
	[PROMPT_REBUILD] = "REBUILT",
	[PROMPT_RESTORE] = "RESTORED",
	[PROMPT_DROP] = "DROPPED",
	[PROMPT_CREATE] = "CREATED",
	[PROMPT_FINISH] = "FINISHED",
	[PROMPT_RECONCILE] = "RECREATED",
	[PROMPT_MOVE] = "MOVED",
	[PROMPT_TRUNCATE] = "TRUNCATED",
	[PROMPT_CONVERT] = "CONVERTED",
};

static const struct odf_problem table[] = {
	/* ---- pass 1 ---- */
	{ PR_1_NO_SUPER, "no ODF superblock file /superblock: this is not "
	  "an ODF volume (run mkodf)", PROMPT_NONE, PR_FATAL },
	{ PR_1_NOT_ODF, "/superblock has no ODF magic number in either copy: "
	  "this is not an ODF volume", PROMPT_NONE, PR_FATAL },
	{ PR_1_SB_BAD, "ODF superblock is damaged (%S); the backup copy is "
	  "good.", PROMPT_RESTORE, PR_PREEN_OK },
	{ PR_1_SB_BOTH_BAD, "ODF superblock is damaged (%S) and so is its "
	  "backup (%T): cannot go on", PROMPT_NONE, PR_FATAL },
	{ PR_1_SB_CSUM_ONLY, "both ODF superblock copies are damaged (%S); "
	  "the fields of the %T copy are sane, only its checksum is wrong.",
	  PROMPT_FIX, 0 },
	{ PR_1_BACKUP_BAD, "backup ODF superblock is damaged or stale (%S).",
	  PROMPT_FIX, PR_PREEN_OK },
	{ PR_1_VERSION, "ODF format version %N is not supported by this "
	  "odfck (it knows version %M)", PROMPT_NONE, PR_FATAL },
	{ PR_1_INCOMPAT, "ODF volume has unsupported incompat features "
	  "0x%N: refusing to check it (upgrade odfck)", PROMPT_NONE,
	  PR_FATAL },
	{ PR_1_RO_COMPAT, "ODF volume has unsupported ro_compat features "
	  "0x%N: refusing to modify it (upgrade odfck, or use -n)",
	  PROMPT_NONE, PR_FATAL },
	{ PR_1_NOT_CLEAN, "ODF volume was not cleanly unmounted (state "
	  "mounted): pending reclaim and readdir state are checked; mark it "
	  "clean when done.", PROMPT_FIX, PR_PREEN_OK },
	{ PR_1_ERRORS, "ODF volume has errors recorded by the module (%N): "
	  "clear the error state when the check is done.", PROMPT_FIX,
	  PR_PREEN_OK },
	{ PR_1_STATE_INVALID, "ODF superblock state 0x%N is invalid.",
	  PROMPT_FIX, PR_PREEN_OK },
	{ PR_1_LABEL, "ODF volume label is not terminated.", PROMPT_FIX,
	  PR_PREEN_OK },
	{ PR_1_BRANCH_CSUM, "branch slot %N (id %M, path \"%S\") has a bad "
	  "checksum but sane fields.", PROMPT_FIX, 0 },
	{ PR_1_BRANCH_BAD, "branch slot %N is damaged (%S).", PROMPT_CLEAR,
	  0 },
	{ PR_1_BRANCH_DUP, "branch slot %N has the id %M of slot %K.",
	  PROMPT_CLEAR, 0 },
	{ PR_1_NEXT_BRANCH_ID, "next branch id %N is not above id %M, which "
	  "is in use.", PROMPT_FIX, PR_PREEN_OK },
	{ PR_1_BRANCH_ORDER, "present branches do not have distinct "
	  "priorities 0..%N.", PROMPT_FIX, PR_PREEN_OK },
	{ PR_1_LAYOUT_MISSING, "/%S is missing.", PROMPT_CREATE,
	  PR_PREEN_OK },
	{ PR_1_LAYOUT_TYPE, "/%S is not a directory.", PROMPT_FIX, 0 },
	{ PR_1_SUPER_NEW, "/%S is left from a branch change that a crash "
	  "interrupted (the branch table in /superblock is the one in use).",
	  PROMPT_DELETE, PR_PREEN_OK },
	{ PR_1_NS_MISSING, "namespace root /ns is missing or not a "
	  "directory: every whiteout, opaque marker and redirect is lost.",
	  PROMPT_CREATE, 0 },
	{ PR_1_SB_SIZE, "ODF superblock file has size %N, expected %M.",
	  PROMPT_FIX, PR_PREEN_OK },
	{ PR_1_RESERVED, "ODF superblock has non-zero reserved fields.",
	  PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_1_FORMAT_V1, "ODF volume is format 1 (namespace keyed by union "
	  "path); this odfck checks format 2.  Convert it with: odfck "
	  "--convert --dirs=BRANCH[:BRANCH...] %S", PROMPT_NONE, PR_FATAL },
	{ PR_1_ALREADY_V2, "ODF volume is already format 2: nothing to "
	  "convert.", PROMPT_NONE, PR_NOTICE },

	/* ---- conversion (odfck --convert) ---- */
	{ PR_6_CONVERT, "ODF volume is format 1: its namespace and intents "
	  "are rewritten for format 2 from the branches.", PROMPT_CONVERT,
	  PR_PREEN_OK },
	{ PR_6_RESUME, "an interrupted conversion is found (%S): it is "
	  "%T.", PROMPT_NONE, PR_NOTICE },
	{ PR_6_NODE_GONE, "format 1 node %P names no directory in any "
	  "branch (%S): its metadata and everything below it is dropped.",
	  PROMPT_NONE, PR_NOTICE },
	{ PR_6_V1_RECORD, "format 1 node %P has a damaged record (%S): "
	  "converted as a plain directory.", PROMPT_NONE, PR_NOTICE },
	{ PR_6_V1_FOREIGN, "format 1 node %P is a %S: dropped.",
	  PROMPT_NONE, PR_NOTICE },
	{ PR_6_INTENT_CONVERTED, "intent /reclaim/%S (rename of %P) "
	  "converted.", PROMPT_NONE, PR_NOTICE },
	{ PR_6_INTENT_GONE, "intent /reclaim/%S (rename of %P) cannot "
	  "be converted (%T): dropped.", PROMPT_NONE, PR_NOTICE },
	{ PR_6_INTENT_BAD, "format 1 intent /reclaim/%S is damaged (%T): "
	  "it was never committed; dropped.", PROMPT_NONE, PR_NOTICE },

	/* ---- pass 2 ---- */
	{ PR_2_NOT_NODE, "/ns/%S is a %T; only node directories belong "
	  "in /ns.", PROMPT_MOVE, PR_PREEN_OK },
	{ PR_2_BAD_NAME, "namespace directory /ns/%S is not named by a "
	  "union inode number (16 lower-case hex digits): its whiteouts and "
	  "markers belong to no directory.", PROMPT_MOVE, 0 },
	{ PR_2_NO_RECORD, "node %P has whiteouts but no record.  A plain "
	  "record (owner 0: never stale) keeps them.", PROMPT_FIX,
	  PR_PREEN_OK },
	{ PR_2_BAD_RECORD, "node %P has a damaged record (%S): its opaque "
	  "and redirect markers cannot be trusted.", PROMPT_CLEAR, 0 },
	{ PR_2_UINO_MISMATCH, "node %P has a record for union inode %X.",
	  PROMPT_FIX, 0 },
	{ PR_2_BAD_TYPE, "node %P has record type 0x%N (whiteout or unknown "
	  "bits).", PROMPT_FIX, PR_PREEN_OK },
	{ PR_2_REDIRECT_BAD, "node %P has a malformed redirect entry: the "
	  "directory's lower parts cannot be found; it stays opaque.",
	  PROMPT_CLEAR, 0 },
	{ PR_2_REDIRECT_UPPER, "node %P has a redirect entry for the upper "
	  "branch (id %N).", PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_2_WH_DATA, "whiteout %P has %N bytes of data.", PROMPT_TRUNCATE,
	  PR_PREEN_OK },
	{ PR_2_WH_XATTR, "whiteout %P carries %N extended attribute%S.",
	  PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_2_CHILD_BAD, "%P is a %S inside a node; only whiteouts (empty "
	  "regular files) belong there.", PROMPT_MOVE, PR_PREEN_OK },
	{ PR_2_EMPTY_NODE, "node %P has no whiteouts and no opaque or redirect "
	  "marker: a harmless leftover.", PROMPT_DELETE, PR_PREEN_OK },

	/* ---- pass 3 ---- */
	{ PR_3_MAP_MISSING, "inode map /imap/%S is missing.", PROMPT_CREATE,
	  PR_PREEN_OK },
	{ PR_3_MAP_HDR, "inode map /imap/%S has a damaged header (%T).",
	  PROMPT_REBUILD, PR_PREEN_OK },
	{ PR_3_REC_BAD, "inode map /imap/%S bucket %N slot %M: %T.",
	  PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_REC_DUP, "inode map /imap/%S holds a second record for key "
	  "(branch %N, ino %M).", PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_REC_MISPLACED, "inode map /imap/%S: record for (branch %N, "
	  "ino %M) cannot be found by lookup.", PROMPT_REBUILD, PR_PREEN_OK },
	{ PR_3_MAP_COUNT, "inode map /imap/%S header counts %N records, "
	  "found %M.", PROMPT_FIX, PR_PREEN_OK },
	{ PR_3_REC_NO_BRANCH, "inode map /imap/%S: record for union inode "
	  "%X refers to branch %N, which is not in the branch table.",
	  PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_NEXT_INO, "next union inode number %N is not above %M, which "
	  "is in use.", PROMPT_FIX, PR_PREEN_OK },
	{ PR_3_UPPER_MISSING, "copied-up object (branch %N, ino %M) has no "
	  "forward record for its upper copy (branch %K).",
	  PROMPT_RECONCILE, PR_PREEN_OK },
	{ PR_3_ORIGIN_NO_BRANCH, "upper copy (branch %K) of union inode %X "
	  "names its origin (branch %N, ino %M), but branch %N is not in the "
	  "branch table.", PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_ORIGIN_MISMATCH, "upper copy (branch %K) of union inode %X "
	  "names origin (branch %N, ino %M), which would have another "
	  "number.", PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_COPY_BAD_TARGET, "lower object (branch %N, ino %M) claims a "
	  "copy on branch %K that is not its upper copy (union inode %Y).",
	  PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_COPIED_MISSING, "lower object (branch %N, ino %M) was copied "
	  "up to branch %K as union inode %X but has no forward record.",
	  PROMPT_RECONCILE, PR_PREEN_OK },
	{ PR_3_COPY_MISMATCH, "copied-up object (branch %N, ino %M) has "
	  "union inode %X but its upper copy has %Y.", PROMPT_FIX,
	  PR_PREEN_OK },
	{ PR_3_UINO_DUP, "union inode %X is claimed by two objects; the "
	  "second is (branch %N, ino %M).", PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_REV_MISSING, "union inode %X (branch %N, ino %M) has no "
	  "reverse map record.", PROMPT_RECONCILE, PR_PREEN_OK },
	{ PR_3_REV_MISMATCH, "reverse map sends union inode %X to (branch "
	  "%N, ino %M); the forward map says (branch %K, ino %S).",
	  PROMPT_FIX, PR_PREEN_OK },
	{ PR_3_FWD_MISSING, "union inode %X (branch %N, ino %M) is missing "
	  "from the forward map.", PROMPT_RECONCILE, PR_PREEN_OK },
	{ PR_3_REV_REDUNDANT, "reverse map record for union inode %X is "
	  "redundant (the number is deterministic).", PROMPT_CLEAR,
	  PR_PREEN_OK },
	{ PR_3_REV_STALE, "reverse map record for union inode %X is stale: "
	  "the forward map gives (branch %N, ino %M) union inode %Y.",
	  PROMPT_CLEAR, PR_PREEN_OK },
	{ PR_3_TMP, "unfinished map rebuild /imap/%S.", PROMPT_DELETE,
	  PR_PREEN_OK },
	{ PR_3_MAP_SIZE, "inode map /imap/%S is too large to check (%N "
	  "bytes).", PROMPT_NONE, PR_FATAL },

	/* ---- pass 4 ---- */
	{ PR_4_BAD_NAME, "unexpected entry /readdir/%S.", PROMPT_DELETE,
	  PR_PREEN_OK },
	{ PR_4_BAD_STATE, "readdir state /readdir/%S is invalid (%T); it is "
	  "a cache, the module rebuilds it.", PROMPT_DROP, PR_PREEN_OK },
	{ PR_4_TMP, "unfinished readdir state rebuild /readdir/%S.",
	  PROMPT_DELETE, PR_PREEN_OK },
	{ PR_4_NOT_FILE, "/readdir/%S is not a regular file.", PROMPT_DELETE,
	  PR_PREEN_OK },

	/* ---- pass 5 ---- */
	{ PR_5_RECLAIM, "reclaim entry /reclaim/%S was not finished.",
	  PROMPT_FINISH, PR_PREEN_OK },
	{ PR_5_INTENT_PENDING, "intent /reclaim/%S (rename of %P "
	  "to %T) is pending; the module finishes or drops it at the next mount.",
	  PROMPT_NONE, PR_NOTICE },
	{ PR_5_INTENT_COPYUP_PENDING, "intent /reclaim/%S (copy-up of %P) "
	  "is pending; the module keeps the copy or removes it at the next "
	  "mount.", PROMPT_NONE, PR_NOTICE },
	{ PR_5_INTENT_BAD, "intent /reclaim/%S is damaged (%T); it was never "
	  "committed.", PROMPT_DELETE, PR_PREEN_OK },
	{ 0, NULL, 0, 0 }
};

static const struct odf_problem *find_problem(int code)
{
	const struct odf_problem *p;

	for (p = table; p->msg; p++)
		if (p->code == code)
			return p;
	return NULL;
}

static void expand(FILE *f, const char *msg, struct problem_context *pc)
{
	const char *m;

	for (m = msg; *m; m++) {
		if (*m != '%' || !m[1]) {
			fputc(*m, f);
			continue;
		}
		switch (*++m) {
		case 'P': fputs(pc && pc->path ? pc->path : "?", f); break;
		case 'S': fputs(pc && pc->str ? pc->str : "", f); break;
		case 'T': fputs(pc && pc->str2 ? pc->str2 : "", f); break;
		case 'N':
			if (m - msg >= 3 && m[-2] == 'x') /* 0x%N: hex */
				fprintf(f, "%llx", pc ? (unsigned long long)
					pc->num : 0ULL);
			else
				fprintf(f, "%llu", pc ? (unsigned long long)
					pc->num : 0ULL);
			break;
		case 'M': fprintf(f, "%llu", pc ? (unsigned long long)
				  pc->num2 : 0ULL); break;
		case 'K': fprintf(f, "%llu", pc ? (unsigned long long)
				  pc->num3 : 0ULL); break;
		case 'X': fprintf(f, "0x%llx", pc ? (unsigned long long)
				  pc->ino : 0ULL); break;
		case 'Y': fprintf(f, "0x%llx", pc ? (unsigned long long)
				  pc->ino2 : 0ULL); break;
		default: fputc('%', f); fputc(*m, f); break;
		}
	}
}

static int ask_yes_no(void)
{
	char line[32];

	for (;;) {
		if (!fgets(line, sizeof(line), stdin))
			return 0;
		if (line[0] == 'y' || line[0] == 'Y' || line[0] == '\n')
			return 1;
		if (line[0] == 'n' || line[0] == 'N')
			return 0;
		fputs("Please answer y or n: ", stdout);
	}
}

/*
 * Report a problem; returns 1 when the caller must repair it.
 * Counting: a repaired problem makes the exit status 1, one left alone
 * makes it 4, a fatal one ends the run with 8.
 */
int fix_problem(struct odfck_ctx *ctx, int code, struct problem_context *pc)
{
	const struct odf_problem *p = find_problem(code);
	int answer;

	if (!p) {
		fprintf(stderr, "%s: internal error: unknown problem 0x%x\n",
			ctx->prog, code);
		exit(FSCK_ERROR);
	}
	if (getenv("ODFCK_PROBLEM_LOG")) {	/* test coverage of the table */
		FILE *log = fopen(getenv("ODFCK_PROBLEM_LOG"), "a");

		if (log) {
			fprintf(log, "0x%04x\n", code);
			fclose(log);
		}
	}
	/* a fatal problem ends the run: say which volume it is about */
	if (ctx->mode == MODE_PREEN || p->flags & PR_FATAL)
		printf("%s: ", ctx->dev);
	expand(stdout, p->msg, pc);
	if (p->flags & PR_NOTICE) {	/* not a problem: no prompt, no count */
		printf("\n");
		ctx->notices++;
		return 1;
	}
	if (p->flags & PR_FATAL) {
		printf("\n");
		fflush(stdout);
		ctx->unfixed++;
		return 0;
	}
	switch (ctx->mode) {
	case MODE_NO:
		printf("  %s? no\n\n", prompts[p->prompt]);
		answer = 0;
		break;
	case MODE_YES:
		printf("  %s? yes\n\n", prompts[p->prompt]);
		answer = 1;
		break;
	case MODE_PREEN:
		if (!(p->flags & PR_PREEN_OK)) {
			printf("\n\n%s: UNEXPECTED INCONSISTENCY; RUN odfck "
			       "MANUALLY.\n\t(i.e., without -a or -p "
			       "options)\n", ctx->dev);
			fflush(stdout);
			ctx->unfixed++;
			exit(FSCK_UNCORRECTED | ctx->e2fsck_status);
		}
		printf("  %s.\n", preen_msg[p->prompt]);
		answer = 1;
		break;
	default:
		printf("  %s<y>? ", prompts[p->prompt]);
		fflush(stdout);
		answer = ask_yes_no();
		printf("\n");
		break;
	}
	fflush(stdout);
	if (answer)
		ctx->fixed++;
	else
		ctx->unfixed++;
	return answer;
}

/* odfck --list-problems: the table, for documentation and tests. */
void problem_table_list(FILE *f)
{
	const struct odf_problem *p;

	for (p = table; p->msg; p++) {
		fprintf(f, "0x%04x\t%s\t", p->code,
			p->flags & PR_FATAL ? "fatal" :
			p->flags & PR_NOTICE ? "notice" :
			p->flags & PR_PREEN_OK ? "preen" : "ask");
		expand(f, p->msg, NULL);
		fprintf(f, "%s%s\n", p->prompt ? "  " : "",
			p->prompt ? prompts[p->prompt] : "");
	}
}

/* Every code used must be in the table exactly once (unit-tested). */
void problem_table_selftest(void)
{
	const struct odf_problem *p, *q;

	for (p = table; p->msg; p++) {
		for (q = p + 1; q->msg; q++)
			if (p->code == q->code) {
				fprintf(stderr, "duplicate problem 0x%x\n",
					p->code);
				exit(FSCK_ERROR);
			}
		if (p->prompt < PROMPT_NONE || p->prompt > PROMPT_CONVERT) {
			fprintf(stderr, "bad prompt in 0x%x\n", p->code);
			exit(FSCK_ERROR);
		}
	}
}
