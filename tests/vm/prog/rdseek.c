// SPDX-License-Identifier: GPL-2.0
/*
 * rdseek: directory offsets of a union directory, checked across time.
 *
 * usage:
 *   rdseek record [--strict] DIR FILE
 *       Lists DIR with readdir(3) and writes FILE: one line per entry,
 *       "e OFFSET NAME", where OFFSET is telldir() just BEFORE readdir()
 *       returned NAME (so seekdir(OFFSET) must return NAME next), then
 *       "end OFFSET" (telldir() after the last entry) and "seek_end
 *       OFFSET" (lseek(fd, 0, SEEK_END) on a fresh fd) or "seek_end
 *       error ENAME".  Fails on a duplicate name or a missing . or ..;
 *       --strict also asserts the merged-directory offset contract:
 *       "." at 0, ".." at 1, offsets strictly increasing and < 2^31.
 *
 *   rdseek verify [--strict] [--seed N] [--samples K] [--expect NAMES]
 *                 [--no-seek-end] DIR FILE
 *       Checks DIR now against the listing recorded in FILE:
 *       - a full listing has no duplicates, . and .., and (--expect) holds
 *         exactly the names in the file NAMES (one a line, without . and
 *         ..); without --expect, a recorded name missing from the listing
 *         must be missing for lstat() too;
 *       - the recorded names that are still listed come in their recorded
 *         order, and every name not recorded ("new") comes after all of
 *         them (with --strict its d_off is past the recorded end);
 *       - seekdir(o) for K random recorded offsets (and the first, last
 *         and end ones): the next entries are those of the current
 *         listing starting at its first entry that is either new or a
 *         recorded name at or after o in the recorded order (so a removed
 *         name resumes at the next survivor, or at the new names, or at
 *         the end); the same for K offsets of the current listing;
 *       - lseek(SEEK_END) equals telldir() after the full listing, reading
 *         there returns nothing, SEEK_CUR reports it, negative results
 *         are EINVAL (--no-seek-end skips this);
 *       - rewinddir() then a second listing gives the same (offset, name)
 *         pairs;
 *       - d_ino == lstat st_ino and d_type matches for K names (all
 *         names when K is 0).
 *       Every failure is printed; exit 1 if any.
 *
 *   rdseek onebyone DIR
 *       Lists DIR with raw getdents64 and the smallest buffer that the
 *       next entry fits in (grown from 24 bytes in 8-byte steps; EINVAL
 *       means "too small"), so each call returns exactly one entry, and
 *       compares (d_off, d_ino, d_type, name) with readdir(3).
 *
 *   rdseek count [--slab] DIR
 *       Lists DIR with getdents64 (32 KiB buffer), fails on a duplicate
 *       name or a missing . or .., prints "entries N" (without . and ..),
 *       "seconds S".  --slab: also how much kernel memory the listing
 *       holds, from before the open to the end of the directory (the
 *       directory still open): "slab_kib D" (/proc/meminfo Slab),
 *       "sunreclaim_kib D" (its unreclaimable part, SUnreclaim),
 *       "kernel_kib D" (/proc/meminfo: what is neither free, page cache
 *       nor user memory), "slabinfo_kib D" (/proc/slabinfo, pages of
 *       every cache) with the five caches that grew most; and from before
 *       the open to after the close: "slab_closed_kib", "kernel_closed_kib".
 *       (That listing keeps nothing in user memory; a second one checks
 *       the names.)
 *
 *   rdseek mk DIR PREFIX WIDTH FROM TO [STEP]
 *   rdseek rm DIR PREFIX WIDTH FROM TO [STEP]
 *       Create (mknodat, empty regular files, mode 0644) or unlink the
 *       names PREFIX + FROM..TO (inclusive, zero-padded to WIDTH digits).
 *
 * Exit status: 0 ok, 1 check failed or error (message on stderr), 2 usage.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct ent {
	long long off;		/* telldir() before this entry */
	long long d_off;	/* the entry's d_off */
	unsigned long long ino;
	unsigned char type;
	char *name;
	long idx;		/* index in the recorded listing, -1 if new */
};

struct listing {
	struct ent *e;
	long n, cap;
	long long end;		/* telldir() after the last entry */
};

static const char *dir_path;
static long nfail;
static long seek_wrong;	/* seekdir checks that failed */

static const char *ename(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "?";
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdseek: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A failed check: printed, counted; the first 40 only are printed. */
static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	va_list ap;

	if (nfail++ >= 40)
		return;
	fprintf(stderr, "rdseek: %s: ", dir_path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

static void add(struct listing *l, const struct ent *e)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->e = xrealloc(l->e, l->cap * sizeof(*l->e));
	}
	l->e[l->n++] = *e;
}

static DIR *xopendir(const char *path)
{
	DIR *d = opendir(path);

	if (!d)
		die("opendir %s: %s (%s)", path, strerror(errno), ename(errno));
	return d;
}

/* The rest of the stream: telldir() before each readdir(). */
static void read_rest(DIR *d, struct listing *l, long max)
{
	for (;;) {
		struct ent e = { 0 };
		struct dirent64 *de;

		if (max >= 0 && l->n >= max)
			break;
		e.off = telldir(d);
		errno = 0;
		de = readdir64(d);
		if (!de) {
			if (errno)
				die("readdir %s: %s (%s)", dir_path, strerror(errno), ename(errno));
			l->end = e.off;
			break;
		}
		e.d_off = de->d_off;
		e.ino = de->d_ino;
		e.type = de->d_type;
		e.name = xstrdup(de->d_name);
		e.idx = -1;
		add(l, &e);
	}
}

static void list_dir(const char *path, struct listing *l)
{
	DIR *d = xopendir(path);

	memset(l, 0, sizeof(*l));
	read_rest(d, l, -1);
	closedir(d);
}

/* Sorted name index over a listing, for duplicates and lookups. */
static int ent_cmp(const void *a, const void *b)
{
	return strcmp((*(struct ent *const *)a)->name, (*(struct ent *const *)b)->name);
}

static struct ent **by_name(struct listing *l)
{
	struct ent **v = xrealloc(NULL, (l->n + 1) * sizeof(*v));
	long i;

	for (i = 0; i < l->n; i++)
		v[i] = &l->e[i];
	qsort(v, l->n, sizeof(*v), ent_cmp);
	return v;
}

static struct ent *find(struct ent **v, long n, const char *name)
{
	long lo = 0, hi = n;

	while (lo < hi) {
		long mid = (lo + hi) / 2;
		int c = strcmp(v[mid]->name, name);

		if (!c)
			return v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Checks every listing must pass; strict: the merged-directory offsets. */
static void check_listing(const char *what, struct listing *l, struct ent **v, int strict)
{
	long i;
	int dot = 0, dotdot = 0;

	for (i = 1; i < l->n; i++)
		if (!strcmp(v[i]->name, v[i - 1]->name))
			bad("%s: '%s' listed twice (offsets %lld and %lld)", what,
			    v[i]->name, v[i - 1]->off, v[i]->off);
	for (i = 0; i < l->n; i++) {
		dot |= !strcmp(l->e[i].name, ".");
		dotdot |= !strcmp(l->e[i].name, "..");
	}
	if (!dot || !dotdot)
		bad("%s: . or .. not listed", what);
	if (!strict)
		return;
	if (l->n < 2 || strcmp(l->e[0].name, ".") || l->e[0].off != 0 ||
	    strcmp(l->e[1].name, "..") || l->e[1].off != 1)
		bad("%s: does not start with . at offset 0 and .. at offset 1 (got '%s' at %lld, '%s' at %lld)",
		    what, l->n > 0 ? l->e[0].name : "", l->n > 0 ? l->e[0].off : -1,
		    l->n > 1 ? l->e[1].name : "", l->n > 1 ? l->e[1].off : -1);
	for (i = 1; i < l->n; i++)
		if (l->e[i].off <= l->e[i - 1].off) {
			bad("%s: offsets do not increase: '%s' at %lld after '%s' at %lld",
			    what, l->e[i].name, l->e[i].off, l->e[i - 1].name, l->e[i - 1].off);
			break;
		}
	if (l->n && (l->e[l->n - 1].off >= (1LL << 31) || l->end >= (1LL << 31) || l->end < 0))
		bad("%s: offsets beyond 2^31 (last %lld, end %lld)", what,
		    l->e[l->n - 1].off, l->end);
	if (l->n && l->end <= l->e[l->n - 1].off)
		bad("%s: end offset %lld is not after the last entry's %lld", what,
		    l->end, l->e[l->n - 1].off);
}

static long long seek_end(const char *path, int *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	off_t r;

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	r = lseek(fd, 0, SEEK_END);
	*err = r < 0 ? errno : 0;
	close(fd);
	return r;
}

static int cmd_record(int argc, char **argv)
{
	struct listing l;
	struct ent **v;
	int strict = 0, err;
	long long se;
	FILE *f;
	long i;

	if (argc > 0 && !strcmp(argv[0], "--strict"))
		strict = 1, argc--, argv++;
	if (argc != 2)
		return 2;
	dir_path = argv[0];
	list_dir(argv[0], &l);
	v = by_name(&l);
	check_listing("listing", &l, v, strict);
	for (i = 0; i < l.n; i++)
		if (strchr(l.e[i].name, '\n'))
			die("%s: a name with a newline cannot be recorded", argv[0]);
	se = seek_end(argv[0], &err);
	f = fopen(argv[1], "w");
	if (!f)
		die("%s: %s", argv[1], strerror(errno));
	for (i = 0; i < l.n; i++)
		fprintf(f, "e %lld %s\n", l.e[i].off, l.e[i].name);
	fprintf(f, "end %lld\n", l.end);
	if (err)
		fprintf(f, "seek_end error %s\n", ename(err));
	else
		fprintf(f, "seek_end %lld\n", se);
	if (fclose(f))
		die("%s: %s", argv[1], strerror(errno));
	if (err)
		printf("recorded %ld entries, end %lld, SEEK_END fails: %s\n", l.n, l.end, ename(err));
	else
		printf("recorded %ld entries, end %lld, SEEK_END %lld\n", l.n, l.end, se);
	return nfail ? 1 : 0;
}

static void load_record(const char *file, struct listing *r)
{
	FILE *f = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int have_end = 0;

	if (!f)
		die("%s: %s", file, strerror(errno));
	memset(r, 0, sizeof(*r));
	while ((len = getline(&line, &cap, f)) > 0) {
		struct ent e = { 0 };
		int n = 0;

		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (sscanf(line, "e %lld %n", &e.off, &n) == 1 && n > 0) {
			e.name = xstrdup(line + n);
			e.idx = r->n;
			add(r, &e);
		} else if (sscanf(line, "end %lld", &r->end) == 1) {
			have_end = 1;
		} else if (strncmp(line, "seek_end ", 9)) {
			die("%s: bad line '%s'", file, line);
		}
	}
	free(line);
	fclose(f);
	if (!have_end || r->n < 2)
		die("%s: not a complete record", file);
}

static char **load_names(const char *file, long *n)
{
	FILE *f = fopen(file, "r");
	char *line = NULL, **v = NULL;
	size_t cap = 0;
	ssize_t len;
	long vcap = 0;

	if (!f)
		die("%s: %s", file, strerror(errno));
	*n = 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!len)
			continue;
		if (*n == vcap) {
			vcap = vcap ? 2 * vcap : 1024;
			v = xrealloc(v, vcap * sizeof(*v));
		}
		v[(*n)++] = xstrdup(line);
	}
	free(line);
	fclose(f);
	return v;
}

static int strpcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *type_name(unsigned char t)
{
	switch (t) {
	case DT_REG: return "reg";
	case DT_DIR: return "dir";
	case DT_LNK: return "lnk";
	case DT_FIFO: return "fifo";
	case DT_SOCK: return "sock";
	case DT_CHR: return "chr";
	case DT_BLK: return "blk";
	default: return "unknown";
	}
}

static unsigned char mode_type(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return DT_REG;
	case S_IFDIR: return DT_DIR;
	case S_IFLNK: return DT_LNK;
	case S_IFIFO: return DT_FIFO;
	case S_IFSOCK: return DT_SOCK;
	case S_IFCHR: return DT_CHR;
	case S_IFBLK: return DT_BLK;
	default: return DT_UNKNOWN;
	}
}

/*
 * seekdir(off) on d, then read up to 3 entries; they must be cur->e[p..].
 * p == cur->n means the end of the directory.
 */
static void check_seek(DIR *d, struct listing *cur, long long off, long p, const char *why)
{
	struct listing got = { 0 };
	long i, want = cur->n - p < 3 ? cur->n - p : 3;

	seekdir(d, off);
	read_rest(d, &got, 3);
	if (got.n < want || (got.n > want && want < 3))
		goto wrong;
	for (i = 0; i < want; i++)
		if (strcmp(got.e[i].name, cur->e[p + i].name))
			goto wrong;
	goto out;
wrong:
	if (++seek_wrong > 10)
		goto out;
	bad("seekdir(%lld) (%s): expected %s%s%s%s%s, got %s%s%s%s%s", off, why,
	    want > 0 ? cur->e[p].name : "the end",
	    want > 1 ? " " : "", want > 1 ? cur->e[p + 1].name : "",
	    want > 2 ? " " : "", want > 2 ? cur->e[p + 2].name : "",
	    got.n > 0 ? got.e[0].name : "the end",
	    got.n > 1 ? " " : "", got.n > 1 ? got.e[1].name : "",
	    got.n > 2 ? " " : "", got.n > 2 ? got.e[2].name : "");
out:
	for (i = 0; i < got.n; i++)
		free(got.e[i].name);
	free(got.e);
}

static void check_seek_end(const char *path, long long end)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	char buf[4096];
	off_t r;
	long n;

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	r = lseek(fd, 0, SEEK_END);
	if (r < 0) {
		bad("lseek(0, SEEK_END): %s (%s), expected %lld (telldir after a full listing)",
		    strerror(errno), ename(errno), end);
	} else {
		if (r != end)
			bad("lseek(0, SEEK_END) = %lld, telldir after a full listing = %lld",
			    (long long)r, end);
		n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n != 0)
			bad("getdents64 after SEEK_END returned %ld%s%s", n,
			    n < 0 ? " errno " : " bytes (entries)", n < 0 ? ename(errno) : "");
		r = lseek(fd, 0, SEEK_CUR);
		if (r != end)
			bad("lseek(0, SEEK_CUR) after SEEK_END and a read = %lld, expected %lld",
			    (long long)r, end);
		errno = 0;
		r = lseek(fd, -end - 1, SEEK_END);
		if (r >= 0 || errno != EINVAL)
			bad("lseek(-end-1, SEEK_END) = %lld (%s), expected EINVAL",
			    (long long)r, ename(errno));
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		bad("lseek(0, SEEK_SET): %s", strerror(errno));
	errno = 0;
	r = lseek(fd, -1, SEEK_CUR);
	if (r >= 0 || errno != EINVAL)
		bad("lseek(-1, SEEK_CUR) at 0 = %lld (%s), expected EINVAL",
		    (long long)r, ename(errno));
	errno = 0;
	r = lseek(fd, -1, SEEK_SET);
	if (r >= 0 || errno != EINVAL)
		bad("lseek(-1, SEEK_SET) = %lld (%s), expected EINVAL",
		    (long long)r, ename(errno));
	/* SEEK_SET to the end, and SEEK_CUR forward to it. */
	r = lseek(fd, end, SEEK_SET);
	if (r != end) {
		bad("lseek(%lld, SEEK_SET) = %lld (%s)", end, (long long)r, ename(errno));
	} else {
		n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n != 0)
			bad("getdents64 at the end offset %lld returned %ld", end, n);
	}
	if (lseek(fd, 1, SEEK_SET) != 1 || lseek(fd, end - 1, SEEK_CUR) != end)
		bad("lseek(1, SEEK_SET) then lseek(%lld, SEEK_CUR) does not give %lld (%s)",
		    end - 1, end, ename(errno));
	close(fd);
}

static unsigned long long rnd_state;
static unsigned long long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static int cmd_verify(int argc, char **argv)
{
	struct listing r, cur, again;
	struct ent **rv, **cv;
	char **expect = NULL;
	long nexpect = 0, samples = 200, i, p, last_rec = -1, first_new = -1;
	long long seed = 1;
	int strict = 0, do_end = 1;
	DIR *d;

	for (; argc > 0 && !strncmp(argv[0], "--", 2); argc--, argv++) {
		if (!strcmp(argv[0], "--strict"))
			strict = 1;
		else if (!strcmp(argv[0], "--no-seek-end"))
			do_end = 0;
		else if (!strcmp(argv[0], "--seed") && argc > 1)
			seed = strtoll(argv[1], NULL, 0), argc--, argv++;
		else if (!strcmp(argv[0], "--samples") && argc > 1)
			samples = strtol(argv[1], NULL, 0), argc--, argv++;
		else if (!strcmp(argv[0], "--expect") && argc > 1)
			expect = load_names(argv[1], &nexpect), argc--, argv++;
		else
			return 2;
	}
	if (argc != 2)
		return 2;
	dir_path = argv[0];
	rnd_state = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)seed;
	rnd();
	load_record(argv[1], &r);
	rv = by_name(&r);

	/* The full listing now, in one stream that rewinddir then repeats. */
	d = xopendir(argv[0]);
	memset(&cur, 0, sizeof(cur));
	read_rest(d, &cur, -1);
	cv = by_name(&cur);
	check_listing("listing", &cur, cv, strict);
	for (i = 0; i < cur.n; i++) {
		struct ent *re = find(rv, r.n, cur.e[i].name);

		cur.e[i].idx = re ? re->idx : -1;
	}

	/* Which names the directory holds. */
	if (expect) {
		long miss = 0, extra = 0;

		qsort(expect, nexpect, sizeof(*expect), strpcmp);
		for (i = 0; i < nexpect; i++)
			if (!find(cv, cur.n, expect[i]) && miss++ < 10)
				bad("'%s' is not listed", expect[i]);
		for (i = 0; i < cur.n; i++) {
			const char *n = cur.e[i].name;

			if (strcmp(n, ".") && strcmp(n, "..") &&
			    !bsearch(&n, expect, nexpect, sizeof(*expect), strpcmp) &&
			    extra++ < 10)
				bad("'%s' is listed but should not exist", n);
		}
		if (miss || extra)
			bad("%ld names missing, %ld unexpected (of %ld expected)", miss, extra, nexpect);
	} else {
		for (i = 0; i < r.n; i++) {
			char path[4096];
			struct stat st;

			if (find(cv, cur.n, r.e[i].name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[0], r.e[i].name);
			if (!lstat(path, &st))
				bad("'%s' exists (lstat) but is not listed", r.e[i].name);
		}
	}

	/*
	 * Recorded names keep their order; new names come after them all.
	 * (Each kind of problem is printed 3 times at most, then counted.)
	 */
	{
		long early = 0, after_new = 0, reordered = 0;

		for (i = 0; i < cur.n; i++) {
			if (cur.e[i].idx < 0) {
				if (first_new < 0)
					first_new = i;
				/*
				 * Its own offset is not visible (telldir()
				 * before it is the position after the entry
				 * listed before it), its d_off (the position
				 * after it) is: that must be past the end.
				 */
				if (strict && cur.e[i].d_off <= r.end && early++ < 3)
					bad("new name '%s' has d_off %lld, not after the recorded end %lld",
					    cur.e[i].name, cur.e[i].d_off, r.end);
				continue;
			}
			if (first_new >= 0 && after_new++ < 3)
				bad("recorded name '%s' listed after the new name '%s'",
				    cur.e[i].name, cur.e[first_new].name);
			if (last_rec >= 0 && cur.e[i].idx < cur.e[last_rec].idx &&
			    reordered++ < 3)
				bad("recorded order changed: '%s' (recorded %ld) after '%s' (recorded %ld)",
				    cur.e[i].name, cur.e[i].idx, cur.e[last_rec].name,
				    cur.e[last_rec].idx);
			last_rec = i;
		}
		if (early > 3 || after_new > 3 || reordered > 3)
			bad("in all: %ld new names not past the recorded end, %ld recorded names after a new one, %ld out of recorded order",
			    early, after_new, reordered);
	}

	/*
	 * seekdir to recorded offsets: the first, ., .., the last, the end,
	 * and random ones.  Expected: the first current entry that is new or
	 * recorded at or after that index.
	 */
	for (i = 0; i < samples + 4; i++) {
		long k;

		if (i == 0 || i == 1)
			k = i;
		else if (i == 2)
			k = r.n - 1;
		else if (i == 3)
			k = r.n;	/* the recorded end */
		else
			k = rnd() % r.n;
		for (p = 0; p < cur.n; p++)
			if (cur.e[p].idx < 0 || cur.e[p].idx >= k)
				break;
		{
			char why[600];

			if (k < r.n)
				snprintf(why, sizeof(why), "recorded before '%.500s'%s",
					 r.e[k].name, find(cv, cur.n, r.e[k].name) ? "" : ", now gone");
			else
				snprintf(why, sizeof(why), "the recorded end");
			check_seek(d, &cur, k < r.n ? r.e[k].off : r.end, p, why);
		}
	}
	/* seekdir to offsets of the current listing. */
	for (i = 0; i < samples; i++) {
		char why[600];

		p = rnd() % cur.n;
		snprintf(why, sizeof(why), "listed now before '%.500s'", cur.e[p].name);
		check_seek(d, &cur, cur.e[p].off, p, why);
	}
	/* A seek to the end of the current listing finds nothing. */
	check_seek(d, &cur, cur.end, cur.n, "the end now");
	if (seek_wrong > 10)
		bad("in all %ld of %ld seekdir checks failed", seek_wrong, 2 * samples + 5);

	/* rewinddir: the same (offset, name) pairs again. */
	rewinddir(d);
	memset(&again, 0, sizeof(again));
	read_rest(d, &again, -1);
	if (again.n != cur.n || again.end != cur.end) {
		bad("after rewinddir: %ld entries ending at %lld, first listing %ld ending at %lld",
		    again.n, again.end, cur.n, cur.end);
	} else {
		for (i = 0; i < cur.n; i++)
			if (strcmp(again.e[i].name, cur.e[i].name) || again.e[i].off != cur.e[i].off) {
				bad("after rewinddir entry %ld is '%s' at %lld, first listing '%s' at %lld",
				    i, again.e[i].name, again.e[i].off, cur.e[i].name, cur.e[i].off);
				break;
			}
	}
	closedir(d);

	if (do_end)
		check_seek_end(argv[0], cur.end);

	/* d_ino and d_type against lstat. */
	for (i = 0; i < (samples && samples < cur.n ? samples : cur.n); i++) {
		struct ent *e;
		char path[4096];
		struct stat st;

		e = samples && samples < cur.n ? &cur.e[rnd() % cur.n] : &cur.e[i];
		if (!strcmp(e->name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[0], e->name);
		if (lstat(path, &st)) {
			bad("'%s' is listed but lstat fails: %s", e->name, ename(errno));
			continue;
		}
		if (st.st_ino != e->ino)
			bad("'%s': d_ino %llu, st_ino %llu", e->name, e->ino,
			    (unsigned long long)st.st_ino);
		if (e->type != mode_type(st.st_mode))
			bad("'%s': d_type %s, lstat says %s", e->name, type_name(e->type),
			    type_name(mode_type(st.st_mode)));
	}

	{
		long survivors = 0, gone = 0, nnew = 0;

		for (i = 0; i < cur.n; i++)
			cur.e[i].idx < 0 ? nnew++ : survivors++;
		gone = r.n - survivors;
		printf("verified %s: %ld entries (%ld recorded still there, %ld gone, %ld new), end %lld (recorded %lld), %ld problems\n",
		       argv[0], cur.n, survivors, gone, nnew, cur.end, r.end, nfail);
	}
	return nfail ? 1 : 0;
}

static int cmd_onebyone(int argc, char **argv)
{
	struct listing a;
	char buf[512];
	long i = 0, calls = 0, einval = 0;
	int fd;

	if (argc != 1)
		return 2;
	dir_path = argv[0];
	list_dir(argv[0], &a);
	fd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die("open %s: %s", argv[0], strerror(errno));
	for (;;) {
		struct linux_dirent64 *de = (void *)buf;
		size_t size = 24, need;
		long n;

		for (;;) {
			n = syscall(SYS_getdents64, fd, buf, size);
			calls++;
			if (n >= 0 || errno != EINVAL || size >= sizeof(buf))
				break;
			einval++;
			size += 8;
		}
		if (n < 0) {
			bad("getdents64 with %zu bytes: %s", size, ename(errno));
			break;
		}
		if (n == 0)
			break;
		need = (offsetof(struct linux_dirent64, d_name) + strlen(de->d_name) + 1 + 7) & ~7UL;
		if (n != de->d_reclen || (size_t)n != size || need != size)
			bad("getdents64 with %zu bytes returned %ld bytes for '%s' (record %u bytes, needs %zu)",
			    size, n, de->d_name, de->d_reclen, need);
		if (i >= a.n) {
			bad("one entry per call lists more than readdir: '%s'", de->d_name);
		} else if (strcmp(de->d_name, a.e[i].name) || de->d_ino != a.e[i].ino ||
			   de->d_type != a.e[i].type || de->d_off != a.e[i].d_off) {
			bad("entry %ld: one per call gives '%s' ino %llu %s d_off %lld, readdir '%s' ino %llu %s d_off %lld",
			    i, de->d_name, (unsigned long long)de->d_ino, type_name(de->d_type),
			    (long long)de->d_off, a.e[i].name, a.e[i].ino, type_name(a.e[i].type),
			    a.e[i].d_off);
		}
		i++;
		if (nfail > 40)
			break;
	}
	if (i != a.n)
		bad("one entry per call listed %ld entries, readdir %ld", i, a.n);
	close(fd);
	printf("one by one %s: %ld entries, %ld calls (%ld EINVAL for a too small buffer), %ld problems\n",
	       argv[0], i, calls, einval, nfail);
	return nfail ? 1 : 0;
}

/*
 * Kernel memory from /proc/meminfo, in KiB: "Slab:", and everything the
 * kernel holds outside the page cache and user memory (MemTotal -
 * MemFree - Buffers - Cached - SwapCached - AnonPages - PageTables),
 * which also sees kmalloc'ed blocks too large for a slab and vmalloc.
 */
struct kmem {
	long slab, sunreclaim, other;
};

static struct kmem meminfo(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	long total = -1, fr = -1, buffers = -1, cached = -1, swapc = -1, anon = -1,
	     pt = -1, v;
	struct kmem k = { -1, -1, 0 };
	char line[256], key[64];

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %ld", key, &v) != 2)
			continue;
		if (!strcmp(key, "Slab"))
			k.slab = v;
		else if (!strcmp(key, "SUnreclaim"))
			k.sunreclaim = v;
		else if (!strcmp(key, "MemTotal"))
			total = v;
		else if (!strcmp(key, "MemFree"))
			fr = v;
		else if (!strcmp(key, "Buffers"))
			buffers = v;
		else if (!strcmp(key, "Cached"))
			cached = v;
		else if (!strcmp(key, "SwapCached"))
			swapc = v;
		else if (!strcmp(key, "AnonPages"))
			anon = v;
		else if (!strcmp(key, "PageTables"))
			pt = v;
	}
	fclose(f);
	if (k.slab < 0 || k.sunreclaim < 0 || total < 0 || fr < 0 || buffers < 0 || cached < 0 || swapc < 0 ||
	    anon < 0 || pt < 0)
		die("/proc/meminfo lacks Slab, SUnreclaim, MemTotal, MemFree, Buffers, Cached, SwapCached, AnonPages or PageTables");
	k.other = total - fr - buffers - cached - swapc - anon - pt;
	return k;
}

struct slabc {
	char name[64];
	long long before, after;
};

static int slabinfo(struct slabc **v, int *n, int after)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		long active, num, objsize, perslab, pages, limit, batch, shared, slabs,
		     aslabs, sharedavail;
		long long bytes;
		int i;

		if (sscanf(line, "%63s %ld %ld %ld %ld %ld : tunables %ld %ld %ld : slabdata %ld %ld %ld",
			   name, &active, &num, &objsize, &perslab, &pages, &limit, &batch,
			   &shared, &aslabs, &slabs, &sharedavail) != 12)
			continue;
		bytes = (long long)slabs * pages * 4096;
		for (i = 0; i < *n; i++)
			if (!strcmp((*v)[i].name, name))
				break;
		if (i == *n) {
			*v = xrealloc(*v, (*n + 1) * sizeof(**v));
			memset(&(*v)[i], 0, sizeof(**v));
			strcpy((*v)[i].name, name);
			(*n)++;
		}
		if (after)
			(*v)[i].after = bytes;
		else
			(*v)[i].before = bytes;
	}
	fclose(f);
	return 0;
}

static int growth_cmp(const void *a, const void *b)
{
	const struct slabc *x = a, *y = b;
	long long gx = x->after - x->before, gy = y->after - y->before;

	return gx < gy ? 1 : gx > gy ? -1 : 0;
}

/* getdents64 through DIR; each entry to l (if not NULL); count of entries. */
static long getdents_all(const char *path, int fd, struct listing *l)
{
	static char buf[32768];
	long entries = 0;

	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf)), pos;

		if (n < 0)
			die("getdents64 %s: %s (%s)", path, strerror(errno), ename(errno));
		if (n == 0)
			break;
		for (pos = 0; pos < n; entries++) {
			struct linux_dirent64 *de = (void *)(buf + pos);

			if (l) {
				struct ent e = { 0 };

				e.name = xstrdup(de->d_name);
				e.off = de->d_off;
				add(l, &e);
			}
			pos += de->d_reclen;
		}
	}
	return entries;
}

static int cmd_count(int argc, char **argv)
{
	struct listing l = { 0 };
	struct ent **v;
	struct timespec t0, t1;
	struct slabc *sc = NULL;
	struct kmem k0 = { 0 }, k1 = { 0 }, k2 = { 0 };
	int slab = 0, nsc = 0, fd, have_si = 0;
	long i, names = 0, first;

	if (argc > 0 && !strcmp(argv[0], "--slab"))
		slab = 1, argc--, argv++;
	if (argc != 1)
		return 2;
	dir_path = argv[0];
	/*
	 * The measured listing keeps nothing in user memory; the kernel's
	 * memory is read before the open and at the end of the directory,
	 * with the directory still open (what a listing holds), and after
	 * the close.
	 */
	if (slab) {
		have_si = !slabinfo(&sc, &nsc, 0);
		k0 = meminfo();
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die("open %s: %s", argv[0], strerror(errno));
	first = getdents_all(argv[0], fd, slab ? NULL : &l);
	if (slab) {
		k1 = meminfo();
		if (have_si)
			slabinfo(&sc, &nsc, 1);
	}
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (slab) {
		k2 = meminfo();
		/* Again, keeping the names, for the duplicates. */
		fd = open(argv[0], O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			die("open %s: %s", argv[0], strerror(errno));
		getdents_all(argv[0], fd, &l);
		close(fd);
		if (l.n != first)
			bad("a second listing has %ld entries, the first %ld", l.n, first);
	}
	v = by_name(&l);
	check_listing("listing", &l, v, 0);
	for (i = 0; i < l.n; i++)
		names += strcmp(l.e[i].name, ".") && strcmp(l.e[i].name, "..");
	printf("entries %ld\n", names);
	printf("seconds %.1f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (slab) {
		long long tb = 0, ta = 0;

		printf("slab_kib %ld\n", k1.slab - k0.slab);
		printf("sunreclaim_kib %ld\n", k1.sunreclaim - k0.sunreclaim);
		printf("kernel_kib %ld\n", k1.other - k0.other);
		printf("slab_closed_kib %ld\n", k2.slab - k0.slab);
		printf("kernel_closed_kib %ld\n", k2.other - k0.other);
		if (have_si) {
			for (i = 0; i < nsc; i++)
				tb += sc[i].before, ta += sc[i].after;
			printf("slabinfo_kib %lld\n", (ta - tb) / 1024);
			qsort(sc, nsc, sizeof(*sc), growth_cmp);
			for (i = 0; i < 5 && i < nsc; i++)
				printf("slab_grew %s %lld KiB\n", sc[i].name,
				       (sc[i].after - sc[i].before) / 1024);
		}
	}
	return nfail ? 1 : 0;
}

static int cmd_mkrm(int rm, int argc, char **argv)
{
	long from, to, step = 1, i;
	int width, dfd;
	char name[300];

	if (argc != 5 && argc != 6)
		return 2;
	width = atoi(argv[2]);
	from = strtol(argv[3], NULL, 0);
	to = strtol(argv[4], NULL, 0);
	if (argc == 6)
		step = strtol(argv[5], NULL, 0);
	if (step < 1 || width < 0 || width > 20 || strlen(argv[1]) > 200)
		return 2;
	dfd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die("open %s: %s", argv[0], strerror(errno));
	for (i = from; i <= to; i += step) {
		snprintf(name, sizeof(name), "%s%0*ld", argv[1], width, i);
		if (rm ? unlinkat(dfd, name, 0) : mknodat(dfd, name, S_IFREG | 0644, 0))
			die("%s %s/%s: %s (%s)", rm ? "unlink" : "mknod", argv[0], name,
			    strerror(errno), ename(errno));
	}
	close(dfd);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2) {
		if (!strcmp(argv[1], "record"))
			rc = cmd_record(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "verify"))
			rc = cmd_verify(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "onebyone"))
			rc = cmd_onebyone(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "count"))
			rc = cmd_count(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "mk"))
			rc = cmd_mkrm(0, argc - 2, argv + 2);
		else if (!strcmp(argv[1], "rm"))
			rc = cmd_mkrm(1, argc - 2, argv + 2);
	}
	if (rc == 2)
		fprintf(stderr, "usage: rdseek record|verify|onebyone|count|mk|rm ... (see the comment at the top of rdseek.c)\n");
	if (rc == 1 && nfail)
		fprintf(stderr, "rdseek: %s: %ld problem%s\n", dir_path, nfail, nfail == 1 ? "" : "s");
	return rc;
}
