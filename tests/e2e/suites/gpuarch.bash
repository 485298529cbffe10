# The compute-capability gate of install/use (issue 17): every GPU the node shows (the fake
# driver of tests/fakegpu, found by the smoke helper through LD_LIBRARY_PATH, with its
# fake-cuda.conf beside it) is judged against manifests/gpu_support.json before anything is
# downloaded; a build without device code for one of them is refused with exit 7 naming the
# GPU, its compute capability, the build and what to use instead; --force overrides; no GPU
# visible: no refusal. The archives are removed from the mirror: a download would fail
# (exit 3), so exit 7 proves the refusal came first. install starts the inventory before it
# resolves the release (issue 21): the refusals that must come first are served through the
# fault server with a stalled manifest, so that the inventory is surely in by then; a slow
# inventory (the fake driver's initms) is judged after the download, with the same refusal
# and nothing left behind.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl

M=$E2E_TMP/mirrors
F=$E2E_TMP/fakecuda
mkdir -p "$M" "$F"
cc -O1 -shared -fPIC -o "$F/libcuda.so.1" -Wl,-soname,libcuda.so.1 "$E2E_DIR/../fakegpu/fake_cuda.c"

rel() {
  local name=$1 label=$2 version=$3 cuda=$4
  shift 4
  mkrelease --mirror "$M/$name" --label "$label" --version "$version" --cuda "$cuda" \
    --platform linux-x86_64 --no-static "$@" >/dev/null
}
rel r914 9.14.0 9.14.0.64 12
rel r9102 9.10.2 9.10.2.21 12
rel r910 9.1.0 9.1.0.70 12
# Manifests only: what the gate refuses must never be fetched.
mkdir -p "$M/nodl914" && cp -r "$M/r914/." "$M/nodl914/" && find "$M/nodl914" -name '*.tar.xz' -delete
mkdir -p "$M/nodl910" && cp -r "$M/r910/." "$M/nodl910/" && find "$M/nodl910" -name '*.tar.xz' -delete
start_nginx "$M"
URL=$MIRROR_URL
NGINX_LOG=$NGINX_DIR/access.log
start_faultserver "$M"
# The manifest held back 0.3 s: the GPU inventory (a few ms with the fake driver) is in when
# check_requirements asks for it.
SLOWMAN=$FS_URL/fault/stall=0.3,stall-at=0

# gpus CONF: the fake node's GPUs (fake-cuda.conf beside the fake libcuda.so.1).
gpus() { printf "%b" "$1" >"$F/fake-cuda.conf"; }
# gi ROOT MIRROR ARGS...: cudnnctl with the fake driver visible.
gi() {
  local root=$1 mirror=$2
  shift 2
  LD_LIBRARY_PATH=$F cudnnctl --root "$root" --mirror "$URL/$mirror/" --cuda 12 "$@"
}

# refused_on CONF MIRROR LABEL MESSAGE...: exit 7 before any download (the fault server saw
# no archive request), nothing written.
refused_on() {
  local conf=$1 mirror=$2 label=$3 r n
  shift 3
  gpus "$conf"
  r=$(new_root)
  tree_snapshot "$r" >"$E2E_TMP/before.snap"
  n=$(wc -l <"$FS_LOG")
  expect_exit 7 env LD_LIBRARY_PATH=$F "$CUDNNCTL" --root "$r" --mirror "$SLOWMAN/$mirror/" \
    --cuda 12 --json install "$label" --no-smoke
  tail -n +"$((n + 1))" "$FS_LOG" | grep -q 'redistrib_' || fail "no manifest request reached the fault server"
  ! tail -n +"$((n + 1))" "$FS_LOG" | grep -q '\.tar\.' || fail "an archive was requested: $(tail -n +"$((n + 1))" "$FS_LOG")"
  expect_json 'd["error"]["code"]' requirement
  expect_check gpu-arch failed
  for m in "$@"; do
    expect_error "$m"
  done
  expect_error "(--force installs it anyway)"
  tree_snapshot "$r" >"$E2E_TMP/after.snap"
  cmp -s "$E2E_TMP/before.snap" "$E2E_TMP/after.snap" || fail "the refused install changed $r"
}

TEST "cuDNN 9.14 (CUDA 12) on compute capability 6.0: exit 7, names the GPU and 9.10.2"
refused_on 'cc=6.0\nname.0=Tesla P100-PCIE-16GB\n' nodl914 9.14.0 \
  "GPU 0 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64 for CUDA 12 has no device code for compute capability 6.0 (it supports 7.5 to 12.0); use cuDNN 9.10.2 for CUDA 12 (the newest release with device code for 6.0)"
expect_json 'd["data"]["requirements"]["gpu_arch"][0]["verdict"]' unsupported
expect_json 'd["data"]["requirements"]["gpu_arch"][0]["compute_capability"]' 6.0
expect_json '"9.11" in d["data"]["requirements"]["gpu_arch"][0]["source"]' true

TEST "cuDNN 9.14 on compute capability 7.0 (Volta): exit 7"
refused_on 'cc=7.0\nname.0=Tesla V100-SXM2-32GB\n' nodl914 9.14.0 \
  "GPU 0 (Tesla V100-SXM2-32GB, sm 7.0): cuDNN 9.14.0.64 for CUDA 12 has no device code for compute capability 7.0" \
  "use cuDNN 9.10.2 for CUDA 12"

TEST "cuDNN 9.1.0 (CUDA 12) on compute capability 12.0 (Blackwell): exit 7, use 9.7.0 or later"
refused_on 'cc=12.0\nname.0=NVIDIA RTX PRO 6000\n' nodl910 9.1.0 \
  "GPU 0 (NVIDIA RTX PRO 6000, sm 12.0): cuDNN 9.1.0.70 for CUDA 12 has no device code for compute capability 12.0 (it supports 5.0 to 9.0); use cuDNN 9.7.0 or later for CUDA 12"

TEST "a mixed node (6.0 and 9.0): the 9.14 build is refused naming only the old GPU"
refused_on 'devices=2\ncc.0=9.0\ncc.1=6.0\nname.0=NVIDIA H200\nname.1=Tesla P100-PCIE-16GB\n' nodl914 9.14.0 \
  "GPU 1 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64 for CUDA 12 has no device code"
expect_not_contains "$OUT" "GPU 0 (NVIDIA H200, sm 9.0): cuDNN 9.14.0.64 for CUDA 12 has no"
expect_json '[g["verdict"] for g in d["data"]["requirements"]["gpu_arch"]]' '["supported", "unsupported"]'

# ---- the inventory still coming when the download starts (issue 21) -------------------------
# initms: the fake driver's cuInit takes that long (a real one about 0.3 s), so the install
# starts the download and judges the GPUs after the pass.

# archive_fetched LOG_LINES_BEFORE: nginx served the 9.14 archive since then.
archive_fetched() {
  tail -n +"$(($1 + 1))" "$NGINX_LOG" | grep -q 'cudnn-linux-x86_64-9.14.0.64_cuda12-archive.tar.xz' ||
    fail "the archive was not downloaded (the late path was not taken)"
}
# late_install CODE OPTION...: `gi "$R" r914 OPTION... install 9.14.0 --no-smoke` exits CODE, and
# nginx served the 9.14 archive during it (archive_fetched).
late_install() {
  local code=$1 n
  shift
  n=$(wc -l <"$NGINX_LOG")
  expect_exit "$code" gi "$R" r914 "$@" install 9.14.0 --no-smoke
  archive_fetched "$n"
}

TEST "slow inventory, unsupported GPU: exit 7 after the download, same message, nothing left"
# A root with 9.10.2 installed (its archive kept in the cache): the refused 9.14 must leave
# the store, /etc, the history and the cache exactly as they were (no `failed` record).
gpus 'cc=6.0\nname.0=Tesla P100-PCIE-16GB\n'
R=$(new_root)
expect_exit 0 gi "$R" r9102 --json install 9.10.2 --no-smoke
expect_eq "$(ls "$R/var/cache/cudnnctl" | wc -l)" 1 "files in the cache after 9.10.2"
gpus 'cc=6.0\nname.0=Tesla P100-PCIE-16GB\ninitms=1500\n'
tree_snapshot "$R" >"$E2E_TMP/before.snap"
late_install 7 --json
expect_json 'd["error"]["code"]' requirement
expect_error "GPU 0 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64 for CUDA 12 has no device code for compute capability 6.0 (it supports 7.5 to 12.0); use cuDNN 9.10.2 for CUDA 12 (the newest release with device code for 6.0) (--force installs it anyway)"
expect_check gpu-arch failed
expect_check compatibility failed
expect_json 'd["data"]["requirements"]["gpu_arch"][0]["verdict"]' unsupported
tree_snapshot "$R" >"$E2E_TMP/after.snap"
# Everything but the lock file (which names its last holder) is as it was.
diff <(grep -v '^var/lib/cudnnctl/lock ' "$E2E_TMP/before.snap") \
  <(grep -v '^var/lib/cudnnctl/lock ' "$E2E_TMP/after.snap") >&2 || fail "the late refusal changed $R"
# A bare root: no entry, no history, no cache directory afterwards.
R=$(new_root)
late_install 7 -v
expect_contains "$ERR" "GPU check finished during the download: GPU 0 (Tesla P100-PCIE-16GB, sm 6.0)"
expect_contains "$ERR" "GPU 0 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64 for CUDA 12 has no device code"
expect_no_file "$R/var/cache/cudnnctl"
expect_no_file "$R/var/lib/cudnnctl/history.jsonl"
expect_no_file "$R/var/lib/cudnnctl/journal.json"
expect_eq "$(ls -A "$R/opt/cudnn/store" 2>/dev/null)" "" "the store after the refusal"

TEST "slow inventory, supported GPU: installed; -vv joins the GPU check after the archive is verified"
# ctxlog: the fake driver logs every primary context made and destroyed, in any process.
gpus "cc=9.0\ninitms=1500\nctxlog=$E2E_TMP/contexts\n"
R=$(new_root)
late_install 0 -vv
expect_contains "$ERR" "GPU check finished during the download: cuDNN 9.14.0.64 for CUDA 12 has device code for every visible GPU (GPU 0 sm 9.0)"
# One GPU child for the inventory and the runtime probe: GPU 0's context made once, never
# twice (an inventory child's, then a probe child's).
expect_contains "$ERR" "runtime probe: the driver and GPU 0's context were initialised beside the download, with the GPU inventory ("
expect_eq "$(tr '\n' ',' <"$E2E_TMP/contexts")" "create 0," "primary contexts made during the install"
grep -E '^timing: (archive verified|gpu check joined|validated) at ' "$ERR" | sed 's/^timing: //; s/ at .*//' >"$E2E_TMP/order"
expect_eq "$(tr '\n' ',' <"$E2E_TMP/order")" "archive verified,gpu check joined,validated," "timing lines"
expect_exit 0 cudnnctl --root "$R" --json status
expect_json 'd["active"]["version"]' 9.14.0.64

TEST "slow inventory, unsupported GPU, --force: installed with the warning"
gpus 'devices=2\ncc.0=9.0\ncc.1=6.0\nname.1=Tesla P100-PCIE-16GB\ninitms=1500\n'
R=$(new_root)
late_install 0 --json --force
expect_check compatibility warning
expect_check gpu-arch failed
expect_json 'any(w.startswith("--force: GPU 1 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64") for w in d["warnings"])' true
expect_json 'd["active"]["version"]' 9.14.0.64

TEST "slow inventory, --dry-run: the refusal before anything (synchronous as before)"
gpus 'cc=6.0\ninitms=500\n'
R=$(new_root)
tree_snapshot "$R" >"$E2E_TMP/before.snap"
n=$(wc -l <"$NGINX_LOG")
expect_exit 7 gi "$R" r914 --dry-run install 9.14.0 --no-smoke
expect_contains "$ERR" "cuDNN 9.14.0.64 for CUDA 12 has no device code for compute capability 6.0"
! tail -n +"$((n + 1))" "$NGINX_LOG" | grep -q '\.tar\.xz' || fail "--dry-run downloaded the archive"
tree_snapshot "$R" >"$E2E_TMP/after.snap"
cmp -s "$E2E_TMP/before.snap" "$E2E_TMP/after.snap" || fail "the refused dry run changed $R"

TEST "compute capabilities 7.5, 9.0, 10.0 and 12.0 run cuDNN 9.14: installed"
for c in 7.5 9.0 10.0 12.0; do
  gpus "cc=$c\n"
  R=$(new_root)
  expect_exit 0 gi "$R" r914 --json install 9.14.0 --no-smoke
  expect_check gpu-arch passed
  expect_json 'd["data"]["requirements"]["gpu_arch"][0]["verdict"]' supported
  expect_json 'd["data"]["requirements"]["gpu_arch"][0]["compute_capability"]' "$c"
  expect_json 'd["active"]["version"]' 9.14.0.64
done

TEST "the same mixed node runs cuDNN 9.10.2: installed"
gpus 'devices=2\ncc.0=9.0\ncc.1=6.0\n'
R=$(new_root)
expect_exit 0 gi "$R" r9102 --json install 9.10.2 --no-smoke
expect_json '[g["verdict"] for g in d["data"]["requirements"]["gpu_arch"]]' '["supported", "supported"]'

TEST "--force installs the refused build with a warning"
gpus 'devices=2\ncc.0=9.0\ncc.1=6.0\nname.1=Tesla P100-PCIE-16GB\n'
R=$(new_root)
expect_exit 0 gi "$R" r914 --json --force install 9.14.0 --no-smoke
expect_check compatibility warning
expect_json 'any(w.startswith("--force: GPU 1 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64") for w in d["warnings"])' true
expect_json 'd["active"]["version"]' 9.14.0.64

TEST "use: switching that mixed node back to 9.14 is refused (exit 7), --force overrides"
# $R: 9.14 (forced, generation 1); add 9.10.2, then ask for 9.14 again.
expect_exit 0 gi "$R" r9102 --json install 9.10.2 --no-smoke
tree_snapshot "$R" >"$E2E_TMP/before.snap"
expect_exit 7 gi "$R" r914 --json use 9.14.0 --no-smoke
expect_error "GPU 1 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0.64 for CUDA 12 has no device code for compute capability 6.0"
expect_error "(--force activates it anyway)"
tree_snapshot "$R" >"$E2E_TMP/after.snap"
cmp -s "$E2E_TMP/before.snap" "$E2E_TMP/after.snap" || fail "the refused use changed $R"
expect_exit 0 gi "$R" r914 --json --force use 9.14.0 --no-smoke
expect_json 'd["active"]["version"]' 9.14.0.64
expect_check compatibility warning
gpus 'cc=9.0\n'
expect_exit 0 gi "$R" r914 --json use 9.10.2 --no-smoke
expect_check gpu-arch passed

TEST "no GPU visible: no refusal, and -v says the build was not checked"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" --mirror "$URL/r914/" --cuda 12 -v install 9.14.0 --no-smoke
expect_contains "$ERR" "no GPU visible"
expect_contains "$ERR" "cuDNN 9.14.0.64 for CUDA 12 not checked against any compute capability"
gpus 'devices=0\n'
R=$(new_root)
expect_exit 0 gi "$R" r914 --json install 9.14.0 --no-smoke
expect_check gpu-arch skipped

TEST "a GPU whose driver is too old for it (Blackwell, CUDA 12 build, NVML says 560): exit 7"
cp "$F/libcuda.so.1" "$F/libnvidia-ml.so.1"
refused_on 'cc=10.0\nname.0=NVIDIA B200\nkernel=560.35.03\n' nodl914 9.14.0 \
  "GPU 0 (NVIDIA B200, sm 10.0): cuDNN 9.14.0.64 for CUDA 12 needs NVIDIA driver 570.26 or newer on this GPU (the driver is 560.35.03)"
rm -f "$F/libnvidia-ml.so.1"

TEST "doctor lists each GPU (CC, name, memory, MIG) and flags an active build that cannot run on one"
cp "$F/libcuda.so.1" "$F/libnvidia-ml.so.1"
gpus 'devices=2\ncc.0=9.0\ncc.1=6.0\nname.0=NVIDIA H200\nname.1=Tesla P100-PCIE-16GB\nmem.0=143771\nmig.0=on\nkernel=580.159.04\n'
R=$(new_root)
expect_exit 0 gi "$R" r914 --json --force install 9.14.0 --no-smoke
expect_exit 8 env LD_LIBRARY_PATH=$F "$CUDNNCTL" --root "$R" --json doctor
expect_json '[(g["gpu"], g["name"], g["compute_capability"], g["mig"]) for g in d["data"]["host"]["gpus"]]' \
  '[[0, "NVIDIA H200", "9.0", "enabled"], [1, "Tesla P100-PCIE-16GB", "6.0", "disabled"]]'
expect_json 'd["data"]["host"]["gpus"][0]["memory_bytes"]' $((143771 << 20))
expect_json '[f["severity"] for f in d["data"]["findings"] if f["code"] == "gpu-arch-unsupported"]' '["error"]'
expect_json '[f["fix"] for f in d["data"]["findings"] if f["code"] == "gpu-arch-unsupported"][0].startswith("cudnnctl install 9.10.2 --cuda 12")' true
expect_json '"GPU 1 (Tesla P100-PCIE-16GB, sm 6.0): cuDNN 9.14.0 for CUDA 12 has no device code" in [f["message"] for f in d["data"]["findings"] if f["code"] == "gpu-arch-unsupported"][0]' true
expect_exit 8 env LD_LIBRARY_PATH=$F "$CUDNNCTL" --root "$R" doctor
expect_contains "$OUT" "GPU 0:           NVIDIA H200, sm 9.0, 140.4 GiB, MIG enabled"
expect_contains "$OUT" "GPU 1:           Tesla P100-PCIE-16GB, sm 6.0, 16.0 GiB, MIG disabled"
expect_contains "$OUT" "gpu-arch-unsupported"
rm -f "$F/libnvidia-ml.so.1"
# The same store on a node whose GPUs all run it: no finding.
gpus 'cc=9.0\n'
expect_exit 0 env LD_LIBRARY_PATH=$F "$CUDNNCTL" --root "$R" --json doctor
expect_json '[f for f in d["data"]["findings"] if f["code"] == "gpu-arch-unsupported"]' '[]'
# No GPU: said, no finding.
expect_exit 0 cudnnctl --root "$R" doctor
expect_contains "$OUT" "GPUs:            none visible"

TEST "recommend judges the node's GPUs by default (manifests/gpu_support.json), --compute-capability overrides"
gpus 'devices=2\ncc.0=9.0\ncc.1=7.0\n'
R=$(new_root)
expect_exit 0 env LD_LIBRARY_PATH=$F "$CUDNNCTL" --root "$R" --cuda 12 --json recommend
expect_json 'd["data"]["input"]["compute_capability"]' "9.0, 7.0"
expect_json '"the node" in d["data"]["input"]["compute_capability_source"]' true
expect_json 'd["data"]["recommended"]["version"].startswith("9.10.")' true
expect_json 'any("sm 7.0" in r for x in d["data"]["rejected"] for r in x["reasons"])' true
expect_exit 0 env LD_LIBRARY_PATH=$F "$CUDNNCTL" --root "$R" --cuda 12 --json recommend --compute-capability 9.0
expect_json 'd["data"]["input"]["compute_capability"]' "9.0"
expect_json 'd["data"]["input"]["compute_capability_source"]' "--compute-capability"
expect_json 'd["data"]["recommended"]["version"].startswith("9.10.")' false
# No GPU visible and no flag: no compute-capability constraint.
expect_exit 0 cudnnctl --root "$R" --cuda 12 --json recommend
expect_json 'd["data"]["input"]["compute_capability"]' null
