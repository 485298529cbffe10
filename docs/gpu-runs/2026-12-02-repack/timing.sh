#!/bin/bash
# -vv installs from the repack (file:// site of dev.sh) per binary, every stderr line stamped
# with seconds since the process started (where the time outside the one pass goes).
D=$(cd "$(dirname "$0")" && pwd); W=/tmp/r21w; site=$W/site
for b in cudnnctl cudnnctl.before cudnnctl cudnnctl.before; do
  r=$W/t; rm -rf $r; mkdir -p $r/etc/ld.so.conf.d $r/etc/cudnnctl/pins.d
  echo "include /etc/ld.so.conf.d/*.conf" >$r/etc/ld.so.conf
  cp $site/cudnnctl-pins.sha256 $r/etc/cudnnctl/pins.d/site.sha256
  sync; echo "== $b"
  python3 - "$D" "$b" "$r" "$site" <<'PY'
import os, subprocess, sys, time
D, b, r, site = sys.argv[1:5]
env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(D, "lib"))
t0 = time.monotonic()
p = subprocess.Popen([os.path.join(D, b), "--root", r, "--mirror", "file://" + site, "--platform",
                      "linux-x86_64", "--cuda", "13", "-vv", "install", "9.19.0", "--no-smoke"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
for line in p.stderr:
    print("%7.3f %s" % (time.monotonic() - t0, line.rstrip()[:150]))
p.wait()
print("%7.3f exit %d" % (time.monotonic() - t0, p.returncode))
PY
done
