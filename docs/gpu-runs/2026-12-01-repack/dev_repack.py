#!/usr/bin/env python3
"""Issue 21's repack rows on the GPU machine (16 cores): the same measures as
bench/bench.py's rounds_repack, without nginx (none there): the site is served by the
project's tests/fixtures/faultserver.py on 127.0.0.1 (plain paths; /fault/trickle=104857600/
for the 100 MiB/s rows) and, for comparison, read as file://. "before" is main's build
(0f691d9's tree), "after" the repack21 branch. Medians of RUNS rounds, orders alternating.
    dev_repack.py DIR MIRROR OUT
"""
import json, os, re, resource, shutil, statistics, subprocess, sys, time

D, MIRROR, OUT = sys.argv[1:4]
RUNS = int(os.environ.get("RUNS", "3"))
LABEL = "9.19.0"
W = os.environ.get("W", "/tmp/r21w")
os.makedirs(W, exist_ok=True)
env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(D, "lib"))
samples = {}
log = open(os.path.join(OUT, "log.txt"), "a")

def say(s):
    print(s, flush=True); log.write(s + "\n"); log.flush()

def timed(argv, stdout=subprocess.DEVNULL):
    os.sync(); time.sleep(0.2)
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        say("FAILED (%d): %s\n%s" % (rc, " ".join(argv), err[-3000:]))
    return dict(wall=wall, cpu=ru.ru_utime + ru.ru_stime, rc=rc, err=err)

def rec(name, s):
    samples.setdefault(name, []).append(s)
    extra = ""
    m = re.search(r"timing: peak RSS (\d+) KiB", s["err"])
    if m:
        s["rss"] = int(m.group(1)); extra = " rss %d KiB" % s["rss"]
    say("%-28s %7.3f s wall %7.3f s cpu rc %d%s" % (name, s["wall"], s["cpu"], s["rc"], extra))

def root(name, pins, with_repack):
    r = os.path.join(W, name)
    shutil.rmtree(r, ignore_errors=True)
    os.makedirs(os.path.join(r, "etc", "ld.so.conf.d"))
    os.makedirs(os.path.join(r, "etc", "cudnnctl", "pins.d"))
    open(os.path.join(r, "etc", "ld.so.conf"), "w").write("include /etc/ld.so.conf.d/*.conf\n")
    lines = [l for l in open(pins) if with_repack or "cudnnctl-repack/" not in l]
    open(os.path.join(r, "etc", "cudnnctl", "pins.d", "site.sha256"), "w").writelines(lines)
    return r

def install(bin_, url, r):
    s = timed([bin_, "--root", r, "--mirror", url, "--platform", "linux-x86_64", "--cuda", "13",
               "-vv", "install", LABEL, "--no-smoke"])
    hist = os.path.join(r, "var", "lib", "cudnnctl", "history.jsonl")
    s["form"] = json.loads(open(hist).read().splitlines()[-1]).get("archive_form") if os.path.exists(hist) else None
    shutil.rmtree(r, ignore_errors=True)
    return s

NEW, OLD = os.path.join(D, "cudnnctl"), os.path.join(D, "cudnnctl.before")
ZSTD = shutil.which("zstd") or os.path.join(D, "bin", "zstd")
CURL = shutil.which("curl") or os.path.join(D, "bin", "curl")
site = os.path.join(W, "site")
mroot = root("mroot", "/dev/null", False)
base = [NEW, "--root", mroot, "--mirror", "file://" + MIRROR, "--platform", "linux-x86_64",
        "--cuda", "13", "-vv", "mirror", LABEL, "--to", site]
rec("mirror/plain", timed(base))
rec("mirror/repack-step", timed(base + ["--repack", "zstd"]))
pins = os.path.join(site, "cudnnctl-pins.sha256")
rel = [l.split()[1] for l in open(pins) if l.strip() and not l.startswith("#")]
zst = None
for dp, _, fs in os.walk(os.path.join(site, "cudnn")):
    for f in fs:
        if f.endswith(".tar.zst"):
            zst = os.path.join(dp, f)
say("repack %s: %d bytes; xz %d bytes" % (zst, os.path.getsize(zst), os.path.getsize(zst[:-4] + ".xz")))
pf = os.path.join(W, "port")
srv = subprocess.Popen([sys.executable, os.path.join(D, "faultserver.py"), "--root", site,
                        "--port-file", pf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    if os.path.exists(pf) and open(pf).read().strip():
        break
    time.sleep(0.1)
url = "http://127.0.0.1:%s" % open(pf).read().strip()
slow = url + "/fault/trickle=104857600"
zrel = os.path.relpath(zst, site)
try:
    for i in range(RUNS):
        order = ["zstd", "after", "before", "file", "xz"]
        if i % 2:
            order.reverse()
        for what in order:
            if what == "zstd":
                rec("zstd-dc", timed([ZSTD, "-q", "-dc", zst]))
            elif what == "after":
                rec("install/repack-http/after", install(NEW, url, root("h", pins, True)))
            elif what == "before":
                rec("install/repack-http/before", install(OLD, url, root("h", pins, True)))
            elif what == "file":
                rec("install/repack-file/after", install(NEW, "file://" + site, root("h", pins, True)))
            elif what == "xz" and i < 2:
                rec("install/xz-http/after", install(NEW, url, root("h", pins, False)))
    for i in range(2):
        rec("curl/repack-100m", timed([CURL, "-sSf", "-o", "/dev/null", slow + "/" + zrel]))
        rec("install/repack-100m/after", install(NEW, slow, root("h", pins, True)))
finally:
    srv.terminate()

med = lambda k, f="wall": statistics.median(s[f] for s in samples[k]) if k in samples else float("nan")
rows = []
def ratio(title, a, b, target):
    rows.append("| %s | %.3f | %.3f s | %.3f s | %s |" % (title, med(a) / med(b), med(a), med(b), target))
ratio("install from the repack (after) vs `zstd -dc`, loopback http", "install/repack-http/after", "zstd-dc", "<= 1.5")
ratio("install from the repack (before) vs `zstd -dc`, loopback http", "install/repack-http/before", "zstd-dc", "<= 1.5")
ratio("install from the repack (after) vs `zstd -dc`, file://", "install/repack-file/after", "zstd-dc", "-")
ratio("install from the repack vs from the xz (after), loopback http", "install/repack-http/after", "install/xz-http/after", "<= 0.25")
ratio("install from the repack at 100 MiB/s vs curl", "install/repack-100m/after", "curl/repack-100m", "<= 1.15")
rss = max(s.get("rss", 0) for k in samples if k.startswith("install/repack") for s in samples[k])
rows.append("| peak RSS of install from the repack (max) | %.1f MiB | | | <= 64 MiB |" % (rss / 1024))
rows.append("| mirror --repack zstd (one-time) | | %.3f s (%.3f s CPU) | | - |" % (med("mirror/repack-step"), med("mirror/repack-step", "cpu")))
for k in sorted(samples):
    rows.append("| median %s | | %.3f s wall, %.3f s CPU | forms %s | |" % (k, med(k), med(k, "cpu"), sorted(set(str(s.get("form")) for s in samples[k]))))
say("\n".join(rows))
json.dump({k: [{x: y for x, y in s.items() if x != "err"} for s in v] for k, v in samples.items()},
          open(os.path.join(OUT, "results.json"), "w"), indent=1)
