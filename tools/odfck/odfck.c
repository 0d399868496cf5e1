// SPDX-License-Identifier: GPL-2.0
/*
 * odfck - check and repair an ODF volume offline.
 *
 * First the ext4 layer is checked by e2fsck, run the way fsck(8) would
 * run it; then five passes check the ODF structures through libext2fs:
 * superblock and branch table, namespace, inode maps, readdir state,
 * reclaim and summary.  Exit codes are those of fsck(8).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <et/com_err.h>
#include "odfck.h"

#define ODFCK_VERSION	"1.0"

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [-fnpyv] [-V] device\n"
"       %s --convert --dirs=BRANCH[:BRANCH...] [-fpyv] device\n"
"\n"
"Check and repair an ODF metadata volume of odf-unionfs.\n"
"\n"
"  -n     open read-only, answer \"no\" to every question\n"
"  -p     preen: repair what is safe without asking (-a is the same)\n"
"  -y     answer \"yes\" to every question\n"
"  -f     check even if the volume is marked clean\n"
"  -v     verbose: show the e2fsck output even when clean\n"
"  -V     print the version and exit\n"
"  --help this text\n"
"  --list-problems  every problem odfck knows, with its code\n"
"  --convert        convert a format 1 volume to format 2 (then check it);\n"
"                   with -y or -p without asking, never with -n\n"
"  --dirs=B1:B2...  the union's branch directories, upper first, as given\n"
"                   to dirs= at mount (needed by --convert)\n"
"\n"
"Exit status: 0 no errors, 1 errors corrected, 2 reboot needed,\n"
"4 errors left uncorrected, 8 operational error, 16 usage error,\n"
"32 cancelled.\n", prog, prog);
}

int odfck_readonly(struct odfck_ctx *ctx)
{
	return ctx->mode == MODE_NO;
}

void odfck_com_err(struct odfck_ctx *ctx, errcode_t err, const char *what)
{
	com_err(ctx->prog, err, "while %s on %s", what, ctx->dev);
}

/*
 * Before anything runs on it, the device must exist, be a block device
 * or an image file, and open the way the check needs it: e2fsck's own
 * answer to a missing device ends in odfck's "could not make the ext4
 * layer consistent", which sends the administrator the wrong way.
 */
static int check_device(struct odfck_ctx *ctx)
{
	struct stat st;
	int fd;

	if (stat(ctx->dev, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			fprintf(stderr, "%s: %s: the device does not exist "
				"(%s)\n", ctx->prog, ctx->dev,
				strerror(errno));
		else
			fprintf(stderr, "%s: %s: %s while looking up the "
				"device\n", ctx->prog, ctx->dev,
				strerror(errno));
		return FSCK_ERROR;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %s is a directory, not a block device or "
			"an ODF image file\n", ctx->prog, ctx->dev);
		return FSCK_ERROR;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s is not a block device or an ODF image "
			"file\n", ctx->prog, ctx->dev);
		return FSCK_ERROR;
	}
	fd = open(ctx->dev, (ctx->mode == MODE_NO ? O_RDONLY : O_RDWR) |
		  O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s while opening %s%s\n", ctx->prog,
			strerror(errno), ctx->dev, ctx->mode == MODE_NO ?
			"" : " for repairs (-n checks read-only)");
		return FSCK_ERROR;
	}
	close(fd);
	return 0;
}

/*
 * e2fsck stopped with an operational error (8): say why in one line that
 * names the device, the way e2fsck's own "... while trying to open"
 * does; a volume without an ext4 file system is not an ODF volume.
 */
static void explain_e2fsck_error(struct odfck_ctx *ctx, int st)
{
	ext2_filsys fs;
	errcode_t err;

	err = ext2fs_open(ctx->dev, 0, 0, 0, unix_io_manager, &fs);
	if (!err) {
		ext2fs_close_free(&fs);
		fprintf(stderr, "%s: e2fsck could not check the ext4 layer of "
			"%s (exit %d); its messages are above.\n", ctx->prog,
			ctx->dev, st);
		return;
	}
	com_err(ctx->prog, err, "while trying to open %s", ctx->dev);
	if (err == EXT2_ET_BAD_MAGIC)
		fprintf(stderr, "%s: %s holds no ext4 file system, so it is "
			"not an ODF volume (mkodf makes one).\n", ctx->prog,
			ctx->dev);
	else
		fprintf(stderr, "%s: e2fsck could not check the ext4 layer of "
			"%s (exit %d).\n", ctx->prog, ctx->dev, st);
}

/*
 * Run e2fsck on the ext4 layer with the matching mode.  Its output is
 * shown when it found something (or with -v); a clean ext4 layer stays
 * quiet so odfck's own report is readable.
 */
static int run_e2fsck(struct odfck_ctx *ctx)
{
	const char *argv[8];
	const char *e2fsck = getenv("ODFCK_E2FSCK");
	int argc = 0, pfd[2], status, interactive = ctx->mode == MODE_ASK;
	char *out = NULL;
	size_t len = 0, cap = 0;
	pid_t pid;

	if (!e2fsck)
		e2fsck = "e2fsck";
	argv[argc++] = e2fsck;
	if (ctx->mode == MODE_NO)
		argv[argc++] = "-n";
	else if (ctx->mode == MODE_YES)
		argv[argc++] = "-y";
	else if (ctx->mode == MODE_PREEN)
		argv[argc++] = "-p";
	if (ctx->force)
		argv[argc++] = "-f";
	argv[argc++] = ctx->dev;
	argv[argc] = NULL;

	fflush(stdout);
	if (!interactive && pipe(pfd) < 0) {
		perror(ctx->prog);
		return FSCK_ERROR;
	}
	pid = fork();
	if (pid < 0) {
		perror(ctx->prog);
		return FSCK_ERROR;
	}
	if (pid == 0) {
		if (!interactive) {
			dup2(pfd[1], 1);
			dup2(pfd[1], 2);
			close(pfd[0]);
			close(pfd[1]);
		}
		execvp(e2fsck, (char *const *)argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", ctx->prog, e2fsck,
			strerror(errno));
		_exit(FSCK_ERROR);
	}
	if (!interactive) {
		char buf[4096];
		ssize_t n;

		close(pfd[1]);
		while ((n = read(pfd[0], buf, sizeof(buf))) > 0) {
			if (len + n + 1 > cap) {
				char *p;

				cap = (len + n + 1) * 2;
				p = realloc(out, cap);
				if (!p)
					break;
				out = p;
			}
			memcpy(out + len, buf, n);
			len += n;
		}
		close(pfd[0]);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror(ctx->prog);
		free(out);
		return FSCK_ERROR;
	}
	status = WIFEXITED(status) ? WEXITSTATUS(status) : FSCK_ERROR;
	if (out && (status || ctx->verbose)) {
		fwrite(out, 1, len, stdout);
		if (len && out[len - 1] != '\n')
			putchar('\n');
	}
	free(out);
	return status;
}

static void summary(struct odfck_ctx *ctx)
{
	printf("%s: ODF format %d, %u branch%s, %u whiteout%s, %u opaque, "
	       "%u redirect%s, %llu+%llu map records, %llu readdir "
	       "state%s\n", ctx->dev, ODF_FORMAT_VERSION, ctx->n_branches,
	       ctx->n_branches == 1 ? "" : "es", ctx->n_whiteouts,
	       ctx->n_whiteouts == 1 ? "" : "s", ctx->n_opaque,
	       ctx->n_redirects, ctx->n_redirects == 1 ? "" : "s",
	       ctx->n_fwd, ctx->n_rev, ctx->n_rd, ctx->n_rd == 1 ? "" : "s");
}

static int finish(struct odfck_ctx *ctx, int status)
{
	errcode_t err;

	if (ctx->v) {
		err = odf_vol_close(ctx->v);
		ctx->v = NULL;
		if (err) {
			odfck_com_err(ctx, err, "closing the volume");
			status |= FSCK_ERROR;
		}
	}
	return status | ctx->e2fsck_status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "list-problems", no_argument, NULL, 'L' },
		{ "convert", no_argument, NULL, 'c' },
		{ "dirs", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 }
	};
	struct odfck_ctx ctx;
	int c, st, mount_flags = 0, nmodes = 0;
	errcode_t err;
	int (*const passes[])(struct odfck_ctx *) = {
		odfck_pass2, odfck_pass3, odfck_pass4, odfck_pass5,
	};
	static const char *const titles[] = {
		"Pass 2: Checking the namespace tree",
		"Pass 3: Checking the inode maps",
		"Pass 4: Checking readdir state",
		"Pass 5: Checking reclaim and summary information",
	};
	unsigned i;

	memset(&ctx, 0, sizeof(ctx));
	ctx.prog = "odfck";
	if (argc > 0 && argv[0]) {
		const char *b = strrchr(argv[0], '/');

		ctx.prog = b ? b + 1 : argv[0];
	}
	add_error_table(&et_ext2_error_table);
	setvbuf(stdout, NULL, _IOLBF, 0);

	while ((c = getopt_long(argc, argv, "npayfvVrC:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'n': ctx.mode = MODE_NO; nmodes++; break;
		case 'p':
		case 'a': ctx.mode = MODE_PREEN; nmodes++; break;
		case 'y': ctx.mode = MODE_YES; nmodes++; break;
		case 'f': ctx.force = 1; break;
		case 'v': ctx.verbose = 1; break;
		case 'r': break;	/* fsck(8) compatibility: interactive */
		case 'C': break;	/* fsck(8) progress fd: ignored */
		case 'V':
			printf("odfck %s (ODF format %d)\n", ODFCK_VERSION,
			       ODF_FORMAT_VERSION);
			exit(FSCK_OK);
		case 'h':
			usage(stdout, ctx.prog);
			exit(FSCK_OK);
		case 'L':
			problem_table_list(stdout);
			exit(FSCK_OK);
		case 'c': ctx.convert = 1; break;
		case 'D': ctx.dirs = optarg; break;
		default:
			usage(stderr, ctx.prog);
			exit(FSCK_USAGE);
		}
	}
	if (nmodes > 1) {
		fprintf(stderr, "%s: only one of the options -p/-a, -n or -y "
			"may be specified.\n", ctx.prog);
		exit(FSCK_USAGE);
	}
	if (ctx.convert && ctx.mode == MODE_NO) {
		fprintf(stderr, "%s: --convert writes the volume; it cannot "
			"be combined with -n.\n", ctx.prog);
		exit(FSCK_USAGE);
	}
	if (ctx.dirs && !ctx.convert) {
		fprintf(stderr, "%s: --dirs is only used with --convert.\n",
			ctx.prog);
		exit(FSCK_USAGE);
	}
	if (optind != argc - 1) {
		usage(stderr, ctx.prog);
		exit(FSCK_USAGE);
	}
	ctx.dev = argv[optind];
	if (ctx.mode == MODE_ASK && !isatty(0)) {
		fprintf(stderr, "%s: need terminal for interactive repairs of "
			"%s; use -p (or -a) to repair what is safe, -n to "
			"check only, -y to answer yes\n", ctx.prog, ctx.dev);
		exit(FSCK_ERROR);
	}
	problem_table_selftest();
	st = check_device(&ctx);
	if (st)
		exit(st);

	err = ext2fs_check_if_mounted(ctx.dev, &mount_flags);
	if (err) {
		odfck_com_err(&ctx, err, "determining whether the device is "
			      "mounted");
		exit(FSCK_ERROR);
	}
	if (mount_flags & EXT2_MF_MOUNTED) {
		ctx.mounted = 1;
		if (ctx.mode != MODE_NO) {
			fprintf(stderr, "%s: %s is mounted; odfck cannot "
				"repair a mounted ODF volume.\n"
				"Unmount the union and the ODF first, or use "
				"-n to check it read-only.\n", ctx.prog,
				ctx.dev);
			exit(FSCK_ERROR);
		}
		printf("Warning: %s is mounted; the results of a read-only "
		       "check may be wrong.\n", ctx.dev);
	}

	st = run_e2fsck(&ctx);
	ctx.e2fsck_status = st & (FSCK_NONDESTRUCT | FSCK_REBOOT);
	if (st & (FSCK_ERROR | FSCK_USAGE | FSCK_CANCELED) ||
	    (st & FSCK_UNCORRECTED && ctx.mode != MODE_NO)) {
		if (st & FSCK_CANCELED)
			fprintf(stderr, "%s: e2fsck was cancelled while "
				"checking the ext4 layer of %s.\n", ctx.prog,
				ctx.dev);
		else if (st & (FSCK_ERROR | FSCK_USAGE))
			explain_e2fsck_error(&ctx, st);
		else
			fprintf(stderr, "%s: e2fsck left errors in the ext4 "
				"layer of %s (exit %d); run e2fsck -f %s by "
				"hand, then odfck again.\n", ctx.prog,
				ctx.dev, st, ctx.dev);
		exit(st & FSCK_CANCELED ? FSCK_CANCELED :
		     st & (FSCK_ERROR | FSCK_USAGE) ? FSCK_ERROR :
		     FSCK_UNCORRECTED | (st & (FSCK_NONDESTRUCT | FSCK_REBOOT)));
	}
	if (st & FSCK_UNCORRECTED)	/* -n: go on, read-only, on faith */
		ctx.e2fsck_status |= FSCK_UNCORRECTED;

	err = odf_vol_open(ctx.dev, odfck_readonly(&ctx) ? 0 : ODF_OPEN_RW,
			   &ctx.v);
	if (err) {
		odfck_com_err(&ctx, err, "opening the ext4 layer");
		exit(FSCK_ERROR | ctx.e2fsck_status);
	}

	if (ctx.mode != MODE_PREEN)
		printf("Pass 1: Checking the ODF superblock and branch "
		       "table\n");
	st = odfck_pass1(&ctx);
	if (st)
		return finish(&ctx, st);
	if (ctx.fmt == ODF_FORMAT_V1) {
		if (ctx.mode != MODE_PREEN)
			printf("Converting the ODF volume from format 1 to "
			       "format 2\n");
		st = odfck_convert(&ctx);
		if (st)
			return finish(&ctx, st);
	}
	if (!ctx.force && !ctx.check_forced && !ctx.fixed && !ctx.unfixed) {
		printf("%s: clean, %u branch%s\n", ctx.dev, ctx.n_branches,
		       ctx.n_branches == 1 ? "" : "es");
		return finish(&ctx, FSCK_OK);
	}
	for (i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
		if (ctx.mode != MODE_PREEN)
			printf("%s\n", titles[i]);
		st = passes[i](&ctx);
		if (st)
			return finish(&ctx, st);
	}
	summary(&ctx);
	if (ctx.fixed && !odfck_readonly(&ctx))
		printf("\n%s: ***** ODF VOLUME WAS MODIFIED *****\n", ctx.dev);
	if (ctx.unfixed)
		printf("\n%s: ********** WARNING: ODF volume still has "
		       "errors **********\n", ctx.dev);
	st = ctx.unfixed ? FSCK_UNCORRECTED : 0;
	if (ctx.fixed && !odfck_readonly(&ctx))
		st |= FSCK_NONDESTRUCT;
	return finish(&ctx, st);
}
