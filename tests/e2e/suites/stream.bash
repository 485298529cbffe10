# Streaming install (issue 8): download, sha256 and extraction in one pass; restarts, resumes,
# corrupt and hostile archives; --components; progress output. The real binary against nginx
# and the fault server on loopback, every command under its own temporary --root. No timing
# assertions here: performance lives in bench/.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl

# A release big enough that a transfer can be cut in the middle (random padding compresses to
# itself: about 3 MiB of archive), with static libraries.
M=$E2E_TMP/mirror
mkrelease --mirror "$M" --label 9.14.0 --version 9.14.0.64 --cuda 12 --platform linux-x86_64 \
  --pad 400000 --pad-random >/dev/null
REL=cudnn/linux-x86_64/cudnn-linux-x86_64-9.14.0.64_cuda12-archive.tar.xz
ARCHIVE=$M/$REL
SIZE=$(stat -c %s "$ARCHIVE")
SHA=$(sha256sum "$ARCHIVE" | cut -d' ' -f1)
ENTRY=9.14.0.64-cuda12-linux-x86_64
[ "$SIZE" -gt 2000000 ] || fail "fixture archive too small to cut: $SIZE bytes"

start_nginx "$M"
URL=$MIRROR_URL

# The fault server on $M: sets FAULT_URL (http://127.0.0.1:PORT) and FAULT_LOG.
FAULT_PID=""
start_faults() {
  local d
  d=$(mktemp -d "$E2E_TMP/faults.XXXXXX")
  python3 "$E2E_FIXTURES/faultserver.py" --root "$M" --port-file "$d/port" --log "$d/log" \
    2>"$d/stderr" &
  FAULT_PID=$!
  for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.05; done
  [ -s "$d/port" ] || fail "fault server did not start: $(cat "$d/stderr")"
  FAULT_URL=http://127.0.0.1:$(cat "$d/port")
  FAULT_LOG=$d/log
}
stop_faults() {
  [ -n "$FAULT_PID" ] || return 0
  kill -TERM "$FAULT_PID" 2>/dev/null || true
  wait "$FAULT_PID" 2>/dev/null || true
  FAULT_PID=""
}
# lib.bash's EXIT trap reads the exit status first thing: keep it for it (and keep the ERR
# trap from firing on the way).
trap 'rc=$?; trap - ERR; set +eE; stop_faults; (exit $rc); _e2e_on_exit' EXIT

# c ROOT ARGS...: cudnnctl under ROOT for CUDA 12, no smoke test (no GPU needed).
c() {
  local r=$1
  shift
  cudnnctl --root "$r" --cuda 12 "$@"
}
# files_of ROOT [ENTRY]: the per-file record of a store entry (path kind mode size sha256
# target), sorted: what a streamed and a local install must agree on.
files_of() {
  python3 - "$1/opt/cudnn/store/${2:-$ENTRY}/.cudnnctl-entry.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for f in sorted(d["files"], key=lambda f: f["path"]):
    print(f["path"], f["kind"], f.get("mode"), f.get("size"), f.get("sha256", ""),
          f.get("target", ""))
EOF
}
# expect_clean_failure ROOT: nothing activated, no store entry, no staging, no journal, no
# cache entry for the archive.
expect_clean_failure() {
  local r=$1
  expect_no_file "$r/opt/cudnn/current"
  [ -z "$(ls -A "$r/opt/cudnn/store" 2>/dev/null)" ] ||
    fail "store not empty: $(ls -A "$r/opt/cudnn/store")"
  expect_no_file "$r/var/lib/cudnnctl/journal.json"
  expect_no_file "$r/var/cache/cudnnctl/$SHA.tar.xz"
}
# same_tree A B: the active trees (files, links, modes, contents) are identical.
same_tree() {
  tree_snapshot "$1/opt/cudnn/store/$ENTRY" | grep -v '^\.cudnnctl-entry\.json ' >"$E2E_TMP/a.tree"
  tree_snapshot "$2/opt/cudnn/store/$ENTRY" | grep -v '^\.cudnnctl-entry\.json ' >"$E2E_TMP/b.tree"
  diff -u "$E2E_TMP/a.tree" "$E2E_TMP/b.tree" >"$E2E_TMP/tree.diff" ||
    fail "trees differ: $(head -c 3000 "$E2E_TMP/tree.diff")"
}

TEST "a streamed install gives the same store entry as an install from --archive"
REF=$(new_root)
expect_exit 0 c "$REF" --mirror "$URL" --json install 9.14.0 --no-smoke
expect_json 'd["ok"]' true
expect_json 'd["data"]["archive"]["sha256"]' "$SHA"
expect_file "$REF/var/cache/cudnnctl/$SHA.tar.xz"
LOCAL=$(new_root)
expect_exit 0 c "$LOCAL" --manifest "$M/redistrib_9.14.0.json" --json install 9.14.0 \
  --archive "$ARCHIVE" --no-smoke
expect_json 'd["ok"]' true
files_of "$REF" >"$E2E_TMP/ref.files"
files_of "$LOCAL" >"$E2E_TMP/local.files"
diff -u "$E2E_TMP/ref.files" "$E2E_TMP/local.files" || fail "per-file records differ"
grep -q ' file .* [0-9a-f]\{64\} ' "$E2E_TMP/ref.files" || fail "no sha256 recorded"
same_tree "$REF" "$LOCAL"
expect_exit 0 c "$REF" verify
expect_exit 0 c "$LOCAL" verify

TEST "install of the active version again: no network, nothing read or written"
tree_snapshot "$REF/opt" >"$E2E_TMP/opt.before"
expect_exit 0 c "$REF" --mirror http://127.0.0.1:9/ --json install 9.14.0 --no-smoke
expect_json 'd["changed"]' false
expect_json 'd["active"]["generation"]' 1
tree_snapshot "$REF/opt" >"$E2E_TMP/opt.after"
cmp -s "$E2E_TMP/opt.before" "$E2E_TMP/opt.after" || fail "reinstall changed the prefix"

TEST "from the cache: the same entry, one pass, no network"
R=$(new_root)
mkdir -p "$R/var/cache/cudnnctl"
cp "$REF/var/cache/cudnnctl/$SHA.tar.xz" "$R/var/cache/cudnnctl/"
expect_exit 0 c "$R" --manifest "$M/redistrib_9.14.0.json" --mirror http://127.0.0.1:9/ \
  install 9.14.0 --no-smoke
expect_contains "$ERR" "from the cache"
files_of "$R" >"$E2E_TMP/cache.files"
diff -u "$E2E_TMP/ref.files" "$E2E_TMP/cache.files" || fail "per-file records differ"

TEST "a download cut mid-way resumes (same run and next run); the result is identical"
start_faults
CUT=$((SIZE / 5))
# Same run: the first request is cut, the retry resumes with Range.
R=$(new_root)
expect_exit 0 c "$R" --mirror "$FAULT_URL/fault/cut-once=$CUT" -v install 9.14.0 --no-smoke
grep -qP "^GET\t/fault/cut-once=$CUT/$REL\tbytes=$CUT-\t206\t" "$FAULT_LOG" ||
  fail "no resumed request (Range: bytes=$CUT-): $(cat "$FAULT_LOG")"
expect_not_contains "$ERR" "extracting again"
files_of "$R" >"$E2E_TMP/cut.files"
diff -u "$E2E_TMP/ref.files" "$E2E_TMP/cut.files" || fail "per-file records differ"
same_tree "$REF" "$R"
# Next run: every request is cut; the run fails (network) and keeps the partial, which the
# next run replays through the extractor before resuming after it.
R=$(new_root)
expect_exit 3 c "$R" --mirror "$FAULT_URL/fault/cut=$CUT" install 9.14.0 --no-smoke
expect_file "$R/var/cache/cudnnctl/$SHA.partial"
kept=$(stat -c %s "$R/var/cache/cudnnctl/$SHA.partial")
[ "$kept" -gt 0 ] && [ "$kept" -lt "$SIZE" ] || fail "partial of $kept bytes"
[ -z "$(ls -A "$R/opt/cudnn/store" 2>/dev/null)" ] || fail "staging or entry left behind"
expect_no_file "$R/opt/cudnn/current"
: >"$FAULT_LOG"
expect_exit 0 c "$R" --mirror "$FAULT_URL" -v install 9.14.0 --no-smoke
grep -qP "^GET\t/$REL\tbytes=$kept-\t206\t" "$FAULT_LOG" ||
  fail "the second run did not resume from $kept: $(cat "$FAULT_LOG")"
expect_no_file "$R/var/cache/cudnnctl/$SHA.partial"
files_of "$R" >"$E2E_TMP/resumed.files"
diff -u "$E2E_TMP/ref.files" "$E2E_TMP/resumed.files" || fail "per-file records differ"
same_tree "$REF" "$R"

TEST "a server ignoring Range: the download and the extraction restart from zero"
R=$(new_root)
: >"$FAULT_LOG"
expect_exit 0 c "$R" --mirror "$FAULT_URL/fault/cut-once=$CUT,ignore-range" -v install 9.14.0 \
  --no-smoke
grep -qP "\tbytes=$CUT-\t200\t" "$FAULT_LOG" || fail "Range was not ignored: $(cat "$FAULT_LOG")"
expect_contains "$ERR" "extracting again"
files_of "$R" >"$E2E_TMP/restart.files"
diff -u "$E2E_TMP/ref.files" "$E2E_TMP/restart.files" || fail "per-file records differ"
same_tree "$REF" "$R" # nothing duplicated, nothing from the first pass mixed in
[ -z "$(find "$R/opt/cudnn/store" -maxdepth 1 -name '.staging-*')" ] || fail "staging left"

TEST "a corrupted byte: exit 4, nothing activated, no staging, no cache entry"
R=$(new_root)
expect_exit 4 c "$R" --mirror "$FAULT_URL/fault/corrupt=$((SIZE / 2))" --json install 9.14.0 \
  --no-smoke
expect_json 'd["ok"]' false
expect_json 'd["error"]["code"]' integrity
expect_contains "$OUT" "$SHA"
expect_clean_failure "$R"
expect_no_file "$R/var/cache/cudnnctl/$SHA.partial"
# A corrupted byte near the start, where the extractor trips over it before the hash is
# known: still a mismatch (exit 4), not an "unsafe archive" verdict.
R=$(new_root)
expect_exit 4 c "$R" --manifest "$M/redistrib_9.14.0.json" --mirror "$FAULT_URL/fault/corrupt=100" \
  --json install 9.14.0 --no-smoke
expect_json '"sha256 mismatch" in d["error"]["message"]' true
expect_clean_failure "$R"

TEST "a corrupt mirror, then a good one: the extraction restarts and succeeds"
R=$(new_root)
expect_exit 0 c "$R" --mirror "$FAULT_URL/fault/corrupt=$((SIZE / 3))" --mirror "$URL" -v \
  install 9.14.0 --no-smoke
expect_contains "$ERR" "extracting again"
files_of "$R" >"$E2E_TMP/mirror2.files"
diff -u "$E2E_TMP/ref.files" "$E2E_TMP/mirror2.files" || fail "per-file records differ"
stop_faults

TEST "a hostile entry with a correct hash: exit 4, nothing activated, no staging"
H=$E2E_TMP/hostile
python3 "$E2E_FIXTURES/mkhostile.py" "$H" --only dotdot,symlink-escape >/dev/null
for case in dotdot symlink-escape; do
  start_nginx "$H/$case"
  R=$(new_root)
  expect_exit 4 c "$R" --mirror "$MIRROR_URL" --json install 9.98.0 --no-smoke
  expect_json 'd["error"]["code"]' integrity
  expect_json '"unsafe archive" in d["error"]["message"]' true
  expect_no_file "$R/opt/cudnn/current"
  [ -z "$(ls -A "$R/opt/cudnn/store" 2>/dev/null)" ] || fail "$case: store not empty"
  expect_no_file "$R/var/lib/cudnnctl/journal.json"
  stop_nginx "$NGINX_PID"
done

# install_components ROOT LIST EXPECTED SUFFIX: install 9.14.0 --components LIST on ROOT (R);
# the JSON names the set EXPECTED; E is its store entry, $ENTRY-SUFFIX.
install_components() {
  R=$1
  expect_exit 0 c "$R" --mirror "$URL" --json install 9.14.0 --components "$2" --no-smoke
  expect_json 'd["data"]["components"]' "$3"
  E=$R/opt/cudnn/store/$ENTRY-$4
}

TEST "--components runtime: no headers, no static libraries; verify checks what is there"
install_components "$(new_root)" runtime '["runtime"]' runtime
expect_dir "$E/lib"
expect_no_file "$E/include"
[ -z "$(find "$E" -name '*.a')" ] || fail "static libraries installed: $(find "$E" -name '*.a')"
expect_symlink "$E/lib/libcudnn.so.9" libcudnn.so.9.14.0
expect_json 'd["active"]["path"]' "$E"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["components"] == ["runtime"], d["components"]' \
  "$E/.cudnnctl-entry.json" || fail "components not recorded"
expect_exit 0 c "$R" verify
expect_exit 0 c "$R" --mirror "$URL" --json install 9.14.0 --components runtime --no-smoke
expect_json 'd["changed"]' false

TEST "--components runtime,headers,static: the static libraries too"
install_components "$R" static,headers,runtime '["headers", "runtime", "static"]' headers+runtime+static
expect_file "$E/lib/libcudnn_ops_static_v9.a"
expect_file "$E/include/cudnn_version.h"
expect_exit 0 c "$R" verify
# The default set leaves the static libraries out.
expect_no_file "$REF/opt/cudnn/store/$ENTRY/lib/libcudnn_ops_static_v9.a"
expect_file "$REF/opt/cudnn/store/$ENTRY/include/cudnn_version.h"

TEST "--components static: the static libraries alone"
install_components "$(new_root)" static '["static"]' static
expect_file "$E/lib/libcudnn_ops_static_v9.a"
expect_no_file "$E/include"
[ -z "$(find "$E" -name '*.so*')" ] || fail "shared libraries installed: $(find "$E" -name '*.so*')"
expect_exit 0 c "$R" verify
expect_exit 2 c "$R" --mirror "$URL" install 9.14.0 --components headers,bogus --no-smoke
expect_contains "$ERR" "bogus"

TEST "progress: summary lines on stderr when it is not a terminal; nothing with -q or --json"
R=$(new_root)
expect_exit 0 c "$R" --mirror "$URL" install 9.14.0 --no-smoke
grep -qE '^download [0-9.]+ [KMG]?i?B in [0-9]+:[0-9]{2}, ' "$ERR" || fail "no download summary"
grep -qE '^extract [0-9.]+ [KMG]?i?B in [0-9]+:[0-9]{2}, ' "$ERR" || fail "no extract summary"
expect_not_contains "$ERR" $'\r'
R=$(new_root)
expect_exit 0 c "$R" --mirror "$URL" -q install 9.14.0 --no-smoke
[ ! -s "$ERR" ] || fail "-q printed on stderr: $(cat "$ERR")"
R=$(new_root)
expect_exit 0 c "$R" --mirror "$URL" --json install 9.14.0 --no-smoke
expect_json 'd["ok"]' true
[ ! -s "$ERR" ] || fail "--json printed on stderr: $(cat "$ERR")"
if command -v script >/dev/null; then
  # On a terminal: a bar redrawn in place.
  R=$(new_root)
  run script -qec "$(printf '%q ' "$CUDNNCTL" --root "$R" --cuda 12 --mirror "$URL" install \
    9.14.0 --no-smoke)" /dev/null
  [ "$RC" -eq 0 ] || fail "install on a pty failed"
  expect_contains "$OUT" $'\r'
  grep -qaE 'extract \[[#.]+\]' "$OUT" || fail "no bar on the terminal"
  R=$(new_root)
  run script -qec "$(printf '%q ' "$CUDNNCTL" --root "$R" --cuda 12 --mirror "$URL" -q install \
    9.14.0 --no-smoke)" /dev/null
  [ "$RC" -eq 0 ] || fail "install -q on a pty failed"
  expect_not_contains "$OUT" $'\r'
fi
