#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cudnnctl doctor` for real on the GPU machine (issue 7), read-only: nothing is installed or
# changed. Writes into $OUT:
#   doctor.txt         the human report (cudnnctl doctor --scan /opt/torch/.venv) and its exit code
#   doctor.json        the same as --json
#   torch.txt          what torch itself says (version, CUDA, torch.backends.cudnn.version())
#   ld_debug.txt       LD_DEBUG=libs: every libcudnn* torch really loads (shim and sub-libraries)
#   doctor_llp.json    doctor --json with LD_LIBRARY_PATH also naming the apt cuDNN directory
#   ld_debug_llp.txt   LD_DEBUG=libs for torch under that LD_LIBRARY_PATH
#   recommend.txt      cudnnctl recommend --framework torch==<installed> for the host
#   summary.txt        doctor's prediction next to the loader's truth, per library
# Environment: CUDNNCTL (default build/bin/cudnnctl); CUDNNCTL_LIBS, a directory of shared
# libraries the binary needs but the machine lacks (then it runs through the system's ld.so
# with --library-path, which leaves LD_LIBRARY_PATH as it is: doctor reports that variable);
# VENV (default /opt/torch/.venv); PYTHON (default python3 on PATH).
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
BIN=${CUDNNCTL:-build/bin/cudnnctl}
VENV=${VENV:-/opt/torch/.venv}
PYTHON=${PYTHON:-python3}
APT_DIR=/usr/lib/x86_64-linux-gnu

cudnnctl() {
  if [ -n "${CUDNNCTL_LIBS:-}" ]; then
    /lib64/ld-linux-x86-64.so.2 --library-path "$CUDNNCTL_LIBS" "$BIN" "$@"
  else
    "$BIN" "$@"
  fi
}

# A convolution makes cuDNN load its sub-libraries (the shim alone loads only libcudnn_graph).
TORCH_PROBE='
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
x = torch.randn(2, 3, 32, 32, device="cuda")
y = torch.nn.Conv2d(3, 8, 3).cuda()(x)
torch.cuda.synchronize()
print("conv ok", tuple(y.shape))
'

{
  echo "\$ cudnnctl doctor --scan $VENV"
  cudnnctl doctor --scan "$VENV"
  echo "(exit status $?)"
} >"$OUT/doctor.txt" 2>&1
cudnnctl doctor --json --scan "$VENV" >"$OUT/doctor.json" 2>>"$OUT/doctor.txt"

"$PYTHON" -c "$TORCH_PROBE" >"$OUT/torch.txt" 2>&1
LD_DEBUG=libs "$PYTHON" -c "$TORCH_PROBE" 2>&1 |
  grep -E 'calling init: .*libcudnn|find library=libcudnn|trying file=.*libcudnn' >"$OUT/ld_debug.txt"

export LD_LIBRARY_PATH="$APT_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cudnnctl doctor --json --scan "$VENV" >"$OUT/doctor_llp.json" 2>/dev/null
LD_DEBUG=libs "$PYTHON" -c "$TORCH_PROBE" 2>&1 |
  grep -E 'calling init: .*libcudnn|find library=libcudnn|trying file=.*libcudnn|^torch|^conv|Error|error' \
    >"$OUT/ld_debug_llp.txt"
unset LD_LIBRARY_PATH

TORCH_VERSION=$("$PYTHON" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null)
{
  echo "\$ cudnnctl recommend --framework torch==$TORCH_VERSION --compute-capability 9.0"
  cudnnctl recommend --framework "torch==$TORCH_VERSION" --compute-capability 9.0
  echo "(exit status $?)"
} >"$OUT/recommend.txt" 2>&1

"$PYTHON" - "$OUT" <<'PY' >"$OUT/summary.txt" 2>&1
import json, os, re, sys
out = sys.argv[1]

def loaded(path):
    libs = {}
    for line in open(path, errors="replace"):
        m = re.search(r"calling init: (\S*libcudnn[^/\s]*)$", line.strip())
        if m:
            libs.setdefault(os.path.basename(m.group(1)).split(".so")[0], m.group(1))
    return libs

def predicted(path):
    d = json.load(open(path))
    rows = {}
    for c in d["data"]["resolution"]:
        if c["kind"] != "torch":
            continue
        steps = [c["shim"]] + c["sublibraries"]
        for s in steps:
            rows[s["name"].split(".so")[0]] = (s["path"], s["via"], s["install"])
        print("doctor: %s loads %s via %s (install %s); built for %s; own cuDNN through DT_RPATH: %s"
              % (c["consumer"], c["shim"]["path"], c["shim"]["via"], c["shim"]["install"],
                 c["expected"], c["own_cudnn"]))
    for i in d["data"]["installs"]:
        print("install [%d] %s %s %s" % (i["id"], i["version"], i["dir"],
                                         json.dumps(i["package"])))
    print("findings:", ", ".join("%s(%s)" % (f["code"], f["severity"]) for f in d["data"]["findings"]))
    return rows

for label, dj, ld in (("as is", "doctor.json", "ld_debug.txt"),
                      ("LD_LIBRARY_PATH += /usr/lib/x86_64-linux-gnu", "doctor_llp.json", "ld_debug_llp.txt")):
    print("==", label)
    try:
        pred = predicted(os.path.join(out, dj))
        real = loaded(os.path.join(out, ld))
    except Exception as e:
        print("cannot compare:", e)
        continue
    agree = True
    for lib in sorted(set(pred) | set(real)):
        p = pred.get(lib, (None, None, None))
        r = real.get(lib)
        same = r is not None and p[0] is not None and os.path.realpath(p[0]) == os.path.realpath(r)
        if r is not None:
            agree = agree and same
        print("  %-40s doctor: %-75s loader: %s %s" % (lib, "%s (%s)" % (p[0], p[1]), r or "(not loaded)",
                                                    "OK" if same else ("-" if r is None else "DIFFERENT")))
    print("  doctor agrees with the loader on every library loaded:", agree)
PY
ls -l "$OUT"
