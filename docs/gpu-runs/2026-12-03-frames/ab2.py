#!/usr/bin/env python3
"""ab2.py CARRY MIRROR WORKDIR ROUNDS [A B]: the repack as the builds write it, side by side.
Build A (default `before`) writes site-one (before: libarchive's one zstd stream), build B
(default `after`) site-frames (independent 1 MiB frames). Every round (order reversed every other round): `zstd -dc` of
both repacks, install by `before` from site-one and by `after` from site-frames (file://, a
fresh root each, `sync` before each). Prints medians and the per-round ratios of each install
to both `zstd -dc`s, so that the frames' own cost to `zstd -dc` shows."""
import glob, os, re, shutil, statistics, subprocess, sys, time

C, M, W, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
A, B = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else ("before", "after")
shutil.rmtree(W, ignore_errors=True)

def root(p):
    os.makedirs(os.path.join(p, "etc", "ld.so.conf.d"))
    os.makedirs(os.path.join(p, "etc", "cudnnctl", "pins.d"))
    open(os.path.join(p, "etc", "ld.so.conf"), "w").write("include /etc/ld.so.conf.d/*.conf\n")
    return p

sites = {}
for b, name in ((A, "one"), (B, "frames")):
    site = os.path.join(W, "site-" + name)
    subprocess.run([os.path.join(C, b, "cudnnctl"), "--root", root(os.path.join(W, "m-" + name)),
                    "--mirror", "file://" + M, "--platform", "linux-x86_64", "--cuda", "13", "mirror",
                    "9.19.0", "--to", site, "--repack", "zstd"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    zst = glob.glob(os.path.join(site, "**", "*.tar.zst"), recursive=True)[0]
    sites[b] = (site, zst)
    print("%s: %s, %d bytes" % (name, zst, os.path.getsize(zst)))
    subprocess.run(["zstd", "-lv", zst], stderr=subprocess.STDOUT)

def zstd_dc(zst):
    os.sync(); t0 = time.monotonic()
    subprocess.run(["zstd", "-dc", zst], stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0

def install(b):
    site = sites[b][0]
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
    cpu = re.search(r"timing: pipe waits: (.*)", p.stderr)
    return wall, cpu.group(1) if cpu else ""

rows = []
for r in range(rounds):
    order = [A, B] if r % 2 == 0 else [B, A]
    z = {"one": zstd_dc(sites[A][1]), "frames": zstd_dc(sites[B][1])}
    w = {}
    for b in order:
        w[b], line = install(b)
        print("round %d %-6s wall %.3f | zstd -dc one %.3f frames %.3f | %s" % (r, b, w[b], z["one"], z["frames"], line))
    rows.append((z, w))
med = statistics.median
print("medians over %d rounds:" % rounds)
print("  zstd -dc: %s's repack %.3f s, %s's %.3f s" % (A, med(x[0]["one"] for x in rows), B, med(x[0]["frames"] for x in rows)))
print("  (one = %s's site, frames = %s's)" % (A, B))
for b in (A, B):
    print("  install %-6s %.3f s; / zstd -dc of one stream %.3f; / zstd -dc of frames %.3f" %
          (b, med(x[1][b] for x in rows), med(x[1][b] / x[0]["one"] for x in rows),
           med(x[1][b] / x[0]["frames"] for x in rows)))
