#!/bin/bash
# Why the install over nginx (bench.py) is slower than from file:// (ab.py), H200: the builds
# in BINS (default "after") install the same repack site alternately from file:// and from
# nginx on loopback (bench.py's config), ROUNDS rounds, with -vv's "archive verified" and
# "entry published"; and per round `zstd -dc` of the repack, curl -o /dev/null of it over
# nginx, and cat of the file. run-http.txt: BINS=after (f695746) ROUNDS=10, from the script's
# first form (one build, no zstd column, which came after).
#   bash docs/gpu-runs/2026-12-03-onechild/http.sh   (carry: CARRY, default .carry/d25, as
#   run.sh)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/${CARRY:-.carry/d25}
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/${LOG:-run-http.txt}") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/*/cudnnctl*
export PATH=$C/bin:$PATH
mkdir -p /var/log/nginx /var/lib/nginx
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || exit 1
PYTHONUNBUFFERED=1 python3 - "$R" "$C" "$M" "${ROUNDS:-8}" ${BINS:-after} <<'PY'
import glob, os, re, shutil, statistics, subprocess, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "bench"))
import bench
R, C, M, rounds, bins = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
exe = os.path.join(C, bins[-1], "cudnnctl")
W = "/tmp/http"; shutil.rmtree(W, ignore_errors=True); os.makedirs(W)
def root(p):
    os.makedirs(os.path.join(p, "etc", "ld.so.conf.d")); os.makedirs(os.path.join(p, "etc", "cudnnctl", "pins.d"))
    open(os.path.join(p, "etc", "ld.so.conf"), "w").write("include /etc/ld.so.conf.d/*.conf\n")
    return p
site = os.path.join(W, "site")
subprocess.run([exe, "--root", root(os.path.join(W, "m")), "--mirror", "file://" + M, "--platform",
                "linux-x86_64", "--cuda", "13", "mirror", "9.19.0", "--to", site, "--repack", "zstd"],
               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
zst = glob.glob(os.path.join(site, "**", "*.tar.zst"), recursive=True)[0]
rel = os.path.relpath(zst, site)
with bench.nginx(site, "0", W) as url:
    runs = [(b, src) for b in bins for src in ("file", "http")]
    t = {k: [] for k in runs + ["curl", "cat", "zstd"]}
    for r in range(rounds):
        order = runs + ["curl", "cat", "zstd"]
        for what in (order if r % 2 == 0 else list(reversed(order))):
            os.sync(); time.sleep(0.2)
            if what in ("curl", "cat", "zstd"):
                argv = {"curl": ["curl", "-sSf", "-o", "/dev/null", url + "/" + rel], "cat": ["cat", zst],
                        "zstd": ["zstd", "-q", "-dc", zst]}[what]
                t0 = time.monotonic(); subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
                t[what].append((time.monotonic() - t0, 0, 0)); continue
            b, src = what
            d = os.path.join(W, "t"); shutil.rmtree(d, ignore_errors=True); root(d)
            shutil.copy(os.path.join(site, "cudnnctl-pins.sha256"), os.path.join(d, "etc/cudnnctl/pins.d/site.sha256"))
            t0 = time.monotonic()
            p = subprocess.run([os.path.join(C, b, "cudnnctl"), "--root", d, "--mirror",
                                "file://" + site if src == "file" else url, "--platform", "linux-x86_64",
                                "--cuda", "13", "-vv", "install", "9.19.0", "--no-smoke"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wall = time.monotonic() - t0
            if p.returncode: print(p.stderr[-500:]); sys.exit(1)
            got = dict(re.findall(r"timing: (archive verified|validated|entry published) at ([0-9.]+) s", p.stderr))
            cpu = re.search(r"thread CPU: transfer ([0-9.]+) s", p.stderr)
            t[what].append((wall, float(got["archive verified"]), float(got["entry published"])))
            print("round %d %-6s %-4s wall %.3f verified %s published %s transfer cpu %s" %
                  (r, b, src, wall, got["archive verified"], got["entry published"], cpu.group(1) if cpu else "?"))
        print("round %d curl %.3f cat %.3f zstd %.3f" % (r, t["curl"][-1][0], t["cat"][-1][0], t["zstd"][-1][0]))
    med = statistics.median
    for k, v in t.items():
        name = "%s %s" % k if isinstance(k, tuple) else k
        line = "%-12s median wall %.3f, verified %.3f, published %.3f (%d)" % (
            name, med(x[0] for x in v), med(x[1] for x in v), med(x[2] for x in v), len(v))
        if isinstance(k, tuple):
            line += "; wall / zstd -dc of its round: median %.3f" % med(x[0] / z[0] for x, z in zip(v, t["zstd"]))
        print(line)
PY
echo "== done $(date -u)"
