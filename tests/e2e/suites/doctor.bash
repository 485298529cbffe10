# `cudnnctl doctor` (issue 7) against fixture roots built by tests/fixtures/doctor/mkroot.py:
# stub libraries with real SONAMEs, DT_NEEDED, DT_RPATH/DT_RUNPATH, real-format headers, a
# fake dpkg database, pip dist-info, conda-meta, LD_LIBRARY_PATH set by the test. Each test
# reproduces a failure mode of shared/reference/cudnn-failure-modes.md (F#) and asserts the
# exact finding code. Also: doctor writes nothing (tree snapshot, run as nobody), exit 0/8,
# global options after the subcommand, --scan.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
mkroot_env # mk, SITE, MA, NOPROC (no NVIDIA kernel module)

# base_root: a fresh root with /etc/ld.so.conf, multiarch dirs and an empty dpkg database.
base_root() {
  local r
  r=$(new_root)
  mk base "$r"
  echo "$r"
}

# apt_cudnn ROOT VERSION [--hold] [mkroot cudnn options...]: cuDNN in /usr/lib/<multiarch>
# with headers in /usr/include/<multiarch>, split like NVIDIA's packages: libcudnnN-dev-cuda-12
# (the .so links; listed first), libcudnnN-cuda-12 (the libraries; held with --hold).
apt_cudnn() {
  local r=$1 v=$2 hold=
  shift 2
  if [ "${1:-}" = --hold ]; then
    hold=--hold
    shift
  fi
  mk cudnn "$r" $MA "$v" --layout apt "$@"
  local major=${v%%.*}
  mk dpkg "$r" "libcudnn${major}-dev-cuda-12" "$v.64-1" \
    $(cd "$r" && ls usr/lib/x86_64-linux-gnu/libcudnn*.so | sed 's|^|/|')
  mk dpkg $hold "$r" "libcudnn${major}-cuda-12" "$v.64-1" \
    $(cd "$r" && ls usr/lib/x86_64-linux-gnu/libcudnn*.so."$major"* | sed 's|^|/|')
}

# doctor ROOT [ARGS...]: cudnnctl doctor --json on ROOT (output in $OUT, status in $RC).
doctor() {
  local r=$1
  shift
  run "$CUDNNCTL" doctor --json --root "$r" "$@"
}
findings() { json_get '" ".join(sorted(set(f["code"] for f in d["data"]["findings"])))'; }
expect_finding() { # CODE [SEVERITY]
  local got
  got=$(json_get "[f['severity'] for f in d['data']['findings'] if f['code'] == '$1']")
  [ "$got" != "[]" ] || fail "no finding $1 (found: $(findings))"
  [ -z "${2:-}" ] || [[ $got == *"\"$2\""* ]] || fail "finding $1 has severity $got, expected $2"
}
expect_no_finding() {
  [ "$(json_get "[f for f in d['data']['findings'] if f['code'] == '$1']")" = "[]" ] ||
    fail "unexpected finding $1"
}
expect_rc() { [ "$RC" -eq "$1" ] || fail "doctor exited $RC, expected $1"; }

TEST "healthy apt install, held package (F12): exit 0, apt-held is info"
R=$(base_root)
apt_cudnn "$R" 9.14.0 --hold
mk cuda "$R" /usr/local/cuda-12.4 12.4
ln -s cuda-12.4 "$R/usr/local/cuda"
mk ldconfig "$R"
doctor "$R"
expect_rc 0
expect_finding apt-held info
expect_json 'd["data"]["summary"]["errors"]' 0
expect_json 'd["data"]["installs"][0]["package"]["name"]' libcudnn9-cuda-12
expect_json 'd["data"]["installs"][0]["package"]["held"]' true
expect_json 'd["data"]["installs"][0]["version"]' 9.14.0.64
expect_json 'd["data"]["installs"][0]["cuda_major"]' 12
expect_json 'd["data"]["installs"][0]["header"]["version"]' 9.14.0
expect_json 'd["data"]["resolution"][0]["shim"]["via"]' ld.so.cache
expect_json 'd["data"]["resolution"][0]["shim"]["install"]' 1
expect_json 'd["data"]["host"]["cuda"]["major"]' 12
HEALTHY=$R

TEST "human report: header facts, installs, resolution, findings; global options after the command"
run "$CUDNNCTL" doctor --root "$HEALTHY"
expect_rc 0
expect_contains "$OUT" "cudnnctl 0.1.0 doctor"
expect_contains "$OUT" "root:            $HEALTHY"
expect_contains "$OUT" "CUDA toolkit:    12.4"
expect_contains "$OUT" "package: dpkg libcudnn9-cuda-12 9.14.0.64-1 (held)"
expect_contains "$OUT" "libcudnn.so.9 -> /lib/x86_64-linux-gnu/libcudnn.so.9 via ld.so.cache = [1]"
expect_contains "$OUT" "INFO    apt-held"
expect_contains "$OUT" "Result: no errors"

TEST "pip torch with DT_RPATH, and a cuDNN directory in LD_LIBRARY_PATH: the shim is torch's, its sub-libraries are not"
# Seen for real on the H200 machine (docs/GPU.md): torch then fails with "cuDNN version
# incompatibility: PyTorch was compiled against (9, 19, 0) but found runtime version (9, 14, 0)".
R=$(base_root)
apt_cudnn "$R" 9.14.0 --hold
mk cudnn "$R" $SITE/nvidia/cudnn/lib 9.19.0 --layout pip --cuda 13
mk dist "$R" $SITE nvidia-cudnn-cu13 9.19.0.56
mk torch "$R" $SITE 2.11.0 --pin nvidia-cudnn-cu13==9.19.0.56 --cuda 13.0
mk ldconfig "$R"
doctor "$R"
expect_rc 0
expect_finding framework-own-cudnn info
expect_no_finding sublibrary-from-other-install
run env LD_LIBRARY_PATH=$MA "$CUDNNCTL" doctor --json --root "$R"
expect_rc 8
expect_finding sublibrary-from-other-install error
expect_json '[c["shim"]["via"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' DT_RPATH
expect_json '[s["path"] for c in d["data"]["resolution"] if c["kind"] == "torch" for s in c["sublibraries"] if s["name"] == "libcudnn_graph.so.9"][0]' \
  $MA/libcudnn_graph.so.9

TEST "F11: .so.N copied as a regular file (cp without -P)"
R=$(base_root)
mk cudnn "$R" /usr/local/cuda/lib64 9.2.0 --regular-soname
mk ldconf "$R" zz-cuda.conf /usr/local/cuda/lib64
mk ldconfig "$R"
doctor "$R"
expect_finding soname-not-symlink warning
expect_rc 0

TEST "F6: sub-libraries of two releases in one directory"
R=$(base_root)
mk cudnn "$R" /usr/local/cuda/lib64 9.2.0 --sub libcudnn_ops=9.1.0,libcudnn_cnn=9.1.0
mk ldconf "$R" zz-cuda.conf /usr/local/cuda/lib64
mk ldconfig "$R"
doctor "$R"
expect_finding mixed-sublibrary-versions error
expect_json 'd["data"]["installs"][0]["versions_agree"]' false
expect_rc 8

TEST "F17: incomplete cuDNN 9 (an engine sub-library missing)"
R=$(base_root)
mk cudnn "$R" /usr/local/cuda/lib64 9.1.0 --missing libcudnn_engines_precompiled
mk ldconf "$R" zz-cuda.conf /usr/local/cuda/lib64
mk ldconfig "$R"
doctor "$R"
expect_finding incomplete-library-set error
expect_finding sublibrary-not-found error
expect_json '"libcudnn_engines_precompiled" in d["data"]["installs"][0]["missing"]' true
expect_rc 8

TEST "F6 (pytorch#185512): the wheel lacks a sub-library the system has; torch mixes them"
R=$(base_root)
apt_cudnn "$R" 9.22.0
mk cudnn "$R" $SITE/nvidia/cudnn/lib 9.21.0 --layout pip --missing libcudnn_engines_tensor_ir
mk dist "$R" $SITE nvidia-cudnn-cu12 9.21.0.1
mk torch "$R" $SITE 2.11.0 --pin nvidia-cudnn-cu12==9.21.0.1
mk ldconfig "$R"
doctor "$R"
expect_finding sublibrary-from-other-install error
expect_finding incomplete-library-set error
expect_finding framework-own-cudnn info
expect_json '[s["path"] for s in d["data"]["resolution"][1]["sublibraries"] if s["name"] == "libcudnn_engines_tensor_ir.so.9"][0]' \
  /lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9
expect_rc 8

TEST "dangling links (a file removed by hand after ldconfig ran)"
R=$(base_root)
mk cudnn "$R" /usr/local/cuda/lib64 8.9.7
mk ldconf "$R" zz-cuda.conf /usr/local/cuda/lib64
mk ldconfig "$R"
rm "$R/usr/local/cuda/lib64/libcudnn_adv_train.so.8.9.7"
doctor "$R"
expect_finding dangling-link error
expect_finding incomplete-library-set error
expect_rc 8

TEST "F10: cudnn.h without cudnn_version.h; headers of another release beside the libraries"
R=$(base_root)
mk cudnn "$R" /usr/local/cuda/lib64 8.9.7 --no-version-h
mk cudnn "$R" /opt/cudnn-b/lib 9.2.0 --header-version 9.1.0
mk ldconf "$R" zz-cuda.conf /usr/local/cuda/lib64 /opt/cudnn-b/lib
mk ldconfig "$R"
doctor "$R"
expect_finding header-without-version-h error
expect_finding header-version-mismatch error
expect_rc 8

TEST "F8: a cuDNN for CUDA 11 on a CUDA 12 toolkit (cuDNN 8: DT_NEEDED libcublasLt.so.11)"
R=$(base_root)
mk cuda "$R" /usr/local/cuda-12.4 12.4
ln -s cuda-12.4 "$R/usr/local/cuda"
mk cudnn "$R" /usr/local/cuda-12.4/lib64 8.9.7 --cuda 11
mk ldconf "$R" zz-cuda.conf /usr/local/cuda/lib64
mk ldconfig "$R"
doctor "$R"
expect_finding cuda-major-mismatch error
expect_json 'd["data"]["installs"][0]["cuda_major"]' 11
expect_json '"DT_NEEDED libcublasLt.so.11" in d["data"]["installs"][0]["cuda_source"]' true
expect_rc 8

TEST "F14: driver below the CUDA 12 minimum (proprietary banner)"
R=$(base_root)
mk cuda "$R" /usr/local/cuda-12.4 12.4
ln -s cuda-12.4 "$R/usr/local/cuda"
mk libcuda "$R" $MA 470.239.06
mk driver "$E2E_TMP/proc-470" 470.239.06 --proprietary
mk ldconfig "$R"
CUDNNCTL_TEST_PROC=$E2E_TMP/proc-470 doctor "$R"
expect_finding driver-below-minimum error
expect_json 'd["data"]["host"]["driver"]["kernel_module"]' 470.239.06
expect_json 'd["data"]["host"]["driver"]["module_kind"]' proprietary
expect_rc 8

TEST "F14: user-space driver upgraded under a running kernel module (reboot needed)"
R=$(base_root)
mk libcuda "$R" $MA 580.159.04
mk driver "$E2E_TMP/proc-575" 575.57.08
mk ldconfig "$R"
CUDNNCTL_TEST_PROC=$E2E_TMP/proc-575 doctor "$R"
expect_finding driver-reboot-needed error
expect_json 'd["data"]["host"]["driver"]["userspace"]' 580.159.04
expect_json 'd["data"]["host"]["driver"]["module_kind"]' open
expect_rc 8

# ld_path_torch [--runpath]: a root R with a system cuDNN 8.8.1 in /opt/sys-cudnn/lib and a torch
# pinned to pip's cuDNN 8.9.2 (DT_RPATH, or DT_RUNPATH with --runpath); doctor --json runs there
# with LD_LIBRARY_PATH naming the system cuDNN.
ld_path_torch() {
  R=$(base_root)
  mk cudnn "$R" /opt/sys-cudnn/lib 8.8.1
  mk cudnn "$R" $SITE/nvidia/cudnn/lib 8.9.2 --layout pip
  mk dist "$R" $SITE nvidia-cudnn-cu12 8.9.2.26
  mk torch "$R" $SITE 2.3.1 --cudnn-major 8 --pin nvidia-cudnn-cu12==8.9.2.26 "$@"
  mk ldconfig "$R"
  run env LD_LIBRARY_PATH=/opt/sys-cudnn/lib "$CUDNNCTL" doctor --json --root "$R"
}

TEST "F4: LD_LIBRARY_PATH beats a torch that uses DT_RUNPATH"
ld_path_torch --runpath
expect_finding framework-cudnn-mismatch error
expect_finding ld-library-path-overrides-framework warning
expect_json '[c["shim"]["via"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' LD_LIBRARY_PATH
expect_json '[c["expected"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' 8.9.2.26
expect_rc 8

TEST "the same torch with DT_RPATH carries its own cuDNN: LD_LIBRARY_PATH changes nothing"
ld_path_torch
expect_finding framework-own-cudnn info
expect_no_finding framework-cudnn-mismatch
expect_json '[c["own_cudnn"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' true
expect_json '[c["loaded"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' 8.9.2.26
expect_rc 0

TEST "F5 and F1: onnxruntime beside a pip-only cuDNN finds none"
R=$(base_root)
mk cudnn "$R" $SITE/nvidia/cudnn/lib 9.1.0 --layout pip
mk dist "$R" $SITE nvidia-cudnn-cu12 9.1.0.70
mk onnxruntime "$R" $SITE 1.18.1
mk ldconfig "$R"
doctor "$R"
expect_finding framework-cudnn-missing error
expect_finding cudnn-not-found warning
expect_json 'd["data"]["installs"][0]["package"]["name"]' nvidia-cudnn-cu12
expect_rc 8

TEST "F2: TensorFlow 2.15 (cuDNN 8) on a machine with only cuDNN 9"
R=$(base_root)
apt_cudnn "$R" 9.2.0
mk tensorflow "$R" $SITE 2.15.0 --cudnn 8
mk ldconfig "$R"
doctor "$R"
expect_finding framework-cudnn-missing error
expect_json '[c["shim"]["name"] for c in d["data"]["resolution"] if c["kind"] == "tensorflow"][0]' libcudnn.so.8
expect_rc 8

TEST "F3: TensorFlow 2.18 (built with cuDNN 9.3) loads an older 9.1"
R=$(base_root)
apt_cudnn "$R" 9.1.0
mk tensorflow "$R" $SITE 2.18.0 --cudnn 9 --cuda 12.5
mk ldconfig "$R"
doctor "$R"
expect_finding framework-cudnn-mismatch error
expect_json '[c["expected"] for c in d["data"]["resolution"] if c["kind"] == "tensorflow"][0]' 9.3
expect_rc 8

TEST "F16: a conda environment's cuDNN against the system's headers"
R=$(base_root)
apt_cudnn "$R" 8.9.7
mk cudnn "$R" /opt/conda/envs/ml/lib 9.1.0 --layout conda
mk conda-meta "$R" /opt/conda/envs/ml 9.1.0.70
mk ldconfig "$R"
doctor "$R"
expect_finding conda-system-header-mismatch warning
expect_json '[i["package"]["version"] for i in d["data"]["installs"] if i["package"] and i["package"]["manager"] == "conda"][0]' 9.1.0.70

TEST "cudnnctl's own state: an interrupted transaction and its leftovers"
R=$(base_root)
mk store "$R" /opt/cudnn 9.2.0 --active
mk ldconfig "$R"
mkdir -p "$R/var/lib/cudnnctl" "$R/opt/cudnn/store/.staging-0123abcd-42-ff"
echo '{"format": 1, "phase": "prepare"}' >"$R/var/lib/cudnnctl/journal.json"
touch "$R/opt/cudnn/generations/.2.json.tmp.abc123"
doctor "$R"
expect_finding interrupted-transaction error
expect_finding transaction-leftovers warning
expect_json '[i["package"]["active"] for i in d["data"]["installs"] if i["package"] and i["package"]["manager"] == "cudnnctl"][0]' true
expect_rc 8

TEST "LD_LIBRARY_PATH shadows cudnnctl's active copy"
R=$(base_root)
mk store "$R" /opt/cudnn 9.2.0 --active
mk cudnn "$R" /opt/other/lib 9.1.0
mk ldconfig "$R"
doctor "$R"
expect_no_finding ld-library-path-shadows-managed
expect_json 'd["data"]["resolution"][0]["shim"]["path"]' /opt/cudnn/store/9.2.0-cuda12-linux-x86_64/lib/libcudnn.so.9
run env LD_LIBRARY_PATH=/opt/other/lib "$CUDNNCTL" doctor --json --root "$R"
expect_finding ld-library-path-shadows-managed warning
expect_json 'd["data"]["host"]["ld_library_path"]' '["/opt/other/lib"]'

TEST "/etc/ld.so.conf without the include line"
R=$(base_root)
mk store "$R" /opt/cudnn 9.2.0 --active
echo /usr/local/lib >"$R/etc/ld.so.conf"
mk ldconfig "$R"
doctor "$R"
expect_finding ldconf-no-include error
expect_rc 8

TEST "stale ld.so cache: libraries added without running ldconfig"
R=$(base_root)
mk ldconfig "$R"
apt_cudnn "$R" 9.2.0
doctor "$R"
expect_finding ldcache-stale error
expect_json 'd["data"]["resolution"][0]["shim"]["via"]' "default directory"
expect_rc 8

TEST "--scan finds a venv outside the usual places; a missing root option is an error"
R=$(base_root)
mk cudnn "$R" /srv/envs/a/lib/python3.11/site-packages/nvidia/cudnn/lib 9.1.0 --layout pip
mk dist "$R" /srv/envs/a/lib/python3.11/site-packages nvidia-cudnn-cu12 9.1.0.70
mk ldconfig "$R"
doctor "$R"
expect_json 'len(d["data"]["installs"])' 0
doctor "$R" --scan /srv/envs/a
expect_json 'd["data"]["installs"][0]["version"]' 9.1.0.70
expect_json 'd["data"]["installs"][0]["origins"][0]["kind"]' pip
run "$CUDNNCTL" doctor --scan relative/path --json --root "$R"
expect_rc 2

TEST "doctor writes nothing: tree snapshot unchanged, runs as nobody, creates no file anywhere"
R=$HEALTHY
chmod -R a+rX "$E2E_TMP"
tree_snapshot "$R" >"$E2E_TMP/before"
touch "$E2E_TMP/marker"
sleep 1
run as_nobody "$CUDNNCTL" doctor --json --root "$R"
expect_rc 0
expect_json 'd["ok"]' true
run as_nobody "$CUDNNCTL" doctor --root "$R" --scan /opt
expect_rc 0
# The variable is set before privileges are dropped: `env` run as nobody could not exec a binary
# under a checkout that only root can traverse (a clone in /root, or a mktemp -d directory).
run env LD_LIBRARY_PATH=/usr/local/cuda/lib64 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
  "$CUDNNCTL" doctor --json --root "$R"
expect_rc 0
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "the root changed: $(diff "$E2E_TMP/before" "$E2E_TMP/after" | head)"
created=$({ find /tmp /var/tmp /dev/shm "$E2E_TMP" -xdev -user nobody -newer "$E2E_TMP/marker" 2>/dev/null || true; } | head -5)
[ -z "$created" ] || fail "doctor (as nobody) created: $created"
# As root too: no lock, no state directory, no cache directory under the root.
run "$CUDNNCTL" doctor --json --root "$R"
tree_snapshot "$R" >"$E2E_TMP/after-root"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after-root" || fail "doctor as root changed the root"
expect_no_file "$R/var/lib/cudnnctl"
expect_no_file "$R/var/cache/cudnnctl"

TEST "exit 8 prints the findings and a JSON error object"
R=$(base_root)
mk cudnn "$R" /usr/local/cuda/lib64 9.2.0 --sub libcudnn_ops=9.1.0
mk ldconf "$R" zz-cuda.conf /usr/local/cuda/lib64
mk ldconfig "$R"
doctor "$R"
expect_rc 8
expect_json 'd["ok"]' false
expect_json 'd["error"]["code"]' problems
expect_json 'd["command"]' doctor
run "$CUDNNCTL" doctor --root "$R"
expect_rc 8
expect_contains "$OUT" "ERROR   mixed-sublibrary-versions"
expect_contains "$OUT" "Result: problems found (exit 8)"

TEST "the site's compat.d overlay decides what a framework build expects; a malformed one is a warning"
R=$(base_root)
mk cudnn "$R" $MA 9.19.0 --layout apt
mk ldconfig "$R"
mk torch "$R" $SITE 2.13.0 --cuda 13.0 # no cuDNN pin in METADATA; 2.13 is not in the shipped data
doctor "$R"
expect_json '[c["expected"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' 9 # only the major its DT_NEEDED names
expect_json 'd["data"]["compat_overlays"]' '[]'
mkdir -p "$R/etc/cudnnctl/compat.d"
cat >"$R/etc/cudnnctl/compat.d/50-torch.json" <<'JSON'
{"schema": 2, "about": "our torch 2.13 wheels", "builds": [
  {"framework": "torch", "versions": "==2.13.*",
   "variants": [{"cuda": "13.0", "wheel": "cu130", "cudnn": "9.22.0.52"}],
   "source": "site: built by the ML platform team"}]}
JSON
doctor "$R"
expect_json '[c["expected"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' 9.22.0.52
expect_json '[c["expected_source"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' \
  "torch ==2.13.* cu130 wheels are built against cuDNN 9.22.0.52 (/etc/cudnnctl/compat.d/50-torch.json: site: built by the ML platform team)"
expect_json 'd["data"]["compat_overlays"]' '["/etc/cudnnctl/compat.d/50-torch.json"]'
echo '{"schema": 2, "builds": [{"framework": "torch", "versions": "==2.14.*", "source": "x"}]}' \
  >"$R/etc/cudnnctl/compat.d/60-bad.json"
doctor "$R"
expect_json '[f["severity"] for f in d["data"]["findings"] if f["code"] == "compat-overlay-invalid"]' '["warning"]'
expect_json '[f["message"] for f in d["data"]["findings"] if f["code"] == "compat-overlay-invalid"][0].startswith("compat overlay /etc/cudnnctl/compat.d/60-bad.json: builds[0]")' true
expect_json '[c["expected"] for c in d["data"]["resolution"] if c["kind"] == "torch"][0]' 9 # only the major its DT_NEEDED names
