// SPDX-License-Identifier: GPL-2.0
/*
 * pass3.c - the forward and reverse inode maps.
 *
 * Both maps are loaded, every record is verified on its own, and then
 * the maps are checked against each other.  The forward map is
 * authoritative (lookups use it); whatever one map lost is recreated
 * from the other, so a damaged record costs nothing as long as its
 * partner survives.  A map that needs any repair is rebuilt whole.
 */
#include <stdlib.h>
#include <string.h>
#include "odfck.h"

#define MAP_MAX_BYTES	(1ULL << 34)

struct mvec {
	int			kind;
	const char		*name;
	struct odf_map_rec	*r;
	unsigned char		*dead;
	size_t			n, cap;
	struct odf_map_header	hdr;
	int			hdr_bad;
	int			present;
	int			dirty;
	unsigned long long	deleted;
	unsigned char		*full;		/* per bucket: no EMPTY slot */
	__u32			nb;
	/* position of each record, to check reachability */
	__u32			*bucket;
};

struct scan_ctx {
	struct odfck_ctx	*ctx;
	struct mvec		*m;
	unsigned short		*used_slots;
	int			oom;
};

static unsigned rbranch(const struct odf_map_rec *r)
{
	return ext2fs_le16_to_cpu(r->mr_key_branch);
}

static __u64 rkey(const struct odf_map_rec *r)
{
	return ext2fs_le64_to_cpu(r->mr_key_ino);
}

static __u64 ruino(const struct odf_map_rec *r)
{
	return ext2fs_le64_to_cpu(r->mr_union_ino);
}

static unsigned tbranch(const struct odf_map_rec *r)
{
	return ext2fs_le16_to_cpu(r->mr_tgt_branch);
}

static __u64 tino(const struct odf_map_rec *r)
{
	return ext2fs_le64_to_cpu(r->mr_tgt_ino);
}

static int push(struct mvec *m, const struct odf_map_rec *r, __u32 bucket)
{
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 256;
		void *a = realloc(m->r, ncap * sizeof(*m->r));
		void *d, *b;

		if (!a)
			return -1;
		m->r = a;
		d = realloc(m->dead, ncap);
		if (!d)
			return -1;
		m->dead = d;
		b = realloc(m->bucket, ncap * sizeof(*m->bucket));
		if (!b)
			return -1;
		m->bucket = b;
		m->cap = ncap;
	}
	m->r[m->n] = *r;
	m->dead[m->n] = 0;
	m->bucket[m->n] = bucket;
	m->n++;
	return 0;
}

static void scan_cb(void *priv, __u32 bucket, unsigned slot,
		    const struct odf_map_rec *r, int bad)
{
	struct scan_ctx *sc = priv;
	struct problem_context pc;

	if (sc->used_slots)
		sc->used_slots[bucket]++;
	if (bad) {
		memset(&pc, 0, sizeof(pc));
		pc.str = sc->m->name;
		pc.num = bucket;
		pc.num2 = slot;
		pc.str2 = bad == ODF_BAD_CSUM ? "checksum mismatch" :
			  "invalid record";
		if (fix_problem(sc->ctx, PR_3_REC_BAD, &pc))
			sc->m->dirty = 1;
		return;
	}
	if (r->mr_state == ODF_MREC_DELETED) {
		sc->m->deleted++;
		return;
	}
	if (push(sc->m, r, bucket))
		sc->oom = 1;
}

static int load_map(struct odfck_ctx *ctx, struct mvec *m)
{
	ext2_ino_t ino = m->kind == ODF_MAP_FORWARD ? ctx->v->ino_fwd :
						     ctx->v->ino_rev;
	struct problem_context pc;
	struct scan_ctx sc;
	void *buf;
	size_t len;
	__u32 b;
	errcode_t err;

	memset(&pc, 0, sizeof(pc));
	pc.str = m->name;
	if (!ino) {
		if (ctx->v->ino_imap && fix_problem(ctx, PR_3_MAP_MISSING, &pc))
			m->dirty = 1;
		return 0;
	}
	m->present = 1;
	err = odf_file_read_all(ctx->v->fs, ino, MAP_MAX_BYTES, &buf, &len);
	if (err == EXT2_ET_FILE_TOO_BIG) {
		pc.num = MAP_MAX_BYTES;
		fix_problem(ctx, PR_3_MAP_SIZE, &pc);
		return FSCK_ERROR;
	}
	if (err) {
		odfck_com_err(ctx, err, "reading an inode map");
		return FSCK_ERROR;
	}
	memset(&sc, 0, sizeof(sc));
	sc.ctx = ctx;
	sc.m = m;
	if (len >= 2 * ODF_BLOCK_SIZE)
		sc.used_slots = calloc(len / ODF_BLOCK_SIZE, sizeof(short));
	m->nb = odf_map_scan(buf, len, m->kind, &m->hdr, &m->hdr_bad, scan_cb,
			     &sc);
	free(buf);
	if (sc.oom) {
		free(sc.used_slots);
		odfck_com_err(ctx, EXT2_ET_NO_MEMORY, "loading an inode map");
		return FSCK_ERROR;
	}
	m->full = calloc(m->nb ? m->nb : 1, 1);
	for (b = 0; b < m->nb && sc.used_slots && m->full; b++)
		m->full[b] = sc.used_slots[b] == ODF_MAP_RECS_PER_BUCKET;
	free(sc.used_slots);
	if (m->hdr_bad) {
		pc.str2 = odf_bad_str(m->hdr_bad);
		if (fix_problem(ctx, PR_3_MAP_HDR, &pc))
			m->dirty = 1;
	}
	return 0;
}

/* Would a lookup starting at the key's home bucket reach bucket b? */
static int reachable(struct mvec *m, const struct odf_map_rec *r, __u32 b)
{
	__u32 nb = m->nb, seed = ext2fs_le32_to_cpu(m->hdr.mh_hash_seed);
	__u32 i = odf_map_hash(seed, rbranch(r), rkey(r)) & (nb - 1);

	while (i != b) {
		if (!m->full[i])
			return 0;	/* a lookup stops here */
		i = (i + 1) & (nb - 1);
	}
	return 1;
}

static int cmp_key(const struct odf_map_rec *a, const struct odf_map_rec *b)
{
	if (rbranch(a) != rbranch(b))
		return rbranch(a) < rbranch(b) ? -1 : 1;
	if (rkey(a) != rkey(b))
		return rkey(a) < rkey(b) ? -1 : 1;
	return 0;
}

/* Sort key: live records by key, dead ones last. */
static int cmp_idx(const void *x, const void *y, void *priv)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	struct mvec *m = priv;

	if (m->dead[a] != m->dead[b])
		return m->dead[a] ? 1 : -1;
	return cmp_key(&m->r[a], &m->r[b]);
}

/* Index of the live record with key (branch, ino), or -1. */
static long find(struct mvec *m, const size_t *idx, size_t nlive,
		 unsigned branch, __u64 ino)
{
	size_t lo = 0, hi = nlive;
	struct odf_map_rec k;

	memset(&k, 0, sizeof(k));
	k.mr_key_branch = ext2fs_cpu_to_le16(branch);
	k.mr_key_ino = ext2fs_cpu_to_le64(ino);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_key(&m->r[idx[mid]], &k);

		if (!c)
			return (long)idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static size_t *sorted(struct mvec *m, size_t *nlive)
{
	size_t *idx = malloc((m->n ? m->n : 1) * sizeof(*idx)), i;

	if (!idx)
		return NULL;
	for (i = 0; i < m->n; i++)
		idx[i] = i;
	qsort_r(idx, m->n, sizeof(*idx), cmp_idx, m);
	for (*nlive = 0; *nlive < m->n && !m->dead[idx[*nlive]]; (*nlive)++)
		;
	return idx;
}

/* Per-map checks: branches, duplicates, reachability, counts. */
/*
 * An UPPER record whose origin cannot be right: the copy and its number
 * stay, only the origin (target branch and inode) is cleared.
 */
static void forget_origin(struct odfck_ctx *ctx, struct mvec *m, size_t i,
			  unsigned kb, int code)
{
	struct odf_map_rec *w = &m->r[i];
	struct problem_context pc;

	memset(&pc, 0, sizeof(pc));
	pc.num = tbranch(w);
	pc.num2 = tino(w);
	pc.num3 = kb;
	pc.ino = ruino(w);
	if (fix_problem(ctx, code, &pc)) {
		w->mr_tgt_branch = 0;
		w->mr_tgt_ino = 0;
		odf_map_rec_csum_set(w);
		m->dirty = 1;
	}
}

static void check_records(struct odfck_ctx *ctx, struct mvec *m)
{
	struct problem_context pc;
	size_t i, nlive, *idx;

	for (i = 0; i < m->n; i++) {
		const struct odf_map_rec *r = &m->r[i];
		unsigned kb = rbranch(r), tb = tbranch(r);
		unsigned bad = 0;
		int key_bad = 0;

		if (m->kind == ODF_MAP_FORWARD && !branch_known(ctx, kb)) {
			bad = kb;
			key_bad = 1;
		} else if (tb && !branch_known(ctx, tb)) {
			bad = tb;
		}
		if (!bad && r->mr_kind == ODF_MK_UPPER && tb &&
		    !odf_uino_is_alloc(ruino(r)) &&
		    ruino(r) != odf_uino_det(tb, tino(r))) {
			/* a copy keeps its origin's number: this origin
			 * cannot be right, the number is kept */
			forget_origin(ctx, m, i, kb, PR_3_ORIGIN_MISMATCH);
			continue;
		}
		if (!bad)
			continue;
		if (!key_bad && r->mr_kind == ODF_MK_UPPER) {
			/* the copy lives on: only its origin is gone */
			forget_origin(ctx, m, i, kb, PR_3_ORIGIN_NO_BRANCH);
			continue;
		}
		memset(&pc, 0, sizeof(pc));
		pc.str = m->name;
		pc.num = bad;
		pc.ino = ruino(r);
		if (fix_problem(ctx, PR_3_REC_NO_BRANCH, &pc)) {
			m->dead[i] = 1;
			m->dirty = 1;
		}
	}
	idx = sorted(m, &nlive);
	for (i = 1; idx && i < nlive; i++) {
		if (cmp_key(&m->r[idx[i - 1]], &m->r[idx[i]]))
			continue;
		memset(&pc, 0, sizeof(pc));
		pc.str = m->name;
		pc.num = rbranch(&m->r[idx[i]]);
		pc.num2 = rkey(&m->r[idx[i]]);
		if (fix_problem(ctx, PR_3_REC_DUP, &pc)) {
			m->dead[idx[i]] = 1;
			m->dirty = 1;
		}
	}
	free(idx);
	if (!m->present || m->hdr_bad || m->dirty)
		return;		/* being rebuilt anyway */
	for (i = 0; i < m->n; i++) {
		if (m->dead[i] || !m->full || reachable(m, &m->r[i],
							m->bucket[i]))
			continue;
		memset(&pc, 0, sizeof(pc));
		pc.str = m->name;
		pc.num = rbranch(&m->r[i]);
		pc.num2 = rkey(&m->r[i]);
		if (fix_problem(ctx, PR_3_REC_MISPLACED, &pc)) {
			m->dirty = 1;
			return;
		}
	}
	if (ext2fs_le64_to_cpu(m->hdr.mh_nrecords) != m->n ||
	    ext2fs_le64_to_cpu(m->hdr.mh_ndeleted) != m->deleted) {
		memset(&pc, 0, sizeof(pc));
		pc.str = m->name;
		pc.num = ext2fs_le64_to_cpu(m->hdr.mh_nrecords);
		pc.num2 = m->n;
		if (fix_problem(ctx, PR_3_MAP_COUNT, &pc))
			m->dirty = 1;
	}
}

static int add_rec(struct odfck_ctx *ctx, struct mvec *m,
		   const struct odf_map_rec *r)
{
	/* odfck never writes a record it would reject on the next run */
	if (odf_map_rec_verify(r, m->kind) != ODF_GOOD) {
		fprintf(stderr, "%s: internal error: refusing to write an "
			"invalid map record (kind %u, key %u/%llu)\n",
			ctx->prog, r->mr_kind, rbranch(r),
			(unsigned long long)rkey(r));
		return FSCK_ERROR;
	}
	if (push(m, r, 0)) {
		odfck_com_err(ctx, EXT2_ET_NO_MEMORY, "repairing a map");
		return FSCK_ERROR;
	}
	m->dirty = 1;
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	const __u64 *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 :
	       a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Live forward records sorted by union inode: pairs (uino, index). */
static __u64 (*by_uino(struct mvec *f, size_t *n))[2]
{
	__u64 (*u)[2] = malloc((f->n ? f->n : 1) * sizeof(*u));
	size_t i;

	*n = 0;
	if (!u)
		return NULL;
	for (i = 0; i < f->n; i++)
		if (!f->dead[i]) {
			u[*n][0] = ruino(&f->r[i]);
			u[*n][1] = i;
			(*n)++;
		}
	qsort(u, *n, sizeof(*u), cmp_u64);
	return u;
}

/* First position of uino in a by_uino() array (or n). */
static size_t uino_lower_bound(__u64 (*u)[2], size_t n, __u64 uino)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (u[mid][0] < uino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int is_owner(const struct odf_map_rec *r)
{
	return r->mr_kind == ODF_MK_UPPER || r->mr_kind == ODF_MK_BIGINO;
}

/*
 * A union inode has one owner.  When several records claim it, keep the
 * one the rest of the maps agree with: the target of the reverse record
 * first, then the copy a COPIED record points at; drop the others.
 */
static int resolve_owner_dups(struct odfck_ctx *ctx, struct mvec *f,
			      struct mvec *r)
{
	struct problem_context pc;
	size_t nu, i, j, g, end, rl, rn;
	__u64 (*u)[2] = by_uino(f, &nu);
	__u64 (*rv)[2] = by_uino(r, &rn);
	int st = 0;

	if (!u || !rv) {
		st = FSCK_ERROR;
		goto out;
	}
	for (g = 0; g < nu; g = end) {
		long best = -1;
		int best_score = -1, owners = 0;

		for (end = g; end < nu && u[end][0] == u[g][0]; end++)
			owners += is_owner(&f->r[u[end][1]]);
		if (owners < 2)
			continue;
		rl = uino_lower_bound(rv, rn, u[g][0]);
		for (i = g; i < end; i++) {
			const struct odf_map_rec *o = &f->r[u[i][1]];
			int score = 0;

			if (!is_owner(o))
				continue;
			if (rl < rn && rv[rl][0] == u[g][0] &&
			    tbranch(&r->r[rv[rl][1]]) == rbranch(o) &&
			    tino(&r->r[rv[rl][1]]) == rkey(o))
				score += 2;
			for (j = g; j < end; j++) {
				const struct odf_map_rec *c = &f->r[u[j][1]];

				if (c->mr_kind == ODF_MK_COPIED &&
				    tbranch(c) == rbranch(o) &&
				    tino(c) == rkey(o))
					score += 1;
			}
			if (score > best_score) {
				best_score = score;
				best = (long)u[i][1];
			}
		}
		for (i = g; i < end; i++) {
			const struct odf_map_rec *o = &f->r[u[i][1]];

			if (!is_owner(o) || (long)u[i][1] == best)
				continue;
			memset(&pc, 0, sizeof(pc));
			pc.ino = u[g][0];
			pc.num = rbranch(o);
			pc.num2 = rkey(o);
			if (fix_problem(ctx, PR_3_UINO_DUP, &pc)) {
				f->dead[u[i][1]] = 1;
				f->dirty = 1;
			}
		}
	}
out:
	free(u);
	free(rv);
	return st;
}

/* Reverse records whose forward partner is gone or disagrees. */
static int rev_to_fwd(struct odfck_ctx *ctx, struct mvec *f, struct mvec *r)
{
	struct problem_context pc;
	size_t i, j, nlive, nu, *idx = sorted(f, &nlive);
	__u64 (*u)[2] = by_uino(f, &nu);
	int st = 0;

	if (!idx || !u) {
		st = FSCK_ERROR;
		goto out;
	}
	for (i = 0; i < r->n; i++) {
		const struct odf_map_rec *rv = &r->r[i];
		__u64 uino = ruino(rv);
		size_t first = uino_lower_bound(u, nu, uino);
		long k, copied = -1;
		int owned = 0;

		if (r->dead[i])
			continue;
		k = find(f, idx, nlive, tbranch(rv), tino(rv));
		memset(&pc, 0, sizeof(pc));
		pc.ino = uino;
		pc.num = tbranch(rv);
		pc.num2 = tino(rv);
		if (k >= 0 && ruino(&f->r[k]) == uino)
			continue;
		if (k >= 0) {
			pc.ino2 = ruino(&f->r[k]);
			if (fix_problem(ctx, PR_3_REV_STALE, &pc)) {
				r->dead[i] = 1;
				r->dirty = 1;
			}
			continue;
		}
		for (j = first; j < nu && u[j][0] == uino; j++) {
			unsigned kind = f->r[u[j][1]].mr_kind;

			if (kind == ODF_MK_UPPER || kind == ODF_MK_BIGINO)
				owned = 1;
			/* an original's, not a copy copied again's (6.3) */
			else if (kind == ODF_MK_COPIED && copied < 0 &&
				 (odf_uino_is_alloc(uino) ||
				  uino == odf_uino_det(rbranch(&f->r[u[j][1]]),
						       rkey(&f->r[u[j][1]]))))
				copied = (long)u[j][1];
		}
		/* the number has an owner elsewhere: owners_to_rev fixes it */
		if (owned)
			continue;
		if (!odf_uino_is_alloc(uino) &&
		    uino == odf_uino_det(tbranch(rv), tino(rv))) {
			if (fix_problem(ctx, PR_3_REV_REDUNDANT, &pc)) {
				r->dead[i] = 1;
				r->dirty = 1;
			}
			continue;
		}
		if (fix_problem(ctx, PR_3_FWD_MISSING, &pc)) {
			struct odf_map_rec n;
			unsigned ob = 0;
			__u64 oi = 0;

			/* origin: a COPIED record with this number, or the
			 * lower object the deterministic number encodes */
			if (copied >= 0) {
				ob = rbranch(&f->r[copied]);
				oi = rkey(&f->r[copied]);
			} else if (!odf_uino_is_alloc(uino) &&
				   branch_known(ctx, odf_uino_branch(uino))) {
				ob = odf_uino_branch(uino);
				oi = uino & ODF_UINO_LOW_MASK;
			}
			if (ob || !odf_uino_is_alloc(uino))
				odf_map_rec_init(&n, ODF_MK_UPPER, tbranch(rv),
						 tino(rv), uino, ob, oi);
			else
				odf_map_rec_init(&n, ODF_MK_BIGINO, tbranch(rv),
						 tino(rv), uino, 0, 0);
			if (add_rec(ctx, f, &n)) {
				st = FSCK_ERROR;
				goto out;
			}
		}
	}
out:
	free(idx);
	free(u);
	return st;
}

/* Does a live owner (UPPER or BIGINO) hold this union inode? */
static int owned_by_other(struct mvec *f, __u64 uino)
{
	size_t i;

	/* rare path (a COPIED record without its copy): a scan is fine */
	for (i = 0; i < f->n; i++)
		if (!f->dead[i] && is_owner(&f->r[i]) &&
		    ruino(&f->r[i]) == uino)
			return 1;
	return 0;
}

/* Every COPIED record needs the UPPER record of its copy. */
static int copied_to_upper(struct odfck_ctx *ctx, struct mvec *f)
{
	struct problem_context pc;
	size_t i, nlive, n = f->n, *idx = sorted(f, &nlive);

	if (!idx)
		return FSCK_ERROR;
	for (i = 0; i < n; i++) {
		struct odf_map_rec *c = &f->r[i];
		long k;

		if (f->dead[i] || c->mr_kind != ODF_MK_COPIED)
			continue;
		k = find(f, idx, nlive, tbranch(c), tino(c));
		memset(&pc, 0, sizeof(pc));
		pc.num = rbranch(c);
		pc.num2 = rkey(c);
		pc.num3 = tbranch(c);
		pc.ino = ruino(c);
		if (k < 0 && owned_by_other(f, ruino(c))) {
			/* the number belongs to another object: this claim
			 * of a copy is stale */
			pc.ino2 = ruino(c);
			if (fix_problem(ctx, PR_3_COPY_BAD_TARGET, &pc)) {
				f->dead[i] = 1;
				f->dirty = 1;
			}
			continue;
		}
		/* a copy copied again whose new copy has no record (a
		 * crash before it was linked, or it is gone): the record
		 * keeps the first copy's number, nothing to recreate */
		if (k < 0 && !odf_uino_is_alloc(ruino(c)) &&
		    ruino(c) != odf_uino_det(rbranch(c), rkey(c)))
			continue;
		if (k < 0) {
			if (fix_problem(ctx, PR_3_UPPER_MISSING, &pc)) {
				struct odf_map_rec u;

				odf_map_rec_init(&u, ODF_MK_UPPER, tbranch(c),
						 tino(c), ruino(c), rbranch(c),
						 rkey(c));
				if (add_rec(ctx, f, &u)) {
					free(idx);
					return FSCK_ERROR;
				}
				/* later records may name it: look it up too */
				free(idx);
				idx = sorted(f, &nlive);
				if (!idx)
					return FSCK_ERROR;
			}
			continue;
		}
		/* the target must be an upper copy whose number this
		 * lower object can carry (its origin is this object) */
		if (f->r[k].mr_kind != ODF_MK_UPPER ||
		    (ruino(&f->r[k]) != ruino(c) &&
		     (tbranch(&f->r[k]) != rbranch(c) ||
		      tino(&f->r[k]) != rkey(c)))) {
			pc.ino2 = ruino(&f->r[k]);
			if (fix_problem(ctx, PR_3_COPY_BAD_TARGET, &pc)) {
				f->dead[i] = 1;
				f->dirty = 1;
			}
			continue;
		}
		if (ruino(&f->r[k]) != ruino(c)) {
			pc.ino2 = ruino(&f->r[k]);
			if (fix_problem(ctx, PR_3_COPY_MISMATCH, &pc)) {
				c->mr_union_ino = f->r[k].mr_union_ino;
				odf_map_rec_csum_set(c);
				f->dirty = 1;
			}
		}
	}
	free(idx);
	return 0;
}

/* An UPPER record that names its origin needs the origin's COPIED
 * record, or a second hard link to the lower file would not find the
 * copy. */
static int upper_to_copied(struct odfck_ctx *ctx, struct mvec *f)
{
	struct problem_context pc;
	size_t i, nlive, n = f->n, *idx = sorted(f, &nlive);

	if (!idx)
		return FSCK_ERROR;
	for (i = 0; i < n; i++) {
		const struct odf_map_rec *u = &f->r[i];
		struct odf_map_rec c;

		if (f->dead[i] || u->mr_kind != ODF_MK_UPPER || !tbranch(u) ||
		    !tino(u) || !branch_known(ctx, tbranch(u)) ||
		    find(f, idx, nlive, tbranch(u), tino(u)) >= 0)
			continue;
		memset(&pc, 0, sizeof(pc));
		pc.num = tbranch(u);
		pc.num2 = tino(u);
		pc.num3 = rbranch(u);
		pc.ino = ruino(u);
		if (!fix_problem(ctx, PR_3_COPIED_MISSING, &pc))
			continue;
		odf_map_rec_init(&c, ODF_MK_COPIED, tbranch(u), tino(u),
				 ruino(u), rbranch(u), rkey(u));
		if (add_rec(ctx, f, &c)) {
			free(idx);
			return FSCK_ERROR;
		}
	}
	free(idx);
	return 0;
}


/* Owners (UPPER and BIGINO records) and their reverse records. */
static int owners_to_rev(struct odfck_ctx *ctx, struct mvec *f, struct mvec *r)
{
	struct problem_context pc;
	__u64 (*own)[2] = malloc((f->n ? f->n : 1) * sizeof(*own));
	__u64 (*rv)[2] = malloc((r->n ? r->n : 1) * sizeof(*rv));
	size_t i, no = 0, nr = 0, nr0;

	if (!own || !rv) {
		free(own);
		free(rv);
		return FSCK_ERROR;
	}
	for (i = 0; i < f->n; i++)
		if (!f->dead[i] && (f->r[i].mr_kind == ODF_MK_UPPER ||
				    f->r[i].mr_kind == ODF_MK_BIGINO)) {
			own[no][0] = ruino(&f->r[i]);
			own[no][1] = i;
			no++;
		}
	qsort(own, no, sizeof(*own), cmp_u64);
	for (i = 0; i < r->n; i++)
		if (!r->dead[i]) {
			rv[nr][0] = ruino(&r->r[i]);
			rv[nr][1] = i;
			nr++;
		}
	qsort(rv, nr, sizeof(*rv), cmp_u64);
	nr0 = nr;
	for (i = 0; i < no; i++) {
		const struct odf_map_rec *o = &f->r[own[i][1]];
		size_t lo = 0, hi = nr0;

		if (f->dead[own[i][1]])
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (rv[mid][0] < own[i][0])
				lo = mid + 1;
			else
				hi = mid;
		}
		memset(&pc, 0, sizeof(pc));
		pc.ino = own[i][0];
		if (lo == nr0 || rv[lo][0] != own[i][0]) {
			pc.num = rbranch(o);
			pc.num2 = rkey(o);
			if (fix_problem(ctx, PR_3_REV_MISSING, &pc)) {
				struct odf_map_rec n;

				odf_map_rec_init(&n, ODF_MK_REVERSE, 0,
						 own[i][0], own[i][0],
						 rbranch(o), rkey(o));
				if (add_rec(ctx, r, &n))
					goto fail;
			}
			continue;
		}
		{
			struct odf_map_rec *x = &r->r[rv[lo][1]];
			char ino_str[24];

			if (tbranch(x) == rbranch(o) && tino(x) == rkey(o))
				continue;
			snprintf(ino_str, sizeof(ino_str), "%llu",
				 (unsigned long long)rkey(o));
			pc.num = tbranch(x);
			pc.num2 = tino(x);
			pc.num3 = rbranch(o);
			pc.str = ino_str;
			if (fix_problem(ctx, PR_3_REV_MISMATCH, &pc)) {
				/* the handle belonged to the wrong object */
				odf_map_rec_init(x, ODF_MK_REVERSE, 0,
						 own[i][0], own[i][0],
						 rbranch(o), rkey(o));
				r->dirty = 1;
			}
		}
	}
	free(own);
	free(rv);
	return 0;
fail:
	free(own);
	free(rv);
	return FSCK_ERROR;
}

static void check_next_ino(struct odfck_ctx *ctx, struct mvec *f,
			   struct mvec *r)
{
	struct problem_context pc;
	__u64 max = 0, next = ext2fs_le64_to_cpu(ctx->sb.s_next_ino);
	struct mvec *m[2] = { f, r };
	size_t i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < m[k]->n; i++) {
			__u64 u = ruino(&m[k]->r[i]);

			if (!m[k]->dead[i] && odf_uino_is_alloc(u) && u > max)
				max = u;
		}
	ctx->max_alloc_ino = max;
	if (next > max && next >= ODF_UINO_ALLOC_FIRST)
		return;
	memset(&pc, 0, sizeof(pc));
	pc.num = next;
	pc.num2 = max;
	if (fix_problem(ctx, PR_3_NEXT_INO, &pc)) {
		if (max < ODF_UINO_ALLOC_FIRST)
			max = ODF_UINO_ALLOC_FIRST - 1;
		ctx->sb.s_next_ino = ext2fs_cpu_to_le64(max + 1);
		ctx->sb_dirty = 1;
	}
}

static int rebuild(struct odfck_ctx *ctx, struct mvec *m)
{
	struct odf_map_rec *live = malloc((m->n ? m->n : 1) * sizeof(*live));
	size_t i, n = 0;
	__u32 nb = ODF_MAP_MIN_BUCKETS, seed;
	errcode_t err;

	if (!live)
		return FSCK_ERROR;
	for (i = 0; i < m->n; i++)
		if (!m->dead[i])
			live[n++] = m->r[i];
	if (m->present && !m->hdr_bad) {
		nb = ext2fs_le32_to_cpu(m->hdr.mh_nbuckets);
		seed = ext2fs_le32_to_cpu(m->hdr.mh_hash_seed);
	} else {
		seed = odf_map_default_seed(&ctx->sb, m->kind);
	}
	err = odf_map_create(ctx->v, m->kind, nb, seed, live, n);
	free(live);
	if (err) {
		odfck_com_err(ctx, err, "rebuilding an inode map");
		return FSCK_ERROR;
	}
	return 0;
}

/* Leftovers of a rebuild that did not reach its rename. */
static int check_tmp(struct odfck_ctx *ctx)
{
	struct odf_dirent *ents;
	size_t n, i;
	errcode_t err;
	size_t sl = strlen(ODF_TMP_SUFFIX);

	if (!ctx->v->ino_imap)
		return 0;
	err = odf_list_dir(ctx->v->fs, ctx->v->ino_imap, &ents, &n);
	if (err) {
		odfck_com_err(ctx, err, "reading /imap");
		return FSCK_ERROR;
	}
	for (i = 0; i < n; i++) {
		size_t l = strlen(ents[i].name);
		struct problem_context pc;

		if (l <= sl || strcmp(ents[i].name + l - sl, ODF_TMP_SUFFIX))
			continue;
		memset(&pc, 0, sizeof(pc));
		pc.str = ents[i].name;
		if (fix_problem(ctx, PR_3_TMP, &pc)) {
			err = odf_remove(ctx->v->fs, ctx->v->ino_imap,
					 ents[i].name);
			if (err) {
				odfck_com_err(ctx, err, "deleting a leftover");
				free(ents);
				return FSCK_ERROR;
			}
		}
	}
	free(ents);
	return 0;
}

static void free_mvec(struct mvec *m)
{
	free(m->r);
	free(m->dead);
	free(m->bucket);
	free(m->full);
}

int odfck_pass3(struct odfck_ctx *ctx)
{
	struct mvec f, r;
	size_t i;
	int st;

	memset(&f, 0, sizeof(f));
	memset(&r, 0, sizeof(r));
	f.kind = ODF_MAP_FORWARD;
	f.name = ODF_PATH_IMAP_FWD;
	r.kind = ODF_MAP_REVERSE;
	r.name = ODF_PATH_IMAP_REV;

	st = check_tmp(ctx);
	if (!st)
		st = load_map(ctx, &f);
	if (!st)
		st = load_map(ctx, &r);
	if (st)
		goto out;
	check_records(ctx, &f);
	check_records(ctx, &r);
	st = resolve_owner_dups(ctx, &f, &r);
	if (!st)
		st = rev_to_fwd(ctx, &f, &r);
	if (!st)
		st = copied_to_upper(ctx, &f);
	if (!st)
		st = upper_to_copied(ctx, &f);
	if (!st)
		st = owners_to_rev(ctx, &f, &r);
	if (st)
		goto out;
	check_next_ino(ctx, &f, &r);
	for (i = 0; i < f.n; i++)
		ctx->n_fwd += !f.dead[i];
	for (i = 0; i < r.n; i++)
		ctx->n_rev += !r.dead[i];
	if (odfck_readonly(ctx) || !ctx->v->ino_imap)
		goto out;
	if (f.dirty)
		st = rebuild(ctx, &f);
	if (!st && r.dirty)
		st = rebuild(ctx, &r);
	if (!st && ctx->sb_dirty && write_super(ctx)) {
		odfck_com_err(ctx, 0, "writing the ODF superblock");
		st = FSCK_ERROR;
	}
out:
	free_mvec(&f);
	free_mvec(&r);
	return st;
}
