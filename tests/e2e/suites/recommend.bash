# `cudnnctl recommend` against fixture roots: the JSON shape; several frameworks as a set of
# slots; the grouped output on a CUDA 13 toolkit; conflicts (exit 7) naming the constraints;
# bad input (exit 2, one line); a site overlay in /etc/cudnnctl/compat.d; signed recall lists
# made here with the openssl CLI (skipped with a reason, unsigned or badly signed ones ignored
# with a warning, refused under require_signed_recalls); and that recommend writes nothing.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
command -v openssl >/dev/null || skip "the openssl CLI is needed to sign recall lists"

unset LD_LIBRARY_PATH LD_PRELOAD CONDA_PREFIX
NOPROC=$E2E_TMP/proc-none # no NVIDIA kernel module
mkdir -p "$NOPROC"
export CUDNNCTL_TEST_PROC=$NOPROC

# toolkit ROOT HOME MAJOR.MINOR: a CUDA toolkit that cudnnctl detects by its header.
toolkit() {
  local maj=${3%%.*} mnr=${3#*.}
  mkdir -p "$1$2/include"
  printf '#define CUDART_VERSION %d\n' $((maj * 1000 + mnr * 10)) >"$1$2/include/cuda_runtime_api.h"
  ln -sfn "$(basename "$2")" "$1/usr/local/cuda"
}
# driver PROCDIR VERSION: /proc/driver/nvidia/version of the proprietary module.
driver() {
  mkdir -p "$1/driver/nvidia"
  printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Thu Oct 19 2023\n' "$2" \
    >"$1/driver/nvidia/version"
}
rec() { run "$CUDNNCTL" recommend --json "$@"; }
expect_rc() { [ "$RC" -eq "$1" ] || fail "recommend exited $RC, expected $1"; }
expect_message() { # NEEDLE: the --json error message contains it
  local m
  m=$(json_get 'd["error"]["message"]')
  [[ $m == *"$1"* ]] || fail "error message '$m' lacks '$1'"
}

# Keys and signatures as a site makes them (docs/COMPAT.md).
recall_keys site other
recall_root() { # a root trusting the "site" key, with LIST (JSON text) as recalls.d/NAME.json
  local r
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/keys.d" "$r/etc/cudnnctl/recalls.d"
  cp "$KEYS/site.pem" "$r/etc/cudnnctl/keys.d/site.pem"
  echo "$r"
}
LIST='{"schema": 1, "recalls": [
  {"version": "8.9.7.29", "cuda": "12", "reason": "example recall for the test",
   "url": "https://example.invalid/recall"}]}'

TEST "JSON shape, global options after the command, the host's toolkit and driver"
R=$(new_root)
toolkit "$R" /usr/local/cuda-12.4 12.4
driver "$E2E_TMP/proc-535" 535.129.03
run env CUDNNCTL_TEST_PROC="$E2E_TMP/proc-535" "$CUDNNCTL" recommend --framework torch==2.3.1 \
  --workload cnn --json --root "$R"
expect_rc 0
expect_json 'd["command"]' recommend
expect_json 'd["data"]["recommended"]["label"]' 8.9.7.29
expect_json 'd["data"]["recommended"]["labels"]' '["8.9.7", "8.9.7.29"]'
expect_json 'd["data"]["recommended"]["cuda"]' 12
expect_json 'd["data"]["recommended"]["size"]' 864984964
expect_json 'd["data"]["recommended"]["install"]' "cudnnctl install 8.9.7.29 --cuda 12"
expect_json 'd["data"]["commands"]' '["cudnnctl install 8.9.7.29 --cuda 12"]'
expect_json 'd["data"]["input"]["cuda"]' 12
expect_json 'd["data"]["input"]["driver"]' 535.129.03
expect_json 'all(a["cuda"] == 12 and a["version"].startswith("8.9.") for a in d["data"]["alternatives"])' true
expect_json 'len(set(a["sha256"] for a in d["data"]["alternatives"] + [d["data"]["recommended"]]))' \
  "$(json_get 'len(d["data"]["alternatives"]) + 1')"
expect_json 'all(r["reasons"] and r["summary"] for r in d["data"]["rejected"])' true
expect_json '[r["summary"] for r in d["data"]["rejected"] if r["label"] == "9.1.0"][0]' \
  "torch 2.3.1 needs cuDNN 8.x, not 9.x"
expect_json '[r["reasons"] for r in d["data"]["rejected"] if r["label"] == "9.1.0"][0]' \
  '["torch 2.3.1 needs cuDNN 8.x, not 9.x", "CUDA 11: the CUDA toolkit is 12 (the toolkit at /usr/local/cuda, from cuda_runtime_api.h), not CUDA 11"]'
expect_json 'all(c["source"] for c in d["data"]["constraints"])' true
expect_json 'd["data"]["bundled"][0]["brings_own_cudnn"]' true
expect_json 'd["data"]["hint"]["claims"][0]["verdict"]' "the reverse of the claim"
expect_json 'd["data"]["recall_lists"]' '[]'
rec --framework tensorflow==2.18 --root "$R"
expect_json '[r["summary"] for r in d["data"]["rejected"] if r["label"] == "9.1.0"][0]' \
  "tensorflow 2.18 needs cuDNN 9.x with minor >= 3 (built against 9.3)"

TEST "several frameworks: one release per slot, with the install commands"
R=$(new_root)
toolkit "$R" /usr/local/cuda-12.6 12.6
rec --framework torch==2.4.1 --framework tensorrt==8.6.1 --root "$R"
expect_rc 0
expect_json 'len(d["data"]["slots"])' 2
expect_json 'd["data"]["slots"][0]["slot"]' cudnn9-cuda12
expect_json 'd["data"]["slots"][0]["release"]["label"]' 9.1.0
expect_json 'd["data"]["slots"][0]["frameworks"]' '["torch 2.4.1"]'
expect_json 'd["data"]["slots"][1]["slot"]' cudnn8-cuda12
expect_json 'd["data"]["slots"][1]["release"]["version"][:4]' 8.9.
expect_json 'd["data"]["commands"]' \
  '["cudnnctl install 9.1.0 --cuda 12", "cudnnctl install 8.9.7.29 --cuda 12 --alongside"]'
expect_json 'd["data"]["conflict"]' null
run "$CUDNNCTL" recommend --framework torch==2.4.1 --framework tensorrt==8.6.1 --root "$R"
expect_rc 0
expect_contains "$OUT" "Recommended: 2 releases side by side, one per slot"
expect_contains "$OUT" "torch 2.4.1 installed with pip brings its own cuDNN (nvidia-cudnn-cu12==9.1.0.70)"
expect_contains "$OUT" "cudnnctl install 8.9.7.29 --cuda 12 --alongside"
expect_contains "$OUT" "libnvinfer_plugin.so.8 needs libcudnn.so.8"

TEST "a CUDA 13 toolkit: the rejections grouped, with the way out"
R=$(new_root)
toolkit "$R" /usr/local/cuda-13.0 13.0
run "$CUDNNCTL" recommend --root "$R"
expect_rc 0
expect_contains "$OUT" "Recommended: cuDNN 9.27.0 (9.27.0.42) for CUDA 13 on linux-x86_64, archive 937,996,620 B"
expect_contains "$OUT" "  20 releases have no CUDA 13 build: try --cuda 12 with a CUDA 12 toolkit"
[ "$(grep -c 'no CUDA 13 build' "$OUT")" -eq 1 ] || fail "the CUDA 13 rejection is not one group"
[ "$(wc -l <"$OUT")" -lt 70 ] || fail "the output is not grouped ($(wc -l <"$OUT") lines)"
if grep -nE '([0-9][0-9.]*) \(\1\)|\(issue' "$OUT"; then fail "a label doubled or an internal reference"; fi
rec --root "$R"
expect_json 'd["data"]["rejected_groups"][0]["count"]' 20
expect_json 'd["data"]["rejected_groups"][0]["hint"]' "try --cuda 12 with a CUDA 12 toolkit"

TEST "a Volta GPU on a CUDA 13 toolkit: one group for the builds without its device code, the way out is 9.10.2 for CUDA 12 (issue 37, item 8)"
R=$(new_root)
toolkit "$R" /usr/local/cuda-13.0 13.0
run "$CUDNNCTL" recommend --root "$R" --compute-capability 7.0
expect_rc 7
expect_eq "$(grep -c 'has no device code' "$OUT")" 1 "groups of releases without device code for 7.0"
expect_contains "$OUT" "  5 releases: GPU 0 (sm 7.0): its CUDA 13 build has no device code for compute capability 7.0 (it supports 7.5 to 12.0); use cuDNN 9.10.2 for CUDA 12 (the newest release with device code for 7.0)"
expect_contains "$OUT" "    9.12.0, 9.13.0, 9.20.0, 9.22.0, 9.27.0"
grep 'has no device code' "$OUT" | grep -q 'CUDA 11' && fail "the way out names CUDA 11: $(cat "$OUT")"
rec --root "$R" --compute-capability 7.0
expect_json 'any("its CUDA 13 build has no device code for compute capability 7.0" in x for r in d["data"]["rejected"] if r["label"] == "9.27.0" for x in r["reasons"])' true

TEST "nothing fits: exit 7 naming the two constraints that cannot be met together"
R=$(new_root)
toolkit "$R" /usr/local/cuda-13.0 13.0
rec --framework torch==2.3.1 --root "$R"
expect_rc 7
expect_json 'd["ok"]' false
expect_json 'd["error"]["code"]' requirement
expect_json 'd["data"]["recommended"]' null
expect_json 'len(d["data"]["conflict"]["constraints"])' 2
expect_json 'd["data"]["conflict"]["constraints"][1]' "the CUDA 13 toolkit (the toolkit at /usr/local/cuda, from cuda_runtime_api.h)"
expect_json 'len(d["data"]["rejected"])' 25
expect_message "cannot be met together; try --cuda 12 with a CUDA 12 toolkit"

TEST "bad input: exit 2 with one line saying what is wrong"
R=$(new_root)
for spec in 'torch' 'torch>=' 'torch==2.4a1' 'torch==1.13' 'paddle==2.6' 'torch==2.4.1+cu130'; do
  rec --framework "$spec" --root "$R"
  expect_rc 2
  expect_json 'd["error"]["code"]' usage
  expect_json '"\n" in d["error"]["message"]' false
done
expect_message "no torch build tagged +cu130"
run "$CUDNNCTL" recommend --framework 'torch>=' --root "$R"
expect_rc 2
expect_contains "$ERR" "no version after >="
run "$CUDNNCTL" recommend --workload quantum --root "$R"
expect_rc 2
run "$CUDNNCTL" recommend --compute-capability nine --root "$R"
expect_rc 2

TEST "a site overlay in compat.d adds rows; a malformed one is exit 2 naming the file"
R=$(new_root)
mkdir -p "$R/etc/cudnnctl/compat.d"
cat >"$R/etc/cudnnctl/compat.d/50-site.json" <<'EOF'
{"schema": 2, "builds": [
  {"framework": "torch", "versions": "==2.13.*", "variants": [{"cuda": "13.0", "cudnn": "9.22.0.52"}],
   "source": "site: our torch 2.13 wheels"}]}
EOF
rec --framework torch==2.13.0 --root "$R"
expect_rc 0
expect_json 'd["data"]["recommended"]["label"]' 9.22.0
expect_json 'd["data"]["recommended"]["cuda"]' 13
expect_json 'd["data"]["input"]["compat_overlays"]' '["/etc/cudnnctl/compat.d/50-site.json"]'
echo '{"schema": 2, "builds": [{"framework": "torch", "versions": "==2.14.*", "source": "x"}]}' \
  >"$R/etc/cudnnctl/compat.d/60-bad.json"
rec --framework torch==2.13.0 --root "$R"
expect_rc 2
expect_json 'd["error"]["message"]' 'compat overlay /etc/cudnnctl/compat.d/60-bad.json: builds[0] (torch ==2.14.*): "variants" must be a non-empty list of {"cuda", "cudnn", ...} (row format: docs/COMPAT.md)'

TEST "a signed recall list: recommend skips the recalled build and says so"
R=$(recall_root)
printf '%s\n' "$LIST" >"$R/etc/cudnnctl/recalls.d/site.json"
sign site "$R/etc/cudnnctl/recalls.d/site.json"
rec --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_rc 0
expect_json 'd["data"]["recommended"]["version"]' 8.9.6.50
expect_json 'd["data"]["recall_lists"][0]["state"]' valid
expect_json '[(r["label"], r["cuda"]) for r in d["data"]["recalled"]]' '[["8.9.7", 12], ["8.9.7.29", 12]]'
expect_json '[r["summary"] for r in d["data"]["rejected"] if r["label"] == "8.9.7.29"][0]' \
  "recalled: example recall for the test (https://example.invalid/recall) [/etc/cudnnctl/recalls.d/site.json]"
expect_json 'd["warnings"]' '[]'
run "$CUDNNCTL" recommend --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_contains "$OUT" "Skipped as recalled (2):"
expect_contains "$OUT" "8.9.7.29 CUDA 12: example recall for the test"

TEST "unsigned, badly signed and foreign-key lists are ignored with a warning; refused under require_signed_recalls"
R=$(recall_root)
L=$R/etc/cudnnctl/recalls.d/site.json
printf '%s\n' "$LIST" >"$L"
rec --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_rc 0
expect_json 'd["data"]["recommended"]["label"]' 8.9.7.29
expect_json 'd["data"]["recall_lists"][0]["state"]' unsigned
expect_json 'any("not signed" in w and "ignored" in w for w in d["warnings"])' true
sign other "$L"
rec --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_rc 0
expect_json 'd["data"]["recall_lists"][0]["state"]' bad-signature
expect_json 'd["data"]["recalled"]' '[]'
sign site "$L"
echo ' ' >>"$L" # one byte after signing
run "$CUDNNCTL" recommend --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_rc 0
expect_contains "$ERR" "does not verify with any of the 1 key(s)"
echo 'require_signed_recalls = true' >"$R/etc/cudnnctl/config.toml"
rec --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_rc 4
expect_json 'd["error"]["code"]' integrity
expect_message "require_signed_recalls"
echo 'require_signed_recalls = "yes"' >"$R/etc/cudnnctl/config.toml"
rec --root "$R"
expect_rc 2

TEST "an expired list still applies, with a warning; a signed but malformed one is ignored"
R=$(recall_root)
L=$R/etc/cudnnctl/recalls.d/old.json
printf '{"schema": 1, "expires": "2000-01-01", "recalls": [{"version": "8.9.7", "reason": "old"}]}' >"$L"
sign site "$L"
rec --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_rc 0
expect_json 'd["data"]["recall_lists"][0]["state"]' expired
expect_json 'd["data"]["recommended"]["version"]' 8.9.6.50
expect_json 'any("expired on 2000-01-01" in w for w in d["warnings"])' true
echo 'require_signed_recalls = true' >"$R/etc/cudnnctl/config.toml"
rec --root "$R"
expect_rc 4
rm "$R/etc/cudnnctl/config.toml"
printf '{"schema": 1, "recalls": [{"version": "8.9", "reason": "x"}]}' >"$L"
sign site "$L"
rec --framework tensorrt==8.6.1 --cuda 12 --root "$R"
expect_rc 0
expect_json 'd["data"]["recall_lists"][0]["state"]' malformed
expect_json 'd["data"]["recommended"]["label"]' 8.9.7.29

TEST "recommend writes nothing, also as an unprivileged user"
R=$(recall_root)
printf '%s\n' "$LIST" >"$R/etc/cudnnctl/recalls.d/site.json"
sign site "$R/etc/cudnnctl/recalls.d/site.json"
toolkit "$R" /usr/local/cuda-12.4 12.4
tree_snapshot "$R" >"$E2E_TMP/before"
run "$CUDNNCTL" recommend --framework torch==2.4.1 --framework tensorrt==8.6.1 --root "$R"
expect_rc 0
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  run as_nobody "$CUDNNCTL" recommend --framework 'jax>=0.6' --json --root "$R"
  expect_rc 0
fi
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "recommend changed the root"
