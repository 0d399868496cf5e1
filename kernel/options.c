// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: mount option parsing.
 *
 *   odf=DEVICE_OR_DIRECTORY
 *   dirs=BRANCH[=rw|=ro][:BRANCH[=rw|=ro]]...   highest priority first
 *
 * dirs= follows unionfs 2.x: without a mode the first branch is rw and
 * the others ro.  Errors are reported through the fs_context log, which
 * the legacy mount(2) path prints to the kernel log as one line.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include "unionfs.h"

void unionfs_free_options(struct unionfs_options *opts)
{
	unsigned int i;

	for (i = 0; i < opts->nbranches; i++)
		kfree(opts->branches[i].path);
	kfree(opts->branches);
	kfree(opts->odf);
	opts->branches = NULL;
	opts->nbranches = 0;
	opts->odf = NULL;
}

/* Split one "path[=mode]" element; @elem is modified in place. */
static int unionfs_parse_branch(struct fs_context *fc, char *elem,
				unsigned int index,
				struct unionfs_branch_spec *spec)
{
	char *eq = strrchr(elem, '=');

	spec->mode = index == 0 ? UNIONFS_BR_RW : UNIONFS_BR_RO;
	if (eq) {
		*eq = '\0';
		if (!strcmp(eq + 1, "rw"))
			spec->mode = UNIONFS_BR_RW;
		else if (!strcmp(eq + 1, "ro"))
			spec->mode = UNIONFS_BR_RO;
		else
			return invalfc(fc,
				       "bad mode '%s' for branch '%s' in dirs= (use =rw or =ro)",
				       eq + 1, elem);
	}
	if (!*elem)
		return invalfc(fc, "empty branch path in dirs=");
	if (*elem != '/')
		return invalfc(fc, "branch '%s' in dirs= is not an absolute path",
			      elem);
	spec->path = kstrdup(elem, GFP_KERNEL);
	return spec->path ? 0 : -ENOMEM;
}

static int unionfs_parse_dirs(struct fs_context *fc,
			      struct unionfs_options *opts, const char *value)
{
	char *buf, *cur, *elem;
	unsigned int n = 1, i = 0;
	const char *p;
	int err = 0;

	for (p = value; *p; p++)
		if (*p == ':')
			n++;
	if (n > UNIONFS_MAX_BRANCHES)
		return invalfc(fc, "dirs= names %u branches, at most %u are supported",
			      n, UNIONFS_MAX_BRANCHES);

	buf = kstrdup(value, GFP_KERNEL);
	opts->branches = kcalloc(n, sizeof(*opts->branches), GFP_KERNEL);
	if (!buf || !opts->branches) {
		err = -ENOMEM;
		goto out;
	}
	cur = buf;
	while ((elem = strsep(&cur, ":")) != NULL) {
		err = unionfs_parse_branch(fc, elem, i, &opts->branches[i]);
		if (err)
			goto out;
		opts->nbranches = ++i;
	}
out:
	kfree(buf);
	return err;
}

int unionfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct unionfs_options *opts = fc->fs_private;

	/* The device name ("none") is handled by the VFS. */
	if (!strcmp(param->key, "source"))
		return -ENOPARAM;

	if (!strcmp(param->key, "odf") || !strcmp(param->key, "dirs")) {
		if (param->type != fs_value_is_string || !*param->string)
			return invalfc(fc, "option %s= needs a value",
				      param->key);
	}

	if (!strcmp(param->key, "odf")) {
		if (opts->odf)
			return invalfc(fc, "odf= given twice");
		opts->odf = param->string;
		param->string = NULL;
		return 0;
	}
	if (!strcmp(param->key, "dirs")) {
		if (opts->nbranches)
			return invalfc(fc, "dirs= given twice");
		return unionfs_parse_dirs(fc, opts, param->string);
	}
	if (!strcmp(param->key, "add") || !strcmp(param->key, "del") ||
	    !strcmp(param->key, "mode"))
		return invalfc(fc, "option %s=: branches cannot be changed by remount yet; unmount and mount with the new dirs=",
			      param->key);
	return invalfc(fc, "unknown mount option '%s' (known: odf=, dirs=)",
		      param->key);
}
