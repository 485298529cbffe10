# Gates around the switch (issue 3): pre-switch validation (exit 4), compatibility refusals
# (exit 7), post-switch loader check and GPU smoke test with automatic rollback (exit 5).
# Every refusal must leave the prefix byte for byte as it was. Releases come from
# tests/fixtures/mkrelease.py with --defect, served by nginx on loopback. The root-/ tests run
# in a private mount namespace (the host's /etc, /opt, /var are never touched); one of them
# uses the fake GPU of tests/fakegpu (a libcuda.so.1 and a cuDNN shim that compute on the CPU)
# so that the smoke test passes, fails and is skipped for real.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl

M=$E2E_TMP/mirrors
FAKEGPU_SRC=$E2E_DIR/../fakegpu
mkdir -p "$M"

# rel NAME LABEL VERSION CUDA [mkrelease args...]: a release in its own mirror $M/NAME.
rel() {
  local name=$1 label=$2 version=$3 cuda=$4
  shift 4
  mkrelease --mirror "$M/$name" --label "$label" --version "$version" --cuda "$cuda" \
    --platform "${PLATFORM:-linux-x86_64}" --no-static "$@" >/dev/null
}

rel good 9.1.0 9.1.0.70 12
rel good2 9.14.0 9.14.0.64 12
rel getversion 9.14.0 9.14.0.64 12 --defect getversion=90100
rel missing 9.14.0 9.14.0.64 12 --defect missing=libcudnn_cnn
rel regular 9.14.0 9.14.0.64 12 --defect regular-link=libcudnn_ops
rel dangling 9.14.0 9.14.0.64 12 --defect dangling=libcudnn_graph
rel soname 9.14.0 9.14.0.64 12 --defect soname=libcudnn_adv:libcudnn_adv.so.8
rel header 9.14.0 9.14.0.64 12 --defect header=9.14.1
rel truncate 9.14.0 9.14.0.64 12 --defect truncate=libcudnn_engines_precompiled
rel filever 9.14.0 9.14.0.64 12 --defect filever=libcudnn_heuristic:9.1.0
rel unresolvable 9.14.0 9.14.0.64 12 --defect unresolvable=libcudnn
PLATFORM=linux-sbsa rel sbsa 9.14.0 9.14.0.64 12
rel cuda 9.15.0 9.15.0.57 12,13
start_nginx "$M"
URL=$MIRROR_URL

# ci ROOT MIRROR ARGS...: cudnnctl under ROOT with one mirror of $M.
ci() {
  local root=$1 mirror=$2
  shift 2
  cudnnctl --root "$root" --mirror "$URL/$mirror/" "$@"
}

# A root with a healthy generation 1 (9.1.0) to refuse things on top of.
R=$(new_root)

TEST "a healthy release passes every gate; without a GPU the smoke stage is skipped, not passed"
expect_exit 0 ci "$R" good --cuda 12 --json install 9.1.0
expect_json 'd["active"]["generation"]' 1
for gate in header libraries runtime loader; do
  expect_check "$gate" passed
done
expect_check smoke skipped
expect_json 'd["data"]["smoke"]["status"]' skipped
expect_json 'd["data"]["smoke"]["no_gpu"]' true
expect_json 'd["data"]["smoke"]["cudnn_version"]' 90100
expect_json 'any(w.startswith("smoke test skipped: no GPU") for w in d["warnings"])' true
expect_json '[c["message"] for c in d["data"]["checks"] if c["name"] == "runtime"][0]' \
  "cudnnGetVersion() = 90100; 8 libraries loaded by absolute path; 4 version checks returned 0"
expect_symlink "$R/opt/cudnn/current" generations/1
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/gen1.snap"
cp "$R/etc/ld.so.conf.d/00-cudnnctl.conf" "$E2E_TMP/gen1.dropin"

# refused CODE MIRROR GATE MESSAGE [install args]: `install 9.14.0` from MIRROR is refused with
# exit CODE by GATE, the message names the file and the problem, and nothing changed.
refused() {
  local code=$1 mirror=$2 gate=$3 msg=$4
  shift 4
  expect_exit "$code" ci "$R" "$mirror" --cuda 12 --json install 9.14.0 "$@"
  expect_json 'd["ok"]' false
  expect_json 'd["changed"]' false
  expect_json 'd["error"]["exit_code"]' "$code"
  expect_error "$msg"
  expect_check "$gate" failed
  tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/now.snap"
  cmp -s "$E2E_TMP/gen1.snap" "$E2E_TMP/now.snap" ||
    fail "the prefix changed: $(diff "$E2E_TMP/gen1.snap" "$E2E_TMP/now.snap" | head -5)"
  cmp -s "$E2E_TMP/gen1.dropin" "$R/etc/ld.so.conf.d/00-cudnnctl.conf" || fail "the drop-in changed"
  expect_no_file "$R/var/lib/cudnnctl/journal.json"
  ls -d "$R"/opt/cudnn/store/.staging-* 2>/dev/null && fail "a staging directory was left" || true
}

TEST "cudnnGetVersion() disagrees with cudnn_version.h: exit 4 before the switch"
refused 4 getversion runtime \
  "lib/libcudnn.so.9: cudnnGetVersion() returns 90100, but the release is 9.14.0 (91400)"
expect_json 'd["data"]["validation"]["gate"]' runtime

TEST "a missing sub-library: exit 4"
refused 4 missing libraries \
  "lib/libcudnn_cnn.so.9.14.0: missing: the 9.x library set needs libcudnn_cnn 9.14.0"

TEST "a chain link that is a regular-file copy: exit 4"
refused 4 regular libraries \
  "lib/libcudnn_ops.so.9: is a regular file (a copy), not a symlink to libcudnn_ops.so.9.14.0"

TEST "a dangling chain link: exit 4"
refused 4 dangling libraries 'lib/libcudnn_graph.so: points at "libcudnn_graph.so.9.missing"'

TEST "a wrong SONAME: exit 4"
refused 4 soname libraries \
  "lib/libcudnn_adv.so.9.14.0: has DT_SONAME libcudnn_adv.so.8, expected libcudnn_adv.so.9"

TEST "cudnn_version.h lies about the version: exit 4"
refused 4 header header \
  "include/cudnn_version.h: says 9.14.1 (CUDNN_MAJOR/MINOR/PATCHLEVEL), but the manifest says 9.14.0.64"

TEST "a truncated library is caught by libelf, before anything loads it: exit 4"
refused 4 truncate libraries "lib/libcudnn_engines_precompiled.so.9.14.0: unreadable ELF: truncated"

TEST "a library of another version: exit 4"
refused 4 filever libraries \
  "lib/libcudnn_heuristic.so.9.14.0: missing: the 9.x library set needs libcudnn_heuristic 9.14.0 (found libcudnn_heuristic.so.9.1.0"

TEST "x86-64 files in a linux-sbsa archive: exit 4 (ELF machine)"
refused 4 sbsa libraries "lib/libcudnn.so.9.14.0: is built for x86-64, but linux-sbsa needs AArch64" \
  --platform linux-sbsa

TEST "only the installed components are checked"
R2=$(new_root)
expect_exit 0 ci "$R2" header --cuda 12 --json install 9.14.0 --components runtime
expect_json '[c["name"] for c in d["data"]["checks"] if c["status"] == "passed"]' \
  '["libraries", "runtime", "loader"]'
R2b=$(new_root)
expect_exit 0 ci "$R2b" getversion --cuda 12 --json install 9.14.0 --components headers
expect_json '[c["name"] for c in d["data"]["checks"] if c["status"] == "passed"]' '["header"]'
expect_check smoke skipped
R2c=$(new_root)
expect_exit 4 ci "$R2c" header --cuda 12 --json install 9.14.0 --components headers
expect_check header failed
expect_no_file "$R2c/opt/cudnn/current"

TEST "a dependency outside cuDNN that this host lacks is a warning before the switch"
# Under another --root the loader of the target system is not this host's: the archive is
# sound, so the install goes through, saying what this host would need.
R3=$(new_root)
expect_exit 0 ci "$R3" unresolvable --cuda 12 --json install 9.14.0
expect_check runtime warning
expect_json 'any("it needs libcudnnctl_missing_dep.so.1, which is not part of cuDNN" in w for w in d["warnings"])' true

# ---- compatibility refusals (exit 7) -------------------------------------------------------

TEST "CUDA variant against the toolkit under the root: exit 7, --force installs with a warning"
R4=$(new_root)
mkdir -p "$R4/usr/local/cuda/include"
echo '#define CUDART_VERSION 12040' >"$R4/usr/local/cuda/include/cuda_runtime_api.h"
expect_exit 7 ci "$R4" cuda --cuda 13 --json install 9.15.0
expect_json 'd["error"]["code"]' requirement
expect_error "the archive is cuDNN's CUDA 13 build, but the CUDA toolkit at /usr/local/cuda is CUDA 12.4"
expect_error "install the CUDA 12 build (--cuda 12)"
expect_error "(--force installs it anyway)"
expect_check compatibility failed
expect_no_file "$R4/opt/cudnn/current"
expect_no_file "$R4/var/cache/cudnnctl" # refused before anything was downloaded
expect_exit 0 ci "$R4" cuda --cuda 13 --force --json install 9.15.0
expect_json 'd["active"]["cuda"]' 13
expect_check compatibility warning
expect_json 'any(w.startswith("--force: the archive is cuDNN'"'"'s CUDA 13 build") for w in d["warnings"])' true
# Without --cuda the toolkit's major is chosen, and it passes.
R4b=$(new_root)
mkdir -p "$R4b/usr/local/cuda/include"
cp "$R4/usr/local/cuda/include/cuda_runtime_api.h" "$R4b/usr/local/cuda/include/"
expect_exit 0 ci "$R4b" cuda --json install 9.15.0
expect_json 'd["active"]["cuda"]' 12
expect_check cuda-toolkit passed

TEST "driver below the CUDA major's minimum (fake /proc): exit 7 naming what works; --force"
P=$E2E_TMP/proc
mkdir -p "$P/driver/nvidia"
echo 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023' \
  >"$P/driver/nvidia/version"
R5=$(new_root)
expect_exit 7 env CUDNNCTL_TEST_PROC="$P" "$CUDNNCTL" --root "$R5" --mirror "$URL/cuda/" --cuda 13 --json install 9.15.0
expect_error "the NVIDIA driver 535.104.05 is older than the 580.65.06 that CUDA 13 builds need"
expect_error "install the CUDA 12 build (--cuda 12, needs driver >= 525.60.13)"
expect_json 'd["data"]["requirements"]["driver"]' 535.104.05
expect_check compatibility failed
expect_no_file "$R5/opt/cudnn/current"
expect_exit 0 env CUDNNCTL_TEST_PROC="$P" "$CUDNNCTL" --root "$R5" --mirror "$URL/cuda/" --cuda 12 --json install 9.15.0
expect_check driver passed
expect_exit 0 env CUDNNCTL_TEST_PROC="$P" "$CUDNNCTL" --root "$R5" --mirror "$URL/cuda/" --cuda 13 --force --json install 9.15.0
expect_json 'd["active"]["cuda"]' 13
expect_json 'any(w.startswith("--force: the NVIDIA driver 535.104.05") for w in d["warnings"])' true
# The open kernel module's banner, new enough.
echo 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)  Sun Jul 20 06:22:56 UTC 2025' \
  >"$P/driver/nvidia/version"
R5b=$(new_root)
expect_exit 0 env CUDNNCTL_TEST_PROC="$P" "$CUDNNCTL" --root "$R5b" --mirror "$URL/cuda/" --cuda 13 --json install 9.15.0
expect_check driver passed
expect_json 'd["data"]["requirements"]["driver"]' 580.159.04
# An unreadable banner is a warning, not a refusal.
echo 'garbage' >"$P/driver/nvidia/version"
R5c=$(new_root)
expect_exit 0 env CUDNNCTL_TEST_PROC="$P" "$CUDNNCTL" --root "$R5c" --mirror "$URL/cuda/" --cuda 13 --json install 9.15.0
expect_json 'any("cannot find a driver version" in w for w in d["warnings"])' true

TEST "--require-gpu without a usable GPU: exit 7 before anything is written"
expect_exit 7 ci "$R" good2 --cuda 12 --json install 9.14.0 --require-gpu
expect_json 'd["error"]["code"]' requirement
expect_error "--require-gpu: no GPU"
expect_check gpu failed
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/now.snap"
cmp -s "$E2E_TMP/gen1.snap" "$E2E_TMP/now.snap" || fail "the prefix changed"
ls "$R/var/cache/cudnnctl" | grep -q "$(json_get 'd["data"]["archive"]["sha256"]')" &&
  fail "--require-gpu downloaded the archive before refusing" || true
expect_exit 2 ci "$R" good2 --cuda 12 --json install 9.14.0 --require-gpu --no-smoke
expect_error "--require-gpu asks for the GPU smoke test, which --no-smoke turns off"

TEST "install of a build already in the store meets the same requirements (--require-gpu, driver)"
R6=$(new_root)
expect_exit 0 ci "$R6" good --cuda 12 -q install 9.1.0
expect_exit 0 ci "$R6" good2 --cuda 12 -q install 9.14.0
expect_exit 0 ci "$R6" good2 --cuda 12 --json status
expect_json 'd["active"]["version"]' 9.14.0.64
tree_snapshot "$R6/opt/cudnn" >"$E2E_TMP/r6.snap"
expect_exit 7 ci "$R6" good --cuda 12 --json install 9.1.0 --require-gpu
expect_error "--require-gpu: no GPU"
expect_check gpu failed
P6=$E2E_TMP/proc6
mkdir -p "$P6/driver/nvidia"
echo 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024' \
  >"$P6/driver/nvidia/version"
expect_exit 7 env CUDNNCTL_TEST_PROC="$P6" "$CUDNNCTL" --root "$R6" --mirror "$URL/good/" --cuda 12 --json install 9.1.0
expect_json 'd["error"]["code"]' requirement
expect_error "470.256.02"
cmp -s "$E2E_TMP/r6.snap" <(tree_snapshot "$R6/opt/cudnn") || fail "a refused switch changed the prefix"
expect_exit 0 ci "$R6" good --cuda 12 --json install 9.1.0
expect_json 'd["active"]["version"]' 9.1.0.70

# ---- after the switch (exit 5, rolled back) --------------------------------------------------

# expect_rolled_back ROOT: generation 1 (9.1.0) is active again, nothing of 9.14.0 is left,
# the history says rolled-back and the loader cache names generation 1's entry.
expect_rolled_back() {
  local root=$1 got
  expect_json 'd["error"]["code"]' rolled_back
  expect_json 'd["error"]["exit_code"]' 5
  expect_json 'd["active"]["generation"]' 1 # the JSON says what is active after the rollback
  expect_json 'd["active"]["version"]' 9.1.0.70
  expect_error "rolled back to generation 1"
  expect_symlink "$root/opt/cudnn/current" generations/1
  expect_no_file "$root/opt/cudnn/store/9.14.0.64-cuda12-linux-x86_64"
  expect_no_file "$root/var/lib/cudnnctl/journal.json"
  expect_contains "$root/etc/ld.so.conf.d/00-cudnnctl.conf" /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib
  got=$(ldconfig -r "$root" -p | awk '$1 == "libcudnn.so.9" && /x86-64/ {print $NF; exit}')
  expect_eq "$got" /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9 "ld.so cache"
  cudnnctl --root "$root" --json history >"$E2E_TMP/history.json"
  expect_json 'd["data"]["history"][-1]["result"]' rolled-back "$E2E_TMP/history.json"
  cudnnctl --root "$root" --json status >"$E2E_TMP/status.json"
  expect_json 'd["active"]["version"]' 9.1.0.70 "$E2E_TMP/status.json"
}

TEST "a failure after the switch (injected at post-switch-check) rolls back: exit 5"
expect_exit 5 env CUDNNCTL_TEST_FAIL_AT=post-switch-check "$CUDNNCTL" --root "$R" --mirror "$URL/good2/" --cuda 12 --json install 9.14.0
expect_rolled_back "$R"
expect_error "injected failure at post-switch-check"

TEST "the loader resolves libcudnn.so.9 elsewhere (a directory listed before the drop-in): exit 5"
# A vendor directory named in ld.so.conf itself, ahead of the include, with another cuDNN 9:
# after the switch the ld.so cache still maps libcudnn.so.9 there.
mkdir -p "$R/opt/vendor/lib"
cp -P "$R"/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so* "$R/opt/vendor/lib/"
printf '/opt/vendor/lib\ninclude /etc/ld.so.conf.d/*.conf\n' >"$R/etc/ld.so.conf"
ldconfig -r "$R"
expect_exit 5 ci "$R" good2 --cuda 12 --json install 9.14.0
expect_check loader failed
expect_error "loader check failed: the ld.so cache under $R resolves libcudnn.so.9 to /opt/vendor/lib/libcudnn.so.9, expected /opt/cudnn/store/9.14.0.64-cuda12-linux-x86_64/lib/libcudnn.so.9"
# Rolled back: generation 1 active; the vendor copy still shadows it in this root's cache.
expect_symlink "$R/opt/cudnn/current" generations/1
expect_no_file "$R/opt/cudnn/store/9.14.0.64-cuda12-linux-x86_64"
cudnnctl --root "$R" --json history >"$E2E_TMP/history.json"
expect_json 'd["data"]["history"][-1]["result"]' rolled-back "$E2E_TMP/history.json"
echo 'include /etc/ld.so.conf.d/*.conf' >"$R/etc/ld.so.conf"
rm -rf "$R/opt/vendor"
expect_exit 0 ci "$R" good2 --cuda 12 --json install 9.14.0
expect_check loader passed
expect_exit 0 cudnnctl --root "$R" rollback

TEST "smoke and verify --smoke on demand: skipped without a GPU (exit 0, a warning)"
expect_exit 0 cudnnctl --root "$R" --json smoke
expect_json 'd["data"]["smoke"]["status"]' skipped
expect_json 'd["data"]["entry"]' 9.1.0.70-cuda12-linux-x86_64
expect_exit 0 cudnnctl --root "$R" smoke
expect_contains "$OUT" "smoke test: skipped: no GPU"
expect_exit 0 cudnnctl --root "$R" --json verify --smoke
expect_check smoke skipped
R6=$(new_root)
expect_exit 2 cudnnctl --root "$R6" --json smoke
expect_error "nothing to test: no cuDNN generation is active"

# ---- root / in a private mount namespace ---------------------------------------------------

ns_ok=1
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! unshare -m true 2>/dev/null; then
  ns_ok=0
fi

NS=$E2E_TMP/ns
mkdir -p "$NS"
# ns_run BODY: run BODY (bash) as root / inside a private mount namespace (ns_prelude). `rec NAME ARGS...` runs cudnnctl --json
# ARGS and keeps $NS/NAME.json and $NS/NAME.rc.
ns_run() {
  {
    ns_prelude
    cat <<EOF
unset LD_LIBRARY_PATH CUDNNCTL_TEST_PROC CUDNNCTL_TEST_FAIL_AT
NS=$NS
URL=$URL
rec() {
  local name=\$1
  shift
  set +e
  "$CUDNNCTL" --json "\$@" >"\$NS/\$name.json" 2>"\$NS/\$name.err"
  echo \$? >"\$NS/\$name.rc"
  set -e
}
$1
EOF
  } >"$NS/inside.sh"
  expect_exit 0 unshare -m bash "$NS/inside.sh"
}
ns_rc() { cat "$NS/$1.rc"; }

TEST "root /: a library the real loader cannot load after the switch rolls back (exit 5)"
if [ "$ns_ok" -eq 1 ]; then
  host_cache=$(sha256sum /etc/ld.so.cache)
  # The pre-switch probe can only warn (the missing library is not part of cuDNN); a real
  # child process without LD_LIBRARY_PATH then fails to load libcudnn.so.9 through the ld.so
  # cache, and the switch is undone.
  ns_run '
rec a1 --mirror "$URL/good/" --cuda 12 --force install 9.1.0
rec a2 --mirror "$URL/unresolvable/" --cuda 12 --force install 9.14.0
rec a3 status
echo "dropin=$(grep -v "^#" /etc/ld.so.conf.d/00-cudnnctl.conf)" >"$NS/a.dropin"
'
  expect_eq "$(ns_rc a1)" 0 "install 9.1.0 at /"
  expect_check loader passed "$NS/a1.json"
  expect_json '[c["message"] for c in d["data"]["checks"] if c["name"] == "loader"][0]' \
    "a child process loads libcudnn.so.9 from /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9" "$NS/a1.json"
  expect_eq "$(ns_rc a2)" 5 "install of the unloadable build"
  expect_check runtime warning "$NS/a2.json"
  expect_check loader failed "$NS/a2.json"
  OUT=$NS/a2.json expect_error "loader check failed: a process without LD_LIBRARY_PATH cannot load libcudnn.so.9 (libcudnnctl_missing_dep.so.1: cannot open shared object file"
  OUT=$NS/a2.json expect_error "rolled back to generation 1"
  expect_json 'd["active"]["version"]' 9.1.0.70 "$NS/a3.json"
  expect_contains "$NS/a.dropin" "dropin=/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib"
  expect_eq "$(sha256sum /etc/ld.so.cache)" "$host_cache" "the host's ld.so.cache changed"
else
  echo "  (skipped: needs root and unshare -m)" >&2
fi

# swap_shim MIRROR LABEL SO: tests/fixtures/swap_shim.py (a fake cuDNN shim into a release).
swap_shim() { python3 "$E2E_FIXTURES/swap_shim.py" "$@"; }

TEST "root / with a (fake) GPU: the smoke test passes, fails with rollback, or is skipped"
if [ "$ns_ok" -eq 1 ]; then
  F=$E2E_TMP/fakegpu
  mkdir -p "$F"
  cc -shared -fPIC -o "$F/libcuda.so.1" -Wl,-soname,libcuda.so.1 "$FAKEGPU_SRC/fake_cuda.c"
  cc -shared -fPIC -o "$F/good.so" -Wl,-soname,libcudnn.so.9 -DFAKE_VERSION=91600 "$FAKEGPU_SRC/fake_cudnn.c"
  cc -shared -fPIC -o "$F/wrong.so" -Wl,-soname,libcudnn.so.9 -DFAKE_VERSION=91700 -DFAKE_WRONG "$FAKEGPU_SRC/fake_cudnn.c"
  rel fakegood 9.16.0 9.16.0.29 12
  rel fakewrong 9.17.0 9.17.0.29 12
  swap_shim "$M/fakegood" 9.16.0 "$F/good.so"
  swap_shim "$M/fakewrong" 9.17.0 "$F/wrong.so"
  ns_run '
mkdir -p /opt/fakecuda
cp '"$F"'/libcuda.so.1 /opt/fakecuda/
echo /opt/fakecuda >/etc/ld.so.conf.d/zz-fakecuda.conf
printf "devices=2\n" >/etc/cudnnctl-fake-cuda.conf
ldconfig
rec b1 --mirror "$URL/fakegood/" --cuda 12 --force install 9.16.0 --require-gpu
rec b2 --mirror "$URL/fakewrong/" --cuda 12 --force install 9.17.0
rec b3 smoke
rec b4 --mirror "$URL/fakewrong/" --cuda 12 --force install 9.17.0 --no-smoke
rec b5 smoke
rec b6 verify --smoke
rec b7 rollback
printf "devices=1\nprohibited=0\n" >/etc/cudnnctl-fake-cuda.conf
rec b8 --mirror "$URL/good2/" --cuda 12 --force install 9.14.0 --require-gpu
rec b9 --mirror "$URL/fakewrong/" --cuda 12 --force install 9.17.0
'
  # b1: passes on both fake GPUs; --require-gpu found them before the switch.
  expect_eq "$(ns_rc b1)" 0 "install of the good build on the fake GPU"
  expect_check gpu passed "$NS/b1.json"
  expect_check smoke passed "$NS/b1.json"
  expect_json '[g["status"] for g in d["data"]["smoke"]["gpus"]]' '["passed", "passed"]' "$NS/b1.json"
  expect_json '[o["max_error"] for o in d["data"]["smoke"]["gpus"][0]["ops"] if o["op"] == "conv_fwd_fp32"]' '[0.0]' "$NS/b1.json"
  expect_json '[o["status"] for o in d["data"]["smoke"]["gpus"][1]["ops"]]' '["passed", "passed", "passed", "passed", "passed", "passed", "passed"]' "$NS/b1.json"
  expect_json 'd["data"]["smoke"]["gpus"][0]["cudnn_version"]' 91600 "$NS/b1.json"
  # b2: only the GPU test can see the wrong result: rolled back to b1's generation.
  expect_eq "$(ns_rc b2)" 5 "install of the broken build"
  for gate in header libraries runtime loader; do
    expect_check "$gate" passed "$NS/b2.json"
  done
  expect_check smoke failed "$NS/b2.json"
  OUT=$NS/b2.json expect_error "smoke test failed: GPU 0 (Fake GPU 0 (CPU), sm 9.0): conv_fwd_fp32 (legacy API): wrong result: max abs error 0.5"
  OUT=$NS/b2.json expect_error "rolled back to generation 1"
  expect_json '[o["max_error"] for o in d["data"]["smoke"]["gpus"][0]["ops"] if o["op"] == "conv_fwd_fp32"]' '[0.5]' "$NS/b2.json"
  # b3: on demand, on the active (good) generation.
  expect_eq "$(ns_rc b3)" 0 "cudnnctl smoke"
  expect_json 'd["data"]["smoke"]["status"]' passed "$NS/b3.json"
  expect_json 'd["data"]["entry"]' 9.16.0.29-cuda12-linux-x86_64 "$NS/b3.json"
  # b4-b6: installed without the smoke test, then caught by smoke (exit 8) and verify --smoke.
  expect_eq "$(ns_rc b4)" 0 "install --no-smoke"
  expect_check smoke skipped "$NS/b4.json"
  expect_eq "$(ns_rc b5)" 8 "cudnnctl smoke on the broken generation"
  OUT=$NS/b5.json expect_error "smoke test failed on 9.17.0.29-cuda12-linux-x86_64"
  expect_eq "$(ns_rc b6)" 8 "verify --smoke on the broken generation"
  expect_json 'any(p.startswith("smoke test failed") for p in d["data"]["problems"])' true "$NS/b6.json"
  expect_eq "$(ns_rc b7)" 0 "rollback"
  # b8: the only GPU is compute-prohibited: no usable GPU for --require-gpu (exit 7).
  expect_eq "$(ns_rc b8)" 7 "--require-gpu with a prohibited GPU"
  OUT=$NS/b8.json expect_error "--require-gpu: no usable GPU: GPU 0 (Fake GPU 0 (CPU), sm 9.0): compute mode is prohibited"
  # b9: without --require-gpu an unusable GPU is skipped with a warning, never a failure, even
  # for a build whose kernels are wrong.
  expect_eq "$(ns_rc b9)" 0 "install with an unusable GPU"
  expect_check smoke skipped "$NS/b9.json"
  expect_json 'any(w.startswith("smoke test skipped: no usable GPU") for w in d["warnings"])' true "$NS/b9.json"
else
  echo "  (skipped: needs root and unshare -m)" >&2
fi
