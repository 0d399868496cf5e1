// SPDX-License-Identifier: GPL-2.0
/*
 * odf_fuzz - libFuzzer target for the parsers of tools/lib (codec.c):
 * everything odfck decodes from a possibly hostile volume.
 *
 * Byte 0 of the input picks the parser (low 3 bits) and whether
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
	case 3: {		/* namespace record */
		const char *r;
		size_t rl;
		unsigned type;

		if (odf_node_decode(p, n, &type, &r, &rl) == ODF_GOOD)
			for (size_t i = 0; i < rl; i++)
				a.sum += (unsigned char)r[i];
		break;
	}
	case 4: {		/* readdir state file image */
		struct odf_rd_info info;

		if (n > (64U << 20))
			return 0;
		odf_rd_check(p, n, &info, rd_cb, &a);
		break;
	}
	case 5: {		/* intent */
		const char *s, *d;
		size_t sl, dl;
		unsigned op;
		__u64 seq;

		if (odf_intent_decode(p, n, &op, &seq, &s, &sl, &d, &dl) ==
		    ODF_GOOD)
			a.sum += (unsigned char)s[sl - 1] +
				 (unsigned char)d[dl - 1];
		break;
	}
	default: {		/* encoders must produce what decoders accept */
		unsigned char buf[ODF_NODE_BUF_MAX];
		char path[ODF_REDIRECT_MAX + 1];
		const char *r;
		size_t len, rl, pl = n < ODF_REDIRECT_MAX ? n : ODF_REDIRECT_MAX;
		unsigned type;
		int bad;

		odf_fuzz_ignore_csum = 0;
		memcpy(path, p, pl);
		path[pl] = 0;
		len = odf_node_encode(buf, ODF_NODE_REDIRECT, 1, path,
				      strlen(path));
		bad = odf_node_decode(buf, len, &type, &r, &rl);
		if (bad != ODF_GOOD && bad != ODF_BAD_FIELD)
			abort();	/* encoder wrote a bad size/csum */
		if (bad == ODF_GOOD && (rl != strlen(path) ||
					memcmp(r, path, rl)))
			abort();
		break;
	}
	}
	return a.sum == 0xdeadbeefULL;	/* keep the accumulators alive */
}
