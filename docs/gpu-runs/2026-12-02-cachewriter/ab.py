#!/usr/bin/env python3
"""ab.py CARRY MIRROR WORKDIR ROUNDS BIN...: install from a repack site (file://), the builds
CARRY/<BIN>/cudnnctl alternated round by round (the order reversed every other round), and
`zstd -dc` of the repack in every round: wall time, and -vv's "archive verified" and
"validated" (seconds from the first byte) per install, then medians per build (also by
position in the round) and the per-round ratio to zstd -dc. Each install gets a fresh root; `sync` before each."""
import glob, os, re, shutil, statistics, subprocess, sys, time

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
                "9.19.0", "--to", site, "--repack", "zstd"], check=True, stdout=subprocess.DEVNULL)
zst = glob.glob(os.path.join(site, "**", "*.tar.zst"), recursive=True)[0]
samples = {b: [] for b in bins}
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
        got = dict(re.findall(r"timing: (archive verified|validated) at ([0-9.]+) s", p.stderr))
        cpu = re.search(r"timing: pipe waits: (.*)", p.stderr)
        samples[b].append((wall, float(got["archive verified"]), float(got["validated"]), zstd[-1],
                           order.index(b)))
        print("round %d %-8s wall %.3f verified %.3f validated %.3f zstd %.3f | %s" %
              (r, b, wall, samples[b][-1][1], samples[b][-1][2], zstd[-1], cpu.group(1) if cpu else ""))
med = statistics.median
print("zstd -dc median %.3f s over %d rounds" % (med(zstd), len(zstd)))
for b in bins:
    s = samples[b]
    print("%-8s median wall %.3f s, verified %.3f, validated %.3f; wall / zstd -dc of its round: median %.3f" %
          (b, med(x[0] for x in s), med(x[1] for x in s), med(x[2] for x in s), med(x[0] / x[3] for x in s)))
    for pos in range(len(bins)):
        at = [x[0] for x in s if x[4] == pos]
        if at:
            print("%-8s in position %d of its round: median wall %.3f s (%d installs)" % (b, pos, med(at), len(at)))
