// SPDX-License-Identifier: GPL-2.0
/*
 * odfedit - test helper: put union metadata into an ODF volume the way
 * the module would, or damage it on purpose, through libodf.
 *
 *   odfedit IMAGE COMMAND [ARGS...]
 *
 * Used by the corruption cases in tests/unit/cases/ and by the VM
 * layout test.  "odfedit IMAGE help" lists the commands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/fs.h>
#include <et/com_err.h>
#include "libodf.h"

static const char *prog = "odfedit";

static void die(errcode_t err, const char *what)
{
	com_err(prog, err, "while %s", what);
	exit(1);
}

static __u64 num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "%s: bad number '%s'\n", prog, s);
		exit(2);
	}
	return v;
}

static void need(int argc, int n, const char *usage)
{
	if (argc < n) {
		fprintf(stderr, "usage: %s IMAGE %s\n", prog, usage);
		exit(2);
	}
}

static int map_kind(const char *s)
{
	if (!strcmp(s, "fwd"))
		return ODF_MAP_FORWARD;
	if (!strcmp(s, "rev"))
		return ODF_MAP_REVERSE;
	fprintf(stderr, "%s: map must be fwd or rev\n", prog);
	exit(2);
}

static int rec_kind(const char *s)
{
	if (!strcmp(s, "upper")) return ODF_MK_UPPER;
	if (!strcmp(s, "copied")) return ODF_MK_COPIED;
	if (!strcmp(s, "bigino")) return ODF_MK_BIGINO;
	if (!strcmp(s, "reverse")) return ODF_MK_REVERSE;
	return (int)num(s);
}

static void read_sb(struct odf_vol *v, struct odf_super *sb)
{
	errcode_t err = odf_sb_read(v, sb, NULL, NULL);

	if (err)
		die(err, "reading the superblock");
}

static void sb_set(struct odf_super *sb, const char *field, __u64 val)
{
#define F16(n) if (!strcmp(field, #n)) { sb->s_##n = ext2fs_cpu_to_le16(val); return; }
#define F32(n) if (!strcmp(field, #n)) { sb->s_##n = ext2fs_cpu_to_le32(val); return; }
#define F64(n) if (!strcmp(field, #n)) { sb->s_##n = ext2fs_cpu_to_le64(val); return; }
	F32(magic) F16(version) F16(state) F32(feature_compat)
	F32(feature_ro_compat) F32(feature_incompat) F32(mnt_count)
	F64(next_ino) F16(next_branch_id) F32(error_count) F32(hdr_size)
	F32(pad0)
	if (!strcmp(field, "label_fill")) {	/* unterminated label */
		memset(sb->s_label, (int)val, sizeof(sb->s_label));
		return;
	}
	if (!strcmp(field, "reserved0")) {
		sb->s_reserved[0] = ext2fs_cpu_to_le64(val);
		return;
	}
#undef F16
#undef F32
#undef F64
	fprintf(stderr, "%s: unknown superblock field %s\n", prog, field);
	exit(2);
}

static void branch_set(struct odf_branch *b, const char *field,
		       const char *val)
{
	if (!strcmp(field, "id"))
		b->b_id = ext2fs_cpu_to_le16(num(val));
	else if (!strcmp(field, "flags"))
		b->b_flags = ext2fs_cpu_to_le16(num(val));
	else if (!strcmp(field, "mode"))
		b->b_mode = ext2fs_cpu_to_le16(num(val));
	else if (!strcmp(field, "order"))
		b->b_order = ext2fs_cpu_to_le16(num(val));
	else if (!strcmp(field, "root_ino"))
		b->b_root_ino = ext2fs_cpu_to_le64(num(val));
	else if (!strcmp(field, "path"))
		memset(b->b_path, 'x', sizeof(b->b_path));  /* unterminated */
	else {
		fprintf(stderr, "%s: unknown branch field %s\n", prog, field);
		exit(2);
	}
}

/* Byte offset of the record with key (branch, ino) in a map file. */
static __u64 map_rec_offset(struct odf_vol *v, int kind, unsigned branch,
			    __u64 ino)
{
	struct odf_map m;
	__u32 nb, b, i;
	unsigned s;
	errcode_t err = odf_map_open(v, kind, &m);

	if (err)
		die(err, "opening the map");
	nb = ext2fs_le32_to_cpu(m.hdr.mh_nbuckets);
	b = odf_map_hash(ext2fs_le32_to_cpu(m.hdr.mh_hash_seed), branch, ino) &
	    (nb - 1);
	for (i = 0; i < nb; i++, b = (b + 1) & (nb - 1)) {
		for (s = 0; s < ODF_MAP_RECS_PER_BUCKET; s++) {
			struct odf_map_rec r;
			__u64 off = (__u64)(b + 1) * ODF_BLOCK_SIZE +
				    s * ODF_MAP_REC_SIZE;

			err = odf_file_pread(v->fs, m.ino, off, &r, sizeof(r));
			if (err)
				die(err, "reading the map");
			if (r.mr_state == ODF_MREC_USED &&
			    ext2fs_le16_to_cpu(r.mr_key_branch) == branch &&
			    ext2fs_le64_to_cpu(r.mr_key_ino) == ino)
				return off;
		}
	}
	fprintf(stderr, "%s: no record for (%u, %llu)\n", prog, branch,
		(unsigned long long)ino);
	exit(1);
}

static ext2_ino_t path_ino(struct odf_vol *v, const char *path)
{
	ext2_ino_t ino;
	errcode_t err = ext2fs_namei(v->fs, EXT2_ROOT_INO, EXT2_ROOT_INO,
				     path, &ino);

	if (err)
		die(err, path);
	return ino;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	fprintf(stderr, "%s: bad hex digit '%c'\n", prog, c);
	exit(2);
}

static void rd_entry(struct odf_rd_entry *e, const char *name, __u64 ino)
{
	memset(e, 0, sizeof(*e));
	e->name_len = strlen(name);
	memcpy(e->name, name, e->name_len);
	e->dtype = 8;	/* DT_REG */
	e->branch = 1;
	e->ino = ino;
}

/* what the module records for a branch directory of this host */
static void branch_identity(struct odf_branch *b, const char *path)
{
	struct statfs sfs;
	struct stat st;
	int fd, gen = 0;

	if (stat(path, &st) || statfs(path, &sfs)) {
		perror(path);
		exit(1);
	}
	b->b_fs_magic = ext2fs_cpu_to_le32((__u32)sfs.f_type);
	b->b_root_ino = ext2fs_cpu_to_le64(st.st_ino);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		if (ioctl(fd, FS_IOC_GETVERSION, &gen))
			gen = 0;
		close(fd);
	}
	b->b_root_gen = ext2fs_cpu_to_le32((__u32)gen);
}

static unsigned node_type(const char *s)
{
	if (!strcmp(s, "plain"))
		return 0;
	if (!strcmp(s, "opaque"))
		return ODF_NODE_OPAQUE;
	if (!strcmp(s, "redirect"))
		return ODF_NODE_OPAQUE | ODF_NODE_REDIRECT;
	return (unsigned)num(s);
}

static void node_set(struct odf_node *n, const char *field, __u64 val)
{
	if (!strcmp(field, "type"))
		n->n_type = ext2fs_cpu_to_le16(val);
	else if (!strcmp(field, "uino"))
		n->n_uino = ext2fs_cpu_to_le64(val);
	else if (!strcmp(field, "owner_ino"))
		n->n_owner_ino = ext2fs_cpu_to_le64(val);
	else if (!strcmp(field, "owner_gen"))
		n->n_owner_gen = ext2fs_cpu_to_le32(val);
	else if (!strcmp(field, "nredirect"))
		n->n_nredirect = ext2fs_cpu_to_le16(val);
	else if (!strcmp(field, "version"))
		n->n_version = ext2fs_cpu_to_le16(val);
	else if (!strcmp(field, "pad0"))
		n->n_pad0 = ext2fs_cpu_to_le32(val);
	else if (!strcmp(field, "size"))
		n->n_size = ext2fs_cpu_to_le16(val);
	else {
		fprintf(stderr, "%s: unknown record field %s\n", prog, field);
		exit(2);
	}
}

static void usage(void)
{
	printf(
"commands (UINO, DIR_UINO: union inode numbers, 0x... or decimal):\n"
"  dump                               print the ODF contents\n"
"  branch-add PATH rw|ro [stat]       add a branch (next id); with stat,\n"
"                                     its identity (fs magic, root inode\n"
"                                     and generation) is PATH's on this host\n"
"  branch-set SLOT FIELD VALUE [nocsum]\n"
"  sb-set FIELD VALUE [nocsum|backup] primary (and backup) header\n"
"namespace, format 2 (/ns/<016llx UINO>):\n"
"  node-make UINO TYPE [OWNER_INO OWNER_GEN] [BID:/path ...]\n"
"                                     make or rewrite a node; TYPE is\n"
"                                     plain, opaque, redirect (= opaque|\n"
"                                     redirect) or a number\n"
"  whiteout DIR_UINO NAME             whiteout of NAME in DIR_UINO\n"
"  node-set UINO FIELD VALUE [nocsum] patch a record field: type, uino,\n"
"                                     owner_ino, owner_gen, nredirect,\n"
"                                     version, pad0, size\n"
"  node-clear UINO                    remove the record\n"
"  node-raw UINO HEX                  raw record bytes\n"
"  intent-add SEQ SRC_DIR SRC_NAME DST_DIR DST_NAME INO GEN [SRC_HINT DST_HINT]\n"
"                                     a rename intent (hints default \"/\")\n"
"  copyup-intent-add SEQ DIR NAME UINO [HINT]\n"
"                                     a copy-up intent (hint default \"/\")\n"
"format 1 (to test odfck --convert):\n"
"  v1-format                          s_version 1 in both headers\n"
"  v1-whiteout PATH | v1-opaque PATH | v1-redirect PATH FROM | v1-mkdir PATH\n"
"  v1-intent-add SEQ SRC DST [INO GEN]\n"
"other:\n"
"  map-add fwd|rev KIND KB KI U TB TI\n"
"  map-del fwd|rev KB KI\n"
"  map-poke fwd|rev KB KI OFFSET HEX  write bytes into a record\n"
"  copyup LB LI UB UI                 what a copy-up records\n"
"  bigino LB LI                       allocate for a large lower ino\n"
"  rd-build DIRINO NAME...            fresh readdir state\n"
"  rd-append DIRINO NAME | rd-tomb DIRINO NAME\n"
"  rd-seek DIRINO ORD | rd-end DIRINO | rd-list DIRINO\n"
"  reclaim-add NAME                   a pending reclaim subtree\n"
"  populate N                         N whiteouts, copy-ups, entries\n"
"  poke FILE OFFSET HEX               write bytes into any file\n"
"  create FILE | mkdir DIR | symlink FILE   (full ext4 paths)\n"
"  xattr-set FILE KEY VALUE           an extended attribute on any file\n"
"  rm FILE | truncate FILE SIZE | rename FILE NEWNAME (same dir)\n"
"  map-put fwd|rev BUCKET SLOT KIND KB KI U TB TI  bypassing the hash\n"
"  map-hdr-set fwd|rev FIELD VALUE    nrecords, ndeleted, nbuckets\n");
}

static void dump_ns(struct odf_vol *v, ext2_ino_t dir)
{
	static struct odf_redir_ent re[ODF_NODE_MAX_REDIRECTS];
	struct odf_dirent *ents, *kids;
	size_t n, i, nk, k;

	if (odf_list_dir(v->fs, dir, &ents, &n))
		return;
	for (i = 0; i < n; i++) {
		unsigned char buf[ODF_NODE_BUF_MAX];
		struct odf_node_info ni;
		size_t len = 0;
		unsigned j;
		int present, bad = 0;

		if (!odf_is_dir(v->fs, ents[i].ino)) {
			printf("ns %s file\n", ents[i].name);
			continue;
		}
		memset(&ni, 0, sizeof(ni));
		odf_node_get(v->fs, ents[i].ino, buf, &len, &present);
		if (present)
			bad = odf_node_decode(buf, len, &ni, re,
					      ODF_NODE_MAX_REDIRECTS);
		printf("ns %s %s type 0x%x uino 0x%llx owner %llu/%u",
		       ents[i].name, !present ? "NORECORD" :
		       bad ? "BAD" : "good", ni.type,
		       (unsigned long long)ni.uino,
		       (unsigned long long)ni.owner_ino, ni.owner_gen);
		for (j = 0; !bad && j < ni.nredirect; j++)
			printf(" %u:%.*s", re[j].branch, (int)re[j].len,
			       re[j].path);
		printf("\n");
		if (odf_list_dir(v->fs, ents[i].ino, &kids, &nk))
			continue;
		for (k = 0; k < nk; k++)
			printf("ns %s/%s %s\n", ents[i].name, kids[k].name,
			       odf_is_dir(v->fs, kids[k].ino) ? "dir" :
			       "whiteout");
		free(kids);
	}
	free(ents);
}

static void dump_map_cb(void *priv, __u32 b, unsigned s,
			const struct odf_map_rec *r, int bad)
{
	(void)b; (void)s;
	if (r->mr_state != ODF_MREC_USED)
		return;
	printf("%s kind=%u key=(%u,%llu) uino=0x%llx tgt=(%u,%llu)%s\n",
	       (const char *)priv, r->mr_kind,
	       ext2fs_le16_to_cpu(r->mr_key_branch),
	       (unsigned long long)ext2fs_le64_to_cpu(r->mr_key_ino),
	       (unsigned long long)ext2fs_le64_to_cpu(r->mr_union_ino),
	       ext2fs_le16_to_cpu(r->mr_tgt_branch),
	       (unsigned long long)ext2fs_le64_to_cpu(r->mr_tgt_ino),
	       bad ? " BAD" : "");
}

static void dump(struct odf_vol *v)
{
	struct odf_super sb;
	struct odf_branch br[ODF_BRANCH_SLOTS];
	int i;
	void *buf;
	size_t len;

	if (odf_sb_read(v, &sb, NULL, br))
		die(EXT2_ET_BAD_MAGIC, "reading the superblock");
	printf("superblock %s version %u state 0x%x label \"%.63s\" "
	       "next_ino %llu next_branch_id %u\n",
	       odf_bad_str(odf_sb_verify(&sb)),
	       ext2fs_le16_to_cpu(sb.s_version),
	       ext2fs_le16_to_cpu(sb.s_state), sb.s_label,
	       (unsigned long long)ext2fs_le64_to_cpu(sb.s_next_ino),
	       ext2fs_le16_to_cpu(sb.s_next_branch_id));
	for (i = 0; i < ODF_BRANCH_SLOTS; i++)
		if (!odf_branch_unused(&br[i]))
			printf("branch slot %d id %u flags %u mode %u order %u "
			       "path %.383s %s\n", i,
			       ext2fs_le16_to_cpu(br[i].b_id),
			       ext2fs_le16_to_cpu(br[i].b_flags),
			       ext2fs_le16_to_cpu(br[i].b_mode),
			       ext2fs_le16_to_cpu(br[i].b_order), br[i].b_path,
			       odf_bad_str(odf_branch_verify(&br[i])));
	if (v->ino_ns)
		dump_ns(v, v->ino_ns);
	if (v->ino_fwd && !odf_file_read_all(v->fs, v->ino_fwd, 1ULL << 32,
					     &buf, &len)) {
		struct odf_map_header h;
		int bad;

		odf_map_scan(buf, len, ODF_MAP_FORWARD, &h, &bad, dump_map_cb,
			     "fwd");
		free(buf);
	}
	if (v->ino_rev && !odf_file_read_all(v->fs, v->ino_rev, 1ULL << 32,
					     &buf, &len)) {
		struct odf_map_header h;
		int bad;

		odf_map_scan(buf, len, ODF_MAP_REVERSE, &h, &bad, dump_map_cb,
			     "rev");
		free(buf);
	}
	if (v->ino_readdir) {
		struct odf_dirent *ents;
		size_t n, k;

		if (!odf_list_dir(v->fs, v->ino_readdir, &ents, &n)) {
			for (k = 0; k < n; k++) {
				struct odf_rd_info info;
				int bad;

				if (odf_file_read_all(v->fs, ents[k].ino,
						      1ULL << 32, &buf, &len))
					continue;
				bad = odf_rd_check(buf, len, &info, NULL, NULL);
				printf("readdir %s %s live %u tombstones %u\n",
				       ents[k].name, odf_bad_str(bad),
				       info.live, info.tombstones);
				free(buf);
			}
			free(ents);
		}
	}
	if (v->ino_reclaim) {
		struct odf_dirent *ents;
		size_t n, k;

		if (!odf_list_dir(v->fs, v->ino_reclaim, &ents, &n)) {
			for (k = 0; k < n; k++)
				printf("reclaim %s\n", ents[k].name);
			free(ents);
		}
	}
}

int main(int argc, char **argv)
{
	struct odf_vol *v;
	struct odf_super sb;
	const char *cmd;
	errcode_t err;

	add_error_table(&et_ext2_error_table);
	if (argc >= 2 && !strcmp(argv[1], "help")) {
		usage();
		return 0;
	}
	need(argc, 3, "COMMAND [ARGS]");
	cmd = argv[2];
	argc -= 3;
	argv += 3;
	err = odf_vol_open(argv[-2], strcmp(cmd, "dump") && strncmp(cmd, "rd-s",
			   4) && strcmp(cmd, "rd-end") && strcmp(cmd, "rd-list") ?
			   ODF_OPEN_RW : 0, &v);
	if (err)
		die(err, "opening the volume");

	if (!strcmp(cmd, "dump")) {
		dump(v);
	} else if (!strcmp(cmd, "branch-add")) {
		struct odf_branch b;

		need(argc + 3, 5, "branch-add PATH rw|ro [stat]");
		memset(&b, 0, sizeof(b));
		read_sb(v, &sb);
		snprintf(b.b_path, sizeof(b.b_path), "%s", argv[0]);
		strcpy(b.b_fstype, "ext4");
		b.b_mode = ext2fs_cpu_to_le16(strcmp(argv[1], "rw") ?
					      ODF_MODE_RO : ODF_MODE_RW);
		b.b_root_ino = ext2fs_cpu_to_le64(2);
		b.b_fs_magic = ext2fs_cpu_to_le32(0xef53);
		{
			struct odf_branch all[ODF_BRANCH_SLOTS];
			unsigned i, order = 0;

			odf_sb_read(v, NULL, NULL, all);
			for (i = 0; i < ODF_BRANCH_SLOTS; i++)
				if (!odf_branch_unused(&all[i]))
					order++;
			b.b_order = ext2fs_cpu_to_le16(order);
		}
		b.b_added_time = ext2fs_cpu_to_le64(1);
		if (argc > 2 && !strcmp(argv[2], "stat"))
			branch_identity(&b, argv[0]);
		err = odf_branch_add(v, &sb, &b, NULL);
		if (err)
			die(err, "adding a branch");
	} else if (!strcmp(cmd, "branch-set")) {
		struct odf_branch br[ODF_BRANCH_SLOTS];
		unsigned slot;

		need(argc + 3, 6, "branch-set SLOT FIELD VALUE [nocsum]");
		slot = num(argv[0]);
		if (slot >= ODF_BRANCH_SLOTS)
			die(EXT2_ET_INVALID_ARGUMENT, "choosing a slot");
		err = odf_sb_read(v, NULL, NULL, br);
		if (err)
			die(err, "reading the branch table");
		branch_set(&br[slot], argv[1], argv[2]);
		if (argc < 4 || strcmp(argv[3], "nocsum"))
			odf_branch_csum_set(&br[slot]);
		err = odf_branch_write(v, slot, &br[slot]);
		if (err)
			die(err, "writing the branch table");
	} else if (!strcmp(cmd, "sb-set")) {
		need(argc + 3, 5, "sb-set FIELD VALUE [nocsum|backup]");
		read_sb(v, &sb);
		sb_set(&sb, argv[0], num(argv[1]));
		if (argc < 3 || strcmp(argv[2], "nocsum"))
			odf_sb_csum_set(&sb);
		err = odf_sb_write(v, &sb, argc >= 3 &&
				   !strcmp(argv[2], "backup"));
		if (err)
			die(err, "writing the superblock");
	} else if (!strcmp(cmd, "whiteout")) {
		need(argc + 3, 5, "whiteout DIR_UINO NAME");
		err = odf_ns_whiteout(v, num(argv[0]), argv[1]);
		if (err)
			die(err, "creating a whiteout");
	} else if (!strcmp(cmd, "node-make")) {
		struct odf_redir_ent re[64];
		unsigned type, nre = 0;
		__u64 owner = 0;
		__u32 gen = 0;
		int i = 2;

		need(argc + 3, 5, "node-make UINO TYPE [OWNER_INO OWNER_GEN] "
		     "[BID:/path ...]");
		type = node_type(argv[1]);
		if (argc >= 4 && !strchr(argv[2], ':')) {
			owner = num(argv[2]);
			gen = num(argv[3]);
			i = 4;
		}
		for (; i < argc && nre < 64; i++) {
			char *colon = strchr(argv[i], ':');

			if (!colon) {
				fprintf(stderr, "%s: redirect entry must be "
					"BID:/path\n", prog);
				exit(2);
			}
			*colon = 0;
			re[nre].branch = num(argv[i]);
			re[nre].path = colon + 1;
			re[nre].len = strlen(colon + 1);
			nre++;
		}
		err = odf_ns_node_make(v, num(argv[0]), type, owner, gen, re,
				       nre, NULL);
		if (err)
			die(err, "making a node");
	} else if (!strcmp(cmd, "node-set")) {
		unsigned char buf[ODF_NODE_BUF_MAX];
		struct odf_node n;
		size_t len = 0;
		int present;
		ext2_ino_t ino;

		need(argc + 3, 6, "node-set UINO FIELD VALUE [nocsum]");
		err = odf_ns_node_lookup(v, num(argv[0]), &ino);
		if (!err)
			err = odf_node_get(v->fs, ino, buf, &len, &present);
		if (!err && (!present || len < sizeof(n)))
			err = EXT2_ET_EA_KEY_NOT_FOUND;
		if (err)
			die(err, "reading the record");
		memcpy(&n, buf, sizeof(n));
		node_set(&n, argv[1], num(argv[2]));
		memcpy(buf, &n, sizeof(n));
		if (argc < 4 || strcmp(argv[3], "nocsum")) {
			n.n_crc = 0;
			memcpy(buf, &n, sizeof(n));
			n.n_crc = ext2fs_cpu_to_le32(odf_crc32c(buf, len));
			memcpy(buf, &n, sizeof(n));
		}
		err = odf_node_put_raw(v->fs, ino, buf, len);
		if (err)
			die(err, "writing a record");
	} else if (!strcmp(cmd, "node-clear")) {
		ext2_ino_t ino;

		need(argc + 3, 4, "node-clear UINO");
		err = odf_ns_node_lookup(v, num(argv[0]), &ino);
		if (err)
			die(err, argv[0]);
		err = odf_node_clear(v->fs, ino);
		if (err)
			die(err, "removing a record");
	} else if (!strcmp(cmd, "v1-format")) {
		read_sb(v, &sb);
		sb.s_version = ext2fs_cpu_to_le16(ODF_FORMAT_V1);
		odf_sb_csum_set(&sb);
		err = odf_sb_write(v, &sb, 1);
		if (err)
			die(err, "writing the superblock");
	} else if (!strcmp(cmd, "v1-whiteout")) {
		need(argc + 3, 4, "v1-whiteout PATH");
		err = odf_ns_v1_whiteout(v, argv[0]);
		if (err)
			die(err, "creating a whiteout");
	} else if (!strcmp(cmd, "v1-opaque") || !strcmp(cmd, "v1-mkdir")) {
		need(argc + 3, 4, "v1-opaque|v1-mkdir PATH");
		err = odf_ns_v1_mark_dir(v, argv[0], cmd[3] == 'o' ?
					 ODF_NODE_OPAQUE : 0, NULL);
		if (err)
			die(err, "marking a directory");
	} else if (!strcmp(cmd, "v1-redirect")) {
		need(argc + 3, 5, "v1-redirect PATH FROM");
		err = odf_ns_v1_mark_dir(v, argv[0], ODF_NODE_REDIRECT,
					 argv[1]);
		if (err)
			die(err, "marking a directory");
	} else if (!strcmp(cmd, "v1-intent-add")) {
		unsigned char *buf = malloc(ODF_INTENT_V1_BUF_MAX);
		size_t len;

		need(argc + 3, 6, "v1-intent-add SEQ SRC DST [INO GEN]");
		len = odf_intent_v1_encode(buf, num(argv[0]), 1,
					   argc > 4 ? num(argv[3]) : 0,
					   argc > 4 ? num(argv[4]) : 0,
					   argv[1], argv[2]);
		err = odf_intent_put(v, v->ino_reclaim, num(argv[0]), buf,
				     len);
		free(buf);
		if (err)
			die(err, "adding an intent");
	} else if (!strcmp(cmd, "symlink") || !strcmp(cmd, "mkdir")) {
		ext2_ino_t dir;
		char *copy, *slash;

		need(argc + 3, 4, "symlink FILE | mkdir DIR");
		copy = strdup(argv[0]);
		slash = strrchr(copy, '/');
		if (!slash || slash == copy)
			dir = EXT2_ROOT_INO;
		else {
			*slash = 0;
			dir = path_ino(v, copy);
		}
		if (cmd[0] == 's')
			err = ext2fs_symlink(v->fs, dir, 0,
					     slash ? slash + 1 : copy,
					     "target");
		else
			err = odf_mkdir(v->fs, dir, slash ? slash + 1 : copy,
					NULL);
		free(copy);
		if (err)
			die(err, cmd);
	} else if (!strcmp(cmd, "xattr-set")) {
		struct ext2_xattr_handle *h;
		errcode_t err2;

		need(argc + 3, 6, "xattr-set FILE KEY VALUE");
		err = ext2fs_xattrs_open(v->fs, path_ino(v, argv[0]), &h);
		if (err)
			die(err, "opening the attributes");
		err = ext2fs_xattrs_read(h);
		if (!err)
			err = ext2fs_xattr_set(h, argv[1], argv[2],
					       strlen(argv[2]));
		err2 = ext2fs_xattrs_close(&h);
		if (err || err2)
			die(err ? err : err2, "setting an attribute");
	} else if (!strcmp(cmd, "map-add")) {
		struct odf_map m;
		struct odf_map_rec r;

		need(argc + 3, 10, "map-add fwd|rev KIND KB KI U TB TI");
		err = odf_map_open(v, map_kind(argv[0]), &m);
		if (err)
			die(err, "opening the map");
		odf_map_rec_init(&r, rec_kind(argv[1]), num(argv[2]),
				 num(argv[3]), num(argv[4]), num(argv[5]),
				 num(argv[6]));
		err = odf_map_insert(&m, &r);
		if (err)
			die(err, "inserting a record");
	} else if (!strcmp(cmd, "map-del")) {
		struct odf_map m;
		int found = 0;

		need(argc + 3, 6, "map-del fwd|rev KB KI");
		err = odf_map_open(v, map_kind(argv[0]), &m);
		if (!err)
			err = odf_map_delete(&m, num(argv[1]), num(argv[2]),
					     &found);
		if (err)
			die(err, "deleting a record");
		if (!found)
			die(EXT2_ET_FILE_NOT_FOUND, "deleting a record");
	} else if (!strcmp(cmd, "map-poke")) {
		int kind;
		__u64 off;
		unsigned char bytes[256];
		size_t n, i;

		need(argc + 3, 8, "map-poke fwd|rev KB KI OFFSET HEX");
		kind = map_kind(argv[0]);
		off = map_rec_offset(v, kind, num(argv[1]), num(argv[2])) +
		      num(argv[3]);
		n = strlen(argv[4]) / 2;
		for (i = 0; i < n && i < sizeof(bytes); i++)
			bytes[i] = hexval(argv[4][2 * i]) << 4 |
				   hexval(argv[4][2 * i + 1]);
		err = odf_file_pwrite(v->fs, kind == ODF_MAP_FORWARD ?
				      v->ino_fwd : v->ino_rev, off, bytes, i);
		if (err)
			die(err, "writing the map");
	} else if (!strcmp(cmd, "copyup")) {
		struct odf_map f, rv;
		struct odf_map_rec r;
		unsigned lb, ub;
		__u64 li, ui, u;

		need(argc + 3, 7, "copyup LB LI UB UI");
		lb = num(argv[0]); li = num(argv[1]);
		ub = num(argv[2]); ui = num(argv[3]);
		u = odf_uino_det(lb, li);
		if (!u)
			die(EXT2_ET_INVALID_ARGUMENT, "lower ino too large");
		err = odf_map_open(v, ODF_MAP_FORWARD, &f);
		if (!err)
			err = odf_map_open(v, ODF_MAP_REVERSE, &rv);
		/* module order: upper, reverse, then the lower's record */
		odf_map_rec_init(&r, ODF_MK_UPPER, ub, ui, u, lb, li);
		if (!err)
			err = odf_map_insert(&f, &r);
		odf_map_rec_init(&r, ODF_MK_REVERSE, 0, u, u, ub, ui);
		if (!err)
			err = odf_map_insert(&rv, &r);
		odf_map_rec_init(&r, ODF_MK_COPIED, lb, li, u, ub, ui);
		if (!err)
			err = odf_map_insert(&f, &r);
		if (err)
			die(err, "recording a copy-up");
	} else if (!strcmp(cmd, "bigino")) {
		struct odf_map f, rv;
		struct odf_map_rec r;
		__u64 u;

		need(argc + 3, 5, "bigino LB LI");
		read_sb(v, &sb);
		u = ext2fs_le64_to_cpu(sb.s_next_ino);
		/* counter first: a crash wastes a number, never reuses one */
		sb.s_next_ino = ext2fs_cpu_to_le64(u + 1);
		odf_sb_csum_set(&sb);
		err = odf_sb_write(v, &sb, 0);
		if (!err)
			err = odf_map_open(v, ODF_MAP_FORWARD, &f);
		if (!err)
			err = odf_map_open(v, ODF_MAP_REVERSE, &rv);
		odf_map_rec_init(&r, ODF_MK_BIGINO, num(argv[0]), num(argv[1]),
				 u, 0, 0);
		if (!err)
			err = odf_map_insert(&f, &r);
		odf_map_rec_init(&r, ODF_MK_REVERSE, 0, u, u, num(argv[0]),
				 num(argv[1]));
		if (!err)
			err = odf_map_insert(&rv, &r);
		if (err)
			die(err, "allocating a union inode");
		printf("0x%llx\n", (unsigned long long)u);
	} else if (!strcmp(cmd, "rd-build")) {
		struct odf_rd_entry *e;
		struct odf_rd_stamp st;
		int i;

		need(argc + 3, 4, "rd-build DIRINO NAME...");
		e = calloc(argc, sizeof(*e));
		for (i = 1; i < argc; i++)
			rd_entry(&e[i - 1], argv[i], odf_uino_det(1, 100 + i));
		memset(&st, 0, sizeof(st));
		st.st_branch = ext2fs_cpu_to_le16(1);
		st.st_dir_ino = ext2fs_cpu_to_le64(2);
		st.st_mtime_ns = ext2fs_cpu_to_le64(1000000000ULL);
		err = odf_rd_build(v, num(argv[0]), &st, 1, e, argc - 1);
		free(e);
		if (err)
			die(err, "building readdir state");
	} else if (!strcmp(cmd, "rd-append")) {
		struct odf_rd_entry e;
		__u32 ord;

		need(argc + 3, 5, "rd-append DIRINO NAME");
		rd_entry(&e, argv[1], odf_uino_det(1, 999));
		err = odf_rd_append(v, num(argv[0]), &e, &ord);
		if (err)
			die(err, "appending");
		printf("%u\n", ord);
	} else if (!strcmp(cmd, "rd-tomb")) {
		int found;

		need(argc + 3, 5, "rd-tomb DIRINO NAME");
		err = odf_rd_tombstone(v, num(argv[0]), argv[1],
				       strlen(argv[1]), &found);
		if (err)
			die(err, "tombstoning");
		if (!found)
			die(EXT2_ET_FILE_NOT_FOUND, "tombstoning");
	} else if (!strcmp(cmd, "rd-seek") || !strcmp(cmd, "rd-list")) {
		struct odf_rd_entry e;
		__u32 ord = 0;
		int eod;

		need(argc + 3, 4, "rd-seek DIRINO ORD | rd-list DIRINO");
		if (cmd[3] == 's') {
			need(argc + 3, 5, "rd-seek DIRINO ORD");
			ord = num(argv[1]);
		}
		for (;;) {
			err = odf_rd_seek(v, num(argv[0]), ord, &e, &eod);
			if (err)
				die(err, "seeking");
			if (eod) {
				printf("end\n");
				break;
			}
			printf("%u %.*s\n", e.ordinal, e.name_len, e.name);
			if (cmd[3] == 's')
				break;
			ord = e.ordinal + 1;
		}
	} else if (!strcmp(cmd, "rd-end")) {
		__u32 end;

		need(argc + 3, 4, "rd-end DIRINO");
		err = odf_rd_end(v, num(argv[0]), &end);
		if (err)
			die(err, "reading the end offset");
		printf("%u\n", end);
	} else if (!strcmp(cmd, "reclaim-add")) {
		ext2_ino_t dir, f;

		need(argc + 3, 4, "reclaim-add NAME");
		err = odf_mkdir(v->fs, v->ino_reclaim, argv[0], &dir);
		if (!err)
			err = odf_file_create(v->fs, dir, "whiteout", &f);
		if (err)
			die(err, "adding a reclaim entry");
	} else if (!strcmp(cmd, "intent-add")) {
		struct odf_intent_info in;

		need(argc + 3, 10, "intent-add SEQ SRC_DIR SRC_NAME DST_DIR "
		     "DST_NAME INO GEN [SRC_HINT DST_HINT]");
		memset(&in, 0, sizeof(in));
		in.op = ODF_INTENT_RENAME;
		in.seq = num(argv[0]);
		in.src_dir = num(argv[1]);
		in.src = argv[2];
		in.dst_dir = num(argv[3]);
		in.dst = argv[4];
		in.ino = num(argv[5]);
		in.gen = num(argv[6]);
		in.src_hint = argc > 8 ? argv[7] : "/";
		in.dst_hint = argc > 8 ? argv[8] : "/";
		in.src_len = strlen(in.src);
		in.dst_len = strlen(in.dst);
		in.src_hint_len = strlen(in.src_hint);
		in.dst_hint_len = strlen(in.dst_hint);
		in.time = 1;
		err = odf_intent_add(v, &in);
		if (err)
			die(err, "adding an intent");
	} else if (!strcmp(cmd, "copyup-intent-add")) {
		struct odf_intent_info in;

		need(argc + 3, 7, "copyup-intent-add SEQ DIR NAME UINO [HINT]");
		memset(&in, 0, sizeof(in));
		in.op = ODF_INTENT_COPYUP;
		in.seq = num(argv[0]);
		in.src_dir = in.dst_dir = num(argv[1]);
		in.src = in.dst = argv[2];
		in.ino = num(argv[3]);
		in.src_hint = in.dst_hint = argc > 4 ? argv[4] : "/";
		in.src_len = in.dst_len = strlen(in.src);
		in.src_hint_len = in.dst_hint_len = strlen(in.src_hint);
		in.time = 1;
		err = odf_intent_add(v, &in);
		if (err)
			die(err, "adding an intent");
	} else if (!strcmp(cmd, "populate")) {
		/* N whiteouts in N/100 directories, N copy-ups, one
		 * directory of N entries: a volume to time odfck on */
		struct odf_map f, rv;
		struct odf_map_rec r;
		struct odf_rd_entry *ents;
		__u64 i, n;
		char path[64];

		need(argc + 3, 4, "populate N");	/* whiteouts f<i> in d<i/100> */
		n = num(argv[0]);
		err = odf_map_open(v, ODF_MAP_FORWARD, &f);
		if (!err)
			err = odf_map_open(v, ODF_MAP_REVERSE, &rv);
		for (i = 0; !err && i < n; i++) {
			__u64 u = odf_uino_det(2, i + 1);

			snprintf(path, sizeof(path), "f%llu",
				 (unsigned long long)i);
			err = odf_ns_whiteout(v, odf_uino_det(1, 1000 + i / 100),
					      path);
			odf_map_rec_init(&r, ODF_MK_UPPER, 1, 1000000 + i, u,
					 2, i + 1);
			if (!err)
				err = odf_map_insert(&f, &r);
			odf_map_rec_init(&r, ODF_MK_REVERSE, 0, u, u, 1,
					 1000000 + i);
			if (!err)
				err = odf_map_insert(&rv, &r);
			odf_map_rec_init(&r, ODF_MK_COPIED, 2, i + 1, u, 1,
					 1000000 + i);
			if (!err)
				err = odf_map_insert(&f, &r);
		}
		ents = calloc(n ? n : 1, sizeof(*ents));
		for (i = 0; !err && i < n; i++) {
			snprintf(path, sizeof(path), "entry-%llu",
				 (unsigned long long)i);
			rd_entry(&ents[i], path, odf_uino_det(1, i + 1));
		}
		if (!err)
			err = odf_rd_build(v, 2, NULL, 0, ents, n);
		free(ents);
		if (err)
			die(err, "populating");
	} else if (!strcmp(cmd, "poke")) {
		unsigned char bytes[4096];
		size_t n, i;

		need(argc + 3, 6, "poke FILE OFFSET HEX");
		n = strlen(argv[2]) / 2;
		for (i = 0; i < n && i < sizeof(bytes); i++)
			bytes[i] = hexval(argv[2][2 * i]) << 4 |
				   hexval(argv[2][2 * i + 1]);
		err = odf_file_pwrite(v->fs, path_ino(v, argv[0]), num(argv[1]),
				      bytes, i);
		if (err)
			die(err, "writing");
	} else if (!strcmp(cmd, "create")) {
		ext2_ino_t dir;
		char *copy, *slash;

		need(argc + 3, 4, "create FILE");
		copy = strdup(argv[0]);
		slash = strrchr(copy, '/');
		if (!slash || slash == copy)
			dir = EXT2_ROOT_INO;
		else {
			*slash = 0;
			dir = path_ino(v, copy);
		}
		err = odf_file_create(v->fs, dir, slash ? slash + 1 : copy,
				      NULL);
		free(copy);
		if (err)
			die(err, "creating a file");
	} else if (!strcmp(cmd, "rm") || !strcmp(cmd, "rename")) {
		ext2_ino_t dir;
		char *copy, *slash;

		need(argc + 3, 4, "rm FILE | rename FILE NEWNAME");
		copy = strdup(argv[0]);
		slash = strrchr(copy, '/');
		if (!slash || slash == copy)
			dir = EXT2_ROOT_INO;
		else {
			*slash = 0;
			dir = path_ino(v, copy);
		}
		if (cmd[1] == 'm')
			err = odf_remove(v->fs, dir, slash ? slash + 1 : copy);
		else {
			need(argc + 3, 5, "rename FILE NEWNAME");
			err = odf_rename(v->fs, dir, slash ? slash + 1 : copy,
					 dir, argv[1]);
		}
		free(copy);
		if (err)
			die(err, cmd);
	} else if (!strcmp(cmd, "truncate")) {
		need(argc + 3, 5, "truncate FILE SIZE");
		err = odf_file_truncate(v->fs, path_ino(v, argv[0]),
					num(argv[1]));
		if (err)
			die(err, "truncating");
	} else if (!strcmp(cmd, "node-raw")) {
		unsigned char bytes[ODF_NODE_BUF_MAX];
		ext2_ino_t ino;
		size_t n, i;

		need(argc + 3, 5, "node-raw UINO HEX");
		err = odf_ns_node_lookup(v, num(argv[0]), &ino);
		if (err == EXT2_ET_FILE_NOT_FOUND)
			err = odf_ns_node_make(v, num(argv[0]), 0, 0, 0, NULL,
					       0, &ino);
		if (err)
			die(err, argv[0]);
		n = strlen(argv[1]) / 2;
		for (i = 0; i < n && i < sizeof(bytes); i++)
			bytes[i] = hexval(argv[1][2 * i]) << 4 |
				   hexval(argv[1][2 * i + 1]);
		err = odf_node_put_raw(v->fs, ino, bytes, i);
		if (err)
			die(err, "writing a record");
	} else if (!strcmp(cmd, "map-put")) {
		struct odf_map m;
		struct odf_map_rec r;
		__u64 off;

		need(argc + 3, 12, "map-put fwd|rev BUCKET SLOT KIND KB KI U "
		     "TB TI");
		err = odf_map_open(v, map_kind(argv[0]), &m);
		if (err)
			die(err, "opening the map");
		odf_map_rec_init(&r, rec_kind(argv[3]), num(argv[4]),
				 num(argv[5]), num(argv[6]), num(argv[7]),
				 num(argv[8]));
		off = (num(argv[1]) + 1) * ODF_BLOCK_SIZE +
		      num(argv[2]) * ODF_MAP_REC_SIZE;
		err = odf_file_pwrite(v->fs, m.ino, off, &r, sizeof(r));
		if (!err) {
			m.hdr.mh_nrecords = ext2fs_cpu_to_le64(
				ext2fs_le64_to_cpu(m.hdr.mh_nrecords) + 1);
			odf_map_hdr_csum_set(&m.hdr);
			err = odf_file_pwrite(v->fs, m.ino, 0, &m.hdr,
					      sizeof(m.hdr));
		}
		if (err)
			die(err, "writing the map");
	} else if (!strcmp(cmd, "map-hdr-set")) {
		struct odf_map m;

		need(argc + 3, 6, "map-hdr-set fwd|rev FIELD VALUE");
		err = odf_map_open(v, map_kind(argv[0]), &m);
		if (err)
			die(err, "opening the map");
		if (!strcmp(argv[1], "nrecords"))
			m.hdr.mh_nrecords = ext2fs_cpu_to_le64(num(argv[2]));
		else if (!strcmp(argv[1], "ndeleted"))
			m.hdr.mh_ndeleted = ext2fs_cpu_to_le64(num(argv[2]));
		else if (!strcmp(argv[1], "nbuckets"))
			m.hdr.mh_nbuckets = ext2fs_cpu_to_le32(num(argv[2]));
		else
			die(EXT2_ET_INVALID_ARGUMENT, "choosing a field");
		odf_map_hdr_csum_set(&m.hdr);
		err = odf_file_pwrite(v->fs, m.ino, 0, &m.hdr, sizeof(m.hdr));
		if (err)
			die(err, "writing the map header");
	} else {
		fprintf(stderr, "%s: unknown command %s\n", prog, cmd);
		usage();
		odf_vol_close(v);
		return 2;
	}
	err = odf_vol_close(v);
	if (err)
		die(err, "closing the volume");
	return 0;
}
