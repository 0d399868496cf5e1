// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: mount option parsing.
 *
 *   odf=DEVICE_OR_DIRECTORY
 *   dirs=BRANCH[=rw|=ro][:BRANCH[=rw|=ro]]...   highest priority first
 *
 * dirs= follows unionfs 2.x: without a mode the first branch is rw and
 * the others ro.  remount also takes unionfs 2.x's branch changes, each
 * as often as wanted, applied in the order given:
 *
 *   add=[POS:]BRANCH[=rw|=ro]   insert at priority POS (default 1)
 *   del=BRANCH
 *   mode=BRANCH=rw|ro
 *
 *   udba=reval|none   (mount and remount) whether cached names check
 *                     their branches for direct edits (dentry.c)
 *
 * Errors are reported through the fs_context log, which
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
	for (i = 0; i < opts->nops; i++)
		kfree(opts->ops[i].spec.path);
	kfree(opts->ops);
	opts->ops = NULL;
	opts->nops = 0;
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

static bool str_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* add=[POS:]BRANCH[=mode], del=BRANCH, mode=BRANCH=mode (remount only). */
static int unionfs_parse_branch_op(struct fs_context *fc,
				   struct unionfs_options *opts,
				   const char *key, char *value)
{
	struct unionfs_branch_op *ops, *op;
	char *elem = value, *colon, *eq;
	int err;

	if (fc->purpose != FS_CONTEXT_FOR_RECONFIGURE)
		return invalfc(fc, "option %s= changes the branches of a mounted union: use it with remount",
			      key);
	if (opts->nops >= 2 * UNIONFS_MAX_BRANCHES)
		return invalfc(fc, "too many branch changes in one remount");
	ops = krealloc(opts->ops, (opts->nops + 1) * sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return -ENOMEM;
	opts->ops = ops;
	op = &ops[opts->nops];
	memset(op, 0, sizeof(*op));
	op->pos = -1;
	if (!strcmp(key, "add")) {
		op->kind = UNIONFS_BROP_ADD;
		colon = strchr(value, ':');
		if (colon && value[0] != '/') {
			*colon = '\0';
			if (kstrtoint(value, 10, &op->pos) || op->pos < 0 ||
			    op->pos >= UNIONFS_MAX_BRANCHES)
				return invalfc(fc, "add=%s: bad position '%s' (0 is the top)",
					      colon + 1, value);
			elem = colon + 1;
		}
	} else if (!strcmp(key, "del")) {
		op->kind = UNIONFS_BROP_DEL;
	} else {
		op->kind = UNIONFS_BROP_MODE;
		eq = strrchr(value, '=');
		if (!eq || eq == value)
			return invalfc(fc, "mode=%s: give the branch and its mode, as mode=BRANCH=ro",
				      value);
	}
	if (op->kind == UNIONFS_BROP_DEL &&
	    (str_has_suffix(value, "=rw") || str_has_suffix(value, "=ro")))
		return invalfc(fc, "del=%s: give the branch only, no mode", value);
	if (op->kind == UNIONFS_BROP_DEL && value[0] == '/') {
		op->spec.path = kstrdup(value, GFP_KERNEL);
		if (!op->spec.path)
			return -ENOMEM;
	} else {
		/* The mode defaults to ro (index 1 in unionfs_parse_branch). */
		err = unionfs_parse_branch(fc, elem, 1, &op->spec);
		if (err)
			return err;
	}
	opts->nops++;
	return 0;
}

int unionfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct unionfs_options *opts = fc->fs_private;

	/* The device name ("none") is handled by the VFS. */
	if (!strcmp(param->key, "source"))
		return -ENOPARAM;

	if (!strcmp(param->key, "odf") || !strcmp(param->key, "dirs") ||
	    !strcmp(param->key, "add") || !strcmp(param->key, "del") ||
	    !strcmp(param->key, "mode")) {
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
		return unionfs_parse_branch_op(fc, opts, param->key,
					       param->string);
	if (!strcmp(param->key, "udba")) {
		if (param->type == fs_value_is_string &&
		    !strcmp(param->string, "reval"))
			opts->udba = UNIONFS_UDBA_REVAL;
		else if (param->type == fs_value_is_string &&
			 !strcmp(param->string, "none"))
			opts->udba = UNIONFS_UDBA_NONE;
		else
			return invalfc(fc, "udba= takes reval or none");
		return 0;
	}
	return invalfc(fc, "unknown mount option '%s' (known: odf=, dirs=, udba=, and add=, del=, mode= with remount)",
		      param->key);
}
