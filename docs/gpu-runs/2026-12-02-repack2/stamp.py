#!/usr/bin/env python3
"""stamp.py CARRY MIRROR WORKDIR: a site with a repack (mirror --repack zstd from file://), then
3 -vv installs from it with every stderr line stamped (seconds since start), then the runtime
probe's loads stamped, against the freshly installed entry and again warm, and each library's
dlopen alone (ctypes, RTLD_NOW) with and without libcuda.so.1 loaded first."""
import ctypes, glob, os, shutil, subprocess, sys, time

C, M, W = sys.argv[1:4]
B = os.path.join(C, "cudnnctl")
shutil.rmtree(W, ignore_errors=True)

def root(p):
    os.makedirs(os.path.join(p, "etc", "ld.so.conf.d"))
    os.makedirs(os.path.join(p, "etc", "cudnnctl", "pins.d"))
    open(os.path.join(p, "etc", "ld.so.conf"), "w").write("include /etc/ld.so.conf.d/*.conf\n")
    return p

def stamped(argv, env=None):
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    for line in p.stdout:
        print("%7.3f %s" % (time.monotonic() - t0, line.rstrip()[:400]))
    p.wait()
    print("%7.3f exit %d" % (time.monotonic() - t0, p.returncode))

site = os.path.join(W, "site")
subprocess.run([B, "--root", root(os.path.join(W, "m")), "--mirror", "file://" + M, "--platform",
                "linux-x86_64", "--cuda", "13", "mirror", "9.19.0", "--to", site, "--repack", "zstd"],
               check=True, stdout=subprocess.DEVNULL)
last = None
for i in range(3):
    r = root(os.path.join(W, "t%d" % i))
    shutil.copy(os.path.join(site, "cudnnctl-pins.sha256"), os.path.join(r, "etc/cudnnctl/pins.d/site.sha256"))
    os.sync(); time.sleep(0.3)
    print("== install %d" % i)
    stamped([B, "--root", r, "--mirror", "file://" + site, "--platform", "linux-x86_64", "--cuda", "13",
             "-vv", "install", "9.19.0", "--no-smoke"])
    last = r
lib = glob.glob(os.path.join(last, "opt/cudnn/store/*/lib"))[0]
libs = ["libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
        "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
        "libcudnn_heuristic.so.9"]
argv = [os.path.join(C, "cudnnctl-smoke"), "--probe", lib, "--shim", "libcudnn.so.9"]
for l in libs:
    argv += ["--load", l]
for l, f in (("graph", "Graph"), ("ops", "Ops"), ("cnn", "Cnn"), ("adv", "Adv")):
    argv += ["--check", "libcudnn_%s.so.9:cudnn%sVersionCheck" % (l, f)]
for i in range(3):
    print("== probe %d (stamped JSON lines)" % i)
    stamped(argv)
print("== warm probe (--warm; 'go' after 0.5 s), stamped")
t0 = time.monotonic()
p = subprocess.Popen(argv + ["--warm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT, text=True)
time.sleep(0.5)
print("%7.3f go" % (time.monotonic() - t0))
p.stdin.write("go\n"); p.stdin.close()
for line in p.stdout:
    if '"loading"' not in line:
        print("%7.3f %s" % (time.monotonic() - t0, line.rstrip()[:200]))
p.wait()
print("%7.3f exit %d" % (time.monotonic() - t0, p.returncode))
code = r'''
import ctypes, sys, time
def now(): return time.monotonic()
lib, first = sys.argv[1], sys.argv[2:]
for f in first:
    t = now(); ctypes.CDLL(f, mode=ctypes.RTLD_GLOBAL); print("  %-40s %.3f s" % (f, now() - t))
'''
for pre in ([], ["libcuda.so.1"]):
    for l in ["libcudnn.so.9"] + libs:
        print("== dlopen alone%s: %s" % (" after libcuda.so.1" if pre else "", l))
        subprocess.run([sys.executable, "-c", code, lib] + pre + [os.path.join(lib, l)])
print("== LD_DEBUG=files of the probe: what else it loads")
e = dict(os.environ, LD_DEBUG="files")
out = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=e).stderr
for line in out.splitlines():
    if "file=" in line and "generating link map" in line:
        print(line.strip()[:200])
