// SPDX-License-Identifier: GPL-2.0
/*
 * unionstress: several processes changing one union at random, each
 * checking every result against a model of what a POSIX file system
 * must answer.
 *
 * usage: unionstress run DIR NPROC SECONDS SEED MANIFEST
 *        unionstress verify DIR NPROC MANIFEST
 *
 * run: DIR holds w0 .. w<NPROC-1> and shared/ (the test makes them,
 * through the branches).  Worker i owns DIR/wi: it reads the tree into
 * its model (names, types, contents, modes, inode numbers; names with
 * one st_ino are one inode), then until SECONDS have passed does random
 * create, write, truncate, read, unlink, mkdir, rmdir, rename (plain,
 * RENAME_NOREPLACE, RENAME_EXCHANGE), symlink, link, chmod, stat, each
 * with the result and errno the model predicts, and every fourth
 * operation the same kinds in DIR/shared, which all workers race on,
 * where only the usual errnos (ENOENT EEXIST ENOTEMPTY ENOTDIR EISDIR
 * EINVAL) are allowed.  At the end each worker compares its tree with
 * the model (readdir: each name once, d_type, d_ino == st_ino; lstat:
 * type, mode, st_ino; contents; symlink targets) and writes it to
 * MANIFEST.i.  Every call and its result go to MANIFEST.trace.i (the
 * last line says what failed).  Prints the operation counts.
 * verify: the same comparison against the manifests (after a remount),
 * and the readdir checks of DIR/shared.
 * Exit 0 when everything matched, 1 otherwise (the reasons on stdout).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE 2
#endif

#define MAXE 600		/* entries per worker */
#define MAXI 600		/* inodes per worker */
#define PATHMAX 200
#define MAXDATA 16384
#define NNAMES 12		/* n0 .. n11 */

enum op { OP_CREATE, OP_WRITE, OP_TRUNC, OP_READ, OP_UNLINK, OP_MKDIR,
	  OP_RMDIR, OP_RENAME, OP_SYMLINK, OP_LINK, OP_CHMOD, OP_STAT, NOPS };
static const char *op_names[NOPS] = { "create", "write", "truncate", "read",
	"unlink", "mkdir", "rmdir", "rename", "symlink", "link", "chmod", "stat" };

struct inode {
	int used, nlink;
	char type;		/* f d l */
	unsigned mode;
	ino_t ino;
	size_t len;
	unsigned char *data;
	char target[64];
};
struct ent {
	int used, inode;
	char path[PATHMAX];
};
struct counts {
	long ops[NOPS], shared_ops, failed;
};

static struct inode inodes[MAXI];
static struct ent ents[MAXE];
static int root_fd;		/* the worker's directory */
static const char *root_name;
static uint64_t rng;
static struct counts *counts;	/* shared with the parent */
static int worker;
static FILE *trace;		/* MANIFEST.trace.i: every call and its result */

static void tracef(const char *fmt, ...)
{
	va_list ap;

	if (!trace)
		return;
	va_start(ap, fmt);
	vfprintf(trace, fmt, ap);
	va_end(ap);
	fputc('\n', trace);
}

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static unsigned rn(unsigned n) { return rnd() % n; }

static const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";

	return n ? n : "E?";
}

static void die(const char *fmt, ...)
{
	va_list ap;

	printf("unionstress: worker %d: ", worker);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (trace) {
		fprintf(trace, "FAILED: ");
		va_start(ap, fmt);
		vfprintf(trace, fmt, ap);
		va_end(ap);
		fprintf(trace, "\n");
		fflush(trace);
	}
	if (counts && worker >= 0)
		counts[worker].failed++;
	_exit(1);
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

/* ---- the model ---- */

static int find(const char *path)
{
	int i;

	for (i = 0; i < MAXE; i++)
		if (ents[i].used && !strcmp(ents[i].path, path))
			return i;
	return -1;
}

static int new_inode(char type)
{
	int i;

	for (i = 0; i < MAXI; i++)
		if (!inodes[i].used) {
			memset(&inodes[i], 0, sizeof(inodes[i]));
			inodes[i].used = 1;
			inodes[i].type = type;
			return i;
		}
	die("model full (inodes)");
	return -1;
}

static int add_ent(const char *path, int ino)
{
	int i;

	for (i = 0; i < MAXE; i++)
		if (!ents[i].used) {
			ents[i].used = 1;
			ents[i].inode = ino;
			snprintf(ents[i].path, PATHMAX, "%s", path);
			inodes[ino].nlink++;
			return i;
		}
	die("model full (entries)");
	return -1;
}

static void drop_ent(int e)
{
	struct inode *in = &inodes[ents[e].inode];

	ents[e].used = 0;
	if (--in->nlink == 0) {
		free(in->data);
		in->used = 0;
	}
}

static int nents(void)
{
	int i, n = 0;

	for (i = 0; i < MAXE; i++)
		n += ents[i].used;
	return n;
}

static char type_of(int e) { return e < 0 ? 0 : inodes[ents[e].inode].type; }

/* Is a a strict ancestor of b? */
static int ancestor(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strncmp(a, b, n) && b[n] == '/';
}

static int dir_empty(const char *path)
{
	int i;

	for (i = 0; i < MAXE; i++)
		if (ents[i].used && ancestor(path, ents[i].path))
			return 0;
	return 1;
}

/* What resolving the parent of path gives: 0, ENOENT or ENOTDIR. */
static int parent_err(const char *path)
{
	char buf[PATHMAX];
	char *s;
	int e;

	snprintf(buf, sizeof(buf), "%s", path);
	for (s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		e = find(buf);
		*s = '/';
		if (e < 0)
			return ENOENT;
		if (type_of(e) == 'l')	/* targets never resolve */
			return ENOENT;
		if (type_of(e) != 'd')
			return ENOTDIR;
	}
	return 0;
}

/* Move the children of from/ under to/; 0 if a path would be too long. */
static int move_children(const char *from, const char *to, int dry)
{
	char buf[PATHMAX * 2];
	size_t n = strlen(from);
	int i;

	for (i = 0; i < MAXE; i++) {
		if (!ents[i].used || !ancestor(from, ents[i].path))
			continue;
		snprintf(buf, sizeof(buf), "%s%s", to, ents[i].path + n);
		if (strlen(buf) >= PATHMAX - 8)
			return 0;
		if (!dry)
			snprintf(ents[i].path, PATHMAX, "%s", buf);
	}
	return 1;
}

/* ---- reading the tree ---- */

/* out = rel/name (or name at the top); a name too long for the model is
 * a failure. */
static void subpath(char *out, const char *rel, const char *name)
{
	size_t lr = strlen(rel), ln = strlen(name);

	if (lr + ln + 2 > PATHMAX)
		die("path %s/%s is too long", rel, name);
	memcpy(out, rel, lr);
	if (lr)
		out[lr++] = '/';
	memcpy(out + lr, name, ln + 1);
}

static void read_all(int fd, unsigned char **data, size_t *len)
{
	unsigned char *buf = malloc(MAXDATA * 4 + 1);
	ssize_t n;
	size_t got = 0;

	if (!buf)
		die("malloc");
	while ((n = pread(fd, buf + got, MAXDATA * 4 - got, got)) > 0)
		got += n;
	if (n < 0)
		die("read: %s", errname(errno));
	*data = buf;
	*len = got;
}

static void scan(const char *rel)
{
	char path[PATHMAX];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int fd, i, ino;

	fd = openat(root_fd, *rel ? rel : ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0 || !(dir = fdopendir(fd)))
		die("scan %s: %s", rel, errname(errno));
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		subpath(path, rel, d->d_name);
		if (fstatat(root_fd, path, &st, AT_SYMLINK_NOFOLLOW))
			die("scan: lstat %s: %s", path, errname(errno));
		ino = -1;
		for (i = 0; i < MAXI; i++)
			if (inodes[i].used && inodes[i].ino == st.st_ino)
				ino = i;
		if (ino < 0) {
			ino = new_inode(S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'f');
			inodes[ino].ino = st.st_ino;
			inodes[ino].mode = st.st_mode & 07777;
			if (S_ISREG(st.st_mode)) {
				int f = openat(root_fd, path, O_RDONLY);

				if (f < 0)
					die("scan: open %s: %s", path, errname(errno));
				read_all(f, &inodes[ino].data, &inodes[ino].len);
				close(f);
			} else if (S_ISLNK(st.st_mode)) {
				if (readlinkat(root_fd, path, inodes[ino].target,
					       sizeof(inodes[ino].target) - 1) < 0)
					die("scan: readlink %s", path);
			} else if (!S_ISDIR(st.st_mode)) {
				die("scan: %s has an unexpected type", path);
			}
		}
		add_ent(path, ino);
		tracef("scan: %s type %c ino %llu", path, inodes[ino].type,
		       (unsigned long long)inodes[ino].ino);
		if (S_ISDIR(st.st_mode))
			scan(path);
	}
	closedir(dir);
}

/* ---- checking a tree against a list of expectations ---- */

struct want {
	char path[PATHMAX];
	char type;
	unsigned mode;
	unsigned long long ino, size, hash;
	char target[64];
	int seen;
};

static int check_problems;

static void problem(const char *fmt, ...)
{
	va_list ap;

	if (check_problems++ >= 20)
		return;
	printf("unionstress: %s: ", root_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static struct want *want_find(struct want *w, int n, const char *path)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(w[i].path, path))
			return &w[i];
	return NULL;
}

static unsigned char dtype_of(char t)
{
	return t == 'd' ? DT_DIR : t == 'l' ? DT_LNK : DT_REG;
}

/* path = rel/name for messages and for finding the expectation; cut
 * short (and then never found) when too long. */
static void showpath(char *out, size_t size, const char *rel, const char *name)
{
	size_t lr = strlen(rel), ln = strlen(name);

	if (lr + ln + 2 > size) {
		memcpy(out, "...", 4);
		return;
	}
	memcpy(out, rel, lr);
	if (lr)
		out[lr++] = '/';
	memcpy(out + lr, name, ln + 1);
}

/* Walk the directory open at fd (its path rel) and compare with
 * w[0..n) (w == NULL: the readdir checks only). */
static void check_dir(int fd, const char *rel, struct want *w, int n)
{
	char path[4096], seen_names[64][64];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int dfd, nseen = 0, i;

	dfd = dup(fd);
	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		problem("opendir %s: %s", rel, errname(errno));
		return;
	}
	while ((d = readdir(dir))) {
		struct want *x;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		for (i = 0; i < nseen; i++)
			if (!strcmp(seen_names[i], d->d_name))
				problem("%s/%s listed twice", rel, d->d_name);
		if (nseen < 64 && strlen(d->d_name) < 64)
			strcpy(seen_names[nseen++], d->d_name);
		showpath(path, sizeof(path), rel, d->d_name);
		if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			problem("%s listed, lstat: %s", path, errname(errno));
			continue;
		}
		if (d->d_ino != st.st_ino)
			problem("%s: d_ino %llu, st_ino %llu", path,
				(unsigned long long)d->d_ino, (unsigned long long)st.st_ino);
		if (d->d_type != DT_UNKNOWN && d->d_type != IFTODT(st.st_mode))
			problem("%s: d_type %d, lstat mode %o", path, d->d_type, st.st_mode);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(fd, d->d_name, O_RDONLY | O_DIRECTORY);

			if (sub < 0) {
				problem("open %s: %s", path, errname(errno));
			} else {
				check_dir(sub, path, w, n);
				close(sub);
			}
		}
		if (!w)
			continue;
		x = want_find(w, n, path);
		if (!x) {
			problem("%s: not expected", path);
			continue;
		}
		x->seen++;
		if (dtype_of(x->type) != IFTODT(st.st_mode)) {
			problem("%s: type %c expected, mode %o", path, x->type, st.st_mode);
			continue;
		}
		if (st.st_ino != x->ino)
			problem("%s: st_ino %llu, expected %llu", path,
				(unsigned long long)st.st_ino, x->ino);
		if (x->type != 'l' && (st.st_mode & 07777) != x->mode)
			problem("%s: mode %o, expected %o", path, st.st_mode & 07777, x->mode);
		if (x->type == 'f') {
			unsigned char *data;
			size_t len;
			int f = openat(fd, d->d_name, O_RDONLY);

			if (f < 0) {
				problem("open %s: %s", path, errname(errno));
				continue;
			}
			read_all(f, &data, &len);
			close(f);
			if (len != x->size || fnv(data, len) != x->hash)
				problem("%s: content differs (%zu bytes, expected %llu)",
					path, len, x->size);
			free(data);
		} else if (x->type == 'l') {
			char t[64] = "";

			if (readlinkat(fd, d->d_name, t, sizeof(t) - 1) < 0 || strcmp(t, x->target))
				problem("%s: symlink to '%s', expected '%s'", path, t, x->target);
		}
	}
	closedir(dir);
}

static int model_wants(struct want **out)
{
	struct want *w = calloc(MAXE, sizeof(*w));
	int i, n = 0;

	for (i = 0; i < MAXE; i++) {
		struct inode *in;

		if (!ents[i].used)
			continue;
		in = &inodes[ents[i].inode];
		snprintf(w[n].path, PATHMAX, "%s", ents[i].path);
		w[n].type = in->type;
		w[n].mode = in->mode;
		w[n].ino = in->ino;
		w[n].size = in->len;
		w[n].hash = in->type == 'f' ? fnv(in->data, in->len) : 0;
		snprintf(w[n].target, sizeof(w[n].target), "%s", in->target);
		n++;
	}
	*out = w;
	return n;
}

static int check_tree(int dfd, struct want *w, int n)
{
	int i;

	check_problems = 0;
	check_dir(dfd, "", w, n);
	for (i = 0; i < n; i++)
		if (!w[i].seen)
			problem("%s: missing", w[i].path);
	return check_problems;
}

/* ---- operations ---- */

static void rand_path(char *buf)
{
	int e, tries;

	/* Often an existing name, so that most calls do something. */
	if (rn(3) == 0)
		for (tries = 0; tries < 8; tries++) {
			e = rn(MAXE);
			if (ents[e].used) {
				snprintf(buf, PATHMAX, "%s", ents[e].path);
				return;
			}
		}
	if (rn(2))
		snprintf(buf, PATHMAX, "n%u", rn(NNAMES));
	else
		snprintf(buf, PATHMAX, "n%u/n%u", rn(NNAMES), rn(NNAMES));
}

static int rand_ent(char type)
{
	int i, start = rn(MAXE);

	for (i = 0; i < MAXE; i++) {
		int e = (start + i) % MAXE;

		if (ents[e].used && (!type || type_of(e) == type))
			return e;
	}
	return -1;
}

static void fill(unsigned char *p, size_t n)
{
	size_t i;
	uint64_t v = rnd();

	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			v = rnd();
		p[i] = 'a' + (v >> (8 * (i % 8))) % 26;
	}
}

/* expect WHAT GOT ERRNO_SET: got is 0 or an errno; set is a 0-terminated
 * list, {0} meaning success. */
static void expect(const char *what, int got, const int *set)
{
	char exp[128] = "";
	int i;

	tracef("%s: %s", what, errname(got));
	for (i = 0; set[i] || i == 0; i++) {
		if (set[i] == got)
			return;
		if (!set[i])
			break;
	}
	for (i = 0; set[i] || i == 0; i++) {
		strcat(exp, errname(set[i]));
		strcat(exp, " ");
		if (!set[i])
			break;
	}
	die("%s: got %s, expected %s", what, errname(got), exp);
}
#define EXPECT(what, got, ...) expect(what, got, (const int[]){ __VA_ARGS__, 0 })

static void record_ino(int inode, const char *path)
{
	struct stat st;

	if (fstatat(root_fd, path, &st, AT_SYMLINK_NOFOLLOW))
		die("lstat %s after creating it: %s", path, errname(errno));
	inodes[inode].ino = st.st_ino;
}

static void check_ino(const char *what, int fd, const char *path, int inode)
{
	struct stat st;

	if ((fd >= 0 ? fstat(fd, &st) : fstatat(root_fd, path, &st, AT_SYMLINK_NOFOLLOW)))
		die("%s: stat %s: %s", what, path, errname(errno));
	if (st.st_ino != inodes[inode].ino)
		die("%s %s: st_ino %llu, the model says %llu", what, path,
		    (unsigned long long)st.st_ino, (unsigned long long)inodes[inode].ino);
}

static int sys_rename(int dfd, const char *a, const char *b, unsigned flags)
{
	return syscall(SYS_renameat2, dfd, a, dfd, b, flags) ? errno : 0;
}

static void op_create(void)
{
	char p[PATHMAX], what[PATHMAX + 16];
	int pe, e, fd, got, ino;
	unsigned char buf[4096];
	size_t n;

	rand_path(p);
	snprintf(what, sizeof(what), "create %s", p);
	pe = parent_err(p);
	e = find(p);
	fd = openat(root_fd, p, O_CREAT | O_EXCL | O_WRONLY, 0644);
	got = fd < 0 ? errno : 0;
	if (pe)
		EXPECT(what, got, pe);
	else if (e >= 0)
		EXPECT(what, got, EEXIST);
	else
		EXPECT(what, got, 0);
	if (got)
		return;
	n = rn(sizeof(buf));
	fill(buf, n);
	if (write(fd, buf, n) != (ssize_t)n)
		die("%s: write: %s", what, errname(errno));
	ino = new_inode('f');
	inodes[ino].mode = 0644;
	inodes[ino].data = malloc(MAXDATA * 4);
	memcpy(inodes[ino].data, buf, n);
	inodes[ino].len = n;
	add_ent(p, ino);
	record_ino(ino, p);
	close(fd);
}

static void op_write(void)
{
	int e = rand_ent('f'), fd, ino;
	struct inode *in;
	unsigned char buf[2048];
	size_t off, n;

	if (e < 0)
		return;
	ino = ents[e].inode;
	in = &inodes[ino];
	off = rn(in->len + 200);
	n = 1 + rn(sizeof(buf));
	if (off + n > MAXDATA)
		off = 0;
	fill(buf, n);
	fd = openat(root_fd, ents[e].path, O_WRONLY);
	if (fd < 0)
		die("write: open %s: %s", ents[e].path, errname(errno));
	check_ino("write: after open", fd, ents[e].path, ino);
	tracef("write %s at %zu, %zu bytes", ents[e].path, off, n);
	if (pwrite(fd, buf, n, off) != (ssize_t)n)
		die("pwrite %s: %s", ents[e].path, errname(errno));
	close(fd);
	if (!in->data)
		in->data = calloc(1, MAXDATA * 4);
	else
		in->data = realloc(in->data, MAXDATA * 4);
	if (off > in->len)
		memset(in->data + in->len, 0, off - in->len);
	memcpy(in->data + off, buf, n);
	if (off + n > in->len)
		in->len = off + n;
}

static void op_trunc(void)
{
	int e = rand_ent('f'), fd;
	struct inode *in;
	size_t len;

	if (e < 0)
		return;
	in = &inodes[ents[e].inode];
	len = rn(6000);
	tracef("truncate %s to %zu", ents[e].path, len);
	fd = openat(root_fd, ents[e].path, O_WRONLY);
	if (fd < 0 || ftruncate(fd, len))
		die("truncate %s: %s", ents[e].path, errname(errno));
	close(fd);
	in->data = realloc(in->data, MAXDATA * 4);
	if (len > in->len)
		memset(in->data + in->len, 0, len - in->len);
	in->len = len;
	check_ino("truncate", -1, ents[e].path, ents[e].inode);
}

static void op_read(void)
{
	int e = rand_ent('f'), fd;
	struct inode *in;
	unsigned char *data;
	size_t len;

	if (e < 0)
		return;
	in = &inodes[ents[e].inode];
	tracef("read %s", ents[e].path);
	fd = openat(root_fd, ents[e].path, O_RDONLY);
	if (fd < 0)
		die("read: open %s: %s", ents[e].path, errname(errno));
	check_ino("read", fd, ents[e].path, ents[e].inode);
	read_all(fd, &data, &len);
	close(fd);
	if (len != in->len || memcmp(data, in->data, len))
		die("read %s: %zu bytes, the model has %zu, or they differ",
		    ents[e].path, len, in->len);
	free(data);
}

static void op_unlink(void)
{
	char p[PATHMAX], what[PATHMAX + 16];
	int pe, e, got;

	rand_path(p);
	snprintf(what, sizeof(what), "unlink %s", p);
	pe = parent_err(p);
	e = find(p);
	got = unlinkat(root_fd, p, 0) ? errno : 0;
	if (pe)
		EXPECT(what, got, pe);
	else if (e < 0)
		EXPECT(what, got, ENOENT);
	else if (type_of(e) == 'd')
		EXPECT(what, got, EISDIR);
	else
		EXPECT(what, got, 0);
	if (!got)
		drop_ent(e);
}

static void op_mkdir(void)
{
	char p[PATHMAX], what[PATHMAX + 16];
	int pe, e, got, ino;

	rand_path(p);
	snprintf(what, sizeof(what), "mkdir %s", p);
	pe = parent_err(p);
	e = find(p);
	got = mkdirat(root_fd, p, 0755) ? errno : 0;
	if (pe)
		EXPECT(what, got, pe);
	else if (e >= 0)
		EXPECT(what, got, EEXIST);
	else
		EXPECT(what, got, 0);
	if (got)
		return;
	ino = new_inode('d');
	inodes[ino].mode = 0755;
	add_ent(p, ino);
	record_ino(ino, p);
}

static void op_rmdir(void)
{
	char p[PATHMAX], what[PATHMAX + 16];
	int pe, e, got;

	rand_path(p);
	snprintf(what, sizeof(what), "rmdir %s", p);
	pe = parent_err(p);
	e = find(p);
	got = unlinkat(root_fd, p, AT_REMOVEDIR) ? errno : 0;
	if (pe)
		EXPECT(what, got, pe);
	else if (e < 0)
		EXPECT(what, got, ENOENT);
	else if (type_of(e) != 'd')
		EXPECT(what, got, ENOTDIR);
	else if (!dir_empty(p))
		EXPECT(what, got, ENOTEMPTY, EEXIST);
	else
		EXPECT(what, got, 0);
	if (!got)
		drop_ent(e);
}

static void op_rename(void)
{
	char a[PATHMAX], b[PATHMAX], what[2 * PATHMAX + 32];
	int set[8], n = 0, ea, eb, got, pa, pb, tmp;
	unsigned flags = 0;
	char ta, tb;

	if (rn(10) < 8 && rand_ent(0) >= 0)
		snprintf(a, sizeof(a), "%s", ents[rand_ent(0)].path);
	else
		rand_path(a);
	rand_path(b);
	switch (rn(7)) {
	case 0: flags = RENAME_NOREPLACE; break;
	case 1: flags = RENAME_EXCHANGE; break;
	}
	ea = find(a);
	eb = find(b);
	ta = type_of(ea);
	tb = type_of(eb);
	pa = parent_err(a);
	pb = parent_err(b);
	/* Skip renames that would nest paths deeper than the model holds. */
	if (!pa && !pb && ea >= 0 &&
	    ((ta == 'd' && !move_children(a, b, 1)) ||
	     (eb >= 0 && tb == 'd' && !move_children(b, a, 1))))
		return;
	snprintf(what, sizeof(what), "rename%s %s %s",
		 flags == RENAME_NOREPLACE ? "(NOREPLACE)" :
		 flags == RENAME_EXCHANGE ? "(EXCHANGE)" : "", a, b);
	if (pa)
		set[n++] = pa;
	if (pb)
		set[n++] = pb;
	if (!pa && ea < 0)
		set[n++] = ENOENT;
	if (!n) {
		if (eb >= 0 && flags == RENAME_NOREPLACE)
			set[n++] = EEXIST;
		else if (eb < 0 && flags == RENAME_EXCHANGE)
			set[n++] = ENOENT;
		else if (ancestor(a, b))
			set[n++] = EINVAL;
		else if (eb >= 0 && ancestor(b, a))
			set[n++] = flags == RENAME_EXCHANGE ? EINVAL : ENOTEMPTY;
		else if (eb >= 0 && ents[ea].inode == ents[eb].inode)
			;	/* the same inode: nothing happens */
		else if (eb >= 0 && flags != RENAME_EXCHANGE) {
			if (ta == 'd' && tb != 'd')
				set[n++] = ENOTDIR;
			else if (ta != 'd' && tb == 'd')
				set[n++] = EISDIR;
			else if (tb == 'd' && !dir_empty(b)) {
				set[n++] = ENOTEMPTY;
				set[n++] = EEXIST;
			}
		}
	}
	set[n] = 0;
	got = sys_rename(root_fd, a, b, flags);
	expect(what, got, set);
	if (got || (eb >= 0 && ents[ea].inode == ents[eb].inode))
		return;
	if (flags == RENAME_EXCHANGE) {
		/* Swap the two names' inodes and their subtrees. */
		char tmpname[PATHMAX];

		snprintf(tmpname, sizeof(tmpname), "\x01swap");
		move_children(a, tmpname, 0);
		move_children(b, a, 0);
		move_children(tmpname, b, 0);
		tmp = ents[ea].inode;
		ents[ea].inode = ents[eb].inode;
		ents[eb].inode = tmp;
		return;
	}
	if (eb >= 0)
		drop_ent(eb);
	snprintf(ents[ea].path, PATHMAX, "%s", b);
	if (ta == 'd')
		move_children(a, b, 0);
}

static void op_symlink(void)
{
	char p[PATHMAX], what[PATHMAX + 16], t[64];
	int pe, e, got, ino;

	rand_path(p);
	snprintf(t, sizeof(t), "nowhere/t%u", rn(1000));
	snprintf(what, sizeof(what), "symlink %s", p);
	pe = parent_err(p);
	e = find(p);
	got = symlinkat(t, root_fd, p) ? errno : 0;
	if (pe)
		EXPECT(what, got, pe);
	else if (e >= 0)
		EXPECT(what, got, EEXIST);
	else
		EXPECT(what, got, 0);
	if (got)
		return;
	ino = new_inode('l');
	inodes[ino].mode = 0777;
	snprintf(inodes[ino].target, sizeof(inodes[ino].target), "%s", t);
	add_ent(p, ino);
	record_ino(ino, p);
}

static void op_link(void)
{
	char p[PATHMAX], what[2 * PATHMAX + 16];
	int src = rand_ent('f'), pe, e, got;

	if (src < 0)
		return;
	rand_path(p);
	snprintf(what, sizeof(what), "link %s %s", ents[src].path, p);
	pe = parent_err(p);
	e = find(p);
	got = linkat(root_fd, ents[src].path, root_fd, p, 0) ? errno : 0;
	if (pe)
		EXPECT(what, got, pe);
	else if (e >= 0)
		EXPECT(what, got, EEXIST);
	else
		EXPECT(what, got, 0);
	if (got)
		return;
	add_ent(p, ents[src].inode);
	check_ino(what, -1, p, ents[src].inode);
}

static void op_chmod(void)
{
	static const unsigned modes[] = { 0600, 0644, 0640, 0755, 0444 };
	int e = rand_ent('f');
	unsigned m = modes[rn(5)];

	if (e < 0)
		return;
	tracef("chmod %s %o", ents[e].path, m);
	if (fchmodat(root_fd, ents[e].path, m, 0))
		die("chmod %s: %s", ents[e].path, errname(errno));
	inodes[ents[e].inode].mode = m;
	check_ino("chmod", -1, ents[e].path, ents[e].inode);
}

static void op_stat(void)
{
	char p[PATHMAX], what[PATHMAX + 16];
	struct stat st;
	int pe, e, got;

	rand_path(p);
	snprintf(what, sizeof(what), "lstat %s", p);
	pe = parent_err(p);
	e = find(p);
	got = fstatat(root_fd, p, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
	if (pe)
		EXPECT(what, got, pe);
	else if (e < 0)
		EXPECT(what, got, ENOENT);
	else
		EXPECT(what, got, 0);
	if (got)
		return;
	if (IFTODT(st.st_mode) != dtype_of(type_of(e)))
		die("%s: mode %o, the model says type %c", what, st.st_mode, type_of(e));
	check_ino(what, -1, p, ents[e].inode);
	if (type_of(e) == 'f' && (size_t)st.st_size != inodes[ents[e].inode].len)
		die("%s: size %lld, the model says %zu", what, (long long)st.st_size,
		    inodes[ents[e].inode].len);
}

/* One operation in the shared directory: anything may have happened
 * there, so only the errno is checked. */
static void op_shared(int sfd)
{
	static const int ok[] = { 0, ENOENT, EEXIST, ENOTEMPTY, ENOTDIR, EISDIR, EINVAL };
	char a[64], b[64];
	unsigned char buf[1024];
	int got = 0, fd, i;
	enum op op = rn(NOPS);

	snprintf(a, sizeof(a), rn(2) ? "s%u" : "s%u/s%u", rn(8), rn(8));
	snprintf(b, sizeof(b), rn(2) ? "s%u" : "s%u/s%u", rn(8), rn(8));
	switch (op) {
	case OP_CREATE:
		fd = openat(sfd, a, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		got = fd < 0 ? errno : 0;
		if (fd >= 0) {
			fill(buf, sizeof(buf));
			if (write(fd, buf, rn(sizeof(buf))) < 0)
				got = errno;
			close(fd);
		}
		break;
	case OP_WRITE:
	case OP_TRUNC:
		fd = openat(sfd, a, O_WRONLY | (op == OP_TRUNC ? O_TRUNC : O_APPEND));
		got = fd < 0 ? errno : 0;
		if (fd >= 0) {
			fill(buf, sizeof(buf));
			if (write(fd, buf, rn(sizeof(buf))) < 0)
				got = errno;
			close(fd);
		}
		break;
	case OP_READ:
		fd = openat(sfd, a, O_RDONLY);
		got = fd < 0 ? errno : 0;
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				got = errno;
			close(fd);
		}
		break;
	case OP_UNLINK: got = unlinkat(sfd, a, 0) ? errno : 0; break;
	case OP_MKDIR: got = mkdirat(sfd, a, 0755) ? errno : 0; break;
	case OP_RMDIR: got = unlinkat(sfd, a, AT_REMOVEDIR) ? errno : 0; break;
	case OP_RENAME:
		got = sys_rename(sfd, a, b, rn(5) == 0 ? RENAME_EXCHANGE :
				 rn(5) == 0 ? RENAME_NOREPLACE : 0);
		break;
	case OP_SYMLINK: got = symlinkat("nowhere/s", sfd, a) ? errno : 0; break;
	case OP_LINK: got = linkat(sfd, a, sfd, b, 0) ? errno : 0; break;
	case OP_CHMOD: got = fchmodat(sfd, a, 0644, 0) ? errno : 0; break;
	case OP_STAT: {
		struct stat st;

		got = fstatat(sfd, a, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
		break;
	}
	default: break;
	}
	tracef("shared: %s %s %s: %s", op_names[op], a, b, errname(got));
	if (got == EPERM && op == OP_LINK)
		got = 0;	/* a link to a directory */
	/*
	 * With a writable lower branch (UNIONSTRESS_RW_LOWER set), a rename
	 * or link of its file while another worker writes it in place is
	 * EBUSY (unionfs(5), "Several writable branches").
	 */
	if (got == EBUSY && (op == OP_RENAME || op == OP_LINK) &&
	    getenv("UNIONSTRESS_RW_LOWER"))
		got = 0;
	for (i = 0; i < (int)(sizeof(ok) / sizeof(ok[0])); i++)
		if (got == ok[i])
			return;
	die("shared: %s %s %s: %s", op_names[op], a, b, errname(got));
}

static int worker_main(const char *dir, int id, int seconds, unsigned long seed,
		       const char *manifest)
{
	char name[PATHMAX], mpath[PATHMAX + 16];
	struct want *w;
	int sfd, n, i, probs;
	time_t end = time(NULL) + seconds;
	FILE *m;

	worker = id;
	rng = seed * 2654435761ULL + id + 1;
	snprintf(name, sizeof(name), "%s/w%d", dir, id);
	root_name = name;
	root_fd = open(name, O_RDONLY | O_DIRECTORY);
	snprintf(mpath, sizeof(mpath), "%s/shared", dir);
	sfd = open(mpath, O_RDONLY | O_DIRECTORY);
	if (root_fd < 0 || sfd < 0)
		die("open %s or %s: %s", name, mpath, errname(errno));
	snprintf(mpath, sizeof(mpath), "%s.trace.%d", manifest, id);
	trace = fopen(mpath, "w");
	scan("");
	while (time(NULL) < end) {
		enum op op;

		if (rn(4) == 0) {
			op_shared(sfd);
			counts[id].shared_ops++;
			continue;
		}
		op = rn(NOPS);
		/* A full model only shrinks. */
		if (nents() > MAXE - 50 && (op == OP_CREATE || op == OP_MKDIR ||
					    op == OP_SYMLINK || op == OP_LINK))
			op = OP_UNLINK;
		switch (op) {
		case OP_CREATE: op_create(); break;
		case OP_WRITE: op_write(); break;
		case OP_TRUNC: op_trunc(); break;
		case OP_READ: op_read(); break;
		case OP_UNLINK: op_unlink(); break;
		case OP_MKDIR: op_mkdir(); break;
		case OP_RMDIR: op_rmdir(); break;
		case OP_RENAME: op_rename(); break;
		case OP_SYMLINK: op_symlink(); break;
		case OP_LINK: op_link(); break;
		case OP_CHMOD: op_chmod(); break;
		case OP_STAT: op_stat(); break;
		default: break;
		}
		counts[id].ops[op]++;
	}
	n = model_wants(&w);
	probs = check_tree(root_fd, w, n);
	if (probs)
		die("%d differences between %s and the model", probs, name);
	snprintf(mpath, sizeof(mpath), "%s.%d", manifest, id);
	m = fopen(mpath, "w");
	if (!m)
		die("cannot write %s", mpath);
	for (i = 0; i < n; i++)
		fprintf(m, "%s %c %o %llu %llu %llx %s\n", w[i].path, w[i].type, w[i].mode,
			w[i].ino, w[i].size, w[i].hash, w[i].type == 'l' ? w[i].target : "-");
	if (fclose(m))
		die("cannot write %s", mpath);
	if (trace)
		fclose(trace);
	return 0;
}

static int cmd_run(const char *dir, int nproc, int seconds, unsigned long seed,
		   const char *manifest)
{
	long total = 0, per[NOPS] = { 0 }, shared = 0;
	char path[PATHMAX + 16];
	int i, k, status, bad = 0;
	pid_t pid;

	counts = mmap(NULL, sizeof(*counts) * nproc, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counts == MAP_FAILED)
		return perror("mmap"), 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(0);
	for (i = 0; i < nproc; i++) {
		pid = fork();
		if (pid < 0)
			return perror("fork"), 1;
		if (pid == 0)
			_exit(worker_main(dir, i, seconds, seed, manifest));
	}
	for (i = 0; i < nproc; i++) {
		if (wait(&status) < 0)
			return perror("wait"), 1;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	for (i = 0; i < nproc; i++) {
		for (k = 0; k < NOPS; k++) {
			per[k] += counts[i].ops[k];
			total += counts[i].ops[k];
		}
		shared += counts[i].shared_ops;
	}
	printf("unionstress: seed %lu, %d workers, %d s: %ld operations checked against the model (",
	       seed, nproc, seconds, total);
	for (k = 0; k < NOPS; k++)
		printf("%s%s %ld", k ? ", " : "", op_names[k], per[k]);
	printf("), %ld in shared/\n", shared);
	worker = -1;
	root_name = "shared";
	check_problems = 0;
	snprintf(path, sizeof(path), "%s/shared", dir);
	i = open(path, O_RDONLY | O_DIRECTORY);
	if (i < 0)
		problem("open %s: %s", path, errname(errno));
	else
		check_dir(i, "shared", NULL, 0);
	close(i);
	if (check_problems)
		bad++;
	if (bad)
		printf("unionstress: FAILED: %d workers or checks failed\n", bad);
	return bad ? 1 : 0;
}

static int cmd_verify(const char *dir, int nproc, const char *manifest)
{
	char path[PATHMAX + 16], line[512];
	int i, n, fd, bad = 0, total = 0;
	struct want *w = calloc(MAXE, sizeof(*w));
	FILE *m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < nproc; i++) {
		snprintf(path, sizeof(path), "%s.%d", manifest, i);
		m = fopen(path, "r");
		if (!m) {
			printf("unionstress: no manifest %s\n", path);
			return 1;
		}
		memset(w, 0, MAXE * sizeof(*w));
		for (n = 0; n < MAXE && fgets(line, sizeof(line), m); n++)
			if (sscanf(line, "%199s %c %o %llu %llu %llx %63s", w[n].path, &w[n].type,
				   &w[n].mode, &w[n].ino, &w[n].size, &w[n].hash, w[n].target) != 7) {
				printf("unionstress: bad manifest line %s", line);
				return 1;
			}
		fclose(m);
		snprintf(path, sizeof(path), "%s/w%d", dir, i);
		root_name = path;
		fd = open(path, O_RDONLY | O_DIRECTORY);
		if (fd < 0) {
			printf("unionstress: open %s: %s\n", path, errname(errno));
			return 1;
		}
		if (check_tree(fd, w, n))
			bad++;
		close(fd);
		total += n;
	}
	root_name = "shared";
	check_problems = 0;
	snprintf(path, sizeof(path), "%s/shared", dir);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		problem("open %s: %s", path, errname(errno));
	else
		check_dir(fd, "shared", NULL, 0);
	close(fd);
	if (check_problems)
		bad++;
	printf("unionstress: %d workers' trees (%d names) %s\n", nproc, total,
	       bad ? "DIFFER" : "match their manifests; shared/ lists right");
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "run"))
		return cmd_run(argv[2], atoi(argv[3]), atoi(argv[4]),
			       strtoul(argv[5], NULL, 0), argv[6]);
	if (argc == 5 && !strcmp(argv[1], "verify"))
		return cmd_verify(argv[2], atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: unionstress run DIR NPROC SECONDS SEED MANIFEST\n"
			"       unionstress verify DIR NPROC MANIFEST\n");
	return 2;
}
