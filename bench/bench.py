#!/usr/bin/env python3
"""The measurements behind bench/run: cudnnctl against the manual recipe, side by side.

    bench.py --cudnnctl BIN --mirror DIR --stub-mirror DIR [--runs N] [--out DIR] [--only ROWS]

Every measurement runs N times (default 5) and the median is reported; the commands compared
in one row alternate within each round (A B, then B A) so that load from other processes
hits both alike. Each timed command runs after `sync`, so that no run pays for the dirty
pages of the one before. Every cudnnctl run uses its own --root under a temporary directory;
nothing outside it is written. Prints a Markdown table and writes results.json/results.md
into --out.
"""
import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench_env import loadavg, machine, raise_priority, write_results

VERSION = "9.19.0"
# GNU time (its %M); $BENCH_GNU_TIME names another copy (a machine without the package).
GNU_TIME = os.environ.get("BENCH_GNU_TIME", "/usr/bin/time")

# ---------------------------------------------------------------------------------------------
# running and timing


class Sample(dict):
    """wall, cpu (user+sys of the command and its waited-for children, s), rss (max KiB)."""


def timed(argv, *, cwd=None, stdout=None, env=None, check=True):
    """Runs argv under GNU time; returns a Sample. The peak RSS is GNU time's %M (the forked
    Python child's own pages would count in ru_maxrss of a plain fork+exec)."""
    out = stdout if stdout is not None else subprocess.DEVNULL
    fd, tfile = tempfile.mkstemp(prefix="time.")
    os.close(fd)
    t0 = time.monotonic()
    p = subprocess.Popen([GNU_TIME, "-f", "%M", "-o", tfile] + list(argv), cwd=cwd,
                         stdout=out, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    rc = os.waitstatus_to_exitcode(status)
    with open(tfile) as f:
        lines = f.read().split()
    os.unlink(tfile)
    rss = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    if check and rc != 0:
        sys.exit("bench: command failed (exit %d): %s\n%s" % (rc, argv, err[-4000:]))
    return Sample(wall=wall, cpu=ru.ru_utime + ru.ru_stime, rss=rss, rc=rc, err=err)


def settle():
    """Flush the previous run's dirty pages before timing the next one."""
    os.sync()
    time.sleep(0.2)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


# ---------------------------------------------------------------------------------------------
# fixtures


def new_root(base, name):
    r = os.path.join(base, name)
    os.makedirs(os.path.join(r, "etc", "ld.so.conf.d"))
    with open(os.path.join(r, "etc", "ld.so.conf"), "w") as f:
        f.write("include /etc/ld.so.conf.d/*.conf\n")
    return r


def rmtree(p):
    shutil.rmtree(p, ignore_errors=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@contextlib.contextmanager
def nginx(root, rate, tmp):
    """Serves `root` on 127.0.0.1 with limit_rate `rate` ("0" = unlimited); yields the URL."""
    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    nd = tempfile.mkdtemp(prefix="nginx.", dir=tmp)
    port = free_port()
    conf = os.path.join(nd, "nginx.conf")
    with open(conf, "w") as f:
        if os.getuid() == 0:
            f.write("user root;\n")
        f.write("""daemon off;
worker_processes 1;
pid %(nd)s/nginx.pid;
error_log %(nd)s/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    client_body_temp_path %(nd)s/cb; proxy_temp_path %(nd)s/px; fastcgi_temp_path %(nd)s/fc;
    uwsgi_temp_path %(nd)s/uw; scgi_temp_path %(nd)s/sc;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%(port)d;
        root %(root)s;
        limit_rate %(rate)s;
    }
}
""" % {"nd": nd, "port": port, "root": os.path.realpath(root), "rate": rate})
    p = subprocess.Popen([exe, "-p", nd, "-c", conf, "-e", os.path.join(nd, "error.log")],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if p.poll() is not None:
                    sys.exit("bench: nginx did not start: %s" %
                             open(os.path.join(nd, "error.log")).read())
                time.sleep(0.05)
        yield "http://127.0.0.1:%d" % port
    finally:
        p.terminate()
        p.wait()


class Release:
    """One release in a mirror directory: its manifest and archive."""

    def __init__(self, mirror):
        self.mirror = mirror
        names = [n for n in os.listdir(mirror) if n.startswith("redistrib_")]
        if len(names) != 1:
            sys.exit("bench: expected one redistrib_*.json in %s" % mirror)
        self.manifest = os.path.join(mirror, names[0])
        self.label = names[0][len("redistrib_"):-len(".json")]
        doc = json.load(open(self.manifest))
        pkg = doc["cudnn"]["linux-x86_64"]
        (self.cuda,) = [k for k in pkg if k.startswith("cuda")]
        pkg = pkg[self.cuda]
        self.cuda = self.cuda[len("cuda"):]
        self.rel = pkg["relative_path"]
        self.sha256 = pkg["sha256"]
        self.size = int(pkg["size"])
        self.archive = os.path.join(mirror, self.rel)
        self.file = os.path.basename(self.rel)
        self.top = self.file[:-len(".tar.xz")]


# ---------------------------------------------------------------------------------------------
# the commands compared


class Bench:
    def __init__(self, a):
        self.bin = os.path.abspath(a.cudnnctl)
        self.real = Release(a.mirror)
        self.stub = Release(a.stub_mirror)
        self.runs = a.runs
        self.tmp = tempfile.mkdtemp(prefix="cudnnctl-bench.", dir=a.tmp)
        os.chmod(self.tmp, 0o755)  # nginx workers
        self.samples = {}  # name -> [Sample]
        self.notes = []
        self.n = 0

    def cleanup(self):
        rmtree(self.tmp)

    def record(self, name, s):
        self.samples.setdefault(name, []).append(s)
        print("  %-34s wall %7.3f s  cpu %7.3f s  rss %7.1f MiB" %
              (name, s["wall"], s["cpu"], s["rss"] / 1024), flush=True)

    def fresh(self, prefix):
        self.n += 1
        return new_root(self.tmp, "%s-%d" % (prefix, self.n))

    def cudnnctl(self, root, *args, mirror=None, manifest=None):
        argv = [self.bin, "--root", root, "--cuda", self.real.cuda]
        if mirror:
            argv += ["--mirror", mirror]
        if manifest:
            argv += ["--manifest", manifest]
        return argv + list(args)

    # -- row 1, 2, 5, 6 --------------------------------------------------------------------

    def recipe(self, url, root):
        """The manual recipe: download, check, unpack, copy into place, sync, ldconfig."""
        work = os.path.join(root, "work")
        dest = os.path.join(root, "usr", "local", "cuda")
        os.makedirs(work)
        with open(os.path.join(root, "etc", "ld.so.conf.d", "cuda.conf"), "w") as f:
            f.write("/usr/local/cuda/lib64\n")
        r = self.real
        script = """set -euo pipefail
cd "$WORK"
curl -sSf -O "$URL/$REL"
echo "$SHA  $FILE" | sha256sum -c --quiet
tar -xJf "$FILE"
mkdir -p "$DEST/include" "$DEST/lib64"
cp -P "$TOP"/include/cudnn*.h "$DEST/include/"
cp -P "$TOP"/lib/libcudnn* "$DEST/lib64/"
sync
ldconfig -r "$ROOT"
"""
        env = dict(os.environ, WORK=work, URL=url, REL=r.rel, SHA=r.sha256, FILE=r.file,
                   TOP=r.top, DEST=dest, ROOT=root)
        return timed(["bash", "-c", script], env=env)

    def install(self, url, root):
        # -vv: the timing lines (where the time goes) and this process's own peak RSS.
        s = timed(self.cudnnctl(root, "-vv", "install", VERSION, "--no-smoke", mirror=url))
        m = re.search(r"timing: peak RSS (\d+) KiB", s["err"])
        s["rss_self"] = int(m.group(1)) if m else 0
        for line in s["err"].splitlines():
            if line.startswith("timing: ") and " at " in line:
                what, at = line[len("timing: "):].rsplit(" at ", 1)
                s["t:" + what] = float(at.split()[0])
        return s

    def rounds_install(self, rate, label):
        print("== install vs recipe, nginx limit_rate %s (%d runs)" % (rate, self.runs),
              flush=True)
        with nginx(self.real.mirror, rate, self.tmp) as url:
            for i in range(self.runs):
                order = ["recipe", "install"] if i % 2 == 0 else ["install", "recipe"]
                for what in order:
                    root = self.fresh(what)
                    settle()
                    if what == "recipe":
                        self.record("recipe/" + label, self.recipe(url, root))
                    else:
                        s = self.install(url, root)
                        self.record("install/" + label, s)
                        if label == "loopback":
                            # Row 6: the active version again (every Ansible run does this).
                            settle()
                            self.record("reinstall/" + label, self.install(url, root))
                            # Row 2 baseline, in the same round.
                            settle()
                            self.record("xz-dc", timed(["xz", "-dc", self.real.archive]))
                    rmtree(root)

    # -- repack (issue 21) ----------------------------------------------------------------

    def site_root(self, pins, with_repack):
        """A host root that trusts the site's pins file, with or without its sidecar pins."""
        root = self.fresh("repack-host" if with_repack else "xz-host")
        os.makedirs(os.path.join(root, "etc", "cudnnctl", "pins.d"))
        with open(pins) as f:
            lines = [l for l in f if with_repack or "cudnnctl-repack/" not in l]
        with open(os.path.join(root, "etc", "cudnnctl", "pins.d", "site.sha256"), "w") as f:
            f.writelines(lines)
        return root

    def rounds_repack(self):
        """mirror --repack zstd once (its one-time cost), then install from the repack vs from
        the xz of the same site mirror, vs `zstd -dc` of the repack, and at 100 MiB/s vs the
        download of the repack alone (curl)."""
        if not shutil.which("zstd"):
            sys.exit("bench: the zstd CLI is missing (apt-get install zstd)")
        r = self.real
        site = os.path.join(self.tmp, "site")
        print("== mirror --repack zstd: the one-time cost (1 run)", flush=True)
        mroot = self.fresh("mirror")
        with nginx(r.mirror, "0", self.tmp) as url:
            base = [self.bin, "--root", mroot, "--mirror", url, "--platform", "linux-x86_64",
                    "--cuda", r.cuda, "-vv", "mirror", VERSION, "--to", site]
            settle()
            self.record("mirror/plain", timed(base))
            settle()
            s = timed(base + ["--repack", "zstd"])
            self.record("mirror/repack-step", s)
        zst = os.path.join(site, r.rel[:-len(".tar.xz")] + ".tar.zst")
        self.repack_size = os.path.getsize(zst)
        pins = os.path.join(site, "cudnnctl-pins.sha256")
        for rate, label in (("0", "loopback"), ("100m", "100m")):
            print("== install from the repack vs from the xz, limit_rate %s (%d runs)" %
                  (rate, self.runs), flush=True)
            with nginx(site, rate, self.tmp) as url:
                for i in range(self.runs):
                    order = ["repack", "xz", "base"]
                    if i % 2:
                        order.reverse()
                    for what in order:
                        settle()
                        if what == "base":
                            if label == "loopback":
                                self.record("zstd-dc", timed(["zstd", "-q", "-dc", zst]))
                            else:
                                self.record("curl/repack-100m",
                                            timed(["curl", "-sSf", "-o", "/dev/null",
                                                   url + "/" + r.rel[:-len(".tar.xz")] +
                                                   ".tar.zst"]))
                            continue
                        root = self.site_root(pins, what == "repack")
                        s = self.install(url, root)
                        last = open(os.path.join(root, "var", "lib", "cudnnctl",
                                                 "history.jsonl")).read().splitlines()[-1]
                        got = json.loads(last).get("archive_form")
                        want = "repack" if what == "repack" else "xz"
                        if got != want:
                            sys.exit("bench: %s install used form %r" % (what, got))
                        self.record("install/%s-%s" % (what, label), s)
                        rmtree(root)

    # -- sha256 -------------------------------------------------------------------------------

    def rounds_sha(self):
        print("== SHA-256 of the archive (%d runs; file in the page cache)" % self.runs)
        a = self.real.archive
        timed(["cat", a])  # warm
        for i in range(self.runs):
            order = ["sha256sum", "cudnnctl"] if i % 2 == 0 else ["cudnnctl", "sha256sum"]
            for what in order:
                if what == "sha256sum":
                    self.record("sha256sum", timed(["sha256sum", a]))
                else:
                    self.record("sha256/cudnnctl",
                                timed([self.bin, "--root", self.tmp, "debug-sha256", a]))

    # -- row 3 --------------------------------------------------------------------------------

    def switch_root(self):
        """A root with the real build and the stub build installed (from local archives)."""
        root = self.fresh("switch")
        for rel in (self.real, self.stub):
            timed(self.cudnnctl(root, "install", rel.label, "--archive", rel.archive,
                                "--no-smoke", manifest=rel.manifest))
        return root

    def backups(self):
        """The recipe's tarball backups of a real-size and a stub-size install."""
        out = {}
        for name, rel in (("real", self.real), ("stub", self.stub)):
            src = self.fresh("backup-src-" + name)
            subprocess.run(["tar", "-xJf", rel.archive, "-C", src], check=True)
            top = os.path.join(src, rel.top)
            dest = os.path.join(src, "usr", "local", "cuda")
            os.makedirs(os.path.join(dest, "include"))
            os.makedirs(os.path.join(dest, "lib64"))
            subprocess.run("cp -P %s/include/cudnn*.h %s/include/ && cp -P %s/lib/libcudnn* "
                           "%s/lib64/" % (top, dest, top, dest), shell=True, check=True)
            rmtree(top)
            tgz = os.path.join(self.tmp, "backup-%s.tar.gz" % name)
            out[name] = (src, dest, tgz)
        return out

    def rounds_switch(self):
        print("== rollback / use vs tarball restore, two sizes (%d runs)" % self.runs)
        root = self.switch_root()
        bk = self.backups()
        # Generations: 1 real, 2 stub (parent 1). Each round: rollback -> 1 (real); use stub ->
        # N (parent 1); use real -> N+1 (parent N); rollback -> N (stub, parent 1), which is
        # where the next round starts.
        for i in range(self.runs):
            for name, argv in (("rollback/real", ["rollback"]),
                               ("use/stub", ["use", self.stub.label, "--no-smoke"]),
                               ("use/real", ["use", VERSION, "--no-smoke"]),
                               ("rollback/stub", ["rollback"])):
                settle()
                self.record(name, timed(self.cudnnctl(root, *argv)))
        for name in ("real", "stub"):
            src, dest, tgz = bk[name]
            timed(["tar", "-czf", tgz, "-C", dest, "include", "lib64"])
            for i in range(self.runs):
                out = self.fresh("restore-" + name)
                settle()
                self.record("tar-xzf/" + name, timed(["tar", "-xzf", tgz, "-C", out]))
                rmtree(out)
        rmtree(root)
        return bk

    # -- row 4 --------------------------------------------------------------------------------

    def has_adopt(self):
        p = subprocess.run([self.bin, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        return any(line.split()[:1] == ["adopt"] for line in p.stdout.splitlines())

    def rounds_adopt(self, bk):
        if not self.has_adopt():
            self.notes.append("row 4 (adopt backup vs tar -czf): pending, this cudnnctl has "
                              "no `adopt` command yet")
            print("== adopt: pending (no adopt command in this build)")
            return
        print("== adopt vs tar -czf (%d runs)" % self.runs)
        src, dest, _ = bk["real"]
        for i in range(self.runs):
            order = ["tar", "adopt"] if i % 2 == 0 else ["adopt", "tar"]
            for what in order:
                if what == "tar":
                    tgz = os.path.join(self.tmp, "adopt-baseline.tar.gz")
                    settle()
                    self.record("tar-czf", timed(["tar", "-czf", tgz, "-C", dest,
                                                  "include", "lib64"]))
                    os.unlink(tgz)
                else:
                    root = self.fresh("adopt")
                    cuda = os.path.join(root, "usr", "local", "cuda")
                    os.makedirs(os.path.dirname(cuda))
                    subprocess.run(["cp", "-a", dest, cuda], check=True)
                    # A hand-made install is adopted long after it was copied: past the 2 s
                    # settle window of util/stamp.hpp, so adopt hashes each file once (a file
                    # changed within 2 s of the scan is hashed again when copied and backed up).
                    time.sleep(2.5)
                    settle()
                    self.record("adopt", timed([self.bin, "--root", root, "--cuda",
                                                self.real.cuda, "adopt"]))
                    rmtree(root)

    # -- report -------------------------------------------------------------------------------

    def med(self, name, key="wall"):
        return median([s[key] for s in self.samples.get(name, [])])

    def table(self):
        rows = []

        def ratio(label, a, b, target, key="wall", cmp="le"):
            if a not in self.samples or b not in self.samples:
                rows.append((label, "pending", "", "", target, ""))
                return
            ra, rb = self.med(a, key), self.med(b, key)
            r = ra / rb
            ok = r <= target if cmp == "le" else r >= target
            rows.append((label, "%.3f" % r, "%.3f s" % ra, "%.3f s" % rb, "≤ %.2f" % target,
                         "met" if ok else "missed"))

        def per_round(label, a, b):
            # Both measured once per round, in the same order: pairs by round.
            if a in self.samples and b in self.samples:
                pairs = list(zip(self.samples[a], self.samples[b]))
                rows.append((label, "%.3f" % median([x["wall"] / y["wall"] for x, y in pairs]),
                             "", "", "-", ""))

        ratio("install vs manual recipe, 100 MiB/s", "install/100m", "recipe/100m", 0.55)
        ratio("install vs manual recipe, loopback", "install/loopback", "recipe/loopback", 0.80)
        ratio("install vs `xz -dc` alone", "install/loopback", "xz-dc", 1.25)
        ratio("rollback vs `tar -xzf` restore of the backup (real size)", "rollback/real",
              "tar-xzf/real", 0.01)
        ratio("use vs `tar -xzf` restore of the backup (real size)", "use/real", "tar-xzf/real",
              0.01)
        ratio("rollback: to the real build vs to the stub build", "rollback/real",
              "rollback/stub", 1.5)
        ratio("use: of the real build vs of the stub build", "use/real", "use/stub", 1.5)
        if "tar-xzf/real" in self.samples and "tar-xzf/stub" in self.samples:
            ra, rb = self.med("tar-xzf/real"), self.med("tar-xzf/stub")
            rows.append(("(for comparison) `tar -xzf` restore: real vs stub size",
                         "%.0f" % (ra / rb), "%.3f s" % ra, "%.3f s" % rb, "-", ""))
        ratio("adopt backup vs `tar -czf`", "adopt", "tar-czf", 0.15)
        ratio("SHA-256 of the archive vs `sha256sum`", "sha256/cudnnctl", "sha256sum", 0.35)
        ratio("reinstall of the active version vs fresh install", "reinstall/loopback",
              "install/loopback", 0.02)
        ratio("install from the repack vs from the xz, loopback", "install/repack-loopback",
              "install/xz-loopback", 0.25)
        ratio("install from the repack vs `zstd -dc` of the repack", "install/repack-loopback",
              "zstd-dc", 1.5)
        per_round("(for comparison) the same, per round: each install from the repack / the "
                  "`zstd -dc` of its round (median)", "install/repack-loopback", "zstd-dc")
        ratio("install from the repack at 100 MiB/s vs its download alone (curl)",
              "install/repack-100m", "curl/repack-100m", 1.15)
        ratio("(for comparison) install from the repack vs from the xz, 100 MiB/s",
              "install/repack-100m", "install/xz-100m", 1.0)
        if "install/repack-loopback" in self.samples:
            runs = self.samples["install/repack-loopback"] + self.samples.get(
                "install/repack-100m", [])
            own = max(s.get("rss_self", 0) for s in runs) / 1024
            rows.append(("peak RSS of install from the repack: the cudnnctl process (max)",
                         "%.1f MiB" % own, "", "", "≤ 64 MiB", "met" if own <= 64 else "missed"))
        if "mirror/repack-step" in self.samples:
            rep, plain = self.med("mirror/repack-step"), self.med("mirror/plain")
            rows.append(("mirror's one-time repack cost: `mirror --repack zstd` over a mirrored "
                         "release (verify + repack) / `mirror` downloading it", "-",
                         "%.3f s" % rep, "%.3f s" % plain, "-", ""))
        if "install/loopback" in self.samples:
            runs = self.samples["install/loopback"] + self.samples.get("install/100m", [])
            own = max(s.get("rss_self", 0) for s in runs) / 1024
            tree = max(s["rss"] for s in runs) / 1024
            rows.append(("peak RSS of install: the cudnnctl process (max over runs)",
                         "%.1f MiB" % own, "", "", "≤ 64 MiB", "met" if own <= 64 else "missed"))
            rows.append(("peak RSS of install: largest process of the run, incl. the validation "
                         "probe that loads the candidate libraries", "%.1f MiB" % tree, "", "",
                         "-", ""))
        return rows

    def breakdown(self):
        """Medians of install's -vv timing lines (seconds since the stream began)."""
        out = []
        for name in ("install/loopback", "install/100m", "install/repack-loopback",
                     "install/repack-100m"):
            runs = self.samples.get(name, [])
            keys = [k for k in (runs[0] if runs else {}) if k.startswith("t:")]
            for k in keys:
                out.append((name, k[2:], median([r[k] for r in runs if k in r])))
        return out

    def cpu_rows(self):
        out = []
        for a, b in (("install/100m", "recipe/100m"), ("install/loopback", "recipe/loopback"),
                     ("install/loopback", "xz-dc"), ("sha256/cudnnctl", "sha256sum"),
                     ("install/repack-loopback", "install/xz-loopback"),
                     ("install/repack-loopback", "zstd-dc")):
            if a in self.samples and b in self.samples:
                out.append((a, b, self.med(a, "cpu"), self.med(b, "cpu"),
                            self.med(a, "cpu") / self.med(b, "cpu")))
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cudnnctl", required=True)
    ap.add_argument("--mirror", required=True, help="real-size release (bench/build_archive.sh)")
    ap.add_argument("--stub-mirror", required=True, help="small stub release (mkrelease.py)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tmp", default=None, help="where the temporary roots go (default TMPDIR)")
    ap.add_argument("--only", default="install,sha,switch,adopt",
                    help="comma-separated subset of install,sha,switch,adopt,repack (repack: "
                    "not in the default set)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-priority", action="store_true",
                    help="do not raise the benchmark's scheduling priority")
    a = ap.parse_args()
    prio = "priority unchanged (--no-priority)" if a.no_priority else raise_priority()
    only = set(a.only.split(","))
    b = Bench(a)
    m = machine(a.cudnnctl)
    m["load_before"] = m.pop("load")
    try:
        if "install" in only:
            b.rounds_install("0", "loopback")
            b.rounds_install("100m", "100m")
        if "repack" in only:
            b.rounds_repack()
        if "sha" in only:
            b.rounds_sha()
        bk = None
        if "switch" in only or "adopt" in only:
            bk = b.rounds_switch() if "switch" in only else b.backups()
        if "adopt" in only:
            b.rounds_adopt(bk)
    finally:
        if not a.keep:
            b.cleanup()
    m["load_after"] = loadavg()
    b.notes.append(prio)
    write_results(a.out, a.runs, b, m)


if __name__ == "__main__":
    main()
