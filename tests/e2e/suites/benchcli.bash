# `cudnnctl bench` and `install --perf-gate` (issue 17) without a GPU: argument handling,
# rendering of a recorded H200 run (tests/data/bench), and on the fake GPU of tests/fakegpu
# (a libcuda.so.1 found through LD_LIBRARY_PATH, fake cuDNN shims swapped into the releases)
# one child per version (each reports its own cuDNN), the perf gate passing, and failing on
# a slowed build with the switch rolled back (exit 5) and the numbers in the message/JSON.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl

M=$E2E_TMP/mirrors
F=$E2E_TMP/fakecuda
FAKEGPU_SRC=$E2E_DIR/../fakegpu
REC=$E2E_DIR/../data/bench/h200-9.14-9.19.json
mkdir -p "$M" "$F"
cc -O1 -shared -fPIC -o "$F/libcuda.so.1" -Wl,-soname,libcuda.so.1 "$FAKEGPU_SRC/fake_cuda.c"
printf 'devices=1\n' >"$F/fake-cuda.conf"
shim() { # shim OUT VERSION [defines...]
  local out=$1 v=$2
  shift 2
  cc -O1 -shared -fPIC -o "$out" -Wl,-soname,libcudnn.so.9 -DFAKE_VERSION="$v" "$@" "$FAKEGPU_SRC/fake_cudnn.c" -ldl
}
rel() {
  local name=$1 label=$2 version=$3
  mkrelease --mirror "$M/$name" --label "$label" --version "$version" --cuda 12 \
    --platform linux-x86_64 --no-static >/dev/null
}
shim "$F/a.so" 91600
shim "$F/b.so" 91700
shim "$F/slow.so" 91800 -DFAKE_SLOW_US=30000
rel a 9.16.0 9.16.0.29
rel b 9.17.0 9.17.0.29
rel slow 9.18.0 9.18.0.29
python3 "$E2E_FIXTURES/swap_shim.py" "$M/a" 9.16.0 "$F/a.so"
python3 "$E2E_FIXTURES/swap_shim.py" "$M/b" 9.17.0 "$F/b.so"
python3 "$E2E_FIXTURES/swap_shim.py" "$M/slow" 9.18.0 "$F/slow.so"
start_nginx "$M"
URL=$MIRROR_URL
gi() { # gi ROOT MIRROR ARGS...: with the fake GPU visible
  local root=$1 mirror=$2
  shift 2
  LD_LIBRARY_PATH=$F CUDNNCTL_TEST_BENCH_TINY=1 cudnnctl --root "$root" --mirror "$URL/$mirror/" --cuda 12 "$@"
}

TEST "bench --from a recorded H200 run: the table, JSON, CSV and SVG, ratios against --baseline"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" bench --from "$REC" --csv "$E2E_TMP/b.csv" --plot "$E2E_TMP/b.svg"
expect_contains "$OUT" "NVIDIA H200"
expect_contains "$OUT" "not a full training"
expect_contains "$OUT" "9.19.0.56"
expect_contains "$OUT" "14948.8       1.00 (+0.4 %)"
expect_file "$E2E_TMP/b.csv"
expect_eq "$(wc -l <"$E2E_TMP/b.csv")" 7 "CSV: a header and 6 samples"
expect_contains "$E2E_TMP/b.csv" "resnet50"
python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"; assert len(d.getElementsByTagName("rect")) >= 6' "$E2E_TMP/b.svg" ||
  fail "the SVG is not an svg document with a bar per sample"
expect_exit 0 cudnnctl --root "$R" --json bench --from "$REC" --baseline 9.19.0.56
expect_json 'd["data"]["baseline"]' 9.19.0.56
expect_json 'sorted((s["version"], round(s["ratio"], 2)) for s in d["data"]["samples"] if s["workload"] == "bert")' '[["9.14.0.64", 0.95], ["9.19.0.56", 1.0]]'
expect_json 'len(d["data"]["samples"])' 6
expect_json '"not a full training" in d["data"]["note"]' true
expect_json 'd["data"]["samples"][0]["sm_clock_mhz"]' 1980
expect_json 'd["data"]["samples"][0]["kernel_driver"]' 580.159.04

TEST "bench: bad arguments are one-line errors (exit 2), nothing written"
R=$(new_root)
expect_exit 2 cudnnctl --root "$R" bench --from "$E2E_TMP/none.json"
expect_contains "$ERR" "none.json"
echo '{"samples": 3}' >"$E2E_TMP/bad.json"
expect_exit 2 cudnnctl --root "$R" bench --from "$E2E_TMP/bad.json"
expect_contains "$ERR" "--from $E2E_TMP/bad.json"
expect_exit 2 cudnnctl --root "$R" bench
expect_contains "$ERR" "nothing is installed to bench"
expect_exit 2 cudnnctl --root "$R" bench --versions 9.99.0
expect_contains "$ERR" "--versions: cuDNN 9.99.0 is not installed"
expect_exit 2 cudnnctl --root "$R" bench --workloads resnet50,gpt
expect_contains "$ERR" 'unknown workload "gpt"'
expect_exit 2 cudnnctl --root "$R" bench --gpus x
expect_contains "$ERR" "--gpus wants visible GPU indices"
expect_exit 2 cudnnctl --root "$R" bench --batch 0
expect_exit 2 cudnnctl --root "$R" bench --dtype fp8
expect_exit 2 cudnnctl --root "$R" bench --from "$REC" --versions 9.14.0
expect_no_file "$R/opt"
expect_no_file "$R/var"

TEST "install --perf-gate: bad values refused (exit 2); config perf_gate out of range refused"
R=$(new_root)
expect_exit 2 cudnnctl --root "$R" --mirror "$URL/a/" --cuda 12 install 9.16.0 --perf-gate 0
expect_exit 2 cudnnctl --root "$R" --mirror "$URL/a/" --cuda 12 install 9.16.0 --perf-gate abc
mkdir -p "$R/etc/cudnnctl"
echo 'perf_gate = 0' >"$R/etc/cudnnctl/config.toml"
expect_exit 2 cudnnctl --root "$R" --mirror "$URL/a/" --cuda 12 install 9.16.0
expect_contains "$ERR" "perf_gate must be an integer from 1 to 100"
expect_no_file "$R/opt/cudnn"

R=$(new_root)
TEST "fake GPU: install two builds; bench measures both, each in its own child"
expect_exit 0 gi "$R" a --json install 9.16.0
expect_json 'd["data"]["smoke"]["status"]' passed
expect_exit 0 gi "$R" b --json install 9.17.0 --perf-gate 90
expect_json 'd["data"]["perf_gate"]["status"]' passed
expect_json 'd["data"]["perf_gate"]["baseline"]' 9.16.0.29
expect_json 'd["data"]["perf_gate"]["candidate"]' 9.17.0.29
expect_json 'len(d["data"]["perf_gate"]["compared"])' 3
expect_json 'sorted(set(s["workload"] for s in d["data"]["perf_gate"]["bench"]["samples"]))' '["bert", "resnet50", "unet3d"]'
expect_json 'all(s["quick"] for s in d["data"]["perf_gate"]["bench"]["samples"])' true
expect_json '[c["status"] for c in d["data"]["checks"] if c["name"] == "perf-gate"]' '["passed"]'
expect_json 'd["active"]["version"]' 9.17.0.29
expect_exit 0 gi "$R" b --json bench --tiny --iterations 1 --workloads bert,unet3d
expect_json 'd["data"]["baseline"]' 9.17.0.29
expect_json 'sorted((s["version"], s["cudnn_version"]) for s in d["data"]["samples"])' \
  '[["9.16.0.29", 91600], ["9.16.0.29", 91600], ["9.17.0.29", 91700], ["9.17.0.29", 91700]]'
expect_json 'all(s["shim"].startswith("'"$R"'/opt/cudnn/store/9.1") for s in d["data"]["samples"])' true
expect_exit 0 gi "$R" b bench --tiny --iterations 1 --workloads unet3d --versions 9.16.0
expect_contains "$ERR" "bench: unet3d on GPU 0 with 9.16.0.29"
expect_contains "$ERR" "not a full training"
expect_not_contains "$OUT" "9.17.0.29"

TEST "fake GPU: --perf-gate fails on a build 30 ms slower per call: rolled back, exit 5, numbers"
expect_exit 5 gi "$R" slow --json install 9.18.0 --perf-gate 10
expect_json 'd["error"]["code"]' rolled_back
expect_error "performance gate failed: 9.18.0.29 is more than 10.0 % slower than 9.17.0.29: resnet50 on GPU 0: "
expect_error "rolled back to generation 2"
expect_json 'd["data"]["perf_gate"]["status"]' failed
expect_json 'len(d["data"]["perf_gate"]["slower"]) >= 1' true
expect_json 'all(" vs " in s and " %)" in s for s in d["data"]["perf_gate"]["slower"])' true
expect_exit 0 cudnnctl --root "$R" --json status
expect_json 'd["active"]["version"]' 9.17.0.29
# Through the config key, the same verdict.
mkdir -p "$R/etc/cudnnctl"
echo 'perf_gate = 10' >"$R/etc/cudnnctl/config.toml"
expect_exit 5 gi "$R" slow --json install 9.18.0
expect_json 'd["data"]["perf_gate"]["percent"]' 10.0
rm "$R/etc/cudnnctl/config.toml"

TEST "--perf-gate without a GPU: skipped with a warning (a failure under --require-gpu)"
R2=$(new_root)
expect_exit 0 cudnnctl --root "$R2" --mirror "$URL/a/" --cuda 12 --json install 9.16.0
expect_exit 0 cudnnctl --root "$R2" --mirror "$URL/b/" --cuda 12 --json install 9.17.0 --perf-gate 5
expect_json 'd["data"]["perf_gate"]["status"]' skipped
expect_json 'any(w.startswith("performance gate skipped") for w in d["warnings"])' true
R3=$(new_root)
expect_exit 0 gi "$R3" a --json install 9.16.0 --perf-gate 5
expect_json 'd["data"]["perf_gate"]["status"]' skipped
expect_json 'd["data"]["perf_gate"]["message"]' "no previous generation to compare with"

TEST "bench --from also reads a whole `cudnnctl --json bench` object"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" --json bench --from "$REC"
cp "$OUT" "$E2E_TMP/envelope.json"
expect_exit 0 cudnnctl --root "$R" --json bench --from "$E2E_TMP/envelope.json"
expect_json 'len(d["data"]["samples"])' 6
