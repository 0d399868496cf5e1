// SPDX-License-Identifier: GPL-2.0
/*
 * convert.c - odfck --convert: a format 1 volume becomes format 2
 * (docs/odf-format.md section 12).
 *
 * Format 1 keys namespace nodes by union path, format 2 by the union
 * inode number of the directory, which only the branches can tell: each
 * node path is resolved through the branch directories given with
 * --dirs, the way the union's lookup would (upper first, then the lower
 * branches in priority order, honouring the format 1 whiteouts, opaque
 * markers and redirects of its ancestors), and its number computed as
 * in section 4.
 *
 * The new namespace is built in /ns.v2 and the converted intents in
 * /ns.v2.intents; then /ns is renamed /ns.v1, /ns.v2 becomes /ns, the
 * intents replace the old ones, and s_version 2 is written to the
 * header and its backup last.  Everything is flushed to the device
 * between these steps, so an interrupted conversion leaves a format 1
 * volume that a new odfck --convert either rebuilds (the swap had not
 * started) or finishes (/ns.v1 exists).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/fs.h>
#include "odfck.h"

#define NS_V1		"ns.v1"
#define NS_V2		"ns.v2"
#define INTENTS_V2	"ns.v2.intents"
#define CV_PATH_MAX	8192

struct cv_branch {
	unsigned	id;
	unsigned	order;
	char		*dir;		/* host path given with --dirs */
};

struct cv_part {
	unsigned	bi;		/* index in cv.br */
	char		*rel;		/* path from the branch root */
	struct stat	st;
};

/* a union directory as the union's lookup finds it */
struct cv_dir {
	int		has_upper;
	char		*urel;		/* upper path (= union path in v1) */
	struct stat	ust;
	struct cv_part	low[ODF_BRANCH_SLOTS];
	unsigned	nlow;
	ext2_ino_t	v1node;		/* its format 1 node, 0 if none */
	unsigned	v1type;
	char		*v1redir;
	__u64		uino;
};

struct cv {
	struct odfck_ctx	*ctx;
	struct cv_branch	br[ODF_BRANCH_SLOTS];	/* by priority */
	unsigned		nbr;
	int			upper;	/* index of the upper branch, -1 */
	struct odf_map		fwd;
	int			have_fwd;
	ext2_ino_t		ns1, ns2, int2;
};

static void dir_free(struct cv_dir *d)
{
	unsigned i;

	free(d->urel);
	free(d->v1redir);
	for (i = 0; i < d->nlow; i++)
		free(d->low[i].rel);
	memset(d, 0, sizeof(*d));
}

static char *join(const char *dir, const char *name)
{
	char *p = malloc(CV_PATH_MAX);

	if (p)
		path_join(p, CV_PATH_MAX, dir, name);
	return p;
}

/* lstat of a branch-relative path */
static int blstat(struct cv *cv, unsigned bi, const char *rel,
		  struct stat *st)
{
	char host[CV_PATH_MAX];

	snprintf(host, sizeof(host), "%s%s", cv->br[bi].dir,
		 strcmp(rel, "/") ? rel : "");
	return lstat(host, st);
}

static __u32 bgen(struct cv *cv, unsigned bi, const char *rel)
{
	char host[CV_PATH_MAX];
	int fd, gen = 0;

	snprintf(host, sizeof(host), "%s%s", cv->br[bi].dir,
		 strcmp(rel, "/") ? rel : "");
	fd = open(host, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (ioctl(fd, FS_IOC_GETVERSION, &gen))
		gen = 0;
	close(fd);
	return (__u32)gen;
}

/* Section 4: the forward map's record, else the deterministic number. */
static __u64 uino_of(struct cv *cv, unsigned bi, __u64 ino)
{
	struct odf_map_rec r;
	int found = 0;

	if (cv->have_fwd &&
	    !odf_map_lookup(&cv->fwd, cv->br[bi].id, ino, &r, &found) &&
	    found)
		return ext2fs_le64_to_cpu(r.mr_union_ino);
	return odf_uino_det(cv->br[bi].id, ino);
}

static void read_v1(struct cv *cv, struct cv_dir *d, const char *upath)
{
	unsigned char buf[ODF_NODE_BUF_MAX];
	struct problem_context pc;
	const char *r;
	size_t len = 0, rl;
	unsigned t;
	int present, bad;

	d->v1type = 0;
	if (!d->v1node || odf_node_get(cv->ctx->v->fs, d->v1node, buf, &len,
				       &present) || !present)
		return;
	bad = odf_node_v1_decode(buf, len, &t, &r, &rl);
	if (!bad && (t & ODF_NODE_WHITEOUT))
		bad = ODF_BAD_FIELD;
	if (bad) {
		memset(&pc, 0, sizeof(pc));
		pc.path = upath;
		pc.str = odf_bad_str(bad);
		fix_problem(cv->ctx, PR_6_V1_RECORD, &pc);
		return;
	}
	d->v1type = t;
	if (rl) {
		d->v1redir = malloc(rl + 1);
		if (d->v1redir) {
			memcpy(d->v1redir, r, rl);
			d->v1redir[rl] = 0;
		}
	}
}

static void set_root(struct cv *cv, struct cv_dir *d)
{
	unsigned i;

	memset(d, 0, sizeof(*d));
	if (cv->upper >= 0 && !blstat(cv, cv->upper, "/", &d->ust) &&
	    S_ISDIR(d->ust.st_mode)) {
		d->has_upper = 1;
		d->urel = strdup("/");
	}
	for (i = 0; i < cv->nbr; i++) {
		if ((int)i == cv->upper ||
		    blstat(cv, i, "/", &d->low[d->nlow].st))
			continue;
		d->low[d->nlow].bi = i;
		d->low[d->nlow].rel = strdup("/");
		d->nlow++;
	}
	d->v1node = cv->ns1;
	d->uino = ODF_UINO_ROOT;
}

/*
 * One lookup step: child name of parent p into c.  Returns NULL or why
 * the name is not a directory of the union.
 */
static const char *step(struct cv *cv, const struct cv_dir *p,
			const char *name, const char *upath, struct cv_dir *c)
{
	ext2_filsys fs = cv->ctx->v->fs;
	int whited = 0;
	unsigned i;
	ext2_ino_t ino;
	struct stat st;

	memset(c, 0, sizeof(*c));
	if (p->v1node && !odf_lookup(fs, p->v1node, name, &ino)) {
		if (odf_is_dir(fs, ino))
			c->v1node = ino;
		else
			whited = 1;
	}
	if (p->has_upper) {
		char *rel = join(p->urel, name);

		if (rel && !blstat(cv, cv->upper, rel, &c->ust)) {
			if (!S_ISDIR(c->ust.st_mode)) {
				free(rel);
				return "not a directory on the upper branch";
			}
			c->has_upper = 1;
			c->urel = rel;
		} else {
			free(rel);
		}
	}
	if (c->has_upper)
		read_v1(cv, c, upath);
	if (whited && !c->has_upper)
		return "whited out";
	if (whited) {
		/* W1/W2: only the upper directory is left */
	} else if (c->has_upper && (c->v1type & ODF_NODE_REDIRECT) &&
		   c->v1redir) {
		for (i = 0; i < cv->nbr; i++) {
			if ((int)i == cv->upper ||
			    blstat(cv, i, c->v1redir, &st) || !S_ISDIR(st.st_mode))
				continue;
			c->low[c->nlow].bi = i;
			c->low[c->nlow].rel = strdup(c->v1redir);
			c->low[c->nlow].st = st;
			c->nlow++;
		}
	} else if (!(c->has_upper && (c->v1type & ODF_NODE_OPAQUE))) {
		for (i = 0; i < p->nlow; i++) {
			char *rel = join(p->low[i].rel, name);

			if (!rel || blstat(cv, p->low[i].bi, rel, &st)) {
				free(rel);
				continue;
			}
			if (!S_ISDIR(st.st_mode)) {	/* hides the rest */
				free(rel);
				break;
			}
			c->low[c->nlow].bi = p->low[i].bi;
			c->low[c->nlow].rel = rel;
			c->low[c->nlow].st = st;
			c->nlow++;
		}
	}
	if (!c->has_upper && !c->nlow)
		return "not found";
	if (c->has_upper)
		c->uino = uino_of(cv, cv->upper, c->ust.st_ino);
	else
		c->uino = uino_of(cv, c->low[0].bi, c->low[0].st.st_ino);
	if (!c->uino)
		return "inode number too large, no map record";
	return NULL;
}

/* Resolve an absolute union path; NULL or why not. */
static const char *resolve(struct cv *cv, const char *upath, struct cv_dir *d)
{
	struct cv_dir cur, next;
	char comp[256], sofar[CV_PATH_MAX] = "/";
	const char *p = upath, *why;

	set_root(cv, &cur);
	for (;;) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if (e - p > 255) {
			dir_free(&cur);
			return "name too long";
		}
		memcpy(comp, p, e - p);
		comp[e - p] = 0;
		p = e;
		path_join(sofar + 0, sizeof(sofar), strcmp(sofar, "/") ?
			  strdupa(sofar) : "/", comp);
		why = step(cv, &cur, comp, sofar, &next);
		dir_free(&cur);
		if (why) {
			dir_free(&next);
			return why;
		}
		cur = next;
	}
	*d = cur;
	return NULL;
}

static errcode_t make_node(struct cv *cv, const struct cv_dir *d,
			   const char **wh, size_t nwh)
{
	static struct odf_redir_ent ents[ODF_BRANCH_SLOTS];
	struct odf_node_info ni;
	struct odf_vol *v = cv->ctx->v;
	char name[ODF_NS_NAME_LEN + 1];
	ext2_ino_t node, x;
	unsigned i;
	size_t k;
	errcode_t err;

	memset(&ni, 0, sizeof(ni));
	if (d->has_upper && (d->v1type & ODF_NODE_REDIRECT)) {
		for (i = 0; i < d->nlow; i++) {
			ents[ni.nredirect].branch = cv->br[d->low[i].bi].id;
			ents[ni.nredirect].path = d->low[i].rel;
			ents[ni.nredirect].len = strlen(d->low[i].rel);
			ni.nredirect++;
		}
		ni.type = ODF_NODE_OPAQUE |
			  (ni.nredirect ? ODF_NODE_REDIRECT : 0);
	} else if (d->has_upper && (d->v1type & ODF_NODE_OPAQUE)) {
		ni.type = ODF_NODE_OPAQUE;
	}
	if (!ni.type && !nwh)
		return 0;
	if (d->has_upper) {
		ni.owner_ino = d->ust.st_ino;
		ni.owner_gen = bgen(cv, cv->upper, d->urel);
	}
	odf_ns_node_name(name, d->uino);
	/* two format 1 paths for one directory: merge, first record wins */
	if (odf_lookup(v->fs, cv->ns2, name, &node) || ni.type) {
		err = odf_ns_node_make_in(v, cv->ns2, d->uino, &ni, ents,
					  &node);
		if (err)
			return err;
	}
	for (k = 0; k < nwh; k++) {
		if (!odf_lookup(v->fs, node, wh[k], &x))
			continue;
		err = odf_file_create(v->fs, node, wh[k], NULL);
		if (err)
			return err;
	}
	if (cv->ctx->verbose)
		printf("  %s -> /ns/%s: %zu whiteout%s%s%s\n",
		       d->urel ? d->urel : "(lower only)", name, nwh,
		       nwh == 1 ? "" : "s",
		       ni.type & ODF_NODE_OPAQUE ? ", opaque" : "",
		       ni.type & ODF_NODE_REDIRECT ? ", redirect" : "");
	return 0;
}

static int walk(struct cv *cv, ext2_ino_t v1dir, const char *upath,
		int depth)
{
	struct problem_context pc;
	struct odf_dirent *ents;
	struct cv_dir d;
	const char **wh;
	const char *why;
	size_t n, i, nwh = 0;
	int st = 0;
	errcode_t err;

	memset(&pc, 0, sizeof(pc));
	pc.path = upath;
	if (depth > 2048) {
		pc.str = "too deep";
		fix_problem(cv->ctx, PR_6_NODE_GONE, &pc);
		return 0;
	}
	why = strcmp(upath, "/") ? resolve(cv, upath, &d) : NULL;
	if (!strcmp(upath, "/"))
		set_root(cv, &d);
	if (why) {
		pc.str = why;
		fix_problem(cv->ctx, PR_6_NODE_GONE, &pc);
		return 0;
	}
	err = odf_list_dir(cv->ctx->v->fs, v1dir, &ents, &n);
	if (err) {
		dir_free(&d);
		odfck_com_err(cv->ctx, err, "reading a format 1 node");
		return FSCK_ERROR;
	}
	wh = calloc(n ? n : 1, sizeof(*wh));
	for (i = 0; wh && i < n; i++) {
		struct ext2_inode inode;

		if (ext2fs_read_inode(cv->ctx->v->fs, ents[i].ino, &inode))
			continue;
		if (LINUX_S_ISREG(inode.i_mode) &&
		    odf_name_valid(ents[i].name, strlen(ents[i].name)))
			wh[nwh++] = ents[i].name;
		else if (!LINUX_S_ISDIR(inode.i_mode)) {
			char *p = join(upath, ents[i].name);

			pc.path = p;
			pc.str = "foreign object";
			fix_problem(cv->ctx, PR_6_V1_FOREIGN, &pc);
			free(p);
		}
	}
	err = wh ? make_node(cv, &d, wh, nwh) : ENOMEM;
	dir_free(&d);
	free(wh);
	if (err) {
		odfck_com_err(cv->ctx, err, "writing a format 2 node");
		free(ents);
		return FSCK_ERROR;
	}
	for (i = 0; i < n && !st; i++) {
		char *p;

		if (!odf_is_dir(cv->ctx->v->fs, ents[i].ino))
			continue;
		p = join(upath, ents[i].name);
		if (!p) {
			st = FSCK_ERROR;
			break;
		}
		st = walk(cv, ents[i].ino, p, depth + 1);
		free(p);
	}
	free(ents);
	return st;
}

/* dirname and basename of a v1 union path */
static void split(const char *path, char *dir, char *name)
{
	const char *s = strrchr(path, '/');

	if (s == path)
		strcpy(dir, "/");
	else {
		memcpy(dir, path, s - path);
		dir[s - path] = 0;
	}
	strcpy(name, s + 1);
}

/* the upper object at a union path (= upper path in format 1) */
static int upper_obj(struct cv *cv, const char *path, __u64 *ino, __u32 *gen)
{
	struct stat st;

	if (cv->upper < 0 || blstat(cv, cv->upper, path, &st))
		return 0;
	*ino = st.st_ino;
	*gen = S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) ?
	       bgen(cv, cv->upper, path) : 0;
	return 1;
}

static int convert_intent(struct cv *cv, const struct odf_dirent *de)
{
	struct problem_context pc;
	struct odf_intent_info in;
	char src[ODF_INTENT_V1_PATH_MAX + 1], dst[ODF_INTENT_V1_PATH_MAX + 1];
	char sdir[ODF_INTENT_V1_PATH_MAX + 1], ddir[ODF_INTENT_V1_PATH_MAX + 1];
	char sname[ODF_INTENT_V1_PATH_MAX + 1], dname[ODF_INTENT_V1_PATH_MAX + 1];
	char what[2 * ODF_INTENT_V1_PATH_MAX + 8];
	const char *s, *d, *why = NULL;
	struct cv_dir sd, dd;
	size_t len, sl, dl, elen;
	__u64 seq, ino;
	__u32 gen;
	void *buf = NULL;
	unsigned char *enc;
	int bad;
	errcode_t err;

	memset(&pc, 0, sizeof(pc));
	pc.str = de->name;
	err = odf_file_read_all(cv->ctx->v->fs, de->ino, ODF_INTENT_V1_BUF_MAX,
				&buf, &len);
	if (err && err != EXT2_ET_FILE_TOO_BIG) {
		odfck_com_err(cv->ctx, err, "reading an intent");
		return FSCK_ERROR;
	}
	bad = err ? ODF_BAD_SIZE : odf_intent_v1_decode(buf, len, &seq, &ino,
							&gen, &s, &sl, &d, &dl);
	if (bad) {
		free(buf);
		pc.str2 = odf_bad_str(bad);
		fix_problem(cv->ctx, PR_6_INTENT_BAD, &pc);
		return 0;
	}
	memcpy(src, s, sl);
	src[sl] = 0;
	memcpy(dst, d, dl);
	dst[dl] = 0;
	free(buf);
	snprintf(what, sizeof(what), "%s to %s", src, dst);
	pc.path = what;
	split(src, sdir, sname);
	split(dst, ddir, dname);
	memset(&sd, 0, sizeof(sd));
	memset(&dd, 0, sizeof(dd));
	if (!ino && !upper_obj(cv, dst, &ino, &gen) &&
	    !upper_obj(cv, src, &ino, &gen))
		why = "no upper object at either name";
	if (!why && strlen(sdir) > ODF_INTENT_HINT_MAX)
		why = "path too long";
	if (!why && (why = resolve(cv, sdir, &sd)))
		why = "the source directory is gone";
	if (!why && (why = resolve(cv, ddir, &dd)))
		why = "the destination directory is gone";
	if (why) {
		dir_free(&sd);
		dir_free(&dd);
		pc.str2 = why;
		fix_problem(cv->ctx, PR_6_INTENT_GONE, &pc);
		return 0;
	}
	memset(&in, 0, sizeof(in));
	in.op = ODF_INTENT_RENAME;
	in.seq = seq;
	in.time = time(NULL);
	in.ino = ino;
	in.gen = gen;
	in.src_dir = sd.uino;
	in.dst_dir = dd.uino;
	in.src = sname; in.src_len = strlen(sname);
	in.dst = dname; in.dst_len = strlen(dname);
	in.src_hint = sdir; in.src_hint_len = strlen(sdir);
	in.dst_hint = ddir; in.dst_hint_len = strlen(ddir);
	dir_free(&sd);
	dir_free(&dd);
	enc = malloc(ODF_INTENT_BUF_MAX);
	if (!enc)
		return FSCK_ERROR;
	elen = odf_intent_encode(enc, &in);
	err = elen ? odf_intent_put(cv->ctx->v, cv->int2, seq, enc, elen) :
		     EXT2_ET_INVALID_ARGUMENT;
	free(enc);
	if (err) {
		odfck_com_err(cv->ctx, err, "writing a format 2 intent");
		return FSCK_ERROR;
	}
	fix_problem(cv->ctx, PR_6_INTENT_CONVERTED, &pc);
	return 0;
}

static int intents(struct cv *cv)
{
	struct odf_dirent *ents;
	size_t n, i;
	int st = 0;
	errcode_t err;

	if (!cv->ctx->v->ino_reclaim)
		return 0;
	err = odf_list_dir(cv->ctx->v->fs, cv->ctx->v->ino_reclaim, &ents, &n);
	if (err) {
		odfck_com_err(cv->ctx, err, "reading /reclaim");
		return FSCK_ERROR;
	}
	for (i = 0; i < n && !st; i++)
		if (!strncmp(ents[i].name, ODF_INTENT_PREFIX,
			     strlen(ODF_INTENT_PREFIX)) &&
		    !odf_is_dir(cv->ctx->v->fs, ents[i].ino))
			st = convert_intent(cv, &ents[i]);
	free(ents);
	return st;
}

/* Match --dirs to PRESENT slots (section 3.4), by priority. */
static int match_dirs(struct cv *cv)
{
	struct odfck_ctx *ctx = cv->ctx;
	int used[ODF_BRANCH_SLOTS] = { 0 };
	char *list = strdup(ctx->dirs ? ctx->dirs : ""), *tok, *save = NULL;
	unsigned i, j, npresent = 0;

	cv->upper = -1;
	for (tok = strtok_r(list, ":", &save); tok;
	     tok = strtok_r(NULL, ":", &save)) {
		struct statfs sfs;
		struct stat st;
		__u32 gen = 0;
		int fd;

		if (stat(tok, &st) || statfs(tok, &sfs) || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "%s: branch %s: %s\n", ctx->prog, tok,
				errno ? strerror(errno) : "not a directory");
			free(list);
			return FSCK_ERROR;
		}
		fd = open(tok, O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			if (ioctl(fd, FS_IOC_GETVERSION, &gen))
				gen = 0;
			close(fd);
		}
		for (i = 0; i < ODF_BRANCH_SLOTS; i++) {
			const struct odf_branch *b = &ctx->br[i];
			__u32 bg = ext2fs_le32_to_cpu(b->b_root_gen);

			if (used[i] || odf_branch_unused(b) ||
			    ext2fs_le16_to_cpu(b->b_flags) != ODF_BRANCH_PRESENT)
				continue;
			if (ext2fs_le32_to_cpu(b->b_fs_magic) !=
			    (__u32)sfs.f_type ||
			    ext2fs_le64_to_cpu(b->b_root_ino) != st.st_ino ||
			    (bg && gen && bg != gen))
				continue;
			break;
		}
		if (i == ODF_BRANCH_SLOTS) {
			fprintf(stderr, "%s: branch %s matches no present "
				"branch of the ODF's table (file system type, "
				"root inode and generation)\n", ctx->prog,
				tok);
			free(list);
			return FSCK_ERROR;
		}
		used[i] = 1;
		cv->br[cv->nbr].id = ext2fs_le16_to_cpu(ctx->br[i].b_id);
		cv->br[cv->nbr].order = ext2fs_le16_to_cpu(ctx->br[i].b_order);
		cv->br[cv->nbr].dir = strdup(tok);
		cv->nbr++;
	}
	free(list);
	for (i = 0; i < ODF_BRANCH_SLOTS; i++) {
		const struct odf_branch *b = &ctx->br[i];

		if (odf_branch_unused(b) ||
		    ext2fs_le16_to_cpu(b->b_flags) != ODF_BRANCH_PRESENT)
			continue;
		npresent++;
		if (!used[i]) {
			fprintf(stderr, "%s: branch id %u (%.383s) is not given "
				"with --dirs; conversion needs every present "
				"branch\n", ctx->prog,
				ext2fs_le16_to_cpu(b->b_id), b->b_path);
			return FSCK_ERROR;
		}
	}
	/* priority order; the first of order 0 is the upper */
	for (i = 1; i < cv->nbr; i++)
		for (j = i; j > 0 && cv->br[j - 1].order > cv->br[j].order;
		     j--) {
			struct cv_branch t = cv->br[j];

			cv->br[j] = cv->br[j - 1];
			cv->br[j - 1] = t;
		}
	if (cv->nbr && cv->br[0].order == 0)
		cv->upper = 0;
	(void)npresent;
	return 0;
}

static errcode_t flush(struct odfck_ctx *ctx)
{
	return ext2fs_flush(ctx->v->fs);
}

static int lookup_top(struct odfck_ctx *ctx, const char *name,
		      ext2_ino_t *ino)
{
	return !odf_lookup(ctx->v->fs, EXT2_ROOT_INO, name, ino);
}

/*
 * Before pass 1 looks at the layout: a conversion interrupted between
 * its two renames has no /ns; put the finished v2 tree there.
 */
int odfck_convert_prepare(struct odfck_ctx *ctx)
{
	ext2_ino_t x;
	errcode_t err;

	if (odfck_readonly(ctx) || !lookup_top(ctx, NS_V1, &x) ||
	    lookup_top(ctx, ODF_PATH_NS, &x) || !lookup_top(ctx, NS_V2, &x))
		return 0;
	err = odf_rename(ctx->v->fs, EXT2_ROOT_INO, NS_V2, EXT2_ROOT_INO,
			 ODF_PATH_NS);
	if (err) {
		odfck_com_err(ctx, err, "finishing an interrupted conversion");
		return FSCK_ERROR;
	}
	return 0;
}

/* Steps after the v2 tree and intents are complete. */
static int swap_in(struct odfck_ctx *ctx)
{
	ext2_filsys fs = ctx->v->fs;
	struct odf_dirent *ents;
	size_t n, i;
	ext2_ino_t x, int2;
	errcode_t err = 0;

	if (!lookup_top(ctx, NS_V1, &x)) {
		if (lookup_top(ctx, ODF_PATH_NS, &x))
			err = odf_rename(fs, EXT2_ROOT_INO, ODF_PATH_NS,
					 EXT2_ROOT_INO, NS_V1);
		if (!err)
			err = odf_rename(fs, EXT2_ROOT_INO, NS_V2,
					 EXT2_ROOT_INO, ODF_PATH_NS);
	} else if (lookup_top(ctx, NS_V2, &x) &&
		   !lookup_top(ctx, ODF_PATH_NS, &x)) {
		err = odf_rename(fs, EXT2_ROOT_INO, NS_V2, EXT2_ROOT_INO,
				 ODF_PATH_NS);
	}
	if (!err)
		err = flush(ctx);
	odf_vol_find_layout(ctx->v);
	/* format 1 intents go; the converted ones take their place */
	if (!err && ctx->v->ino_reclaim &&
	    !(err = odf_list_dir(fs, ctx->v->ino_reclaim, &ents, &n))) {
		for (i = 0; i < n && !err; i++) {
			void *buf = NULL;
			size_t len;
			struct odf_intent_info in;

			if (strncmp(ents[i].name, ODF_INTENT_PREFIX,
				    strlen(ODF_INTENT_PREFIX)) ||
			    odf_is_dir(fs, ents[i].ino))
				continue;
			if (!odf_file_read_all(fs, ents[i].ino,
					       ODF_INTENT_BUF_MAX, &buf, &len) &&
			    !odf_intent_decode(buf, len, &in)) {
				free(buf);
				continue;	/* already format 2 */
			}
			free(buf);
			err = odf_remove(fs, ctx->v->ino_reclaim,
					 ents[i].name);
		}
		free(ents);
	}
	if (!err && lookup_top(ctx, INTENTS_V2, &int2) &&
	    !(err = odf_list_dir(fs, int2, &ents, &n))) {
		for (i = 0; i < n && !err; i++)
			err = odf_rename(fs, int2, ents[i].name,
					 ctx->v->ino_reclaim, ents[i].name);
		free(ents);
		if (!err)
			err = odf_remove(fs, EXT2_ROOT_INO, INTENTS_V2);
	}
	if (!err)
		err = flush(ctx);
	if (err) {
		odfck_com_err(ctx, err, "swapping in the format 2 namespace");
		return FSCK_ERROR;
	}
	/* the version last: until here the volume is format 1 */
	ctx->sb.s_version = ext2fs_cpu_to_le16(ODF_FORMAT_VERSION);
	ctx->backup_dirty = 1;
	err = write_super(ctx);
	if (!err)
		err = flush(ctx);
	if (!err && lookup_top(ctx, NS_V1, &x))
		err = odf_remove(ctx->v->fs, EXT2_ROOT_INO, NS_V1);
	if (err) {
		odfck_com_err(ctx, err, "writing the format 2 header");
		return FSCK_ERROR;
	}
	ctx->fmt = ODF_FORMAT_VERSION;
	odf_vol_find_layout(ctx->v);
	return 0;
}

int odfck_convert(struct odfck_ctx *ctx)
{
	struct problem_context pc;
	struct cv cv;
	ext2_ino_t x;
	errcode_t err;
	unsigned i;
	int st;

	memset(&pc, 0, sizeof(pc));
	if (!fix_problem(ctx, PR_6_CONVERT, &pc))
		return FSCK_UNCORRECTED;
	if (lookup_top(ctx, NS_V1, &x)) {
		pc.str = "/" NS_V1 " exists";
		pc.str2 = "finished";
		fix_problem(ctx, PR_6_RESUME, &pc);
		return swap_in(ctx);
	}
	memset(&cv, 0, sizeof(cv));
	cv.ctx = ctx;
	st = match_dirs(&cv);
	if (st)
		goto out;
	cv.have_fwd = !odf_map_open(ctx->v, ODF_MAP_FORWARD, &cv.fwd);
	if (lookup_top(ctx, NS_V2, &x) || lookup_top(ctx, INTENTS_V2, &x)) {
		pc.str = "/" NS_V2 " exists";
		pc.str2 = "started again";
		fix_problem(ctx, PR_6_RESUME, &pc);
		err = 0;
		if (lookup_top(ctx, NS_V2, &x))
			err = odf_remove(ctx->v->fs, EXT2_ROOT_INO, NS_V2);
		if (!err && lookup_top(ctx, INTENTS_V2, &x))
			err = odf_remove(ctx->v->fs, EXT2_ROOT_INO,
					 INTENTS_V2);
		if (err) {
			odfck_com_err(ctx, err, "removing an unfinished "
				      "conversion");
			st = FSCK_ERROR;
			goto out;
		}
	}
	err = odf_mkdir(ctx->v->fs, EXT2_ROOT_INO, NS_V2, &cv.ns2);
	if (!err)
		err = odf_mkdir(ctx->v->fs, EXT2_ROOT_INO, INTENTS_V2,
				&cv.int2);
	if (err) {
		odfck_com_err(ctx, err, "creating /" NS_V2);
		st = FSCK_ERROR;
		goto out;
	}
	cv.ns1 = ctx->v->ino_ns;
	if (cv.ns1)
		st = walk(&cv, cv.ns1, "/", 0);
	if (!st)
		st = intents(&cv);
	if (!st && (err = flush(ctx))) {
		odfck_com_err(ctx, err, "writing the format 2 namespace");
		st = FSCK_ERROR;
	}
	if (!st)
		st = swap_in(ctx);
out:
	for (i = 0; i < cv.nbr; i++)
		free(cv.br[i].dir);
	return st;
}
