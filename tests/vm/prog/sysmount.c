// SPDX-License-Identifier: GPL-2.0
/*
 * sysmount: mount(2) and umount2(2) without mount(8), so a test sees the
 * errno the kernel returned.
 *
 * usage: sysmount mount SOURCE TARGET FSTYPE [FLAGS [DATA]]
 *        sysmount remount TARGET FLAGS [DATA]
 *        sysmount umount TARGET
 * FLAGS is a comma-separated list of ro, remount, none.
 * Prints OK or the errno name (ENOENT, EINVAL, ...) and exits 0; exits 2
 * on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

static const struct {
	int err;
	const char *name;
} names[] = {
	{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EIO, "EIO" },
	{ ENXIO, "ENXIO" }, { EBADF, "EBADF" }, { ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { ENOTBLK, "ENOTBLK" },
	{ EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { EXDEV, "EXDEV" },
	{ ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
	{ EINVAL, "EINVAL" }, { EMFILE, "EMFILE" }, { ENOSPC, "ENOSPC" },
	{ EROFS, "EROFS" }, { ENAMETOOLONG, "ENAMETOOLONG" },
	{ ELOOP, "ELOOP" }, { EOPNOTSUPP, "EOPNOTSUPP" },
	{ EUCLEAN, "EUCLEAN" }, { ESTALE, "ESTALE" },
	{ EOVERFLOW, "EOVERFLOW" }, { ENOTEMPTY, "ENOTEMPTY" },
};

static void report(int rc)
{
	size_t i;

	if (rc == 0) {
		puts("OK");
		return;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].err == errno) {
			puts(names[i].name);
			return;
		}
	}
	printf("E%d\n", errno);
}

static unsigned long parse_flags(const char *spec)
{
	char *copy = strdup(spec), *tok, *save = NULL;
	unsigned long fl = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "ro"))
			fl |= MS_RDONLY;
		else if (!strcmp(tok, "remount"))
			fl |= MS_REMOUNT;
		else if (strcmp(tok, "none")) {
			fprintf(stderr, "sysmount: unknown flag %s\n", tok);
			exit(2);
		}
	}
	free(copy);
	return fl;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && argc <= 7 && !strcmp(argv[1], "mount")) {
		report(mount(argv[2], argv[3], argv[4],
			     argc > 5 ? parse_flags(argv[5]) : 0,
			     argc > 6 ? argv[6] : NULL));
	} else if (argc >= 4 && argc <= 5 && !strcmp(argv[1], "remount")) {
		report(mount(NULL, argv[2], NULL,
			     parse_flags(argv[3]) | MS_REMOUNT,
			     argc > 4 ? argv[4] : NULL));
	} else if (argc == 3 && !strcmp(argv[1], "umount")) {
		report(umount2(argv[2], 0));
	} else {
		fprintf(stderr, "usage: sysmount mount SOURCE TARGET FSTYPE [FLAGS [DATA]]\n"
				"       sysmount remount TARGET FLAGS [DATA]\n"
				"       sysmount umount TARGET\n");
		return 2;
	}
	return 0;
}
