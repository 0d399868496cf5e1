// SPDX-License-Identifier: GPL-2.0
/*
 * logreplay: read and replay a dm-log-writes log (power-cut tests).
 *
 * Written from the log format described in the kernel's
 * Documentation/admin-guide/device-mapper/log-writes.rst and
 * drivers/md/dm-log-writes.c (Linux 6.1):
 *
 *   byte 0 of the log device: the super block (one "sector" of the
 *   device's logical block size, all fields little-endian)
 *       u64 magic (0x6a736677736872), u64 version (1),
 *       u64 nr_entries, u32 sectorsize
 *   then nr_entries entries, the first one at offset sectorsize:
 *       one sector:  u64 sector, u64 nr_sectors, u64 flags, u64 data_len,
 *                    followed by the mark's text for a MARK entry
 *       then, unless it is a DISCARD (or a MARK), nr_sectors sectors of
 *       the data that was written at "sector" (sectors of sectorsize).
 *
 * Entries are logged in the order the device made them durable: plain
 * writes at the next FLUSH that completes, FUA writes and marks as soon
 * as they complete / are issued.  Replaying a prefix of the log
 * therefore gives a state the device could have after a power cut.
 *
 * Entries are numbered from 0.  "State N" of the replay device is the
 * state after entries 0..N-1 were applied.
 *
 * usage:
 *   logreplay --log LOG --list            one line per entry:
 *                                         "INDEX FLAGS SECTOR NR [MARK]"
 *   logreplay --log LOG --marks           "INDEX NAME" per mark
 *   logreplay --log LOG --count-flush     number of FLUSH and FUA entries
 *   logreplay --log LOG --find-mark NAME  index of the (first) mark NAME
 *   logreplay --log LOG --replay DEV [--start N] [--limit M | --end-mark NAME]
 *        apply entries N..M-1 (default: from 0, to the end) onto DEV,
 *        which must already be at state N; --end-mark replays up to
 *        and including that mark.
 *   logreplay --log LOG --replay DEV --serve
 *        read target states (entry counts, increasing) one per line
 *        on stdin; for each, replay forward to it, sync DEV and print
 *        "ok N".  A caller replays to every flush point in one pass,
 *        O(log size) in total.
 * Add -v to print each replayed entry on stderr.
 *
 * Exit status: 0 ok, 1 error (message on stderr), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define LW_MAGIC 0x6a736677736872ULL
#define LW_VERSION 1ULL

#define F_FLUSH (1u << 0)
#define F_FUA (1u << 1)
#define F_DISCARD (1u << 2)
#define F_MARK (1u << 3)
#define F_META (1u << 4)

struct entry {
	uint64_t sector;	/* in sectors of the log's sectorsize */
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_len;
	char mark[4096];	/* NUL-terminated text of a MARK */
};

struct log {
	int fd;
	const char *path;
	uint64_t nr_entries;
	uint32_t sectorsize;
	uint64_t next;		/* index of the entry at "pos" */
	uint64_t pos;		/* byte offset of entry "next" in the log */
	bool verbose;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("logreplay: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* pread exactly len bytes or die. */
static void read_exact(int fd, const char *path, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("%s: read at %" PRIu64 ": %s", path, off + done, strerror(errno));
		if (r == 0)
			die("%s: log ends early (offset %" PRIu64 ")", path, off + done);
		done += (size_t)r;
	}
}

static void write_exact(int fd, const char *path, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("%s: write at %" PRIu64 ": %s", path, off + done,
			    r < 0 ? strerror(errno) : "short write");
		done += (size_t)r;
	}
}

static void log_open(struct log *lg, const char *path)
{
	unsigned char sb[32];

	lg->path = path;
	lg->fd = open(path, O_RDONLY);
	if (lg->fd < 0)
		die("%s: %s", path, strerror(errno));
	read_exact(lg->fd, path, sb, sizeof(sb), 0);
	if (le64(sb) != LW_MAGIC)
		die("%s: not a dm-log-writes log (bad magic)", path);
	if (le64(sb + 8) != LW_VERSION)
		die("%s: unsupported log version %" PRIu64, path, le64(sb + 8));
	lg->nr_entries = le64(sb + 16);
	lg->sectorsize = le32(sb + 24);
	if (lg->sectorsize < 512 || lg->sectorsize > 65536 ||
	    (lg->sectorsize & (lg->sectorsize - 1)))
		die("%s: bad sector size %" PRIu32, path, lg->sectorsize);
	lg->next = 0;
	lg->pos = lg->sectorsize;
}

/* Read the header of entry lg->next (at lg->pos) into e. */
static void read_entry(struct log *lg, struct entry *e)
{
	unsigned char *hdr = malloc(lg->sectorsize);
	size_t room = lg->sectorsize - 32;

	if (!hdr)
		die("out of memory");
	if (lg->next >= lg->nr_entries)
		die("%s: entry %" PRIu64 " is past the end (%" PRIu64 " entries)",
		    lg->path, lg->next, lg->nr_entries);
	read_exact(lg->fd, lg->path, hdr, lg->sectorsize, lg->pos);
	e->sector = le64(hdr);
	e->nr_sectors = le64(hdr + 8);
	e->flags = le64(hdr + 16);
	e->data_len = le64(hdr + 24);
	e->mark[0] = 0;
	if (e->flags & F_MARK) {
		size_t n = e->data_len < room ? (size_t)e->data_len : room;

		if (n >= sizeof(e->mark))
			n = sizeof(e->mark) - 1;
		memcpy(e->mark, hdr + 32, n);
		e->mark[n] = 0;
	}
	free(hdr);
}

/* Byte length of the data that follows the header of e in the log. */
static uint64_t data_bytes(const struct log *lg, const struct entry *e)
{
	if (e->flags & (F_DISCARD | F_MARK))
		return 0;
	return e->nr_sectors * lg->sectorsize;
}

/* Step over the entry just read (header and data). */
static void advance(struct log *lg, const struct entry *e)
{
	lg->pos += lg->sectorsize + data_bytes(lg, e);
	lg->next++;
}

/* Move to entry n by reading headers only. */
static void seek_entry(struct log *lg, uint64_t n)
{
	struct entry e;

	if (n < lg->next) {
		lg->next = 0;
		lg->pos = lg->sectorsize;
	}
	while (lg->next < n) {
		read_entry(lg, &e);
		advance(lg, &e);
	}
}

static void flags_str(uint64_t f, char *buf)
{
	buf[0] = 0;
	if (f & F_FLUSH)
		strcat(buf, "FLUSH|");
	if (f & F_FUA)
		strcat(buf, "FUA|");
	if (f & F_DISCARD)
		strcat(buf, "DISCARD|");
	if (f & F_MARK)
		strcat(buf, "MARK|");
	if (f & F_META)
		strcat(buf, "META|");
	if (!buf[0])
		strcpy(buf, "WRITE");
	else
		buf[strlen(buf) - 1] = 0;
}

static void zero_range(int fd, const char *path, bool blkdev, uint64_t off, uint64_t len)
{
	static char zeros[1 << 16];

	if (blkdev) {
		uint64_t range[2] = { off, len };

		if (ioctl(fd, BLKZEROOUT, range) == 0)
			return;
	} else if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     (off_t)off, (off_t)len) == 0) {
		return;
	}
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);

		write_exact(fd, path, zeros, n, off);
		off += n;
		len -= n;
	}
}

/* Apply entries from lg->next up to (not including) entry "end". */
static void replay(struct log *lg, int dev, const char *devpath, bool blkdev, uint64_t end)
{
	static char buf[1 << 20];
	struct entry e;

	while (lg->next < end) {
		uint64_t len, off, src;

		read_entry(lg, &e);
		len = e.nr_sectors * lg->sectorsize;
		off = e.sector * lg->sectorsize;
		if (lg->verbose) {
			char f[64];

			flags_str(e.flags, f);
			fprintf(stderr, "replay %" PRIu64 " %s %" PRIu64 " %" PRIu64 "%s%s\n",
				lg->next, f, e.sector, e.nr_sectors, e.mark[0] ? " " : "", e.mark);
		}
		if (e.flags & F_DISCARD) {
			zero_range(dev, devpath, blkdev, off, len);
		} else if (!(e.flags & F_MARK)) {
			src = lg->pos + lg->sectorsize;
			while (len) {
				size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);

				read_exact(lg->fd, lg->path, buf, n, src);
				write_exact(dev, devpath, buf, n, off);
				src += n;
				off += n;
				len -= n;
			}
		}
		advance(lg, &e);
	}
}

static uint64_t find_mark(struct log *lg, const char *name)
{
	struct entry e;

	seek_entry(lg, 0);
	while (lg->next < lg->nr_entries) {
		read_entry(lg, &e);
		if ((e.flags & F_MARK) && strcmp(e.mark, name) == 0)
			return lg->next;
		advance(lg, &e);
	}
	die("%s: no mark named '%s'", lg->path, name);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		die("bad %s '%s'", what, s);
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: logreplay --log LOG --list | --marks | --count-flush | --find-mark NAME\n"
		"       logreplay --log LOG --replay DEV [--start N] [--limit M | --end-mark NAME]\n"
		"       logreplay --log LOG --replay DEV --serve\n"
		"       (add -v to trace replayed entries)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *logpath = NULL, *devpath = NULL, *endmark = NULL, *findmark = NULL;
	bool list = false, marks = false, count = false, serve = false, verbose = false;
	bool have_limit = false;
	uint64_t start = 0, limit = 0;
	struct log lg;
	struct entry e;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--list")) {
			list = true;
		} else if (!strcmp(a, "--marks")) {
			marks = true;
		} else if (!strcmp(a, "--count-flush")) {
			count = true;
		} else if (!strcmp(a, "--serve")) {
			serve = true;
		} else if (!strcmp(a, "-v")) {
			verbose = true;
		} else if (v && !strcmp(a, "--log")) {
			logpath = v, i++;
		} else if (v && !strcmp(a, "--replay")) {
			devpath = v, i++;
		} else if (v && !strcmp(a, "--end-mark")) {
			endmark = v, i++;
		} else if (v && !strcmp(a, "--find-mark")) {
			findmark = v, i++;
		} else if (v && !strcmp(a, "--start")) {
			start = parse_u64(v, "--start"), i++;
		} else if (v && !strcmp(a, "--limit")) {
			limit = parse_u64(v, "--limit"), have_limit = true, i++;
		} else {
			usage();
		}
	}
	if (!logpath || (list + marks + count + !!findmark + !!devpath) != 1)
		usage();
	if ((have_limit || endmark || start || serve) && !devpath)
		usage();
	if ((have_limit && endmark) || (serve && (have_limit || endmark || start)))
		usage();

	log_open(&lg, logpath);
	lg.verbose = verbose;

	if (list || marks || count) {
		uint64_t nflush = 0, nfua = 0;

		while (lg.next < lg.nr_entries) {
			char f[64];

			read_entry(&lg, &e);
			flags_str(e.flags, f);
			if (list)
				printf("%" PRIu64 " %s %" PRIu64 " %" PRIu64 "%s%s\n", lg.next, f,
				       e.sector, e.nr_sectors, e.mark[0] ? " " : "", e.mark);
			else if (marks && (e.flags & F_MARK))
				printf("%" PRIu64 " %s\n", lg.next, e.mark);
			nflush += !!(e.flags & F_FLUSH);
			nfua += !!(e.flags & F_FUA);
			advance(&lg, &e);
		}
		if (count)
			printf("entries %" PRIu64 " flush %" PRIu64 " fua %" PRIu64
			       " flush_or_fua %" PRIu64 "\n", lg.nr_entries, nflush, nfua,
			       nflush + nfua);
		return 0;
	}
	if (findmark) {
		printf("%" PRIu64 "\n", find_mark(&lg, findmark));
		return 0;
	}

	/* Replay. */
	int dev = open(devpath, O_WRONLY);
	struct stat st;
	bool blkdev;

	if (dev < 0 || fstat(dev, &st) < 0)
		die("%s: %s", devpath, strerror(errno));
	blkdev = S_ISBLK(st.st_mode);
	if (start > lg.nr_entries)
		die("--start %" PRIu64 " is past the end (%" PRIu64 " entries)", start, lg.nr_entries);
	seek_entry(&lg, start);

	if (serve) {
		char line[128];

		setvbuf(stdout, NULL, _IOLBF, 0);
		while (fgets(line, sizeof(line), stdin)) {
			uint64_t n;

			line[strcspn(line, "\r\n")] = 0;
			if (!line[0])
				continue;
			n = parse_u64(line, "state");
			if (n < lg.next)
				die("state %" PRIu64 " is behind the device (at %" PRIu64 ")", n, lg.next);
			if (n > lg.nr_entries)
				die("state %" PRIu64 " is past the end (%" PRIu64 " entries)", n, lg.nr_entries);
			replay(&lg, dev, devpath, blkdev, n);
			if (fsync(dev) < 0)
				die("%s: fsync: %s", devpath, strerror(errno));
			printf("ok %" PRIu64 "\n", n);
		}
		return 0;
	}

	uint64_t end = lg.nr_entries;

	if (endmark)
		end = find_mark(&lg, endmark) + 1;
	else if (have_limit)
		end = limit;
	if (end > lg.nr_entries)
		die("--limit %" PRIu64 " is past the end (%" PRIu64 " entries)", end, lg.nr_entries);
	if (end < start)
		die("end %" PRIu64 " is before --start %" PRIu64, end, start);
	seek_entry(&lg, start);
	replay(&lg, dev, devpath, blkdev, end);
	if (fsync(dev) < 0)
		die("%s: fsync: %s", devpath, strerror(errno));
	if (close(dev) < 0)
		die("%s: close: %s", devpath, strerror(errno));
	return 0;
}
