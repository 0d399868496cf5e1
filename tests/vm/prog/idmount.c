// SPDX-License-Identifier: GPL-2.0
/*
 * idmount: an idmapped bind mount (mount_setattr(MOUNT_ATTR_IDMAP)), which
 * util-linux 2.38's mount(8) cannot make (X-mount.idmap came in 2.39).
 *
 * usage: idmount SOURCE TARGET MAP...
 * Each MAP is "FROM:TO:COUNT": ids FROM..FROM+COUNT-1 of the file system
 * under SOURCE show as TO..TO+COUNT-1 under TARGET, for users and groups
 * alike (the lines of a user namespace's uid_map and gid_map).  Ids that
 * no MAP covers show as the overflow id (65534), as on any idmapped
 * mount.  Exits 0 with the mount made, 1 with a message otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mount.h>

#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
struct mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};
#endif

static void die(const char *what)
{
	fprintf(stderr, "idmount: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

int main(int argc, char **argv)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
	char map[4096] = "", path[64];
	int sync_pipe[2], tree, ns, i;
	unsigned long from, to, count;
	pid_t pid;
	char c;

	if (argc < 4) {
		fprintf(stderr, "usage: idmount SOURCE TARGET FROM:TO:COUNT...\n");
		return 2;
	}
	/*
	 * A user namespace maps its ids (the file system's, here) to the
	 * ids of its parent (what the mount shows): "FROM TO COUNT".
	 */
	for (i = 3; i < argc; i++) {
		if (sscanf(argv[i], "%lu:%lu:%lu", &from, &to, &count) != 3) {
			fprintf(stderr, "idmount: bad map '%s'\n", argv[i]);
			return 2;
		}
		snprintf(map + strlen(map), sizeof(map) - strlen(map),
			 "%lu %lu %lu\n", from, to, count);
	}
	/* A child holds the namespace open while its maps are written. */
	if (pipe(sync_pipe))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sync_pipe[1]);
		if (unshare(CLONE_NEWUSER))
			_exit(1);
		/* The parent reads the namespace, then closes the pipe. */
		if (read(sync_pipe[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(sync_pipe[0]);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	/* Wait for the child's unshare(): its namespace differs from ours. */
	for (i = 0; i < 1000; i++) {
		char a[64] = "", b[64] = "";

		if (readlink(path, a, sizeof(a) - 1) > 0 &&
		    readlink("/proc/self/ns/user", b, sizeof(b) - 1) > 0 &&
		    strcmp(a, b))
			break;
		usleep(1000);
	}
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	write_file(path, map);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		die(path);
	close(sync_pipe[1]);
	waitpid(pid, NULL, 0);

	tree = syscall(SYS_open_tree, AT_FDCWD, argv[1],
		       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		die("open_tree");
	attr.userns_fd = ns;
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr,
		    sizeof(attr)))
		die("mount_setattr(MOUNT_ATTR_IDMAP)");
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, argv[2],
		    MOVE_MOUNT_F_EMPTY_PATH))
		die("move_mount");
	return 0;
}
