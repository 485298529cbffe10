"""bench.py's surroundings: the priority of the measured commands, the machine line, and the
results written at the end (results.md, results.json)."""
import datetime
import json
import os
import platform
import shlex
import subprocess
import tempfile


def raise_priority():
    """On a shared box, other tenants' builds would be timed too. The kernel schedules by
    autogroup (one per session) when sched_autogroup_enabled is 1: a new session with
    autogroup nice -10 gives every command measured here, baseline and cudnnctl alike, the
    same larger share of the CPUs. Returns a note saying what was done."""
    try:
        os.setsid()
    except OSError:
        pass  # already a session leader
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            enabled = f.read().strip() == "1"
        with open("/proc/self/autogroup", "w") as f:
            f.write("-10")
        how = "autogroup nice -10" if enabled else "nice -10 (autogroup off)"
        if not enabled:
            os.nice(-10)
        return "every measured command ran in one session at %s" % how
    except OSError as e:
        return "priority unchanged (%s): other load on the machine counts in the times" % e


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().strip()


def machine(cudnnctl):
    """The machine line of the results: the machine, its load, and the decoders of both sides
    (install's time is liblzma's LZMA decoder, docs/BENCHMARKS.md)."""
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True).stdout.strip()
        except OSError:
            return "?"
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": sh("nproc"),
        "cpu": sh("lscpu | sed -n 's/^Model name: *//p' | head -1"),
        "mem": sh("free -g | awk '/^Mem:/ {print $2 \" GiB\"}'"),
        "disk": sh("df -hT %s | awk 'NR==2 {print $1\" \"$2\" \"$3}'" % tempfile.gettempdir()),
        "kernel": platform.release(),
        "load": loadavg(),
        "cudnnctl": " / ".join(sh(shlex.quote(cudnnctl) + " --version").splitlines()),
        "xz": sh("xz --version | head -1"),
    }


def write_results(out, runs, b, m):
    """Prints the table and writes results.md and results.json into `out`."""
    rows = b.table()
    os.makedirs(out, exist_ok=True)
    real = b.real
    lines = ["| measure | ratio (medians) | cudnnctl | baseline | target | |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += ["| %s | %s | %s | %s | %s | %s |" % r for r in rows]
    lines += ["", "CPU time (user+sys, medians) of the same runs:", "",
              "| cudnnctl | baseline | cudnnctl cpu | baseline cpu | ratio |",
              "| --- | --- | --- | --- | --- |"]
    lines += ["| %s | %s | %.2f s | %.2f s | %.3f |" % c for c in b.cpu_rows()]
    lines += ["", "Where install's time goes (medians of `-vv` timing lines, from the first byte):",
              "", "| run | step done | at |", "| --- | --- | --- |"]
    lines += ["| %s | %s | %.3f s |" % t for t in b.breakdown()]
    lines += ["", "Medians over %d runs; archive %s (%d bytes, sha256 %s); machine: %s." %
              (runs, real.file, real.size, real.sha256, json.dumps(m))]
    if getattr(b, "repack_size", None):
        lines += ["Repack: %d bytes (zstd level 3), %.3f of the xz's size." %
                  (b.repack_size, b.repack_size / real.size)]
    lines += ["Note: " + n for n in b.notes]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"machine": m, "runs": runs, "archive": {"file": real.file,
                                                          "size": real.size,
                                                          "sha256": real.sha256},
                   "samples": {k: [{kk: vv for kk, vv in s.items() if kk != "err"}
                                   for s in v] for k, v in b.samples.items()},
                   "rows": rows, "notes": b.notes}, f, indent=1)

