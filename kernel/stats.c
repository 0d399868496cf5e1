// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: per-mount statistics in sysfs, /sys/fs/unionfs/<dev>/,
 * where <dev> is the union's device number as /proc/self/mountinfo
 * shows it ("0:45").  One read-only file per counter, counted since the
 * mount: what an administrator looks at first (docs/man/unionfs.5).
 *
 * The counters live in their own object, freed when the last sysfs
 * reader lets go of it, so a reader never sees a freed superblock.
 */
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "unionfs.h"

struct unionfs_stats {
	struct kobject kobj;
	atomic64_t v[UNIONFS_NR_STATS];
};

struct unionfs_stat_attr {
	struct attribute attr;
	enum unionfs_stat idx;
};

#define UNIONFS_STAT(_name, _idx) \
	static struct unionfs_stat_attr unionfs_stat_##_name = { \
		.attr = { .name = #_name, .mode = 0444 }, .idx = _idx }

UNIONFS_STAT(copy_ups, UNIONFS_ST_COPYUPS);
UNIONFS_STAT(whiteouts, UNIONFS_ST_WHITEOUTS);
UNIONFS_STAT(readdir_built, UNIONFS_ST_RD_BUILT);
UNIONFS_STAT(readdir_reconciled, UNIONFS_ST_RD_RECONCILED);
UNIONFS_STAT(readdir_rebuilt, UNIONFS_ST_RD_REBUILT);
UNIONFS_STAT(readdir_counted, UNIONFS_ST_RD_COUNTED);
UNIONFS_STAT(readdir_checks, UNIONFS_ST_RD_CHECKS);
UNIONFS_STAT(map_records, UNIONFS_ST_MAP_RECORDS);
UNIONFS_STAT(map_reads, UNIONFS_ST_MAP_READS);
UNIONFS_STAT(ns_reads, UNIONFS_ST_NS_READS);
UNIONFS_STAT(odf_errors, UNIONFS_ST_ODF_ERRORS);
UNIONFS_STAT(odf_full, UNIONFS_ST_ODF_FULL);

static struct attribute *unionfs_stat_attrs[] = {
	&unionfs_stat_copy_ups.attr,
	&unionfs_stat_whiteouts.attr,
	&unionfs_stat_readdir_built.attr,
	&unionfs_stat_readdir_reconciled.attr,
	&unionfs_stat_readdir_rebuilt.attr,
	&unionfs_stat_readdir_counted.attr,
	&unionfs_stat_readdir_checks.attr,
	&unionfs_stat_map_records.attr,
	&unionfs_stat_map_reads.attr,
	&unionfs_stat_ns_reads.attr,
	&unionfs_stat_odf_errors.attr,
	&unionfs_stat_odf_full.attr,
	NULL
};
ATTRIBUTE_GROUPS(unionfs_stat);

static ssize_t unionfs_stat_show(struct kobject *kobj, struct attribute *attr,
				 char *buf)
{
	struct unionfs_stats *st = container_of(kobj, struct unionfs_stats, kobj);
	struct unionfs_stat_attr *a = container_of(attr, struct unionfs_stat_attr,
						   attr);

	return sysfs_emit(buf, "%lld\n", atomic64_read(&st->v[a->idx]));
}

static const struct sysfs_ops unionfs_stat_ops = {
	.show = unionfs_stat_show,
};

static void unionfs_stats_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct unionfs_stats, kobj));
}

static struct kobj_type unionfs_stats_ktype = {
	.sysfs_ops	= &unionfs_stat_ops,
	.default_groups	= unionfs_stat_groups,
	.release	= unionfs_stats_release,
};

static struct kset *unionfs_kset;

int unionfs_stats_init(void)
{
	unionfs_kset = kset_create_and_add(UNIONFS_NAME, NULL, fs_kobj);
	return unionfs_kset ? 0 : -ENOMEM;
}

void unionfs_stats_exit(void)
{
	kset_unregister(unionfs_kset);
}

/* The directory of a new mount; a failure costs only the statistics. */
void unionfs_stats_add(struct super_block *sb)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct unionfs_stats *st;
	int err;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return;
	st->kobj.kset = unionfs_kset;
	err = kobject_init_and_add(&st->kobj, &unionfs_stats_ktype, NULL,
				   "%u:%u", MAJOR(sb->s_dev), MINOR(sb->s_dev));
	if (err) {
		pr_warn("cannot add /sys/fs/%s/%u:%u (error %d): no statistics for this mount\n",
			UNIONFS_NAME, MAJOR(sb->s_dev), MINOR(sb->s_dev), err);
		kobject_put(&st->kobj);
		return;
	}
	sbi->stats = st;
}

/* Before the device number is given back: its name may be reused. */
void unionfs_stats_del(struct unionfs_sb_info *sbi)
{
	struct unionfs_stats *st = sbi->stats;

	if (!st)
		return;
	WRITE_ONCE(sbi->stats, NULL);
	kobject_del(&st->kobj);
	kobject_put(&st->kobj);
}

void unionfs_count(struct unionfs_sb_info *sbi, enum unionfs_stat which)
{
	struct unionfs_stats *st = READ_ONCE(sbi->stats);

	if (st)
		atomic64_inc(&st->v[which]);
}
