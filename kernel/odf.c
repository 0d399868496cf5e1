// SPDX-License-Identifier: GPL-2.0
/*
 * odf-unionfs: the ODF volume (docs/odf-format.md).
 *
 * odf= names a block device, which the module mounts internally as ext4
 * (a private mount nobody else sees), or a directory where an ODF volume
 * is mounted, of which the module takes a private clone so that a later
 * umount of that directory cannot pull the metadata from under the union.
 *
 * At mount the superblock file is read and verified (magic, checksum,
 * version, features, state) and the branches of dirs= are matched to the
 * branch table, which gives each branch its persistent id.  A read-only
 * union writes nothing to the ODF.
 */
#define pr_fmt(fmt) "unionfs: " fmt

#include <linux/crc32c.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include <linux/uuid.h>
#include "unionfs.h"

static u32 unionfs_odf_crc(const void *buf, size_t len, size_t crc_offset)
{
	static const __le32 zero;
	u32 crc;

	/* The checksum field counts as zero (ext4 metadata_csum style). */
	crc = crc32c(~0U, buf, crc_offset);
	crc = crc32c(crc, &zero, sizeof(zero));
	return crc32c(crc, buf + crc_offset + sizeof(zero),
		      len - crc_offset - sizeof(zero));
}

static bool unionfs_odf_slot_unused(const struct odf_branch *b)
{
	return !memchr_inv(b, 0, sizeof(*b));
}

/* Mount the ODF device privately, or clone the mount of an ODF directory. */
static struct vfsmount *unionfs_odf_mount(struct fs_context *fc,
					  const char *name,
					  const struct path *path)
{
	struct file_system_type *ext4;
	struct vfsmount *mnt;

	if (!S_ISBLK(d_inode(path->dentry)->i_mode)) {
		mnt = clone_private_mount(path);
		if (IS_ERR(mnt))
			errorfc(fc, "cannot use ODF directory '%s' (error %ld)",
				name, PTR_ERR(mnt));
		return mnt;
	}

	ext4 = get_fs_type("ext4");
	if (!ext4) {
		errorfc(fc, "ODF '%s': the ext4 filesystem is not available", name);
		return ERR_PTR(-ENODEV);
	}
	mnt = vfs_kern_mount(ext4, fc->sb_flags & SB_RDONLY, name, NULL);
	module_put(ext4->owner);	/* put_filesystem() is not exported */
	/*
	 * Someone else has this ext4 mounted: the union would share it and
	 * its metadata could change under the union.  ext4 itself says EBUSY
	 * when the existing mount's read-only state differs.  The mount
	 * point can be named instead.
	 */
	if (PTR_ERR_OR_ZERO(mnt) == -EBUSY ||
	    (!IS_ERR(mnt) && atomic_read(&mnt->mnt_sb->s_active) > 1)) {
		if (!IS_ERR(mnt))
			mntput(mnt);
		errorfc(fc,
			"ODF device '%s' is mounted elsewhere: unmount it, or name its mount point in odf=",
			name);
		return ERR_PTR(-EBUSY);
	}
	if (IS_ERR(mnt)) {
		errorfc(fc,
			"cannot mount ODF device '%s' as ext4 (error %ld): format it with mkodf",
			name, PTR_ERR(mnt));
		return mnt;
	}
	return mnt;
}

static int unionfs_odf_check_header(struct fs_context *fc, const char *name,
				    const struct odf_super *s)
{
	u32 incompat, ro_compat;

	if (le32_to_cpu(s->s_magic) != ODF_SB_MAGIC)
		return invalfc(fc,
			       "'%s' is not an ODF volume (bad superblock magic): format it with mkodf",
			       name);
	if (le32_to_cpu(s->s_crc) !=
	    unionfs_odf_crc(s, sizeof(*s), offsetof(struct odf_super, s_crc))) {
		errorfc(fc, "ODF '%s': superblock checksum mismatch: run odfck", name);
		return -EUCLEAN;
	}
	if (le16_to_cpu(s->s_version) != ODF_FORMAT_VERSION ||
	    le32_to_cpu(s->s_hdr_size) != ODF_SB_HDR_SIZE)
		return invalfc(fc, "ODF '%s' has format version %u, this module reads version %u",
			       name, le16_to_cpu(s->s_version), ODF_FORMAT_VERSION);
	incompat = le32_to_cpu(s->s_feature_incompat) & ~ODF_FEATURE_INCOMPAT_SUPP;
	if (incompat)
		return invalfc(fc,
			       "ODF '%s' has unsupported incompatible features 0x%x: use a newer module",
			       name, incompat);
	ro_compat = le32_to_cpu(s->s_feature_ro_compat) & ~ODF_FEATURE_RO_COMPAT_SUPP;
	if (ro_compat && !(fc->sb_flags & SB_RDONLY)) {
		errorfc(fc,
			"ODF '%s' has unsupported features 0x%x: it can only be mounted read-only",
			name, ro_compat);
		return -EROFS;
	}
	if (le16_to_cpu(s->s_state) & ODF_STATE_ERRORS) {
		errorfc(fc, "ODF '%s' has errors recorded: run odfck", name);
		return -EUCLEAN;
	}
	if (le32_to_cpu(s->s_branch_offset) != ODF_BRANCH_OFFSET ||
	    le16_to_cpu(s->s_branch_slots) != ODF_BRANCH_SLOTS ||
	    le32_to_cpu(s->s_branch_size) != ODF_BRANCH_SIZE) {
		errorfc(fc, "ODF '%s': superblock has a bad branch table geometry: run odfck",
			name);
		return -EUCLEAN;
	}
	return 0;
}

/* Does branch @br match the identity recorded in @slot?  (Section 3.4.) */
static bool unionfs_odf_branch_matches(const struct unionfs_branch *br,
				       const struct odf_branch *slot)
{
	struct super_block *sb = br->root.mnt->mnt_sb;
	struct inode *root = d_inode(br->root.dentry);
	uuid_t slot_uuid;
	struct kstatfs st;
	u32 gen;

	if (vfs_statfs(&br->root, &st))
		return false;
	if (le32_to_cpu(slot->b_fs_magic) != (u32)st.f_type)
		return false;
	import_uuid(&slot_uuid, slot->b_fs_uuid);
	if (!uuid_is_null(&slot_uuid) && !uuid_is_null(&sb->s_uuid) &&
	    !uuid_equal(&slot_uuid, &sb->s_uuid))
		return false;
	if (le64_to_cpu(slot->b_root_ino) != root->i_ino)
		return false;
	gen = le32_to_cpu(slot->b_root_gen);
	return !gen || !root->i_generation || gen == root->i_generation;
}

/*
 * Give every branch of dirs= its persistent id.  An empty table (a fresh
 * volume) numbers them 1..n in dirs= order, which is what recording them
 * does.  Otherwise each branch must match its own PRESENT slot (the one
 * at its priority first) and every PRESENT slot must be matched.
 */
static int unionfs_odf_match_branches(struct fs_context *fc,
				      struct unionfs_sb_info *sbi,
				      const struct odf_branch *table)
{
	DECLARE_BITMAP(taken, ODF_BRANCH_SLOTS) = { 0 };
	unsigned int i, j, present = 0;

	for (j = 0; j < ODF_BRANCH_SLOTS; j++) {
		if (unionfs_odf_slot_unused(&table[j]))
			continue;
		if (le32_to_cpu(table[j].b_crc) !=
		    unionfs_odf_crc(&table[j], sizeof(table[j]),
				    offsetof(struct odf_branch, b_crc))) {
			errorfc(fc, "ODF '%s': branch table slot %u is damaged: run odfck",
				sbi->odf_name, j);
			return -EUCLEAN;
		}
		if (le16_to_cpu(table[j].b_flags) & ODF_BRANCH_PRESENT)
			present++;
		else
			__set_bit(j, taken);	/* removed: never matched */
	}
	if (!present) {
		for (i = 0; i < sbi->nbranches; i++)
			sbi->branches[i].id = i + 1;
		return 0;
	}

	for (i = 0; i < sbi->nbranches; i++) {
		struct unionfs_branch *br = &sbi->branches[i];
		int found = -1;

		for (j = 0; j < ODF_BRANCH_SLOTS && found < 0; j++)
			if (!test_bit(j, taken) &&
			    !unionfs_odf_slot_unused(&table[j]) &&
			    le16_to_cpu(table[j].b_order) == i &&
			    unionfs_odf_branch_matches(br, &table[j]))
				found = j;
		for (j = 0; j < ODF_BRANCH_SLOTS && found < 0; j++)
			if (!test_bit(j, taken) &&
			    !unionfs_odf_slot_unused(&table[j]) &&
			    unionfs_odf_branch_matches(br, &table[j]))
				found = j;
		if (found < 0)
			return invalfc(fc,
				       "ODF '%s' was formatted for other branches: '%s' is not one of them (use a fresh ODF, or the branches it records)",
				       sbi->odf_name, br->name);
		__set_bit(found, taken);
		br->id = le16_to_cpu(table[found].b_id);
	}
	if (present != sbi->nbranches)
		return invalfc(fc,
			       "ODF '%s' records %u branches, dirs= names %u: mount with the branches it records",
			       sbi->odf_name, present, sbi->nbranches);
	return 0;
}

static int unionfs_odf_read_super(struct fs_context *fc,
				  struct unionfs_sb_info *sbi)
{
	struct odf_branch *table;
	struct odf_super *s;
	struct file *file;
	loff_t pos;
	ssize_t n;
	int err;

	file = file_open_root(&sbi->odf, ODF_PATH_SUPER, O_RDONLY | O_LARGEFILE, 0);
	if (IS_ERR(file)) {
		if (PTR_ERR(file) == -ENOENT)
			return invalfc(fc,
				       "'%s' is not an ODF volume (no /%s): format it with mkodf",
				       sbi->odf_name, ODF_PATH_SUPER);
		errorfc(fc, "ODF '%s': cannot open /%s (error %ld)",
			sbi->odf_name, ODF_PATH_SUPER, PTR_ERR(file));
		return PTR_ERR(file);
	}

	s = kmalloc(sizeof(*s), GFP_KERNEL);
	table = kvmalloc_array(ODF_BRANCH_SLOTS, sizeof(*table), GFP_KERNEL);
	err = -ENOMEM;
	if (!s || !table)
		goto out;

	pos = 0;
	n = kernel_read(file, s, sizeof(*s), &pos);
	if (n == sizeof(*s)) {
		err = unionfs_odf_check_header(fc, sbi->odf_name, s);
		if (err)
			goto out;
		pos = ODF_BRANCH_OFFSET;
		n = kernel_read(file, table, ODF_BRANCH_SLOTS * sizeof(*table),
				&pos);
		if (n == ODF_BRANCH_SLOTS * sizeof(*table)) {
			if (le16_to_cpu(s->s_state) & ODF_STATE_MOUNTED)
				pr_notice("ODF '%s' was not unmounted cleanly\n",
					  sbi->odf_name);
			err = unionfs_odf_match_branches(fc, sbi, table);
			goto out;
		}
	}
	err = n < 0 ? n : -EUCLEAN;
	errorfc(fc, "ODF '%s': cannot read /%s (%s): run odfck", sbi->odf_name,
		ODF_PATH_SUPER, n < 0 ? "I/O error" : "file too short");
out:
	kvfree(table);
	kfree(s);
	fput(file);
	return err;
}

/* Resolve odf= to the path the user named: a block device or a directory. */
int unionfs_odf_resolve(struct fs_context *fc, struct unionfs_sb_info *sbi,
			struct path *user_path)
{
	struct inode *inode;
	int err;

	err = kern_path(sbi->odf_name, LOOKUP_FOLLOW, user_path);
	if (err) {
		errorfc(fc, "cannot find ODF '%s' (error %d)", sbi->odf_name, err);
		return err;
	}
	inode = d_inode(user_path->dentry);
	if (!S_ISBLK(inode->i_mode) && !S_ISDIR(inode->i_mode))
		return invalfc(fc, "ODF '%s' is neither a block device nor a directory",
			       sbi->odf_name);
	return 0;
}

/*
 * Mount (or clone) the resolved ODF, read its superblock and give the
 * branches, already resolved, their persistent ids.
 */
int unionfs_odf_load(struct fs_context *fc, struct unionfs_sb_info *sbi,
		     const struct path *user_path)
{
	struct vfsmount *mnt;

	mnt = unionfs_odf_mount(fc, sbi->odf_name, user_path);
	if (IS_ERR(mnt))
		return PTR_ERR(mnt);
	sbi->odf.mnt = mnt;
	sbi->odf.dentry = dget(mnt->mnt_root);
	return unionfs_odf_read_super(fc, sbi);
}

void unionfs_odf_close(struct unionfs_sb_info *sbi)
{
	dput(sbi->odf.dentry);
	/*
	 * A private clone is a long-term internal mount that mntput() alone
	 * never frees; kern_unmount() releases either kind.
	 */
	if (sbi->odf.mnt)
		kern_unmount(sbi->odf.mnt);
	sbi->odf.mnt = NULL;
	sbi->odf.dentry = NULL;
}
