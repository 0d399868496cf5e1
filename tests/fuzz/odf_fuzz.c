// SPDX-License-Identifier: GPL-2.0
/*
 * odf_fuzz - libFuzzer target for the parsers of tools/lib (codec.c):
 * everything odfck decodes from a possibly hostile volume.
 *
 * Byte 0 of the input picks the parser (low 3 bits: 0 superblock, 1/2
 * maps, 3 node record, 4 readdir state, 5 intent, 6 format 1 record and
 * intent, 7 node encoder round trip) and whether
 * checksums are enforced (bit 3: when set, checksum checks pass, so the
 * fuzzer reaches the field checks behind them); the rest is the data.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "libodf.h"

extern int odf_fuzz_ignore_csum;

struct acc {
	unsigned long long	n;
	unsigned long long	sum;
};

static void map_cb(void *priv, __u32 b, unsigned s,
		   const struct odf_map_rec *r, int bad)
{
	struct acc *a = priv;

	a->n++;
	a->sum += b + s + r->mr_kind + (unsigned)bad;
}

static void rd_cb(void *priv, const struct odf_rd_entry *e)
{
	struct acc *a = priv;

	/* touch every byte the parser claims to have filled */
	a->n++;
	a->sum += e->ordinal + e->name_len + e->ino;
	for (unsigned i = 0; i < e->name_len; i++)
		a->sum += (unsigned char)e->name[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct acc a = { 0, 0 };
	const uint8_t *p;
	size_t n;
	unsigned sel;

	if (size < 1)
		return 0;
	sel = data[0];
	p = data + 1;
	n = size - 1;
	odf_fuzz_ignore_csum = !!(sel & 8);

	switch (sel & 7) {
	case 0: {		/* superblock + branch table image */
		struct odf_super sb;
		struct odf_branch b;
		size_t off;

		memset(&sb, 0, sizeof(sb));
		memcpy(&sb, p, n < sizeof(sb) ? n : sizeof(sb));
		odf_sb_verify(&sb);
		for (off = 0; off + sizeof(b) <= n; off += sizeof(b)) {
			memcpy(&b, p + off, sizeof(b));
			odf_branch_verify(&b);
			odf_branch_unused(&b);
		}
		break;
	}
	case 1:
	case 2: {		/* forward / reverse map file image */
		struct odf_map_header h;
		int bad;

		if (n > (64U << 20))
			return 0;
		odf_map_scan(p, n, (sel & 7) == 1 ? ODF_MAP_FORWARD :
			     ODF_MAP_REVERSE, &h, &bad, map_cb, &a);
		break;
	}
	case 3: {		/* namespace record (format 2) and its entries */
		static struct odf_redir_ent e[ODF_NODE_MAX_REDIRECTS];
		struct odf_node_info ni;

		if (odf_node_decode(p, n, &ni, e, ODF_NODE_MAX_REDIRECTS) ==
		    ODF_GOOD)
			for (unsigned i = 0; i < ni.nredirect; i++)
				a.sum += e[i].branch +
					 (unsigned char)e[i].path[e[i].len - 1];
		break;
	}
	case 4: {		/* readdir state file image */
		struct odf_rd_info info;

		if (n > (64U << 20))
			return 0;
		odf_rd_check(p, n, &info, rd_cb, &a);
		break;
	}
	case 5: {		/* intent (format 2) */
		struct odf_intent_info in;

		if (odf_intent_decode(p, n, &in) == ODF_GOOD)
			a.sum += (unsigned char)in.src[in.src_len - 1] +
				 (unsigned char)in.dst[in.dst_len - 1] +
				 (unsigned char)in.src_hint[in.src_hint_len - 1] +
				 (unsigned char)in.dst_hint[in.dst_hint_len - 1];
		break;
	}
	case 6: {		/* format 1 record and intent (odfck --convert) */
		const char *r, *s, *d;
		size_t rl, sl, dl;
		unsigned type;
		__u64 seq, ino;
		__u32 gen;

		if (odf_node_v1_decode(p, n, &type, &r, &rl) == ODF_GOOD)
			for (size_t i = 0; i < rl; i++)
				a.sum += (unsigned char)r[i];
		if (odf_intent_v1_decode(p, n, &seq, &ino, &gen, &s, &sl, &d,
					 &dl) == ODF_GOOD)
			a.sum += (unsigned char)s[sl - 1] +
				 (unsigned char)d[dl - 1];
		break;
	}
	default: {		/* encoders must produce what decoders accept */
		static unsigned char buf[ODF_NODE_BUF_MAX];
		static struct odf_redir_ent e[8], out[8];
		struct odf_node_info ni, got;
		size_t len, off = 0;
		unsigned k;
		int bad;

		/* the input, cut at NULs, is up to 8 redirect paths */
		odf_fuzz_ignore_csum = 0;
		memset(&ni, 0, sizeof(ni));
		while (ni.nredirect < 8 && off < n) {
			const uint8_t *z = memchr(p + off, 0, n - off);
			size_t l = z ? (size_t)(z - (p + off)) : n - off;

			e[ni.nredirect].branch = 2 + ni.nredirect;
			e[ni.nredirect].path = (const char *)p + off;
			e[ni.nredirect].len = l;
			ni.nredirect++;
			off += l + 1;
		}
		ni.type = ni.nredirect ? ODF_NODE_OPAQUE | ODF_NODE_REDIRECT :
			  0;
		ni.uino = 5;
		len = odf_node_encode(buf, &ni, e);
		if (!len)
			break;		/* did not fit, or an empty path */
		bad = odf_node_decode(buf, len, &got, out, 8);
		if (bad != ODF_GOOD && bad != ODF_BAD_REDIRECT)
			abort();	/* encoder wrote a bad size/csum */
		if (bad == ODF_GOOD) {
			if (got.nredirect != ni.nredirect)
				abort();
			for (k = 0; k < ni.nredirect; k++)
				if (out[k].len != e[k].len ||
				    memcmp(out[k].path, e[k].path, e[k].len))
					abort();
		}
		break;
	}
	}
	return a.sum == 0xdeadbeefULL;	/* keep the accumulators alive */
}
