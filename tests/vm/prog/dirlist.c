// SPDX-License-Identifier: GPL-2.0
/*
 * dirlist: list a directory with getdents64 the way a test needs to see it.
 *
 * usage: dirlist [-b BUFSIZE] [-s OFFSET] [-e] [-n COUNT] DIR
 *   -b  getdents64 buffer size in bytes (default 32768; small sizes force
 *       one entry per call)
 *   -s  lseek(SEEK_SET) to OFFSET before listing
 *   -e  lseek(SEEK_END) before listing; prints the offset it returned
 *   -n  stop after COUNT entries
 * Prints one line per entry: "D_OFF D_INO D_TYPE NAME", then
 * "end POSITION" with lseek(fd, 0, SEEK_CUR).  Errors go to stderr with
 * the errno name, exit 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

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

static void die(const char *what)
{
	fprintf(stderr, "dirlist: %s: %s (%s)\n", what, strerror(errno),
		strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	exit(1);
}

int main(int argc, char **argv)
{
	size_t bufsize = 32768;
	long long seek_to = -1, count = -1;
	int opt, fd, at_end = 0;
	char *buf;

	while ((opt = getopt(argc, argv, "b:s:en:")) != -1) {
		switch (opt) {
		case 'b': bufsize = strtoul(optarg, NULL, 0); break;
		case 's': seek_to = strtoll(optarg, NULL, 0); break;
		case 'e': at_end = 1; break;
		case 'n': count = strtoll(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: dirlist [-b BUFSIZE] [-s OFFSET] [-e] [-n COUNT] DIR\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: dirlist [-b BUFSIZE] [-s OFFSET] [-e] [-n COUNT] DIR\n");
		return 2;
	}
	fd = open(argv[optind], O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die("open");
	if (seek_to >= 0 && lseek(fd, seek_to, SEEK_SET) < 0)
		die("lseek SEEK_SET");
	if (at_end) {
		off_t end = lseek(fd, 0, SEEK_END);

		if (end < 0)
			die("lseek SEEK_END");
		printf("seek_end %lld\n", (long long)end);
	}
	buf = malloc(bufsize);
	if (!buf)
		die("malloc");
	while (count != 0) {
		long n = syscall(SYS_getdents64, fd, buf, bufsize);
		long pos;

		if (n < 0)
			die("getdents64");
		if (n == 0)
			break;
		for (pos = 0; pos < n && count != 0;) {
			struct linux_dirent64 *d = (void *)(buf + pos);

			printf("%lld %llu %s %s\n", (long long)d->d_off,
			       (unsigned long long)d->d_ino,
			       type_name(d->d_type), d->d_name);
			pos += d->d_reclen;
			if (count > 0)
				count--;
			if (count == 0 && pos < n &&
			    lseek(fd, d->d_off, SEEK_SET) < 0)
				die("lseek to stop point");
		}
	}
	printf("end %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	return 0;
}
