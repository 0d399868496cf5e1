// SPDX-License-Identifier: GPL-2.0
/*
 * blkrestore: make IMAGE equal to BASE again, writing only the 4 KiB
 * blocks that differ (tests/vm/prog/odfdamage.py restores its scratch
 * images this way: a memcmp is much cheaper than a copy under TCG).
 *
 * usage: blkrestore BASE IMAGE     prints the number of blocks written
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char a[1 << 16], b[1 << 16];
	long long off = 0, written = 0;
	int fa, fb;

	if (argc != 3) {
		fprintf(stderr, "usage: blkrestore BASE IMAGE\n");
		return 2;
	}
	fa = open(argv[1], O_RDONLY);
	fb = open(argv[2], O_RDWR);
	if (fa < 0 || fb < 0) {
		perror("blkrestore: open");
		return 1;
	}
	for (;;) {
		ssize_t n = pread(fa, a, sizeof(a), off), m, i;

		if (n < 0) {
			perror("blkrestore: read");
			return 1;
		}
		if (n == 0)
			break;
		m = pread(fb, b, n, off);
		if (m < 0)
			m = 0;
		for (i = 0; i < n; i += 4096) {
			ssize_t len = n - i < 4096 ? n - i : 4096;

			if (i + len <= m && !memcmp(a + i, b + i, len))
				continue;
			if (pwrite(fb, a + i, len, off + i) != len) {
				perror("blkrestore: write");
				return 1;
			}
			written++;
		}
		off += n;
	}
	if (ftruncate(fb, off)) {
		perror("blkrestore: truncate");
		return 1;
	}
	printf("%lld\n", written);
	return 0;
}
