// SPDX-License-Identifier: GPL-2.0
/*
 * pass2.c - the namespace tree under /ns.
 *
 * Whiteouts and opaque or redirect markers are not caches: a damaged
 * record is repaired to what the inode type still proves (a regular
 * file under /ns is a whiteout), and only what cannot be recovered is
 * cleared.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "odfck.h"

#define NS_MAX_DEPTH	2048
#define NS_PATH_MAX	4096

static const char *type_name(__u16 mode)
{
	switch (mode & LINUX_S_IFMT) {
	case LINUX_S_IFLNK: return "symbolic link";
	case LINUX_S_IFCHR: return "character device";
	case LINUX_S_IFBLK: return "block device";
	case LINUX_S_IFIFO: return "fifo";
	case LINUX_S_IFSOCK: return "socket";
	}
	return "file of unknown type";
}

static int set_whiteout(struct odfck_ctx *ctx, ext2_ino_t ino)
{
	errcode_t err = odf_node_set(ctx->v->fs, ino, ODF_NODE_WHITEOUT,
				     time(NULL), NULL);

	if (err)
		odfck_com_err(ctx, err, "writing a whiteout record");
	return err ? FSCK_ERROR : 0;
}

static int check_whiteout(struct odfck_ctx *ctx, const char *path,
			  ext2_ino_t ino, const struct ext2_inode *inode)
{
	unsigned char buf[ODF_NODE_BUF_MAX];
	struct problem_context pc;
	size_t len = 0, rlen;
	const char *redir;
	unsigned type;
	int present, bad;
	errcode_t err;

	memset(&pc, 0, sizeof(pc));
	pc.path = path;
	ctx->n_whiteouts++;
	err = odf_node_get(ctx->v->fs, ino, buf, &len, &present);
	if (err) {
		odfck_com_err(ctx, err, "reading a namespace record");
		return FSCK_ERROR;
	}
	if (!present) {
		if (fix_problem(ctx, PR_2_WH_NO_RECORD, &pc) &&
		    set_whiteout(ctx, ino))
			return FSCK_ERROR;
	} else if ((bad = odf_node_decode(buf, len, &type, &redir, &rlen))) {
		pc.str = odf_bad_str(bad);
		if (fix_problem(ctx, PR_2_WH_BAD_RECORD, &pc) &&
		    set_whiteout(ctx, ino))
			return FSCK_ERROR;
	} else if (type != ODF_NODE_WHITEOUT) {
		pc.num = type;
		if (fix_problem(ctx, PR_2_WH_BAD_TYPE, &pc) &&
		    set_whiteout(ctx, ino))
			return FSCK_ERROR;
	}
	if (EXT2_I_SIZE(inode)) {
		pc.num = EXT2_I_SIZE(inode);
		if (fix_problem(ctx, PR_2_WH_DATA, &pc)) {
			err = odf_file_truncate(ctx->v->fs, ino, 0);
			if (err) {
				odfck_com_err(ctx, err, "truncating a whiteout");
				return FSCK_ERROR;
			}
		}
	}
	return 0;
}

/*
 * A directory marked as a whiteout: everything below it is dead.  Its
 * subtree moves to /reclaim (pass 5 deletes it) and a plain whiteout
 * file takes its place.
 */
static int whiteout_dir(struct odfck_ctx *ctx, const char *path,
			ext2_ino_t dir, const char *name, ext2_ino_t ino)
{
	struct problem_context pc;
	struct odf_dirent *ents;
	size_t n;
	char rname[32];
	ext2_ino_t wh;
	errcode_t err;

	memset(&pc, 0, sizeof(pc));
	pc.path = path;
	ctx->n_whiteouts++;
	err = odf_list_dir(ctx->v->fs, ino, &ents, &n);
	if (err) {
		odfck_com_err(ctx, err, "reading a namespace directory");
		return FSCK_ERROR;
	}
	free(ents);
	pc.num = n;
	if (!fix_problem(ctx, n ? PR_2_WH_PARENT : PR_2_WH_DIR, &pc))
		return 0;
	if (n && ctx->v->ino_reclaim) {
		snprintf(rname, sizeof(rname), "%u", ino);
		err = odf_rename(ctx->v->fs, dir, name, ctx->v->ino_reclaim,
				 rname);
	} else {
		err = odf_remove(ctx->v->fs, dir, name);
	}
	if (!err)
		err = odf_file_create(ctx->v->fs, dir, name, &wh);
	if (err) {
		odfck_com_err(ctx, err, "turning a directory into a whiteout");
		return FSCK_ERROR;
	}
	return set_whiteout(ctx, wh);
}

static int walk(struct odfck_ctx *ctx, ext2_ino_t dir, const char *dpath,
		int depth);

static int check_dir(struct odfck_ctx *ctx, const char *path, ext2_ino_t dir,
		     const char *name, ext2_ino_t ino, int depth)
{
	unsigned char buf[ODF_NODE_BUF_MAX];
	struct problem_context pc;
	size_t len = 0, rlen = 0;
	const char *redir = NULL;
	unsigned type = 0;
	int present, bad;
	errcode_t err;

	memset(&pc, 0, sizeof(pc));
	pc.path = path;
	err = odf_node_get(ctx->v->fs, ino, buf, &len, &present);
	if (err) {
		odfck_com_err(ctx, err, "reading a namespace record");
		return FSCK_ERROR;
	}
	if (present && (bad = odf_node_decode(buf, len, &type, &redir,
					      &rlen))) {
		pc.str = odf_bad_str(bad);
		type = 0;
		if (fix_problem(ctx, PR_2_DIR_BAD_RECORD, &pc)) {
			err = odf_node_clear(ctx->v->fs, ino);
			if (err) {
				odfck_com_err(ctx, err, "clearing a record");
				return FSCK_ERROR;
			}
		}
	}
	if (type & ODF_NODE_WHITEOUT)
		return whiteout_dir(ctx, path, dir, name, ino);
	if ((type & ODF_NODE_REDIRECT) && rlen == strlen(path) &&
	    !memcmp(redir, path, rlen)) {
		if (fix_problem(ctx, PR_2_REDIRECT_SELF, &pc)) {
			type &= ~ODF_NODE_REDIRECT;
			err = type ? odf_node_set(ctx->v->fs, ino, type,
						  time(NULL), NULL) :
				     odf_node_clear(ctx->v->fs, ino);
			if (err) {
				odfck_com_err(ctx, err, "rewriting a record");
				return FSCK_ERROR;
			}
		}
	}
	if (type & ODF_NODE_OPAQUE)
		ctx->n_opaque++;
	if (type & ODF_NODE_REDIRECT)
		ctx->n_redirects++;
	if (!type)
		ctx->n_plain++;
	return walk(ctx, ino, path, depth + 1);
}

static int walk(struct odfck_ctx *ctx, ext2_ino_t dir, const char *dpath,
		int depth)
{
	struct odf_dirent *ents;
	size_t n, i;
	errcode_t err;
	int st = 0;

	if (depth > NS_MAX_DEPTH) {
		struct problem_context pc;

		memset(&pc, 0, sizeof(pc));
		pc.path = dpath;
		pc.num = NS_MAX_DEPTH;
		fix_problem(ctx, PR_2_TOO_DEEP, &pc);
		return FSCK_ERROR;
	}
	err = odf_list_dir(ctx->v->fs, dir, &ents, &n);
	if (err) {
		odfck_com_err(ctx, err, "reading a namespace directory");
		return FSCK_ERROR;
	}
	for (i = 0; i < n && !st; i++) {
		struct ext2_inode inode;
		char *path = malloc(NS_PATH_MAX);

		if (!path) {
			st = FSCK_ERROR;
			break;
		}
		path_join(path, NS_PATH_MAX, dpath, ents[i].name);
		err = ext2fs_read_inode(ctx->v->fs, ents[i].ino, &inode);
		if (err) {
			odfck_com_err(ctx, err, "reading a namespace inode");
			st = FSCK_ERROR;
		} else if (LINUX_S_ISDIR(inode.i_mode)) {
			st = check_dir(ctx, path, dir, ents[i].name,
				       ents[i].ino, depth);
		} else if (LINUX_S_ISREG(inode.i_mode)) {
			st = check_whiteout(ctx, path, ents[i].ino, &inode);
		} else {
			struct problem_context pc;

			memset(&pc, 0, sizeof(pc));
			pc.path = path;
			pc.str = type_name(inode.i_mode);
			if (fix_problem(ctx, PR_2_BAD_TYPE, &pc)) {
				err = odf_remove(ctx->v->fs, dir,
						 ents[i].name);
				if (err) {
					odfck_com_err(ctx, err, "deleting a "
						      "namespace node");
					st = FSCK_ERROR;
				}
			}
		}
		free(path);
	}
	free(ents);
	return st;
}

int odfck_pass2(struct odfck_ctx *ctx)
{
	if (!ctx->v->ino_ns)	/* reported in pass 1, left alone */
		return 0;
	return walk(ctx, ctx->v->ino_ns, "/", 0);
}
