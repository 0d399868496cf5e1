// SPDX-License-Identifier: GPL-2.0
/*
 * super.c - the superblock file: primary header at 0, branch table at
 * ODF_BRANCH_OFFSET, backup header at ODF_SB_BACKUP_OFFSET.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "libodf.h"

/* Missing bytes (a truncated file) read as zeros, which never verify. */
errcode_t odf_sb_read(struct odf_vol *v, struct odf_super *sb,
		      struct odf_super *backup, struct odf_branch *br)
{
	void *buf;
	size_t len;
	unsigned char *img;
	errcode_t err;

	if (!v->ino_super)
		return EXT2_ET_FILE_NOT_FOUND;
	err = odf_file_read_all(v->fs, v->ino_super, 1 << 20, &buf, &len);
	if (err)
		return err;
	img = calloc(1, ODF_SB_FILE_SIZE);
	if (!img) {
		free(buf);
		return ENOMEM;
	}
	memcpy(img, buf, len < ODF_SB_FILE_SIZE ? len : ODF_SB_FILE_SIZE);
	free(buf);
	if (sb)
		memcpy(sb, img, sizeof(*sb));
	if (backup)
		memcpy(backup, img + ODF_SB_BACKUP_OFFSET, sizeof(*backup));
	if (br)
		memcpy(br, img + ODF_BRANCH_OFFSET,
		       ODF_BRANCH_SLOTS * sizeof(*br));
	free(img);
	return 0;
}

errcode_t odf_sb_write(struct odf_vol *v, const struct odf_super *sb,
		       int backup_too)
{
	errcode_t err;

	err = odf_file_pwrite(v->fs, v->ino_super, 0, sb, sizeof(*sb));
	if (!err && backup_too)
		err = odf_file_pwrite(v->fs, v->ino_super,
				      ODF_SB_BACKUP_OFFSET, sb, sizeof(*sb));
	return err;
}

errcode_t odf_branch_write(struct odf_vol *v, unsigned slot,
			   const struct odf_branch *b)
{
	if (slot >= ODF_BRANCH_SLOTS)
		return EXT2_ET_INVALID_ARGUMENT;
	return odf_file_pwrite(v->fs, v->ino_super, ODF_BRANCH_OFFSET +
			       (__u64)slot * ODF_BRANCH_SIZE, b, sizeof(*b));
}

/*
 * Ordering: the branch entry is written before the superblock that
 * accounts for its id, so a crash leaves at worst an id counter that is
 * behind an entry, which odfck (and mount) move forward.
 */
errcode_t odf_branch_add(struct odf_vol *v, struct odf_super *sb,
			 struct odf_branch *tmpl, unsigned *slot_out)
{
	struct odf_branch br[ODF_BRANCH_SLOTS];
	unsigned slot, id = ext2fs_le16_to_cpu(sb->s_next_branch_id);
	errcode_t err;

	if (id == 0 || id > ODF_BRANCH_ID_MAX)
		return EXT2_ET_INVALID_ARGUMENT;
	err = odf_sb_read(v, NULL, NULL, br);
	if (err)
		return err;
	for (slot = 0; slot < ODF_BRANCH_SLOTS; slot++)
		if (odf_branch_unused(&br[slot]))
			break;
	if (slot == ODF_BRANCH_SLOTS)
		return EXT2_ET_DIR_NO_SPACE;
	tmpl->b_id = ext2fs_cpu_to_le16(id);
	if (!tmpl->b_flags)
		tmpl->b_flags = ext2fs_cpu_to_le16(ODF_BRANCH_PRESENT);
	if (!tmpl->b_mode)
		tmpl->b_mode = ext2fs_cpu_to_le16(ODF_MODE_RO);
	if (!tmpl->b_added_time)
		tmpl->b_added_time = ext2fs_cpu_to_le64(time(NULL));
	odf_branch_csum_set(tmpl);
	err = odf_branch_write(v, slot, tmpl);
	if (err)
		return err;
	sb->s_next_branch_id = ext2fs_cpu_to_le16(id + 1);
	odf_sb_csum_set(sb);
	err = odf_sb_write(v, sb, 1);
	if (!err && slot_out)
		*slot_out = slot;
	return err;
}
