#!/usr/bin/env python3
"""ab3.py CARRY MIRROR WORKDIR ROUNDS BIN...: ab.py's alternated rounds from file:// (a fresh
root each, `sync` before each, `zstd -dc` of the repack every round), for builds that print the
ablation build's X_TRACE lines: per install, when the extraction thread reached each point
(seconds from the stream's start, t0) and, per thread name, CPU, run-queue wait and voluntary /
involuntary context switches (summed over the threads of that name). Medians per build."""
import collections, glob, os, re, shutil, statistics, subprocess, sys, time

C, M, W, rounds, bins = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
shutil.rmtree(W, ignore_errors=True)

def root(p):
    os.makedirs(os.path.join(p, "etc", "ld.so.conf.d"))
    os.makedirs(os.path.join(p, "etc", "cudnnctl", "pins.d"))
    open(os.path.join(p, "etc", "ld.so.conf"), "w").write("include /etc/ld.so.conf.d/*.conf\n")
    return p

site = os.path.join(W, "site")
subprocess.run([os.path.join(C, bins[-1], "cudnnctl"), "--root", root(os.path.join(W, "m")),
                "--mirror", "file://" + M, "--platform", "linux-x86_64", "--cuda", "13", "mirror",
                "9.19.0", "--to", site, "--repack", "zstd"], check=True, stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
zst = glob.glob(os.path.join(site, "**", "*.tar.zst"), recursive=True)[0]
walls = collections.defaultdict(list)
points = collections.defaultdict(lambda: collections.defaultdict(list))
threads = collections.defaultdict(lambda: collections.defaultdict(list))
zstd = []
for r in range(rounds):
    order = bins if r % 2 == 0 else list(reversed(bins))
    os.sync(); t0 = time.monotonic()
    subprocess.run(["zstd", "-dc", zst], stdout=subprocess.DEVNULL, check=True)
    zstd.append(time.monotonic() - t0)
    for b in order:
        t = os.path.join(W, "t")
        shutil.rmtree(t, ignore_errors=True)
        root(t)
        shutil.copy(os.path.join(site, "cudnnctl-pins.sha256"), os.path.join(t, "etc/cudnnctl/pins.d/site.sha256"))
        os.sync(); time.sleep(0.2)
        t0 = time.monotonic()
        p = subprocess.run([os.path.join(C, b, "cudnnctl"), "--root", t, "--mirror", "file://" + site,
                            "--platform", "linux-x86_64", "--cuda", "13", "-vv", "install", "9.19.0",
                            "--no-smoke"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            print("install failed:", b, p.stderr[-400:]); sys.exit(1)
        walls[b].append(wall / zstd[-1])
        m0 = re.search(r"X: t0 at ([0-9.]+)", p.stderr)
        base = float(m0.group(1)) if m0 else 0.0  # builds without X_TRACE: only the timing lines
        pts = []
        for what, n, at in re.findall(r"X: extract (.+?) (-?\d+) at ([0-9.]+)", p.stderr):
            key = what if what != "MB" else None
            if what.startswith("big"):
                key = "%s %dMB" % (what, int(n) >> 20)
            if key:
                points[b][key].append(float(at) - base)
                pts.append("%s %.3f" % (key, float(at) - base))
        for what in ("archive verified", "extraction done", "validated"):
            m = re.search(r"timing: %s at ([0-9.]+)" % what, p.stderr)
            if m:
                points[b][what].append(float(m.group(1)))
                pts.append("%s %.3f" % (what, float(m.group(1))))
        th = collections.defaultdict(lambda: [0.0, 0.0, 0, 0, 0])
        for name, cpu, rq, nv, niv in re.findall(
                r"X: thread (.+?) ends at [0-9.]+ cpu ([0-9.]+) rqwait ([0-9.]+) nvcsw (\d+) nivcsw (\d+)", p.stderr):
            x = th[name]; x[0] += float(cpu); x[1] += float(rq); x[2] += int(nv); x[3] += int(niv); x[4] += 1
        for name, x in th.items():
            for i, k in enumerate(("cpu", "rq", "nvcsw", "nivcsw")):
                threads[b][name + " " + k].append(x[i])
        print("round %d %-12s wall %.3f zstd %.3f | %s" % (r, b, wall, zstd[-1], ", ".join(pts)))
        print("    threads: " + "; ".join("%s x%d cpu %.3f rq %.3f vcsw %d ivcsw %d" % (n, x[4], x[0], x[1], x[2], x[3]) for n, x in th.items()))
med = statistics.median
print("zstd -dc median %.3f s over %d rounds" % (med(zstd), len(zstd)))
for b in bins:
    print("%-12s wall / zstd -dc of its round: median %.3f" % (b, med(walls[b])))
    print("    points (median s from t0): " + ", ".join("%s %.3f" % (k, med(v)) for k, v in sorted(points[b].items(), key=lambda kv: med(kv[1]))))
    print("    threads (median): " + ", ".join("%s %.3f" % (k, med(v)) for k, v in threads[b].items()))
