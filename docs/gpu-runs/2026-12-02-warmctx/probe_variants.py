#!/usr/bin/env python3
"""probe_variants.py EXE DIR: runs probe_variants (EXE) in each MODE, prints its stamped steps and
how long the parent waited from its "done" line to reaping it (the exit)."""
import subprocess, sys, time, glob
exe, d = sys.argv[1], sys.argv[2]
for mode in ["", "c", "cs", "x", "cx", "csx", "cr", "n", "nx", "", "cs", "csx"]:
    t0 = time.monotonic(); p = subprocess.Popen([exe, d, mode], stdout=subprocess.PIPE, text=True)
    lines = []; tdone = None
    for l in p.stdout:
        lines.append(l.rstrip())
        if l.rstrip().endswith("done"): tdone = time.monotonic()
    p.wait(); t1 = time.monotonic()
    print("== mode %-4r total %.3f s, done->reaped %.3f s | %s" % (mode, t1 - t0, (t1 - tdone) if tdone else -1, " ; ".join(lines)))
