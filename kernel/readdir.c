// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: directories.
 *
 * With a single branch a union directory is that branch's directory:
 * entries, offsets and seeks are the branch's own, and d_ino equals the
 * st_ino the union reports because union inode numbers are the branch's.
 */
#include "unionfs.h"

struct unionfs_readdir_ctx {
	struct dir_context ctx;
	struct dir_context *caller;
};

static bool unionfs_filldir(struct dir_context *ctx, const char *name,
			    int namelen, loff_t offset, u64 ino,
			    unsigned int d_type)
{
	struct unionfs_readdir_ctx *rc =
		container_of(ctx, struct unionfs_readdir_ctx, ctx);

	return rc->caller->actor(rc->caller, name, namelen, offset, ino,
				 d_type);
}

static int unionfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct file *realfile = file->private_data;
	struct unionfs_readdir_ctx rc = {
		.ctx.actor = unionfs_filldir,
		.ctx.pos = ctx->pos,
		.caller = ctx,
	};
	int err;

	/* The branch directory resumes where the union file stands. */
	realfile->f_pos = ctx->pos;
	err = iterate_dir(realfile, &rc.ctx);
	ctx->pos = realfile->f_pos;
	return err;
}

const struct file_operations unionfs_dir_fops = {
	.open		= unionfs_open,
	.release	= unionfs_release,
	.iterate_shared	= unionfs_iterate,
	.llseek		= unionfs_llseek,
	.read		= generic_read_dir,
};
