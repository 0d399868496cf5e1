// SPDX-License-Identifier: GPL-2.0
/*
 * rdbench: the measurements of `make bench` (tests/bench/guest.sh runs it
 * in the VM).  It only measures and prints; it never judges a number.
 *
 * usage:
 *   rdbench create DIR FROM:TO...
 *       creates empty files "entry-%07d" for each number in each range
 *       (TO excluded) in DIR.
 *   rdbench list [-r REPS] [-b BUFSIZE] DIR
 *       REPS times: open DIR, read it to the end with getdents64, close.
 *       Prints "list entries=N reps=R median_us=M min_us=A max_us=B".
 *   rdbench seek [-n SEEKS] [-b BUFSIZE] [-l | -o] [-S SEED] DIR
 *       opens DIR, lists it to the end recording every entry's offset
 *       (d_off, which is what telldir() returns after that entry), then
 *       SEEKS times: seek to a random recorded offset and read once.
 *       Default: lseek(SEEK_SET) + one getdents64 of BUFSIZE bytes;
 *       -l: the C library's seekdir() + readdir() instead (glibc reads
 *       32 KiB per getdents64).  All on the same open directory, except
 *       with -o: each seek opens DIR afresh, lseeks and reads once, and
 *       closes it (the time includes open and close: what a program that
 *       kept only the offset, or an NFS READDIR, pays).
 *       Prints "seek entries=N seeks=S median_us=M mean_us=A".
 *   rdbench mem [-b BUFSIZE] DIR
 *       reads /proc/meminfo, opens DIR and lists it to the end (keeping it
 *       open), reads /proc/meminfo again and prints the differences in
 *       kB: "mem entries=N slab_kb=.. sunreclaim_kb=.. cached_kb=..
 *       vmalloc_kb=..".
 *   rdbench statlist FILE
 *       lstat()s every path listed in FILE (one per line), in order, the
 *       way `git status` checks its index.  Prints "statlist paths=N us=T".
 *   rdbench churn DIR N
 *       creates N empty files "churn-%07d" in DIR, then unlinks them.
 *       Prints "churn files=N us=T".
 *   rdbench unlink DIR FROM:TO
 *       unlinks the files "entry-%07d" of the range in DIR.  Prints
 *       "unlink files=N us=T".
 *   rdbench meminfo
 *       prints "meminfo slab_kb=.. sunreclaim_kb=.. cached_kb=..
 *       vmalloc_kb=.." (now, not a difference).
 *
 * Times are CLOCK_MONOTONIC.  Errors go to stderr, exit 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

static void die(const char *what)
{
	fprintf(stderr, "rdbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rdbench create DIR FROM:TO...\n"
		"       rdbench list [-r REPS] [-b BUFSIZE] DIR\n"
		"       rdbench seek [-n SEEKS] [-b BUFSIZE] [-l | -o] [-S SEED] DIR\n"
		"       rdbench mem [-b BUFSIZE] DIR\n"
		"       rdbench statlist FILE\n"
		"       rdbench churn DIR N\n"
		"       rdbench unlink DIR FROM:TO\n"
		"       rdbench meminfo\n");
	exit(2);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* xorshift64*: the same sequence on every filesystem for one seed. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/*
 * Reads fd to the end; returns the number of entries (with . and ..).
 * If offs is given, stores every entry's d_off there (grown as needed).
 */
static size_t list_fd(int fd, char *buf, size_t bufsize, int64_t **offs)
{
	size_t count = 0, cap = 0;

	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, bufsize);
		long pos;

		if (n < 0)
			die("getdents64");
		if (n == 0)
			break;
		for (pos = 0; pos < n;) {
			struct linux_dirent64 *d = (void *)(buf + pos);

			if (offs) {
				if (count == cap) {
					cap = cap ? cap * 2 : 4096;
					*offs = realloc(*offs, cap * sizeof(**offs));
					if (!*offs)
						die("realloc");
				}
				(*offs)[count] = d->d_off;
			}
			count++;
			pos += d->d_reclen;
		}
	}
	return count;
}

static int open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		die(path);
	return fd;
}

static char *alloc_buf(size_t size)
{
	char *buf = malloc(size);

	if (!buf)
		die("malloc");
	return buf;
}

static int cmd_create(int argc, char **argv)
{
	char name[64];
	int dfd, i;

	if (argc < 3)
		usage();
	dfd = open_dir(argv[1]);
	for (i = 2; i < argc; i++) {
		long from, to, k;

		if (sscanf(argv[i], "%ld:%ld", &from, &to) != 2)
			usage();
		for (k = from; k < to; k++) {
			int fd;

			snprintf(name, sizeof(name), "entry-%07ld", k);
			fd = openat(dfd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0)
				die(name);
			close(fd);
		}
	}
	close(dfd);
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	size_t bufsize = 32768, entries = 0;
	int opt, reps = 1, r;
	double *t;
	char *buf;

	while ((opt = getopt(argc, argv, "r:b:")) != -1) {
		switch (opt) {
		case 'r': reps = atoi(optarg); break;
		case 'b': bufsize = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || reps < 1)
		usage();
	buf = alloc_buf(bufsize);
	t = calloc(reps, sizeof(*t));
	if (!t)
		die("calloc");
	for (r = 0; r < reps; r++) {
		double t0 = now_us();
		int fd = open_dir(argv[optind]);

		entries = list_fd(fd, buf, bufsize, NULL);
		close(fd);
		t[r] = now_us() - t0;
	}
	{
		double lo = t[0], hi = t[0];

		for (r = 1; r < reps; r++) {
			lo = t[r] < lo ? t[r] : lo;
			hi = t[r] > hi ? t[r] : hi;
		}
		printf("list entries=%zu reps=%d median_us=%.1f min_us=%.1f max_us=%.1f\n",
		       entries, reps, median(t, reps), lo, hi);
	}
	return 0;
}

static int cmd_seek(int argc, char **argv)
{
	size_t bufsize = 32768, entries, ncookies, i;
	int opt, seeks = 1000, use_libc = 0, reopen = 0;
	int64_t *offs = NULL;
	double *t, total = 0;
	char *buf;

	rng_state = 0x9E3779B97F4A7C15ULL;
	while ((opt = getopt(argc, argv, "n:b:loS:")) != -1) {
		switch (opt) {
		case 'n': seeks = atoi(optarg); break;
		case 'b': bufsize = strtoul(optarg, NULL, 0); break;
		case 'l': use_libc = 1; break;
		case 'o': reopen = 1; break;
		case 'S': rng_state = strtoull(optarg, NULL, 0) | 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || seeks < 1 || (use_libc && reopen))
		usage();
	t = calloc(seeks, sizeof(*t));
	if (!t)
		die("calloc");

	if (use_libc) {
		DIR *d = opendir(argv[optind]);
		struct dirent *de;

		if (!d)
			die(argv[optind]);
		entries = 0;
		errno = 0;
		while ((de = readdir(d))) {
			if (entries % 4096 == 0) {
				offs = realloc(offs, (entries + 4096) * sizeof(*offs));
				if (!offs)
					die("realloc");
			}
			offs[entries++] = telldir(d);
		}
		if (errno)
			die("readdir");
		/* the last cookie is the end: reading there returns nothing */
		ncookies = entries - 1;
		for (i = 0; i < (size_t)seeks; i++) {
			long c = offs[rng() % ncookies];
			double t0 = now_us();

			seekdir(d, c);
			errno = 0;
			de = readdir(d);
			t[i] = now_us() - t0;
			if (!de)
				errno ? die("readdir after seekdir") :
					(void)fprintf(stderr, "rdbench: nothing after cookie %ld\n", c);
			total += t[i];
		}
		closedir(d);
	} else {
		int fd = open_dir(argv[optind]);

		buf = alloc_buf(bufsize);
		entries = list_fd(fd, buf, bufsize, &offs);
		ncookies = entries - 1;
		if (reopen) {
			close(fd);
			fd = -1;
		}
		for (i = 0; i < (size_t)seeks; i++) {
			int64_t c = offs[rng() % ncookies];
			double t0 = now_us();
			long n;

			if (reopen)
				fd = open_dir(argv[optind]);
			if (lseek(fd, c, SEEK_SET) < 0)
				die("lseek");
			n = syscall(SYS_getdents64, fd, buf, bufsize);
			if (reopen) {
				close(fd);
				fd = -1;
			}
			t[i] = now_us() - t0;
			if (n < 0)
				die("getdents64 after lseek");
			if (n == 0)
				fprintf(stderr, "rdbench: nothing after offset %lld\n",
					(long long)c);
			total += t[i];
		}
		if (fd >= 0)
			close(fd);
	}
	printf("seek entries=%zu seeks=%d median_us=%.2f mean_us=%.2f\n",
	       entries, seeks, median(t, seeks), total / seeks);
	return 0;
}

/* The meminfo fields rdbench mem reports, in kB. */
static const char *const mem_fields[] = { "Slab", "SUnreclaim", "Cached", "VmallocUsed" };
#define NFIELDS (sizeof(mem_fields) / sizeof(mem_fields[0]))

static void meminfo(long long *v)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");
	size_t i;

	if (!f)
		die("/proc/meminfo");
	for (i = 0; i < NFIELDS; i++)
		v[i] = -1;
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < NFIELDS; i++) {
			size_t l = strlen(mem_fields[i]);

			if (!strncmp(line, mem_fields[i], l) && line[l] == ':')
				v[i] = strtoll(line + l + 1, NULL, 10);
		}
	}
	fclose(f);
}

static int cmd_mem(int argc, char **argv)
{
	size_t bufsize = 32768, entries;
	long long before[NFIELDS], after[NFIELDS];
	int opt, fd;
	char *buf;

	while ((opt = getopt(argc, argv, "b:")) != -1) {
		switch (opt) {
		case 'b': bufsize = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	buf = alloc_buf(bufsize);
	meminfo(before);
	fd = open_dir(argv[optind]);
	entries = list_fd(fd, buf, bufsize, NULL);
	meminfo(after);
	close(fd);
	printf("mem entries=%zu slab_kb=%lld sunreclaim_kb=%lld cached_kb=%lld vmalloc_kb=%lld\n",
	       entries, after[0] - before[0], after[1] - before[1],
	       after[2] - before[2], after[3] - before[3]);
	return 0;
}

static int cmd_statlist(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;
	double t0;
	struct stat st;
	FILE *f;

	if (argc != 2)
		usage();
	f = fopen(argv[1], "r");
	if (!f)
		die(argv[1]);
	t0 = now_us();
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		if (lstat(line, &st))
			die(line);
		n++;
	}
	printf("statlist paths=%zu us=%.0f\n", n, now_us() - t0);
	free(line);
	fclose(f);
	return 0;
}

static int cmd_churn(int argc, char **argv)
{
	char name[64];
	long n, k;
	double t0;
	int dfd;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0)
		usage();
	dfd = open_dir(argv[1]);
	t0 = now_us();
	for (k = 0; k < n; k++) {
		int fd;

		snprintf(name, sizeof(name), "churn-%07ld", k);
		fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			die(name);
		close(fd);
	}
	for (k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "churn-%07ld", k);
		if (unlinkat(dfd, name, 0))
			die(name);
	}
	printf("churn files=%ld us=%.0f\n", n, now_us() - t0);
	close(dfd);
	return 0;
}

static int cmd_unlink(int argc, char **argv)
{
	char name[64];
	long from, to, k;
	double t0;
	int dfd;

	if (argc != 3 || sscanf(argv[2], "%ld:%ld", &from, &to) != 2)
		usage();
	dfd = open_dir(argv[1]);
	t0 = now_us();
	for (k = from; k < to; k++) {
		snprintf(name, sizeof(name), "entry-%07ld", k);
		if (unlinkat(dfd, name, 0))
			die(name);
	}
	printf("unlink files=%ld us=%.0f\n", to - from, now_us() - t0);
	close(dfd);
	return 0;
}

static int cmd_meminfo(void)
{
	long long v[4];

	meminfo(v);
	printf("meminfo slab_kb=%lld sunreclaim_kb=%lld cached_kb=%lld vmalloc_kb=%lld\n",
	       v[0], v[1], v[2], v[3]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	argc--, argv++;
	if (!strcmp(argv[0], "create"))
		return cmd_create(argc, argv);
	if (!strcmp(argv[0], "list"))
		return cmd_list(argc, argv);
	if (!strcmp(argv[0], "seek"))
		return cmd_seek(argc, argv);
	if (!strcmp(argv[0], "mem"))
		return cmd_mem(argc, argv);
	if (!strcmp(argv[0], "statlist"))
		return cmd_statlist(argc, argv);
	if (!strcmp(argv[0], "churn"))
		return cmd_churn(argc, argv);
	if (!strcmp(argv[0], "unlink"))
		return cmd_unlink(argc, argv);
	if (!strcmp(argv[0], "meminfo") && argc == 1)
		return cmd_meminfo();
	usage();
	return 2;
}
