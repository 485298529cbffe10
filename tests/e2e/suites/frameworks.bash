# SPDX-License-Identifier: Apache-2.0
# The framework gate (issue 36): every command that changes what the loader serves refuses
# (exit 7, error.code framework_incompatible, before anything changes) when a framework on the
# node could not load the cuDNN served afterwards; --force switches with a warning; a framework
# with its own pip cuDNN is left alone; --dry-run shows each verdict, --json carries
# data.frameworks; `check` reports the drift (exit 8, a gauge, an NFD feature); `recommend`
# without --framework uses the node's frameworks (slots when they need different majors).
# Fake consumers are built here under --root by tests/fixtures/doctor/mkroot.py: stub ELF
# libraries made with cc whose DT_NEEDED is libcudnn.so.N, dist-info METADATA pins, TF's
# build_info.py, an ONNX Runtime provider library, JAX's plugin, TensorRT libraries.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
mkroot_env # mk, SITE, MA, NOPROC (no NVIDIA kernel module)
M=$(std_mirror) # 8.9.7.29, 9.1.0.70, 9.27.0.42 (CUDA 12)
start_nginx "$M"
LOG=$NGINX_DIR/access.log
ci() { # ROOT ARGS...: cudnnctl under ROOT with the test mirror, CUDA 12, no smoke test
  local root=$1
  shift
  cudnnctl --root "$root" --mirror "$MIRROR_URL" --cuda 12 "$@"
}
# torch_root: a root with torch 2.11.0 built for cuDNN 9.19.0.56 and no pip cuDNN beside it.
torch_root() {
  local r
  r=$(new_root)
  mk torch "$r" $SITE 2.11.0 --pin nvidia-cudnn-cu12==9.19.0.56 --cuda 12.8
  echo "$r"
}
BROKEN="torch 2.11.0 at $SITE was built for cuDNN 9.19.0.56"
archive_requests() { grep -c 'cudnn-linux-x86_64-9.1.0.70_cuda12-archive' "$LOG" || true; }

TEST "install refuses a release torch cannot load: exit 7 before the download, nothing changed"
R=$(torch_root)
tree_snapshot "$R" >"$E2E_TMP/before"
n0=$(archive_requests)
expect_exit 7 ci "$R" --json install 9.1.0 --no-smoke
expect_json 'd["error"]["code"]' framework_incompatible
expect_json 'd["error"]["category"]' requirement
expect_error "installing cuDNN 9.1.0.70 would break 1 framework that loads the system's cuDNN"
expect_error "$BROKEN (Requires-Dist: nvidia-cudnn-cu12==9.19.0.56 in $SITE/torch-2.11.0.dist-info/METADATA) and would load 9.1.0.70"
expect_error "same major and a runtime minor >= the built minor are required"
expect_error "nothing was changed"
expect_error "cuDNN 9.27.0 for torch 2.11.0 serves every framework found (\`cudnnctl install 9.27.0\`)"
expect_error "--force to switch anyway"
expect_json '[(f["name"], f["version"], f["path"], f["built_for"], f["would_load"], f["verdict"]) for f in d["data"]["frameworks"]]' \
  "[[\"torch\", \"2.11.0\", \"$SITE\", \"9.19.0.56\", \"9.1.0.70\", \"breaks\"]]"
expect_exit 7 ci "$R" install 9.1.0 --no-smoke
expect_contains "$ERR" "cudnnctl: error: installing cuDNN 9.1.0.70 would break 1 framework"
expect_eq "$(archive_requests)" "$n0" "archive requests after the refusals"
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused install changed the root"

TEST "--dry-run shows the verdict on each framework and predicts the refusal"
expect_exit 7 ci "$R" --dry-run install 9.1.0 --no-smoke
expect_contains "$OUT" "framework gate: torch 2.11.0 at $SITE: built for cuDNN 9.19.0.56, would load 9.1.0.70: breaks"
expect_exit 0 ci "$R" --dry-run install 9.27.0 --no-smoke
expect_contains "$OUT" "framework gate: torch 2.11.0 at $SITE: built for cuDNN 9.19.0.56, would load 9.27.0.42: ok"
expect_exit 0 ci "$R" --dry-run --json install 9.27.0 --no-smoke
expect_json '[f["verdict"] for f in d["data"]["frameworks"]]' '["ok"]'
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a dry run changed the root"

TEST "--force installs it anyway, with a warning naming the framework"
expect_exit 0 ci "$R" --force --json install 9.1.0 --no-smoke
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'any(w.startswith("--force: installing cuDNN 9.1.0.70 breaks 1 framework") and "'"$BROKEN"'" in w for w in d["warnings"])' true

TEST "a release torch accepts installs; check then says healthy, the gauge 0"
expect_exit 0 ci "$R" --json install 9.27.0 --no-smoke
expect_json '[f["verdict"] for f in d["data"]["frameworks"]]' '["ok"]'
expect_exit 0 ci "$R" check --prometheus "$E2E_TMP/p.prom" --nfd "$E2E_TMP/p.nfd"
expect_contains "$E2E_TMP/p.prom" "cudnnctl_frameworks_incompatible 0"
expect_contains "$E2E_TMP/p.nfd" "cudnn.frameworks_compatible=true"

TEST "use, rollback (plain, --to, --undo) refuse the build torch cannot load"
tree_snapshot "$R" >"$E2E_TMP/before"
expect_exit 7 ci "$R" --json use 9.1.0 --no-smoke
expect_json 'd["error"]["code"]' framework_incompatible
expect_error "switching to cuDNN 9.1.0.70 would break 1 framework"
expect_error "$BROKEN"
expect_exit 7 ci "$R" --json rollback
expect_error "rolling back to generation 1 (cuDNN 9.1.0.70) would break 1 framework"
expect_exit 7 ci "$R" rollback --to 1
expect_contains "$ERR" "rolling back to generation 1 (cuDNN 9.1.0.70) would break"
expect_exit 7 ci "$R" rollback --undo
expect_exit 7 ci "$R" --dry-run rollback
expect_contains "$OUT" "framework gate: torch 2.11.0 at $SITE: built for cuDNN 9.19.0.56, would load 9.1.0.70: breaks"
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused switch changed the root"

TEST "rollback --force switches with a warning; check then reports the drift (exit 8, gauge, NFD)"
expect_exit 0 ci "$R" --force --json rollback
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'any(w.startswith("--force: rolling back to generation 1 (cuDNN 9.1.0.70) breaks 1 framework") for w in d["warnings"])' true
expect_exit 8 ci "$R" check --prometheus "$E2E_TMP/p.prom" --nfd "$E2E_TMP/p.nfd"
expect_eq "$(head -1 "$OUT")" "cudnnctl: torch 2.11.0 at $SITE cannot load the active cuDNN 9.1.0.70: built for cuDNN 9.19.0.56, the same major and a runtime minor >= the built minor are required (cuDNN 9.27.0 for torch 2.11.0 serves every framework found (\`cudnnctl install 9.27.0\`))" "check's line"
expect_contains "$E2E_TMP/p.prom" "cudnnctl_frameworks_incompatible 1"
expect_contains "$E2E_TMP/p.nfd" "cudnn.frameworks_compatible=false"
expect_exit 8 ci "$R" --json check
expect_json '[f["verdict"] for f in d["data"]["frameworks"]]' '["breaks"]'
# The way back is not gated: the release torch accepts.
expect_exit 0 ci "$R" -q use 9.27.0 --no-smoke
expect_exit 0 ci "$R" check

TEST "restore of a backup torch cannot load is refused"
expect_exit 0 ci "$R" --force -q rollback --to 1
BK=$E2E_TMP/gen-9.1.tar.zst
expect_exit 0 ci "$R" -q backup --output "$BK"
expect_exit 0 ci "$R" -q use 9.27.0 --no-smoke
expect_exit 7 ci "$R" --json restore "$BK"
expect_json 'd["error"]["code"]' framework_incompatible
expect_error "restoring cuDNN 9.1.0.70 would break 1 framework"
expect_exit 0 ci "$R" --force -q restore "$BK"
expect_exit 0 ci "$R" -q use 9.27.0 --no-smoke

TEST "rollback --slot of a slot kept alongside is gated like the primary slot"
R2=$(torch_root)
expect_exit 0 ci "$R2" -q install 8.9.7 --no-smoke # torch loads libcudnn.so.9: not affected
expect_exit 0 ci "$R2" --force -q install 9.1.0 --alongside --no-smoke
expect_exit 0 ci "$R2" -q install 9.27.0 --alongside --no-smoke
expect_exit 7 ci "$R2" --json rollback --slot 9-cuda12
expect_json 'd["error"]["code"]' framework_incompatible
expect_error "rolling back to generation 2 (cuDNN 9.1.0.70) would break 1 framework"
expect_exit 0 ci "$R2" --force --json rollback --slot 9-cuda12
expect_json 'd["data"]["slot"]' 9-cuda12

TEST "purge (it removes cudnnctl's copy) is refused while torch loads it; --force purges"
tree_snapshot "$R" >"$E2E_TMP/before"
expect_exit 7 ci "$R" --json purge --yes
expect_json 'd["error"]["code"]' framework_incompatible
expect_error "purge (it removes cudnnctl's cuDNN) would break 1 framework"
expect_error "and would load no copy of cudnnctl's: cudnnctl would serve no libcudnn.so.9 afterwards (a copy outside cudnnctl, such as a distribution package's, is not weighed)"
expect_exit 7 ci "$R" --dry-run purge
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused purge changed the root"
expect_exit 0 ci "$R" --force purge --yes
expect_contains "$ERR" "--force: purge (it removes cudnnctl's cuDNN) breaks 1 framework"
expect_no_file "$R/opt/cudnn/store"

TEST "adopt --undo (the adopted 9.1.0 goes back) is refused while torch needs 9.19; --force undoes"
source "$E2E_FIXTURES/adopt/handmade.bash"
R=$(torch_root)
cuda_home_plain "$R"
hand_copy "$(release_dir 9.1.0 12)" "$R/usr/local/cuda" cp-P
expect_exit 0 ci "$R" --json install 9.27.0 --no-smoke
expect_json 'd["data"]["adopted"]["version"]' 9.1.0
tree_snapshot "$R" >"$E2E_TMP/before"
expect_exit 7 ci "$R" --json adopt --undo
expect_json 'd["error"]["code"]' framework_incompatible
expect_error "adopt --undo (it puts the adopted originals back) would break 1 framework"
expect_error "$BROKEN"
expect_error "and would load 9.1.0: the same major"
expect_exit 7 ci "$R" --dry-run adopt --undo
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused adopt --undo changed the root"
expect_exit 0 ci "$R" --force adopt --undo
expect_contains "$ERR" "--force: adopt --undo (it puts the adopted originals back) breaks 1 framework"
expect_exit 0 ci "$R" --json status
expect_json 'd["active"]' null

TEST "a torch that brings its own pip cuDNN is left alone (own-copy), and -v says so"
R=$(torch_root)
mk cudnn "$R" $SITE/nvidia/cudnn/lib 9.19.0 --layout pip
expect_exit 0 ci "$R" -q install 9.27.0 --no-smoke
expect_exit 0 ci "$R" --json install 9.1.0 --no-smoke
expect_json '[(f["verdict"], f["would_load"]) for f in d["data"]["frameworks"]]' \
  "[[\"own-copy\", \"$SITE/nvidia/cudnn/lib/libcudnn.so.9\"]]"
expect_exit 0 ci "$R" -v use 9.27.0 --no-smoke
expect_contains "$ERR" "framework gate: torch 2.11.0 at $SITE: built for cuDNN 9.19.0.56, would load $SITE/nvidia/cudnn/lib/libcudnn.so.9: own-copy"
expect_exit 0 ci "$R" check

TEST "TensorFlow, ONNX Runtime, JAX and TensorRT are found and judged by their own rules"
R=$(new_root)
mk tensorflow "$R" $SITE 2.18.0 --cudnn 9 --cuda 12.5
mk onnxruntime "$R" /usr/local/lib/python3.11/dist-packages 1.20.1
mk jax "$R" /usr/local/lib/python3.11/dist-packages 0.7.2 --cuda 12 --cudnn-min 9.8
mk tensorrt "$R" $MA 10.3.0
mk tensorrt "$R" /opt/trt/.venv/lib/python3.12/site-packages/tensorrt_libs 8.6.1 --cudnn-major 8
expect_exit 7 ci "$R" --json install 9.1.0 --no-smoke
expect_json 'sorted((f["name"], f["version"], f["built_for"], f["verdict"]) for f in d["data"]["frameworks"])' \
  '[["jax", "0.7.2", "9.8", "breaks"], ["onnxruntime", "1.20.1", "9", "ok"], ["tensorflow", "2.18.0", "9.3", "breaks"], ["tensorrt", "10.3.0", "", "unaffected"], ["tensorrt", "8.6.1", "8.9.0", "unaffected"]]'
expect_error "would break 2 frameworks"
expect_error "jax 0.7.2 at /usr/local/lib/python3.11/dist-packages was built for cuDNN 9.8"
expect_exit 0 ci "$R" --json install 9.27.0 --no-smoke
expect_json 'sorted(f["verdict"] for f in d["data"]["frameworks"])' '["ok", "ok", "ok", "unaffected", "unaffected"]'

TEST "use --none --slot refuses to take the cuDNN 8 a TensorRT 8.6 loads"
expect_exit 0 ci "$R" -q install 8.9.7 --alongside --no-smoke
expect_exit 7 ci "$R" --json use --none --slot 8-cuda12
expect_json 'd["error"]["code"]' framework_incompatible
expect_error "deactivating slot 8-cuda12 (cuDNN 8.9.7.29) would break 1 framework"
expect_error "tensorrt 8.6.1 at /opt/trt/.venv/lib/python3.12/site-packages/tensorrt_libs was built for cuDNN 8.9.0"
expect_exit 0 ci "$R" --force -q use --none --slot 8-cuda12

TEST "two frameworks that need different cuDNN majors: the refusal and recommend name the slots"
R=$(torch_root)
mk tensorflow "$R" /usr/local/lib/python3.11/dist-packages 2.15.0 --cudnn 8 --cuda 12.2
expect_exit 7 ci "$R" --json install 9.1.0 --no-smoke
expect_error "no single release serves every framework found: keep one slot per cuDNN major, cuDNN 9.27.0 for torch 2.11.0; cuDNN 8.9.7"
expect_error "(\`cudnnctl install 9.27.0\`, then \`cudnnctl install 8.9.7"
expect_error " --alongside\`)"
expect_exit 0 ci "$R" --json recommend --compute-capability 9.0
expect_json 'd["data"]["input"]["frameworks_found"]' '["tensorflow==2.15.0", "torch==2.11.0"]'
expect_json 'sorted(s["cudnn_major"] for s in d["data"]["slots"])' '[8, 9]'
expect_exit 0 ci "$R" recommend --compute-capability 9.0
expect_contains "$OUT" "frameworks found on this node (no --framework given): tensorflow==2.15.0, torch==2.11.0"

TEST "framework_paths in config.toml and --scan add environments the standard places miss"
R=$(new_root)
mk torch "$R" /srv/envs/a/lib/python3.11/site-packages 2.11.0 --pin nvidia-cudnn-cu12==9.19.0.56
expect_exit 0 ci "$R" --dry-run --json install 9.1.0 --no-smoke
expect_json 'd["data"].get("frameworks", [])' '[]'
# --scan DIR on the switching command, for that command only.
expect_exit 7 ci "$R" --dry-run --json install 9.1.0 --no-smoke --scan /srv/envs
expect_error "torch 2.11.0 at /srv/envs/a/lib/python3.11/site-packages was built for cuDNN 9.19.0.56"
expect_exit 2 ci "$R" --dry-run install 9.1.0 --no-smoke --scan srv/envs
expect_contains "$ERR" "--scan wants an absolute path inside the root"
mkdir -p "$R/etc/cudnnctl"
echo 'framework_paths = ["/srv/envs"]' >"$R/etc/cudnnctl/config.toml"
expect_exit 7 ci "$R" --dry-run --json install 9.1.0 --no-smoke
expect_error "torch 2.11.0 at /srv/envs/a/lib/python3.11/site-packages was built for cuDNN 9.19.0.56"
echo 'framework_paths = "/srv/envs"' >"$R/etc/cudnnctl/config.toml"
expect_exit 2 ci "$R" --dry-run install 9.1.0 --no-smoke
expect_contains "$ERR" "framework_paths must be an array of absolute paths"
