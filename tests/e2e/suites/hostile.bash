#!/bin/bash
# Hostile archives (tests/fixtures/mkhostile.py, plus mkrelease.py's extractor defects),
# each with a CORRECT manifest (size and sha256 match), served over HTTP and installed.
# Each must be refused with exit 4, and nothing may be written outside the staging
# directory: the whole temporary root is compared before and after. What may differ, and
# nothing else: the state directory with its lock and one "failed" history record, the
# cache directory with the verified archive (<sha256>.tar.xz of exactly those bytes: it
# matches the manifest, and a later install would reject it again), and the empty prefix
# skeleton (opt/cudnn/store/). Each case's canary path (where a vulnerable extractor would
# write) must not exist, and /etc/passwd must be untouched. docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl

HZ=$E2E_TMP/hostile
# huge-entry: 256 MiB of zeros declared in one entry (above cudnnctl's cap for a small archive)
python3 "$E2E_FIXTURES/mkhostile.py" "$HZ" --huge-size $((256 << 20)) >"$E2E_TMP/mkhostile.log" 2>&1 ||
  fail "mkhostile.py: $(cat "$E2E_TMP/mkhostile.log")"
start_faultserver "$E2E_TMP"
U=$FS_URL
PASSWD=$(sha256sum /etc/passwd)
N=0
NREJ=0

# hostile_case NAME MIRROR_URL LABEL WANT_EXIT SHA256 CANARY(abs path or "")
hostile_case() {
  local name=$1 url=$2 label=$3 want=$4 sha=$5 canary=$6 r
  TEST "hostile: $name"
  r=$(new_root)
  tree_snapshot "$r" >"$E2E_TMP/before.$N"
  expect_exit "$want" cudnnctl --root "$r" --mirror "$url" --cuda 12 --platform linux-x86_64 install "$label"
  tree_snapshot "$r" >"$E2E_TMP/after.$N"
  if [ "$want" = 0 ]; then
    cr_check "$r" --allowed 1 --clean --loader
  else
    expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines"
    cr_root_diff "$E2E_TMP/before.$N" "$E2E_TMP/after.$N" \
      "^(var|var/lib|var/lib/cudnnctl|var/cache|var/cache/cudnnctl|opt|opt/cudnn|opt/cudnn/store) d\$|^var/lib/cudnnctl/(lock|history\\.jsonl) f\$|^var/cache/cudnnctl/$sha\\.tar\\.xz f\$"
    if [ -f "$r/var/cache/cudnnctl/$sha.tar.xz" ]; then
      expect_eq "$(sha256sum <"$r/var/cache/cudnnctl/$sha.tar.xz" | cut -d' ' -f1)" "$sha" "cached archive"
    fi
    cr_check "$r" --allowed none --clean --history-count 1 --record="-1:failed:install:none"
    NREJ=$((NREJ + 1))
  fi
  if [ -n "$canary" ]; then
    canary=${canary//\{dest\}/$r/opt/cudnn/store/.staging-x}
    [ ! -e "$canary" ] && [ ! -L "$canary" ] || fail "canary $canary exists"
  fi
  expect_eq "$(sha256sum /etc/passwd)" "$PASSWD" "/etc/passwd"
  N=$((N + 1))
}

# mkhostile cases: <case>/redistrib_9.98.0.json
python3 - "$HZ/cases.json" >"$E2E_TMP/cases.tsv" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cases"]:
    print("\t".join([c["name"], c["expect"], c["sha256"], c["canary"] or ""]))
PYEOF
while IFS=$'\t' read -r name expect sha canary; do
  # mkhostile's control "good" holds an empty libcudnn.so (not an ELF file): the extractor
  # accepts it, the library checks do not. The control here is the healthy mkrelease
  # release below.
  [ "$expect" = reject ] || continue
  hostile_case "mkhostile $name" "$U/hostile/$name/" 9.98.0 4 "$sha" "$canary"
  sed 's/^/    /' "$ERR" | grep 'error:' >&2
done <"$E2E_TMP/cases.tsv"

# mkrelease extractor defects on a full-size release layout, and the healthy control
D=$E2E_TMP/defects
mkrelease --mirror "$D/healthy" --label 9.1.0 --version 9.1.0.70 --cuda 12 --platform linux-x86_64 \
  --print >"$E2E_TMP/healthy.json"
hostile_case "control: the healthy release installs" "$U/defects/healthy/" 9.1.0 0 \
  "$(json_get 'd["archives"][0]["sha256"]' "$E2E_TMP/healthy.json")" ""
for defect in abs-symlink=libcudnn_ops escape-symlink=libcudnn_ops setuid=libcudnn_graph \
  dotdot-entry outside-top; do
  m=$D/${defect%%=*}
  mkrelease --mirror "$m" --label 9.1.0 --version 9.1.0.70 --cuda 12 --platform linux-x86_64 \
    --defect "$defect" --print >"$E2E_TMP/defect.json"
  sha=$(json_get 'd["archives"][0]["sha256"]' "$E2E_TMP/defect.json")
  canary=""
  [ "$defect" = dotdot-entry ] && canary="{dest}/../cudnnctl_evil.txt"
  hostile_case "mkrelease --defect $defect" "$U/defects/${defect%%=*}/" 9.1.0 4 "$sha" "$canary"
done
echo "hostile archives: $N cases, $NREJ refused" >&2
