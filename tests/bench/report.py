#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: turn the raw lines tests/bench/guest.sh wrote into
markdown tables (absolute numbers and ratios).

usage: report.py RAW [--note TEXT]... [--plot PNG]

Raw lines: "KIND FS LAYOUT SIZE CMD key=value..." (rdbench's output
prefixed by what was measured) and "info KEY VALUE...".
"""
import statistics
import sys
from collections import defaultdict

FS = ("bare", "ovl", "union")


def parse(path):
    data = defaultdict(list)  # (kind, fs, layout, size) -> [dict]
    info = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "info":
                info[w[1]] = " ".join(w[2:])
                continue
            kind, fs, layout, size = w[0], w[1], int(w[2]), int(w[3])
            kv = dict(x.split("=", 1) for x in w[5:] if "=" in x)
            data[(kind, fs, layout, size)].append({k: float(v) for k, v in kv.items()})
    return data, info


def med(data, kind, fs, layout, size, field):
    rows = data.get((kind, fs, layout, size))
    if not rows:
        return None
    return statistics.median(r[field] for r in rows)


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return "–"
    return "%.2f" % (a / b)


def num(v, scale=1.0, fmt="%.2f"):
    return "–" if v is None else fmt % (v / scale)


def table(head, rows, left=2):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(" --- " if i < left else " ---: " for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: report.py RAW [--note TEXT]... [--plot PNG]")
    plot = None
    if "--plot" in args:
        i = args.index("--plot")
        plot = args[i + 1]
        del args[i:i + 2]
    notes = []
    while "--note" in args:
        i = args.index("--note")
        notes.append(args[i + 1])
        del args[i:i + 2]
    data, info = parse(args[0])
    settings = dict(x.split("=", 1) for x in info.get("settings", "").split() if "=" in x)
    keys = sorted({(k[2], k[3]) for k in data
                   if k[0] not in ("mem", "walkcold", "walkwarm", "walkmem") and not k[0].startswith("work")})
    out = ["# make bench: unionfs, overlayfs and bare ext4", ""]
    out.append("Guest kernel %s, %s s in the guest. %s" % (
        info.get("kernel", "?"), info.get("guest_seconds", "?"),
        " ".join(notes)))
    out.append("Settings: %s." % ", ".join("%s=%s" % kv for kv in settings.items()))
    out.append("bare = one ext4 directory with the same number of entries; "
               "ovl = overlayfs and union = unionfs over the same ext4 branch "
               "directories; every ratio is of numbers from this one VM run.")
    out.append("")

    if not keys:
        out.append("(No readdir measurements: BENCH_PARTS=%s.)" % settings.get("parts", "?"))
        out.append("")
    if keys:
        readdir_tables(out, data, settings, keys)
    walk_tables(out, data, settings)
    work_tables(out, data, settings, info)
    mem_tables(out, data, settings, keys)
    if plot:
        out.append(plot_listing(plot, data, keys))
    print("\n".join(out).rstrip())


def readdir_tables(out, data, settings, keys):
    out.append("## First listing (ms; caches dropped, fresh mount; median of %s)"
               % settings.get("cold_reps", "?"))
    out.append("")
    out.append("`union` lists with no readdir state on the ODF (%s); `union+state` "
               "lists from a fresh mount with the state the previous listing left."
               % ("state files deleted" if settings.get("union_cold") == "rmstate"
                  else "freshly made ODF"))
    out.append("")
    rows = []
    for layout, size in keys:
        v = {fs: med(data, "cold", fs, layout, size, "median_us") for fs in FS}
        st = med(data, "cold-state", "union", layout, size, "median_us")
        rows.append([str(layout), str(size), num(v["bare"], 1e3), num(v["ovl"], 1e3),
                     num(v["union"], 1e3), num(st, 1e3),
                     ratio(v["union"], v["bare"]), ratio(v["union"], v["ovl"]),
                     ratio(v["ovl"], v["bare"]), ratio(st, v["ovl"])])
    out.append(table(["branches", "entries", "bare", "ovl", "union", "union+state",
                      "union/bare", "union/ovl", "ovl/bare", "union+state/ovl"], rows))
    out.append("")

    out.append("## Repeated listing (ms; open, list to the end, close; warm; median of "
               "%s × min(10, 100000 / entries) listings)" % settings.get("reps", "?"))
    out.append("")
    rows = []
    for layout, size in keys:
        v = {fs: med(data, "warm", fs, layout, size, "median_us") for fs in FS}
        rows.append([str(layout), str(size), num(v["bare"], 1e3), num(v["ovl"], 1e3),
                     num(v["union"], 1e3), ratio(v["union"], v["bare"]),
                     ratio(v["union"], v["ovl"]), ratio(v["ovl"], v["bare"])])
    out.append(table(["branches", "entries", "bare", "ovl", "union",
                      "union/bare", "union/ovl", "ovl/bare"], rows))
    out.append("")

    for kind, title in (
            ("seek", "lseek to a random offset + one getdents64 of %s bytes"
             % settings.get("seek_buf", "?")),
            ("seekl", "seekdir to a random telldir cookie + readdir (glibc: "
             "one 32 KiB getdents64)"),
            ("seeko", "open + lseek to a random offset + one getdents64 of %s bytes "
             "+ close (a fresh open for each seek)" % settings.get("seek_buf", "?"))):
        count = settings.get("seeks", "?")
        if kind == "seeko":
            count += " (× 10000 / entries above 10000 entries, at least 100)"
        out.append("## %s (µs per seek+read; median of %s)" % (title, count))
        out.append("")
        out.append("Offsets recorded by a full listing of the directory. "
                   "`×N` columns: the cost relative to the smallest directory of the "
                   "same branch count (flat = 1).")
        out.append("")
        rows = []
        smallest = {}
        for layout, size in keys:
            v = {fs: med(data, kind, fs, layout, size, "median_us") for fs in FS}
            base = smallest.setdefault(layout, v)
            rows.append([str(layout), str(size), num(v["bare"]), num(v["ovl"]), num(v["union"]),
                         ratio(v["union"], v["bare"]), ratio(v["union"], v["ovl"]),
                         ratio(v["ovl"], v["bare"]),
                         ratio(v["ovl"], base["ovl"]), ratio(v["union"], base["union"])])
        out.append(table(["branches", "entries", "bare", "ovl", "union", "union/bare",
                          "union/ovl", "ovl/bare", "ovl ×N", "union ×N"], rows))
        out.append("")



def walk_tables(out, data, settings):
    walks = sorted({k[3] for k in data if k[0] in ("walkcold", "walkwarm")})
    for size in walks:
        out.append("## Walk: `find -printf %%s` (lstat of every name) of a tree of %d files "
                   "(ms; median of %s)" % (size, settings.get("walk_reps", "?")))
        out.append("")
        out.append("A lower tree in directories of 100 files, a quarter of them merged with "
                   "20 upper files each. union = udba=reval (the default: each cached name "
                   "checks its branches for direct edits); union-none = udba=none. cold = "
                   "fresh mount, caches dropped; warm = the walk right after.")
        out.append("")
        rows = []
        for kind in ("walkcold", "walkwarm"):
            v = {fs: med(data, kind, fs, 0, size, "us")
                 for fs in ("bare", "ovl", "union", "union-none")}
            rows.append([kind[4:], num(v["bare"], 1e3), num(v["ovl"], 1e3),
                         num(v["union"], 1e3), num(v["union-none"], 1e3),
                         ratio(v["union"], v["ovl"]), ratio(v["union"], v["union-none"]),
                         ratio(v["union"], v["bare"]), ratio(v["ovl"], v["bare"])])
        out.append(table(["caches", "bare", "ovl", "union", "union-none", "union/ovl",
                          "union/union-none", "union/bare", "ovl/bare"], rows, left=1))
        out.append("")
        rows = []
        for fs in ("bare", "ovl", "union", "union-none"):
            sl = med(data, "walkmem", fs, 0, 0, "slab_kb")
            su = med(data, "walkmem", fs, 0, 0, "sunreclaim_kb")
            rows.append([fs, num(sl, fmt="%.0f"), num(su, fmt="%.0f")])
        rows.append(["union/ovl",
                     ratio(med(data, "walkmem", "union", 0, 0, "slab_kb"),
                           med(data, "walkmem", "ovl", 0, 0, "slab_kb")),
                     ratio(med(data, "walkmem", "union", 0, 0, "sunreclaim_kb"),
                           med(data, "walkmem", "ovl", 0, 0, "sunreclaim_kb"))])
        out.append("Kernel memory grown by the cold walk (kB, median of %s):"
                   % settings.get("walk_reps", "?"))
        out.append("")
        out.append(table(["fs", "Slab", "SUnreclaim"], rows, left=1))
        out.append("")



def mem_tables(out, data, settings, keys):
    mem = sorted({(k[2], k[3]) for k in data if k[0] == "mem"})
    for layout, size in mem:
        out.append("## Kernel memory: %d-branch directory of %d entries, open and listed "
                   "(kB, /proc/meminfo after − before; median of %s)"
                   % (layout, size, settings.get("mem_reps", "?")))
        out.append("")
        rows = []
        for fs in FS:
            v = {f: med(data, "mem", fs, layout, size, f + "_kb")
                 for f in ("slab", "sunreclaim", "cached", "vmalloc")}
            rows.append([fs, num(v["slab"], fmt="%.0f"), num(v["sunreclaim"], fmt="%.0f"),
                         "–" if v["slab"] is None else "%.0f" % (v["slab"] * 1024 / size),
                         num(v["cached"], fmt="%.0f"), num(v["vmalloc"], fmt="%.0f")])
        out.append(table(["fs", "Slab", "SUnreclaim", "Slab bytes/entry",
                          "page cache (Cached)", "VmallocUsed"], rows, left=1))
        out.append("")
        s = {fs: med(data, "mem", fs, layout, size, "slab_kb") for fs in FS}
        out.append("Slab ratios: union/bare %s, union/ovl %s, ovl/bare %s "
                   "(– where the denominator is not above zero)."
                   % (ratio(s["union"], s["bare"]), ratio(s["union"], s["ovl"]),
                      ratio(s["ovl"], s["bare"])))
        out.append("")


WORK = (
    ("statcold", "stat every name of the source tree (find -printf %s), cold"),
    ("statwarm", "the same, warm"),
    ("du", "du -s of the source tree, cold"),
    ("lsR", "ls -lR of the source tree, cold"),
    ("tar", "read every file of the source tree (tar -cf - . \\| wc -c), cold"),
    ("gscold", "lstat by name of the walk tree's lower files (git status), cold"),
    ("gswarm", "the same, warm"),
    ("copyup", "copy-up of a {big_mb} MiB file (bare: cp + sync)"),
    ("sparse", "copy-up of a {sparse_gb} GiB sparse file with 1 MiB of data (bare: cp + sync)"),
    ("churn", "create then unlink {churn} files in a lower directory"),
    ("unlink", "unlink {unlink} lower files (whiteouts)"),
)


def work_tables(out, data, settings, info):
    if not any(k[0].startswith("work") for k in data):
        return
    out.append("## Workloads (ms; fresh mount each; median of %s)" % settings.get("work_reps", "?"))
    out.append("")
    out.append("The source tree: %s. `ODF KiB` is what the union's ODF disk wrote during the "
               "workload (median); a read-only workload should write nothing. Changing "
               "workloads start from a fresh ODF and upper directory."
               % info.get("work", "?"))
    out.append("")
    rows = []
    for kind, what in WORK:
        v = {fs: med(data, "work" + kind, fs, 0, 0, "us") for fs in FS}
        odf = med(data, "work" + kind, "union", 0, 0, "odf_kb")
        try:
            what = what.format(**settings)
        except KeyError:
            pass
        rows.append([what, num(v["bare"], 1e3, "%.0f"), num(v["ovl"], 1e3, "%.0f"),
                     num(v["union"], 1e3, "%.0f"), ratio(v["union"], v["ovl"]),
                     ratio(v["union"], v["bare"]), ratio(v["ovl"], v["bare"]),
                     num(odf, fmt="%.0f")])
    out.append(table(["workload", "bare", "ovl", "union", "union/ovl", "union/bare",
                      "ovl/bare", "ODF KiB"], rows, left=1))
    out.append("")


def plot_listing(path, data, keys):
    """Cost vs size of first listing, repeated listing and seeks, one panel
    each, log-log, per branch count.  Returns a line for the report."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "(No plot: python3-matplotlib is not installed; make bench installs it.)"
    if not keys:
        return "(No plot: no readdir measurements.)"
    panels = (("cold", "first listing (ms)", 1e3), ("warm", "repeated listing (ms)", 1e3),
              ("seek", "lseek + getdents64 (µs)", 1), ("seekl", "seekdir + readdir (µs)", 1),
              ("seeko", "open + lseek + getdents64 + close (µs)", 1))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4))
    for ax, (kind, title, scale) in zip(axes, panels):
        for layout in sorted({k[0] for k in keys}):
            sizes = sorted(k[1] for k in keys if k[0] == layout)
            for fs, style in (("bare", ":"), ("ovl", "--"), ("union", "-")):
                pts = [(n, med(data, kind, fs, layout, n, "median_us")) for n in sizes]
                pts = [(n, v / scale) for n, v in pts if v]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                            label="%s, %d branches" % (fs, layout))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("entries")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return "Plot of listing and seek costs against directory size: `%s`." % path


if __name__ == "__main__":
    main()
