// SPDX-License-Identifier: GPL-2.0
/*
 * pass2.c - the namespace under /ns (format 2, section 5).
 *
 * Every entry of /ns must be a node: a directory named by the union
 * inode number of its directory (16 lower-case hex digits), carrying a
 * record whose n_uino is that number.  Inside a node, every entry is a
 * whiteout: an empty regular file with no extended attribute.
 *
 * Whiteouts are not caches: they are kept whenever the inode type
 * proves them.  A node that has whiteouts but no usable record gets a
 * plain record (type 0) with owner 0, which means "never stale": odfck
 * has no branches, so it cannot know the directory's upper inode, and
 * keeping the whiteouts visible is the safe side (a name that should
 * be deleted never comes back).  What cannot be recovered (opaque and
 * redirect markers of a damaged record) is cleared.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "odfck.h"

static const char *type_name(__u16 mode)
{
	switch (mode & LINUX_S_IFMT) {
	case LINUX_S_IFREG: return "regular file";
	case LINUX_S_IFDIR: return "directory";
	case LINUX_S_IFLNK: return "symbolic link";
	case LINUX_S_IFCHR: return "character device";
	case LINUX_S_IFBLK: return "block device";
	case LINUX_S_IFIFO: return "fifo";
	case LINUX_S_IFSOCK: return "socket";
	}
	return "file of unknown type";
}

/* Id of the upper branch (PRESENT, priority 0), 0 if none. */
static unsigned upper_id(struct odfck_ctx *ctx)
{
	unsigned i;

	for (i = 0; i < ODF_BRANCH_SLOTS; i++) {
		const struct odf_branch *b = &ctx->br[i];

		if (!odf_branch_unused(b) &&
		    ext2fs_le16_to_cpu(b->b_flags) == ODF_BRANCH_PRESENT &&
		    ext2fs_le16_to_cpu(b->b_order) == 0)
			return ext2fs_le16_to_cpu(b->b_id);
	}
	return 0;
}

/* The children of a node: whiteouts; returns how many, or -exit. */
static int check_children(struct odfck_ctx *ctx, const char *npath,
			  ext2_ino_t node)
{
	struct odf_dirent *ents;
	size_t n, i;
	int nwh = 0;
	errcode_t err;

	err = odf_list_dir(ctx->v->fs, node, &ents, &n);
	if (err) {
		odfck_com_err(ctx, err, "reading a namespace node");
		return -FSCK_ERROR;
	}
	for (i = 0; i < n; i++) {
		struct problem_context pc;
		struct ext2_inode inode;
		char path[ODF_NS_NAME_LEN + 300];
		size_t nx;

		path_join(path, sizeof(path), npath, ents[i].name);
		memset(&pc, 0, sizeof(pc));
		pc.path = path;
		err = ext2fs_read_inode(ctx->v->fs, ents[i].ino, &inode);
		if (err) {
			odfck_com_err(ctx, err, "reading a namespace inode");
			free(ents);
			return -FSCK_ERROR;
		}
		if (!LINUX_S_ISREG(inode.i_mode)) {
			pc.str = type_name(inode.i_mode);
			if (fix_problem(ctx, PR_2_CHILD_BAD, &pc)) {
				err = odf_reclaim_move(ctx->v, node,
						       ents[i].name);
				if (err) {
					odfck_com_err(ctx, err, "moving a "
						      "namespace entry");
					free(ents);
					return -FSCK_ERROR;
				}
			}
			continue;
		}
		nwh++;
		if (EXT2_I_SIZE(&inode)) {
			pc.num = EXT2_I_SIZE(&inode);
			if (fix_problem(ctx, PR_2_WH_DATA, &pc)) {
				err = odf_file_truncate(ctx->v->fs,
							ents[i].ino, 0);
				if (err) {
					odfck_com_err(ctx, err, "truncating a "
						      "whiteout");
					free(ents);
					return -FSCK_ERROR;
				}
			}
		}
		err = odf_xattr_count(ctx->v->fs, ents[i].ino, &nx);
		if (!err && nx) {
			pc.num = nx;
			pc.str = nx == 1 ? "" : "s";
			if (fix_problem(ctx, PR_2_WH_XATTR, &pc))
				err = odf_xattr_clear_all(ctx->v->fs,
							  ents[i].ino);
		}
		if (err) {
			odfck_com_err(ctx, err, "clearing a whiteout's "
				      "extended attributes");
			free(ents);
			return -FSCK_ERROR;
		}
	}
	free(ents);
	return nwh;
}

static int check_node(struct odfck_ctx *ctx, const char *name, __u64 uino,
		      ext2_ino_t node)
{
	static struct odf_redir_ent ents[ODF_NODE_MAX_REDIRECTS];
	unsigned char buf[ODF_NODE_BUF_MAX];
	struct problem_context pc;
	struct odf_node_info ni;
	char npath[ODF_NS_NAME_LEN + 8];
	size_t len = 0;
	unsigned i, up;
	int present, bad = ODF_GOOD, nwh, dirty = 0, drop = 0;
	errcode_t err;

	snprintf(npath, sizeof(npath), "/ns/%s", name);
	nwh = check_children(ctx, npath, node);
	if (nwh < 0)
		return -nwh;
	memset(&pc, 0, sizeof(pc));
	pc.path = npath;
	err = odf_node_get(ctx->v->fs, node, buf, &len, &present);
	if (err) {
		odfck_com_err(ctx, err, "reading a namespace record");
		return FSCK_ERROR;
	}
	memset(&ni, 0, sizeof(ni));
	if (present)
		bad = odf_node_decode(buf, len, &ni, ents,
				      ODF_NODE_MAX_REDIRECTS);
	if (!present) {
		/* nothing to keep without whiteouts: a leftover */
		if (!nwh)
			goto empty;
		if (fix_problem(ctx, PR_2_NO_RECORD, &pc))
			dirty = 1;
		memset(&ni, 0, sizeof(ni));
	} else if (bad == ODF_BAD_TYPE) {
		unsigned t = ni.type;

		pc.num = t;
		if (fix_problem(ctx, PR_2_BAD_TYPE, &pc)) {
			t &= ODF_NODE_OPAQUE | ODF_NODE_REDIRECT;
			if (!ni.nredirect)
				t &= ~ODF_NODE_REDIRECT;
			if (t & ODF_NODE_REDIRECT)
				t |= ODF_NODE_OPAQUE;
			else
				ni.nredirect = 0;
			ni.type = t;
			dirty = 1;
		}
	} else if (bad == ODF_BAD_REDIRECT) {
		if (fix_problem(ctx, PR_2_REDIRECT_BAD, &pc)) {
			ni.type &= ODF_NODE_OPAQUE;
			ni.nredirect = 0;
			dirty = 1;
		}
	} else if (bad != ODF_GOOD) {
		pc.str = odf_bad_str(bad);
		if (fix_problem(ctx, PR_2_BAD_RECORD, &pc)) {
			if (!nwh)
				drop = 1;
			dirty = 1;
		}
		memset(&ni, 0, sizeof(ni));
	}
	if (present && ni.uino && ni.uino != uino) {
		pc.ino = ni.uino;
		if (fix_problem(ctx, PR_2_UINO_MISMATCH, &pc))
			dirty = 1;
	}
	ni.uino = uino;
	/* the upper branch is never redirected to */
	up = upper_id(ctx);
	for (i = 0; up && i < ni.nredirect; i++) {
		if (ents[i].branch != up)
			continue;
		pc.num = up;
		if (!fix_problem(ctx, PR_2_REDIRECT_UPPER, &pc))
			break;
		memmove(&ents[i], &ents[i + 1],
			(ni.nredirect - i - 1) * sizeof(ents[0]));
		if (!--ni.nredirect)
			ni.type &= ~ODF_NODE_REDIRECT;
		dirty = 1;
		break;
	}
	if (drop)
		goto remove;
	if (dirty && !odfck_readonly(ctx)) {
		ni.time = time(NULL);
		err = odf_node_write(ctx->v->fs, node, &ni, ents);
		if (err) {
			odfck_com_err(ctx, err, "writing a namespace record");
			return FSCK_ERROR;
		}
	}
	/*
	 * A sound plain node without whiteouts is what the module leaves
	 * when the last whiteout in it goes (section 5): valid.  One whose
	 * record had to be made up holds nothing worth keeping.
	 */
	if (!nwh && !(ni.type & (ODF_NODE_OPAQUE | ODF_NODE_REDIRECT)) &&
	    dirty)
		goto empty;
	ctx->n_whiteouts += nwh;
	if (ni.type & ODF_NODE_REDIRECT)	/* always opaque too */
		ctx->n_redirects++;
	else if (ni.type & ODF_NODE_OPAQUE)
		ctx->n_opaque++;
	if (!(ni.type & ODF_NODE_OPAQUE))
		ctx->n_plain++;
	return 0;

empty:
	if (!fix_problem(ctx, PR_2_EMPTY_NODE, &pc))
		return 0;
remove:
	if (odfck_readonly(ctx))
		return 0;
	err = odf_remove(ctx->v->fs, ctx->v->ino_ns, name);
	if (err) {
		odfck_com_err(ctx, err, "removing a namespace node");
		return FSCK_ERROR;
	}
	return 0;
}

int odfck_pass2(struct odfck_ctx *ctx)
{
	struct odf_dirent *ents;
	size_t n, i;
	errcode_t err;
	int st = 0;

	if (!ctx->v->ino_ns)	/* reported in pass 1, left alone */
		return 0;
	err = odf_list_dir(ctx->v->fs, ctx->v->ino_ns, &ents, &n);
	if (err) {
		odfck_com_err(ctx, err, "reading /ns");
		return FSCK_ERROR;
	}
	for (i = 0; i < n && !st; i++) {
		struct problem_context pc;
		struct ext2_inode inode;
		__u64 uino;
		int code = 0;

		err = ext2fs_read_inode(ctx->v->fs, ents[i].ino, &inode);
		if (err) {
			odfck_com_err(ctx, err, "reading a namespace inode");
			st = FSCK_ERROR;
			break;
		}
		memset(&pc, 0, sizeof(pc));
		pc.str = ents[i].name;
		if (!LINUX_S_ISDIR(inode.i_mode)) {
			pc.str2 = type_name(inode.i_mode);
			code = PR_2_NOT_NODE;
		} else if (!odf_ns_parse_name(ents[i].name, &uino)) {
			code = PR_2_BAD_NAME;
		}
		if (!code) {
			st = check_node(ctx, ents[i].name, uino, ents[i].ino);
			continue;
		}
		if (fix_problem(ctx, code, &pc)) {
			err = odf_reclaim_move(ctx->v, ctx->v->ino_ns,
					       ents[i].name);
			if (err) {
				odfck_com_err(ctx, err, "moving a namespace "
					      "entry to /reclaim");
				st = FSCK_ERROR;
			}
		}
	}
	free(ents);
	return st;
}
