// SPDX-License-Identifier: GPL-2.0
/*
 * mkodf - create an ODF metadata volume for odf-unionfs.
 *
 * The volume is an ext4 file system with a journal, built with
 * libext2fs the way mke2fs builds one, followed by the ODF layout of
 * docs/odf-format.md.  Exit codes follow mke2fs: 0 success, 1 error or
 * bad usage.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <et/com_err.h>
#include "libodf.h"

#define MKODF_VERSION	"1.0"
#define MIN_SIZE	(8ULL << 20)	/* room for ext4 + journal + ODF */
#define INODE_RATIO	8192		/* ODF nodes are small files */

static const char *prog = "mkodf";

/* option flags (the only mutable globals) */
static int opt_force, opt_dry, opt_quiet, opt_zero;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [-fnqVz] [-L label] [-U uuid] [-N inodes] [-b blocksize]\n"
"       device [size]\n"
"\n"
"Create an ODF metadata volume (an ext4 file system holding the\n"
"odf-unionfs metadata) on a block device or an image file.\n"
"\n"
"  -L label      volume label (up to %d bytes)\n"
"  -U uuid       volume UUID instead of a random one\n"
"  -N inodes     number of inodes\n"
"  -b blocksize  1024, 2048 or 4096 (default 4096)\n"
"  -f            overwrite an existing file system or ODF volume\n"
"  -n            show what would be done, write nothing\n"
"  -q            quiet\n"
"  -z            zero every inode table now, so the kernel does not\n"
"                zero them in the background after the first mount\n"
"                (mke2fs -E lazy_itable_init=0)\n"
"  -V            print the version and exit\n"
"  --help        this text\n"
"\n"
"size takes a K, M, G or T suffix (default K); an image file is\n"
"created or extended to that size.\n", prog, ODF_LABEL_MAX - 1);
}

static int parse_uuid(const char *s, __u8 out[16])
{
	int i, n = 0;

	for (i = 0; s[i] && n < 32; i++) {
		int v;

		if (s[i] == '-' && (n == 8 || n == 12 || n == 16 || n == 20))
			continue;
		if (!isxdigit((unsigned char)s[i]))
			return -1;
		v = isdigit((unsigned char)s[i]) ? s[i] - '0' :
		    tolower((unsigned char)s[i]) - 'a' + 10;
		if (n % 2)
			out[n / 2] |= v;
		else
			out[n / 2] = v << 4;
		n++;
	}
	return (n == 32 && !s[i]) ? 0 : -1;
}

static void unparse_uuid(const __u8 u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

/* "256M" -> bytes; no suffix means KiB, as for mke2fs. */
static int parse_size(const char *s, unsigned long long *bytes)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 0:
	case 'K': v <<= 10; break;
	case 'M': v <<= 20; break;
	case 'G': v <<= 30; break;
	case 'T': v <<= 40; break;
	default: return -1;
	}
	if (*end && end[1] && !(toupper((unsigned char)end[1]) == 'B' &&
				!end[2]))
		return -1;
	*bytes = v;
	return 0;
}

/* What is already on the device, or NULL. */
static const char *probe_existing(const char *dev, char *extra, size_t elen)
{
	static const struct { off_t off; const char *magic; size_t len;
			      const char *name; } sigs[] = {
		{ 0, "XFSB", 4, "an XFS file system" },
		{ 65600, "_BHRfS_M", 8, "a btrfs file system" },
		{ 4086, "SWAPSPACE2", 10, "swap space" },
		{ 0, "LUKS\xba\xbe", 6, "a LUKS volume" },
	};
	unsigned char buf[2048];
	size_t i;
	int fd;

	extra[0] = 0;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf) &&
	    buf[1080] == 0x53 && buf[1081] == 0xef) {
		struct odf_vol *v;
		struct odf_super sb;

		close(fd);
		if (!odf_vol_open(dev, 0, &v)) {
			int is_odf = v->ino_super &&
				!odf_sb_read(v, &sb, NULL, NULL) &&
				ext2fs_le32_to_cpu(sb.s_magic) == ODF_SB_MAGIC;

			odf_vol_close(v);
			if (is_odf) {
				sb.s_label[ODF_LABEL_MAX - 1] = 0;
				if (sb.s_label[0])
					snprintf(extra, elen, " (label \"%s\")",
						 sb.s_label);
				return "an ODF volume";
			}
		}
		return "an ext2/ext3/ext4 file system";
	}
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		char m[16];

		if (pread(fd, m, sigs[i].len, sigs[i].off) ==
		    (ssize_t)sigs[i].len && !memcmp(m, sigs[i].magic,
						    sigs[i].len)) {
			close(fd);
			return sigs[i].name;
		}
	}
	close(fd);
	return NULL;
}

struct plan {
	const char		*dev;
	unsigned long long	size;		/* requested, 0 = device */
	unsigned		blocksize;
	unsigned long long	blocks;
	unsigned long long	inodes;
	__u8			uuid[16];
	char			label[ODF_LABEL_MAX];
};

/* Create or extend an image file when a size was given. */
static int prepare_target(struct plan *p)
{
	struct stat st;
	int fd, exists = stat(p->dev, &st) == 0;

	if (exists && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %s is a directory, not a block device or "
			"an image file\n", prog, p->dev);
		return -1;
	}
	if (exists && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "%s: %s is not a block device or an image "
			"file\n", prog, p->dev);
		return -1;
	}
	if (exists && !S_ISREG(st.st_mode))
		return 0;	/* a device: a size only limits the fs */
	if (!p->size) {
		if (!exists || st.st_size == 0) {
			fprintf(stderr, "%s: %s %s; give a size to create "
				"an image file\n", prog, p->dev,
				exists ? "is an empty file" :
				"does not exist");
			return -1;
		}
		return 0;
	}
	if (opt_dry)
		return 0;
	fd = open(p->dev, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot create %s: %s\n", prog, p->dev,
			strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && (unsigned long long)st.st_size < p->size &&
	    ftruncate(fd, p->size) < 0) {
		fprintf(stderr, "%s: cannot extend %s: %s\n", prog, p->dev,
			strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static errcode_t zero_inode_tables(ext2_filsys fs)
{
	dgrp_t i;
	errcode_t err;

	for (i = 0; i < fs->group_desc_count; i++) {
		blk64_t blk = ext2fs_inode_table_loc(fs, i);
		int num = ext2fs_div_ceil((fs->super->s_inodes_per_group -
					   (opt_zero ? 0 :
					    ext2fs_bg_itable_unused(fs, i))) *
					  EXT2_INODE_SIZE(fs->super),
					  EXT2_BLOCK_SIZE(fs->super));

		/* Without -z the unused tail is covered by itable_unused;
		 * the kernel's lazy init zeroes it after the first mount. */
		if (num) {
			err = ext2fs_zero_blocks2(fs, blk, num, NULL, NULL);
			if (err)
				return err;
		}
		if (opt_zero) {
			ext2fs_bg_flags_set(fs, i, EXT2_BG_INODE_ZEROED);
			ext2fs_group_desc_csum_set(fs, i);
		}
	}
	return 0;
}

static errcode_t write_reserved_inodes(ext2_filsys fs)
{
	struct ext2_inode_large inode;
	ext2_ino_t ino;
	errcode_t err;

	memset(&inode, 0, sizeof(inode));
	for (ino = 1; ino < EXT2_FIRST_INO(fs->super); ino++) {
		err = ext2fs_write_inode_full(fs, ino, (void *)&inode,
					      sizeof(inode));
		if (err)
			return err;
	}
	return 0;
}

static errcode_t create_lost_and_found(ext2_filsys fs)
{
	ext2_ino_t ino;
	errcode_t err;
	unsigned size;

	fs->umask = 077;
	err = odf_mkdir(fs, EXT2_ROOT_INO, "lost+found", &ino);
	fs->umask = 022;
	for (size = fs->blocksize; !err && size < 16384; size += fs->blocksize)
		err = ext2fs_expand_dir(fs, ino);
	return err;
}

#define STEP(what, call) do {						\
	err = (call);							\
	if (err) {							\
		com_err(prog, err, "while %s on %s", what, p->dev);	\
		goto fail;						\
	}								\
} while (0)

static int make_volume(struct plan *p)
{
	struct ext2_super_block param;
	struct ext2fs_journal_params jparams;
	ext2_filsys fs = NULL;
	struct odf_vol *v = NULL;
	struct odf_super sb;
	errcode_t err;
	ext2_ino_t i;
	time_t now = time(NULL);

	memset(&param, 0, sizeof(param));
	ext2fs_blocks_count_set(&param, p->blocks);
	param.s_log_block_size = ffs(p->blocksize) - 1 - EXT2_MIN_BLOCK_LOG_SIZE;
	param.s_rev_level = EXT2_DYNAMIC_REV;
	param.s_inode_size = 256;
	param.s_inodes_count = p->inodes;
	param.s_log_groups_per_flex = 4;
	param.s_desc_size = EXT2_MIN_DESC_SIZE_64BIT;
	param.s_feature_compat = EXT2_FEATURE_COMPAT_EXT_ATTR |
				 EXT2_FEATURE_COMPAT_DIR_INDEX;
	param.s_feature_incompat = EXT2_FEATURE_INCOMPAT_FILETYPE |
				   EXT3_FEATURE_INCOMPAT_EXTENTS |
				   EXT4_FEATURE_INCOMPAT_FLEX_BG |
				   EXT4_FEATURE_INCOMPAT_64BIT |
				   /* namespace records of up to 64 KiB (5.1) */
				   EXT4_FEATURE_INCOMPAT_EA_INODE;
	param.s_feature_ro_compat = EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER |
				    EXT2_FEATURE_RO_COMPAT_LARGE_FILE |
				    EXT4_FEATURE_RO_COMPAT_HUGE_FILE |
				    EXT4_FEATURE_RO_COMPAT_DIR_NLINK |
				    EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE |
				    EXT4_FEATURE_RO_COMPAT_METADATA_CSUM;

	STEP("setting up the file system",
	     ext2fs_initialize(p->dev, EXT2_FLAG_EXCLUSIVE | EXT2_FLAG_64BITS,
			       &param, unix_io_manager, &fs));
	memcpy(fs->super->s_uuid, p->uuid, 16);
	fs->super->s_checksum_type = EXT2_CRC32C_CHKSUM;
	ext2fs_init_csum_seed(fs);
	STEP("generating the hash seed",
	     odf_random_bytes(fs->super->s_hash_seed,
			      sizeof(fs->super->s_hash_seed)));
	fs->super->s_def_hash_version = EXT2_HASH_HALF_MD4;
	fs->super->s_flags |= ((char)0xff < 0) ? EXT2_FLAGS_SIGNED_HASH :
						 EXT2_FLAGS_UNSIGNED_HASH;
	strncpy((char *)fs->super->s_volume_name, p->label,
		sizeof(fs->super->s_volume_name));
	fs->super->s_max_mnt_count = -1;
	fs->super->s_checkinterval = 0;
	fs->super->s_mkfs_time = fs->super->s_lastcheck = (__u32)now;
	fs->super->s_kbytes_written = 1;
	fs->super->s_min_extra_isize = fs->super->s_want_extra_isize =
		sizeof(struct ext2_inode_large) - EXT2_GOOD_OLD_INODE_SIZE;
	strncpy((char *)fs->super->s_mount_opts, "", 1);

	STEP("allocating group tables", ext2fs_allocate_tables(fs));
	STEP("converting the block bitmap",
	     ext2fs_convert_subcluster_bitmap(fs, &fs->block_map));
	/* old signatures in front of the superblock (XFS, LUKS, ...) */
	{
		char zero[1024];

		memset(zero, 0, sizeof(zero));
		STEP("wiping old signatures",
		     io_channel_write_byte(fs->io, 0, sizeof(zero), zero));
	}
	STEP("writing inode tables", zero_inode_tables(fs));
	STEP("writing reserved inodes", write_reserved_inodes(fs));
	STEP("creating the root directory",
	     ext2fs_mkdir(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, 0));
	STEP("creating /lost+found", create_lost_and_found(fs));
	for (i = EXT2_ROOT_INO + 1; i < EXT2_FIRST_INODE(fs->super); i++)
		ext2fs_inode_alloc_stats2(fs, i, +1, 0);
	ext2fs_mark_ib_dirty(fs);
	ext2fs_mark_inode_bitmap2(fs->inode_map, EXT2_BAD_INO);
	ext2fs_inode_alloc_stats2(fs, EXT2_BAD_INO, +1, 0);
	STEP("setting up the bad block inode", ext2fs_update_bb_inode(fs, NULL));

	STEP("choosing the journal size",
	     ext2fs_get_journal_params(&jparams, fs));
	if (!jparams.num_journal_blocks) {
		fprintf(stderr, "%s: %s is too small for a journal\n", prog,
			p->dev);
		goto fail_quiet;
	}
	if (!opt_quiet) {
		printf("Creating journal (%u blocks): ",
		       jparams.num_journal_blocks + jparams.num_fc_blocks);
		fflush(stdout);
	}
	STEP("creating the journal",
	     ext2fs_add_journal_inode3(fs, &jparams, ~0ULL, 0));
	if (!opt_quiet)
		printf("done\n");

	if (!opt_quiet)
		printf("Writing ODF structures: ");
	STEP("setting up the ODF", odf_vol_wrap(fs, 1, &v));
	odf_sb_init(&sb, p->uuid, p->label, (__u64)now);
	STEP("writing the ODF layout", odf_layout_create(v, &sb));
	if (!opt_quiet)
		printf("done\n");

	v->fs = NULL;
	free(v);
	STEP("writing the superblocks and group descriptors",
	     ext2fs_close_free(&fs));
	return 0;

fail:
fail_quiet:
	if (v) {
		v->fs = NULL;
		free(v);
	}
	if (fs)
		ext2fs_free(fs);
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct plan p;
	const char *what;
	char extra[128], uuid_str[37];
	int c, mount_flags = 0, have_uuid = 0;
	unsigned long long nblocks;
	errcode_t err;

	memset(&p, 0, sizeof(p));
	p.blocksize = 4096;
	if (argc > 0 && argv[0]) {
		const char *b = strrchr(argv[0], '/');

		prog = b ? b + 1 : argv[0];
	}
	add_error_table(&et_ext2_error_table);

	while ((c = getopt_long(argc, argv, "L:U:N:b:fnqVzh", longopts,
				NULL)) != -1) {
		char *end;

		switch (c) {
		case 'L':
			if (strlen(optarg) >= ODF_LABEL_MAX) {
				fprintf(stderr, "%s: label '%s' is longer "
					"than %d bytes\n", prog, optarg,
					ODF_LABEL_MAX - 1);
				exit(1);
			}
			strcpy(p.label, optarg);
			break;
		case 'U':
			if (parse_uuid(optarg, p.uuid)) {
				fprintf(stderr, "%s: invalid UUID '%s'\n",
					prog, optarg);
				exit(1);
			}
			have_uuid = 1;
			break;
		case 'N':
			errno = 0;
			p.inodes = strtoull(optarg, &end, 0);
			if (errno || *end || !p.inodes ||
			    p.inodes > 0xffffffffULL) {
				fprintf(stderr, "%s: invalid inodes count "
					"'%s'\n", prog, optarg);
				exit(1);
			}
			break;
		case 'b':
			p.blocksize = strtoul(optarg, &end, 0);
			if (*end || (p.blocksize != 1024 &&
				     p.blocksize != 2048 &&
				     p.blocksize != 4096)) {
				fprintf(stderr, "%s: invalid block size '%s'\n",
					prog, optarg);
				exit(1);
			}
			break;
		case 'f': opt_force = 1; break;
		case 'n': opt_dry = 1; break;
		case 'q': opt_quiet = 1; break;
		case 'z': opt_zero = 1; break;
		case 'V':
		{
			const char *lver;

			ext2fs_get_library_version(&lver, NULL);
			printf("mkodf %s (ODF format %d, libext2fs %s)\n",
			       MKODF_VERSION, ODF_FORMAT_VERSION, lver);
		}
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(1);
		}
	}
	if (optind >= argc || argc - optind > 2) {
		usage(stderr);
		exit(1);
	}
	p.dev = argv[optind];
	if (argc - optind == 2 && parse_size(argv[optind + 1], &p.size)) {
		fprintf(stderr, "%s: invalid size '%s'\n", prog,
			argv[optind + 1]);
		exit(1);
	}
	if (p.size && p.size < MIN_SIZE) {
		fprintf(stderr, "%s: size %llu is too small; an ODF volume "
			"needs at least %llu MiB\n", prog, p.size,
			MIN_SIZE >> 20);
		exit(1);
	}
	if (!have_uuid && odf_random_bytes(p.uuid, 16)) {
		fprintf(stderr, "%s: cannot read /dev/urandom\n", prog);
		exit(1);
	}
	if (!have_uuid) {	/* RFC 4122 version 4 */
		p.uuid[6] = (p.uuid[6] & 0x0f) | 0x40;
		p.uuid[8] = (p.uuid[8] & 0x3f) | 0x80;
	}

	err = ext2fs_check_if_mounted(p.dev, &mount_flags);
	if (!err && (mount_flags & EXT2_MF_MOUNTED)) {
		fprintf(stderr, "%s: %s is mounted; will not make an ODF "
			"volume here!\n", prog, p.dev);
		exit(1);
	}
	if (prepare_target(&p))
		exit(1);
	what = probe_existing(p.dev, extra, sizeof(extra));
	if (what && !opt_force) {
		fprintf(stderr, "%s: %s contains %s%s\n"
			"Use -f to overwrite it.\n", prog, p.dev, what, extra);
		exit(1);
	}
	if (p.size) {
		nblocks = p.size / p.blocksize;
	} else {
		blk64_t dev_blocks;

		err = ext2fs_get_device_size2(p.dev, p.blocksize, &dev_blocks);
		if (err) {
			com_err(prog, err, "while determining the size of %s",
				p.dev);
			exit(1);
		}
		nblocks = dev_blocks;
	}
	if (nblocks * p.blocksize < MIN_SIZE) {
		fprintf(stderr, "%s: %s is too small (%llu bytes); an ODF "
			"volume needs at least %llu MiB\n", prog, p.dev,
			nblocks * p.blocksize, MIN_SIZE >> 20);
		exit(1);
	}
	p.blocks = nblocks;
	if (!p.inodes)
		p.inodes = nblocks * p.blocksize / INODE_RATIO;

	unparse_uuid(p.uuid, uuid_str);
	if (!opt_quiet || opt_dry) {
		if (what)
			printf("%s contains %s%s; overwriting it.\n", p.dev,
			       what, extra);
		printf("Creating ODF volume (format %d) with %llu %uk blocks "
		       "and about %llu inodes\n", ODF_FORMAT_VERSION,
		       p.blocks, p.blocksize >> 10, p.inodes);
		printf("ODF UUID: %s\n", uuid_str);
		if (p.label[0])
			printf("Label: %s\n", p.label);
	}
	if (opt_dry) {
		printf("Layout: /%s /%s/ /%s/%s /%s/%s /%s/ /%s/ "
		       "/lost+found/\n", ODF_PATH_SUPER, ODF_PATH_NS,
		       ODF_PATH_IMAP, ODF_PATH_IMAP_FWD, ODF_PATH_IMAP,
		       ODF_PATH_IMAP_REV, ODF_PATH_READDIR, ODF_PATH_RECLAIM);
		printf("-n given: nothing written.\n");
		exit(0);
	}
	return make_volume(&p);
}
