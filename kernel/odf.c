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

/* Read or write exactly @len bytes of an ODF file at @pos. */
int unionfs_odf_read(struct file *f, void *buf, size_t len, loff_t pos)
{
	ssize_t n = kernel_read(f, buf, len, &pos);

	return n == len ? 0 : n < 0 ? n : -EUCLEAN;
}

int unionfs_odf_write(struct file *f, const void *buf, size_t len, loff_t pos)
{
	ssize_t n = kernel_write(f, buf, len, &pos);

	return n == len ? 0 : n < 0 ? n : -EIO;
}

u32 unionfs_odf_crc(const void *buf, size_t len, size_t crc_offset)
{
	static const __le32 zero;
	u8 copy[128];
	u32 crc;

	/*
	 * The checksum field counts as zero (ext4 metadata_csum style).  A
	 * small buffer (a readdir entry, a map record) is checksummed as a
	 * copy with the field zeroed: one call instead of three, which is
	 * most of the cost at this size.
	 */
	if (len <= sizeof(copy)) {
		memcpy(copy, buf, len);
		memset(copy + crc_offset, 0, sizeof(zero));
		return crc32c(~0U, copy, len);
	}
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
	if (le16_to_cpu(s->s_version) == ODF_FORMAT_V1)
		return invalfc(fc,
			       "ODF '%s' has format 1 (namespace by union path): convert it with 'odfck --convert --dirs=BRANCHES %s'",
			       name, name);
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
 * at its priority first), every PRESENT slot must be matched, and the
 * writable branch recorded stays first.
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
		for (i = 0; i < sbi->nbranches; i++) {
			sbi->branches[i].id = i + 1;
			sbi->branches[i].slot = -1;
		}
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
		br->slot = found;
	}
	if (present != sbi->nbranches)
		return invalfc(fc,
			       "ODF '%s' records %u branches, dirs= names %u: mount with the branches it records",
			       sbi->odf_name, present, sbi->nbranches);
	/*
	 * Whiteouts, opaque and redirect records and the copies' map records
	 * stand for the writable branch they were made on (3.4): under
	 * another first branch they would not apply and deleted names would
	 * show again.
	 */
	for (i = 1; i < sbi->nbranches; i++) {
		const struct odf_branch *b = &table[sbi->branches[i].slot];

		if (le16_to_cpu(b->b_order) == 0 &&
		    le16_to_cpu(b->b_mode) == ODF_MODE_RW)
			return invalfc(fc,
				       "ODF '%s' holds the changes made on '%s': it must stay the first branch of dirs= (rotating the writable branch is not supported yet)",
				       sbi->odf_name, sbi->branches[i].name);
	}
	return 0;
}

static int unionfs_odf_read_super(struct fs_context *fc,
				  struct unionfs_sb_info *sbi,
				  struct odf_branch **tablep)
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
			sbi->odf_was_mounted = le16_to_cpu(s->s_state) &
					       ODF_STATE_MOUNTED;
			if (sbi->odf_was_mounted && (fc->sb_flags & SB_RDONLY))
				pr_notice("ODF '%s' was not unmounted cleanly; the next read-write mount recovers it\n",
					  sbi->odf_name);
			err = unionfs_odf_match_branches(fc, sbi, table);
			if (!err) {
				sbi->odf_sb = s;
				*tablep = table;
				s = NULL;
				table = NULL;
			}
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

/* The ODF's own directories, which the layout check of mkodf guarantees. */
static int unionfs_odf_open_dir(struct fs_context *fc,
				struct unionfs_sb_info *sbi, const char *name,
				struct path *path)
{
	int err;

	err = vfs_path_lookup(sbi->odf.dentry, sbi->odf.mnt, name, 0, path);
	if (!err && !d_can_lookup(path->dentry)) {
		path_put(path);
		err = -ENOTDIR;
	}
	if (err) {
		path->mnt = NULL;
		path->dentry = NULL;
		errorfc(fc, "ODF '%s': /%s is missing or not a directory: run odfck",
			sbi->odf_name, name);
		return -EUCLEAN;
	}
	return 0;
}

/*
 * Write the header (and its backup when a non-volatile field changed) and
 * commit it, so it is on disk before any ODF or branch write that follows.
 */
static int unionfs_odf_write_super(struct unionfs_sb_info *sbi, bool backup)
{
	struct odf_super *s = sbi->odf_sb;
	int err;

	s->s_write_time = cpu_to_le64(ktime_get_real_seconds());
	s->s_crc = 0;
	s->s_crc = cpu_to_le32(unionfs_odf_crc(s, sizeof(*s),
					       offsetof(struct odf_super, s_crc)));
	err = unionfs_odf_write(sbi->super_file, s, sizeof(*s), 0);
	if (!err && backup)
		err = unionfs_odf_write(sbi->super_file, s, sizeof(*s),
					ODF_SB_BACKUP_OFFSET);
	if (!err)
		err = vfs_fsync(sbi->super_file, 0);
	return err;
}

/* Fill branch table slot @b for branch @br (section 3.4). */
static void unionfs_odf_fill_slot(struct unionfs_sb_info *sbi,
				  const struct unionfs_branch *br,
				  unsigned int order, struct odf_branch *b)
{
	struct super_block *lsb = br->root.mnt->mnt_sb;
	struct inode *root = d_inode(br->root.dentry);
	struct kstatfs st;

	if (!b->b_id) {
		b->b_id = cpu_to_le16(br->id);
		b->b_flags = cpu_to_le16(ODF_BRANCH_PRESENT);
		b->b_added_time = cpu_to_le64(ktime_get_real_seconds());
		if (!vfs_statfs(&br->root, &st))
			b->b_fs_magic = cpu_to_le32((u32)st.f_type);
		export_uuid(b->b_fs_uuid, &lsb->s_uuid);
		b->b_root_ino = cpu_to_le64(root->i_ino);
		b->b_root_gen = cpu_to_le32(root->i_generation);
	}
	b->b_mode = cpu_to_le16(br->mode == UNIONFS_BR_RW ? ODF_MODE_RW :
							    ODF_MODE_RO);
	b->b_order = cpu_to_le16(order);
	memset(b->b_fstype, 0, sizeof(b->b_fstype));
	strscpy(b->b_fstype, lsb->s_type->name, sizeof(b->b_fstype));
	memset(b->b_path, 0, sizeof(b->b_path));
	strscpy(b->b_path, br->name, sizeof(b->b_path));
	b->b_crc = 0;
	b->b_crc = cpu_to_le32(unionfs_odf_crc(b, sizeof(*b),
					       offsetof(struct odf_branch, b_crc)));
}

/*
 * Record the branches: a fresh table gets a slot per branch (ids 1..n),
 * a matched one gets its mode, priority and path rewritten.  Slots first,
 * then the header that moves s_next_branch_id (section 3.4).
 */
static int unionfs_odf_record_branches(struct unionfs_sb_info *sbi,
				       struct odf_branch *table)
{
	unsigned int i, next;
	bool fresh = false;
	int err;

	for (i = 0; i < sbi->nbranches; i++) {
		struct unionfs_branch *br = &sbi->branches[i];

		if (br->slot < 0) {
			br->slot = i;
			memset(&table[i], 0, sizeof(table[i]));
			fresh = true;
		}
		unionfs_odf_fill_slot(sbi, br, i, &table[br->slot]);
	}
	err = unionfs_odf_write(sbi->super_file, table,
				ODF_BRANCH_SLOTS * sizeof(*table),
				   ODF_BRANCH_OFFSET);
	if (err)
		return err;
	next = le16_to_cpu(sbi->odf_sb->s_next_branch_id);
	if (fresh && next <= sbi->nbranches) {
		sbi->odf_sb->s_next_branch_id = cpu_to_le16(sbi->nbranches + 1);
		return 1;	/* the backup header must follow */
	}
	return 0;
}

/* Unlink /superblock.new if it is there (a remount that did not finish). */
static int unionfs_odf_drop_super_new(struct unionfs_sb_info *sbi)
{
	return unionfs_do_unlink_name(&sbi->odf, ODF_PATH_SUPER_NEW);
}

/* Write @buf as a new /superblock.new, synced. */
static int unionfs_odf_write_super_new(struct unionfs_sb_info *sbi,
				       const void *buf)
{
	struct file *f;
	int err;

	f = unionfs_do_create_file(&sbi->odf, ODF_PATH_SUPER_NEW, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	err = unionfs_odf_write(f, buf, ODF_SB_FILE_SIZE, 0);
	if (!err)
		err = vfs_fsync(f, 0);
	fput(f);
	return err;
}

/*
 * A remount changes the branch set (section 3.5): @br holds the slots
 * (the mounted branches, then those being added, slot -1), @order the
 * new set, highest priority first.  The new table and header (ids of new
 * branches from s_next_branch_id, slots of branches left out marked
 * REMOVED, modes and priorities rewritten) go into /superblock.new,
 * which is synced and renamed over /superblock: a crash leaves the old
 * set or the new one, never a mix.  On success the ids and table slots
 * of the new branches are set in @br, the header in memory is the new
 * one, and the session writes to the new /superblock.
 */
int unionfs_odf_set_branches(struct unionfs_sb_info *sbi,
			     struct unionfs_branch *br,
			     const struct unionfs_order *order)
{
	DECLARE_BITMAP(live, ODF_BRANCH_SLOTS) = { 0 };
	u16 newid[UNIONFS_MAX_BRANCHES] = { 0 };
	int newslot[UNIONFS_MAX_BRANCHES];
	struct odf_branch *table;
	struct odf_super *s;
	struct file *f;
	unsigned int i, j, k, next;
	u64 now = ktime_get_real_seconds();
	void *buf;
	int err;

	if (!unionfs_odf_rw(sbi) || READ_ONCE(sbi->odf_failed))
		return -EROFS;
	buf = kvzalloc(ODF_SB_FILE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&sbi->odf_lock);
	err = unionfs_odf_read(sbi->super_file, buf, ODF_SB_FILE_SIZE, 0);
	if (err)
		goto out;
	table = buf + ODF_BRANCH_OFFSET;
	s = buf;
	*s = *sbi->odf_sb;
	next = le16_to_cpu(s->s_next_branch_id);
	for (k = 0; k < order->n; k++) {
		i = order->idx[k];
		newslot[i] = br[i].slot;
		if (br[i].slot >= 0)
			continue;
		for (j = 0; j < ODF_BRANCH_SLOTS; j++)
			if (unionfs_odf_slot_unused(&table[j]))
				break;
		err = -ENOSPC;
		if (j == ODF_BRANCH_SLOTS || next > ODF_BRANCH_ID_MAX)
			goto out;
		newslot[i] = j;
		newid[i] = next++;
		/* Taken: the next new branch looks for another slot. */
		memset(&table[j], 0xff, sizeof(table[j]));
	}
	for (k = 0; k < order->n; k++) {
		struct unionfs_branch b;

		i = order->idx[k];
		b = br[i];
		if (newid[i]) {
			b.id = newid[i];
			memset(&table[newslot[i]], 0, sizeof(table[0]));
		}
		unionfs_odf_fill_slot(sbi, &b, k, &table[newslot[i]]);
		__set_bit(newslot[i], live);
	}
	for (j = 0; j < ODF_BRANCH_SLOTS; j++) {
		struct odf_branch *b = &table[j];

		if (test_bit(j, live) || unionfs_odf_slot_unused(b) ||
		    !(le16_to_cpu(b->b_flags) & ODF_BRANCH_PRESENT))
			continue;
		b->b_flags = cpu_to_le16(ODF_BRANCH_REMOVED);
		b->b_order = 0;
		b->b_removed_time = cpu_to_le64(now);
		b->b_crc = 0;
		b->b_crc = cpu_to_le32(UNIONFS_CRC(b, sizeof(*b), b_crc));
	}
	s->s_next_branch_id = cpu_to_le16(next);
	s->s_write_time = cpu_to_le64(now);
	s->s_crc = 0;
	s->s_crc = cpu_to_le32(unionfs_odf_crc(s, sizeof(*s),
					       offsetof(struct odf_super, s_crc)));
	memcpy(buf + ODF_SB_BACKUP_OFFSET, s, sizeof(*s));

	err = unionfs_odf_write_super_new(sbi, buf);
	if (!err)
		err = unionfs_do_rename_name(&sbi->odf, ODF_PATH_SUPER_NEW,
					     ODF_PATH_SUPER, 0);
	if (err)
		goto out;
	/*
	 * Renamed: from here the new set is the ODF's, whatever happens.
	 * If the rename cannot be made durable, the ODF takes no more
	 * writes: a power cut could still bring the old table back.
	 */
	err = unionfs_odf_fsync_dir(&sbi->odf);
	if (err) {
		pr_err("ODF '%s': cannot commit the new branch table (error %d): the union takes no more ODF writes, run odfck after unmounting\n",
		       sbi->odf_name, err);
		sbi->odf_failed = true;
		err = 0;
	}
	*sbi->odf_sb = *s;
	for (k = 0; k < order->n; k++) {
		i = order->idx[k];
		if (newid[i]) {
			br[i].id = newid[i];
			br[i].slot = newslot[i];
		}
	}
	f = file_open_root(&sbi->odf, ODF_PATH_SUPER, O_RDWR | O_LARGEFILE, 0);
	if (IS_ERR(f)) {
		/* The old file is unlinked: no header write can land. */
		pr_err("ODF '%s': cannot reopen /%s after a branch change (error %ld): the union takes no more ODF writes, run odfck after unmounting\n",
		       sbi->odf_name, ODF_PATH_SUPER, PTR_ERR(f));
		sbi->odf_failed = true;
	} else {
		fput(sbi->super_file);
		sbi->super_file = f;
	}
out:
	mutex_unlock(&sbi->odf_lock);
	kvfree(buf);
	return err;
}

/* Delete "*.new" left in @dir by a rebuild that a crash interrupted. */
struct unionfs_odf_scan {
	struct dir_context ctx;
	char name[NAME_MAX + 1];
	bool found;
};

static bool unionfs_odf_scan_new(struct dir_context *ctx, const char *name,
				 int len, loff_t off, u64 ino, unsigned int type)
{
	struct unionfs_odf_scan *sc = container_of(ctx, struct unionfs_odf_scan, ctx);
	int sl = strlen(ODF_TMP_SUFFIX);

	if (len <= sl || memcmp(name + len - sl, ODF_TMP_SUFFIX, sl))
		return true;
	memcpy(sc->name, name, len);
	sc->name[len] = 0;
	sc->found = true;
	return false;
}

static int unionfs_odf_drop_new(struct unionfs_sb_info *sbi, const char *dname)
{
	struct path dir;
	int err, n = 0;

	err = vfs_path_lookup(sbi->odf.dentry, sbi->odf.mnt, dname, 0, &dir);
	if (err)
		return err == -ENOENT ? 0 : err;
	for (;;) {
		struct unionfs_odf_scan sc = { .ctx.actor = unionfs_odf_scan_new };
		struct dentry *victim;
		struct file *f;

		f = dentry_open(&dir, O_RDONLY | O_DIRECTORY, current_cred());
		if (IS_ERR(f)) {
			err = PTR_ERR(f);
			break;
		}
		err = iterate_dir(f, &sc.ctx);
		fput(f);
		if (err || !sc.found || n++ > 1000)
			break;
		err = unionfs_lock_parent(dir.mnt, dir.dentry);
		if (err)
			break;
		victim = lookup_one_len(sc.name, dir.dentry, strlen(sc.name));
		if (IS_ERR(victim)) {
			err = PTR_ERR(victim);
		} else {
			err = d_is_positive(victim) ?
			      unionfs_do_remove(dir.mnt, dir.dentry, victim) : 0;
			dput(victim);
		}
		unionfs_unlock_parent(dir.mnt, dir.dentry);
		if (err)
			break;
	}
	path_put(&dir);
	return err;
}

/*
 * Recovery after a session that did not end cleanly (section 10.2): the
 * half-written rebuilds and the reclaim area go; readdir states are
 * reconciled when next opened.
 */
static int unionfs_odf_recover(struct unionfs_sb_info *sbi)
{
	int err;

	pr_notice("ODF '%s' was not unmounted cleanly: recovering\n",
		  sbi->odf_name);
	err = unionfs_odf_drop_new(sbi, ODF_PATH_IMAP);
	if (!err)
		err = unionfs_odf_drop_new(sbi, ODF_PATH_READDIR);
	if (!err)
		err = unionfs_odf_drop_super_new(sbi);
	if (!err)
		err = unionfs_reclaim_all(sbi);
	return err;
}

/*
 * Start a read-write session on the ODF (sections 3.2, 9.1): state
 * MOUNTED committed before anything else is written, then the branch
 * table, then recovery of what a crash left.
 */
static int unionfs_odf_start(struct fs_context *fc,
			     struct unionfs_sb_info *sbi,
			     struct odf_branch *table)
{
	struct odf_super *s = sbi->odf_sb;
	struct file *file;
	int err, backup;

	file = file_open_root(&sbi->odf, ODF_PATH_SUPER, O_RDWR | O_LARGEFILE, 0);
	if (IS_ERR(file)) {
		errorfc(fc, "ODF '%s': cannot open /%s for writing (error %ld)",
			sbi->odf_name, ODF_PATH_SUPER, PTR_ERR(file));
		return PTR_ERR(file);
	}
	sbi->super_file = file;

	s->s_state = cpu_to_le16(ODF_STATE_MOUNTED);
	le32_add_cpu(&s->s_mnt_count, 1);
	s->s_mount_time = cpu_to_le64(ktime_get_real_seconds());
	err = unionfs_odf_write_super(sbi, false);
	if (err)
		goto fail;
	backup = unionfs_odf_record_branches(sbi, table);
	err = backup < 0 ? backup : 0;
	if (!err)
		err = unionfs_odf_write_super(sbi, backup > 0);
	if (!err && sbi->odf_was_mounted)
		err = unionfs_odf_recover(sbi);
	if (!err)
		return 0;
fail:
	errorfc(fc, "ODF '%s': cannot start a session (error %d): run odfck",
		sbi->odf_name, err);
	fput(sbi->super_file);
	sbi->super_file = NULL;
	return err;
}

/*
 * Clean unmount: every other ODF write is done; say so last (9.1).  No
 * ODF writer can be left: they all run inside a system call on the
 * union, and the superblock is going away because none is.  A union
 * remounted read-only ended its session then: nothing more is written.
 */
void unionfs_odf_stop(struct unionfs_sb_info *sbi)
{
	struct odf_super *s = sbi->odf_sb;
	int err;

	if (!sbi->super_file)
		return;
	unionfs_imap_close(sbi);	/* every map write is synchronous */
	if (!sbi->odf_failed && !sbi->odf_paused) {
		s->s_state = cpu_to_le16(ODF_STATE_CLEAN |
			(le16_to_cpu(s->s_state) & ODF_STATE_ERRORS));
		err = unionfs_odf_write_super(sbi, false);
		if (err)
			pr_err("ODF '%s': cannot mark the volume clean (error %d)\n",
			       sbi->odf_name, err);
	}
	fput(sbi->super_file);
	sbi->super_file = NULL;
}

/*
 * remount,ro ends the ODF session the way an unmount does: no more ODF
 * writes start (readdir states are then used as they are, or listings
 * come from memory), what was written is synced, and the volume is
 * marked clean, so a power cut while the union is read-only needs no
 * recovery.  remount,rw starts a new session: MOUNTED, committed before
 * any other write, with the mount count incremented (section 3.2).
 *
 * The VFS refuses remount,ro while a system call holds write access to
 * the union, but listings and lookups write the ODF too: the pause is
 * published under odf_lock (header writers check it there) and then
 * every writer inside unionfs_odf_write_begin() that may have missed it
 * is waited for, before the sync and the CLEAN mark.  We hold s_umount
 * and none of our locks meanwhile; those writers never take s_umount.
 */
int unionfs_odf_set_ro(struct super_block *sb, bool ro)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct odf_super *s = sbi->odf_sb;
	u16 errors;
	int err = 0;

	if (!sbi->super_file || READ_ONCE(sbi->odf_paused) == ro)
		return 0;
	if (ro) {
		mutex_lock(&sbi->odf_lock);
		WRITE_ONCE(sbi->odf_paused, true);
		mutex_unlock(&sbi->odf_lock);
		synchronize_srcu(&sbi->odf_srcu);
		err = sync_filesystem(sb);	/* the ODF too (sync_fs) */
	}
	mutex_lock(&sbi->odf_lock);
	errors = le16_to_cpu(s->s_state) & ODF_STATE_ERRORS;
	if (ro && !err && !sbi->odf_failed) {
		s->s_state = cpu_to_le16(ODF_STATE_CLEAN | errors);
		err = unionfs_odf_write_super(sbi, false);
	} else if (!ro) {
		s->s_state = cpu_to_le16(ODF_STATE_MOUNTED | errors);
		le32_add_cpu(&s->s_mnt_count, 1);
		s->s_mount_time = cpu_to_le64(ktime_get_real_seconds());
		err = unionfs_odf_write_super(sbi, false);
		if (!err)
			WRITE_ONCE(sbi->odf_paused, false);
	}
	mutex_unlock(&sbi->odf_lock);
	if (err && ro)
		WRITE_ONCE(sbi->odf_paused, false);
	return err;
}

/*
 * An ODF write failed before the operation changed anything (the
 * whiteout of an unlink, the mark or intent of a rename) or where what
 * it leaves is consistent (a whiteout kept under a new upper object): a
 * full ODF is not damage, so the operation fails with ENOSPC (EDQUOT)
 * and the union goes on; any other error is unionfs_odf_error().
 */
void unionfs_odf_refused(struct super_block *sb, const char *what, int err)
{
	if (err == -ENOSPC || err == -EDQUOT) {
		unionfs_count(UNIONFS_SB(sb), UNIONFS_ST_ODF_FULL);
		pr_warn_ratelimited("ODF '%s' is full: %s (error %d)\n",
				    UNIONFS_SB(sb)->odf_name, what, err);
		return;
	}
	unionfs_odf_error(sb, what, err);
}

/*
 * Damage found on the ODF, or a write to it failed: record ERRORS, stop
 * writing to it, and let the union fail writes with EIO (section 3.2).
 * Found while remounted read-only (a lookup reads a damaged record), it
 * is recorded in memory only, as a read-only mount writes nothing: a
 * remount,rw writes it with the new session's header.
 */
void unionfs_odf_error(struct super_block *sb, const char *what, int err)
{
	struct unionfs_sb_info *sbi = UNIONFS_SB(sb);
	struct odf_super *s = sbi->odf_sb;

	unionfs_count(sbi, UNIONFS_ST_ODF_ERRORS);
	mutex_lock(&sbi->odf_lock);
	if (!sbi->odf_failed && sbi->super_file) {
		pr_err("ODF '%s': %s (error %d): the union is now read-only, run odfck after unmounting\n",
		       sbi->odf_name, what, err);
		s->s_state |= cpu_to_le16(ODF_STATE_ERRORS);
		le32_add_cpu(&s->s_error_count, 1);
		if (unionfs_odf_rw(sbi))
			unionfs_odf_write_super(sbi, false);
		sbi->odf_failed = true;
	}
	mutex_unlock(&sbi->odf_lock);
}

/*
 * Allocate a union inode number (section 4): the counter is committed
 * before the caller records the number, so a crash wastes a number and
 * never reuses one.  The caller is inside unionfs_odf_write_begin(): a
 * remount,ro that paused the session meanwhile waits for it.
 */
int unionfs_odf_alloc_ino(struct unionfs_sb_info *sbi, u64 *uino)
{
	struct odf_super *s = sbi->odf_sb;
	u64 next;
	int err;

	mutex_lock(&sbi->odf_lock);
	next = max_t(u64, le64_to_cpu(s->s_next_ino), ODF_UINO_ALLOC_FIRST);
	if (!sbi->super_file || sbi->odf_failed) {
		err = -EROFS;
	} else if (next > ODF_UINO_ALLOC_MAX) {
		err = -ENOSPC;
	} else {
		s->s_next_ino = cpu_to_le64(next + 1);
		err = unionfs_odf_write_super(sbi, false);
	}
	mutex_unlock(&sbi->odf_lock);
	if (!err)
		*uino = next;
	return err;
}

/*
 * A map record names allocated number @uino: after a crash the counter
 * may be behind it (section 10.2 step 4); move it past, so the number is
 * never handed out twice.
 */
void unionfs_odf_seen_ino(struct unionfs_sb_info *sbi, u64 uino)
{
	struct odf_super *s = sbi->odf_sb;

	if (uino >> ODF_UINO_SHIFT || !unionfs_odf_rw(sbi) || sbi->odf_failed ||
	    uino < le64_to_cpu(READ_ONCE(s->s_next_ino)))
		return;
	mutex_lock(&sbi->odf_lock);
	if (unionfs_odf_rw(sbi) && !sbi->odf_failed &&
	    uino >= le64_to_cpu(s->s_next_ino) && uino < ODF_UINO_ALLOC_MAX) {
		pr_notice("ODF '%s': inode number counter was behind a recorded number; moved to %llu\n",
			  sbi->odf_name, uino + 1);
		s->s_next_ino = cpu_to_le64(uino + 1);
		unionfs_odf_write_super(sbi, false);
	}
	mutex_unlock(&sbi->odf_lock);
}

/*
 * Commit the changes made in directory @dir (of the ODF or of a branch)
 * before a write elsewhere that must not overtake them (section 9).
 */
int unionfs_odf_fsync_dir(const struct path *dir)
{
	struct file *f;
	int err;

	f = dentry_open(dir, O_RDONLY | O_DIRECTORY, current_cred());
	if (IS_ERR(f))
		return PTR_ERR(f);
	err = vfs_fsync(f, 0);
	fput(f);
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
	struct odf_branch *table = NULL;
	struct vfsmount *mnt;
	int err;

	mnt = unionfs_odf_mount(fc, sbi->odf_name, user_path);
	if (IS_ERR(mnt))
		return PTR_ERR(mnt);
	sbi->odf.mnt = mnt;
	sbi->odf.dentry = dget(mnt->mnt_root);
	err = unionfs_odf_read_super(fc, sbi, &table);
	if (err)
		return err;
	err = unionfs_odf_open_dir(fc, sbi, ODF_PATH_NS, &sbi->ns);
	if (!err)
		err = unionfs_odf_open_dir(fc, sbi, ODF_PATH_RECLAIM,
					   &sbi->reclaim);
	if (!err)
		err = unionfs_odf_open_dir(fc, sbi, ODF_PATH_READDIR,
					   &sbi->readdir);
	if (!err && !(fc->sb_flags & SB_RDONLY))
		err = unionfs_odf_start(fc, sbi, table);
	if (!err) {
		err = unionfs_imap_open(sbi);
		if (err)
			errorfc(fc, "ODF '%s': cannot open the inode maps (error %d): run odfck",
				sbi->odf_name, err);
	}
	if (!err && sbi->super_file && sbi->odf_was_mounted) {
		u64 max;

		/* Section 10.2 step 4: the counter after a crash. */
		if (!unionfs_imap_max_alloc(sbi, &max) && max)
			unionfs_odf_seen_ino(sbi, max);
	}
	kvfree(table);
	return err;
}

void unionfs_odf_close(struct unionfs_sb_info *sbi)
{
	unionfs_imap_close(sbi);
	path_put(&sbi->ns);
	path_put(&sbi->reclaim);
	path_put(&sbi->readdir);
	kfree(sbi->odf_sb);
	sbi->odf_sb = NULL;
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
