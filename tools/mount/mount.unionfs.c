// SPDX-License-Identifier: GPL-2.0
/*
 * mount.unionfs - the mount(8) helper of odf-unionfs.
 *
 * mount(8) runs /sbin/mount.unionfs SOURCE TARGET [-sfnvrw] [-N NS]
 * [-o OPTIONS] for every unionfs mount, from the command line and from
 * /etc/fstab.  The helper names the ODF volume the way fstab names
 * devices, then hands the mount back to mount(8) with -i (no helper):
 *
 *   odf=UUID=...  odf=LABEL=...  (also PARTUUID=, PARTLABEL=)
 *       resolved to the device through libblkid (the ODF volume is an
 *       ext4 file system, so blkid knows its UUID and label);
 *   no odf= option and a SOURCE other than "none"
 *       SOURCE is the ODF volume.  This is the fstab form that gets the
 *       ODF checked at boot: with a pass number, fsck(8) finds the
 *       device in fstab with type unionfs and runs fsck.unionfs (odfck)
 *       on it before the mount.
 *
 * The kernel sees only odf=DEVICE-OR-DIRECTORY; everything else in the
 * options is passed through unchanged.  Exit status: mount(8)'s, or 1
 * for bad usage and 32 when the ODF volume cannot be found.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <blkid/blkid.h>

#define MOUNT_USAGE	1
#define MOUNT_FAILURE	32

static const char *prog = "mount.unionfs";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s SOURCE TARGET [-fnsvrw] [-N namespace] [-o options]\n"
"\n"
"The mount(8) helper of unionfs: resolves odf=UUID=..., odf=LABEL=...\n"
"(and a SOURCE naming the ODF volume when odf= is not given) to the\n"
"ODF device, then runs mount -i -t unionfs with the resolved options.\n"
"See unionfs(5).\n", prog);
}

/* "UUID=x", "LABEL=x", "PARTUUID=x", "PARTLABEL=x": a blkid tag. */
static int is_tag(const char *s)
{
	static const char *const tags[] = {
		"UUID=", "LABEL=", "PARTUUID=", "PARTLABEL=",
	};
	size_t i;

	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (!strncmp(s, tags[i], strlen(tags[i])))
			return 1;
	return 0;
}

/* The device of a tag, or NULL with a message naming the tag. */
static char *resolve(const char *spec)
{
	char *dev;

	if (!is_tag(spec))
		return strdup(spec);
	dev = blkid_evaluate_tag(spec, NULL, NULL);
	if (!dev)
		fprintf(stderr, "%s: no ODF volume with %s: blkid finds no "
			"such device (is it attached? blkid -t %s)\n", prog,
			spec, spec);
	return dev;
}

/* Append ",opt" (or "opt") to a growing option string. */
static int append(char **s, size_t *len, const char *opt)
{
	size_t n = strlen(opt);
	char *p = realloc(*s, *len + n + 2);

	if (!p)
		return -1;
	if (*len)
		p[(*len)++] = ',';
	memcpy(p + *len, opt, n + 1);
	*len += n;
	*s = p;
	return 0;
}

int main(int argc, char **argv)
{
	const char *source, *target, *opts = "", *ns = NULL;
	char *copy, *tok, *save, *out = NULL, *dev, *odfopt;
	const char *margv[24];
	size_t len = 0;
	int c, margc = 0, have_odf = 0;
	int f_fake = 0, f_nomtab = 0, f_sloppy = 0, f_verbose = 0;
	int f_ro = 0, f_rw = 0;

	if (argc > 0 && argv[0]) {
		const char *b = strrchr(argv[0], '/');

		prog = b ? b + 1 : argv[0];
	}
	while ((c = getopt(argc, argv, "fnsvrwo:N:t:h")) != -1) {
		switch (c) {
		case 'f': f_fake = 1; break;
		case 'n': f_nomtab = 1; break;
		case 's': f_sloppy = 1; break;
		case 'v': f_verbose = 1; break;
		case 'r': f_ro = 1; break;
		case 'w': f_rw = 1; break;
		case 'o': opts = optarg; break;
		case 'N': ns = optarg; break;
		case 't':
			if (strcmp(optarg, "unionfs")) {
				fprintf(stderr, "%s: type %s is not unionfs\n",
					prog, optarg);
				return MOUNT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return MOUNT_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return MOUNT_USAGE;
	}
	source = argv[optind];
	target = argv[optind + 1];

	copy = strdup(opts);
	if (!copy)
		goto nomem;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "odf=", 4)) {
			if (append(&out, &len, tok))
				goto nomem;
			continue;
		}
		if (have_odf++) {
			/* the kernel says what is wrong with two odf= */
			if (append(&out, &len, tok))
				goto nomem;
			continue;
		}
		dev = resolve(tok + 4);
		if (!dev)
			return MOUNT_FAILURE;
		if (asprintf(&odfopt, "odf=%s", dev) < 0 ||
		    append(&out, &len, odfopt))
			goto nomem;
		free(odfopt);
		free(dev);
	}
	if (!have_odf && *source && strcmp(source, "none")) {
		dev = resolve(source);
		if (!dev)
			return MOUNT_FAILURE;
		if (asprintf(&odfopt, "odf=%s", dev) < 0 ||
		    append(&out, &len, odfopt))
			goto nomem;
		free(odfopt);
		source = dev;	/* /proc/mounts names the device */
	}

	margv[margc++] = "mount";
	margv[margc++] = "-i";		/* no helper: this is the helper */
	margv[margc++] = "-t";
	margv[margc++] = "unionfs";
	if (f_fake)
		margv[margc++] = "-f";
	if (f_nomtab)
		margv[margc++] = "-n";
	if (f_sloppy)
		margv[margc++] = "-s";
	if (f_verbose)
		margv[margc++] = "-v";
	if (f_ro)
		margv[margc++] = "-r";
	if (f_rw)
		margv[margc++] = "-w";
	if (ns) {
		margv[margc++] = "-N";
		margv[margc++] = ns;
	}
	if (out) {
		margv[margc++] = "-o";
		margv[margc++] = out;
	}
	margv[margc++] = source;
	margv[margc++] = target;
	margv[margc] = NULL;
	if (f_verbose) {
		int i;

		fprintf(stderr, "%s:", prog);
		for (i = 0; i < margc; i++)
			fprintf(stderr, " %s", margv[i]);
		fputc('\n', stderr);
	}
	execvp("mount", (char *const *)margv);
	fprintf(stderr, "%s: cannot run mount: %s\n", prog, strerror(errno));
	return MOUNT_FAILURE;
nomem:
	fprintf(stderr, "%s: out of memory\n", prog);
	return MOUNT_FAILURE;
}
