#!/bin/bash
# Network faults from faultserver.py (tests/fixtures/FAULTS.md) between cudnnctl and a
# mirror: cut connections, stalls, ignored or wrong Range answers, corrupted bytes, lying
# Content-Length, HTTP errors with Retry-After, redirect loops, a slow trickle, and damaged
# cache files. Each ends in one of the contract's outcomes: resume and finish, retry then
# the next mirror, or exit 3/4 with nothing changed and no poisoned cache entry (a
# .partial kept after a network failure is the documented resume point, never used
# unverified). docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl

NM=$E2E_TMP/netmirror
# one release with a ~600 KB archive (incompressible padding), so that cuts land mid-file
mkrelease --mirror "$NM" --label 9.1.0 --version 9.1.0.70 --cuda 12 --platform linux-x86_64 \
  --pad libcudnn_engines_precompiled=600000 --pad-random --print >"$E2E_TMP/rel.json"
MAN=$NM/redistrib_9.1.0.json
SHA=$(json_get 'd["archives"][0]["sha256"]' "$E2E_TMP/rel.json")
SIZE=$(json_get 'd["archives"][0]["size"]' "$E2E_TMP/rel.json")
start_faultserver "$NM"
U=$FS_URL
N=0

# inst ROOT MIRROR... : install 9.1.0 with the local manifest (only the archive goes through
# the mirrors, so each fault hits exactly the archive download)
inst() {
  local r=$1 m args=()
  shift
  for m in "$@"; do args+=(--mirror "$m"); done
  cudnnctl --root "$r" --manifest "$MAN" --cuda 12 --platform linux-x86_64 "${args[@]}" install 9.1.0
}
cache_ls() { ls -A "$1/var/cache/cudnnctl" 2>/dev/null | tr '\n' ' '; }

# ok_case NAME MIRROR...: the install succeeds; the invariant holds; the cache holds exactly
# the verified archive.
ok_case() {
  local name=$1
  shift
  TEST "network: $name"
  R=$(new_root)
  : >"$FS_LOG"
  expect_exit 0 inst "$R" "$@"
  cr_check "$R" --allowed 1 --clean --loader --history-count 1 --record="-1:ok:install:none:1"
  expect_exit 0 cudnnctl --root "$R" verify
  expect_eq "$(cache_ls "$R")" "$SHA.tar.xz " "cache after $name"
  N=$((N + 1))
}
# bad_case NAME EXIT CACHE MIRROR...: the install fails with EXIT; nothing changed (state
# snapshot; history has the "failed" record); the cache holds exactly CACHE ("" or the
# .partial of a network failure).
bad_case() {
  local name=$1 want=$2 cache=$3 snap
  shift 3
  TEST "network: $name"
  R=$(new_root)
  snap=$E2E_TMP/snap.$N
  cr_state_snapshot "$R" >"$snap"
  : >"$FS_LOG"
  expect_exit "$want" inst "$R" "$@"
  expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines"
  cr_expect_same_state "$R" "$snap"
  cr_check "$R" --allowed none --clean --history-count 1 --record="-1:failed:install:none"
  expect_eq "$(cache_ls "$R")" "$cache" "cache after $name"
  N=$((N + 1))
}
# refetch [REGEX]: the install on $R from the good mirror succeeds (the fault server's log
# emptied first; afterwards it has a line matching REGEX, if given); the invariant holds.
refetch() {
  : >"$FS_LOG"
  expect_exit 0 inst "$R" "$U/"
  [ $# -eq 0 ] || fs_log_has "$1"
  cr_check "$R" --allowed 1 --clean --loader
}
# damaged_cache NAME SOURCE BYTES: a new root R whose download cache holds NAME, the first
# BYTES bytes of SOURCE.
damaged_cache() {
  R=$(new_root)
  mkdir -p "$R/var/cache/cudnnctl"
  head -c "$3" "$2" >"$R/var/cache/cudnnctl/$1"
}
A=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
T=$'\t'

ok_case "cut after 200000 bytes once: resumed with Range and finished" "$U/fault/cut-once=200000/"
fs_log_has "^GET${T}/fault/cut-once=200000/$A${T}-${T}200${T}200000\$"
fs_log_has "^GET${T}/fault/cut-once=200000/$A${T}bytes=200000-${T}206${T}$((SIZE - 200000))\$"

bad_case "cut after 150000 bytes every time: exit 3, the partial kept" 3 "$SHA.partial " "$U/fault/cut=150000/"
fs_log_has "bytes=300000-${T}206"
expect_eq "$(stat -c %s "$R/var/cache/cudnnctl/$SHA.partial")" 450000 "partial size"
TEST "network: the next run resumes the partial from another mirror"
refetch "^GET${T}/$A${T}bytes=450000-${T}206${T}$((SIZE - 450000))\$"
expect_eq "$(cache_ls "$R")" "$SHA.tar.xz " "cache after the resume"
N=$((N + 1))

ok_case "server ignores Range: restarted from zero and finished" "$U/fault/ignore-range,cut-once=200000/"
fs_log_has "bytes=200000-${T}200${T}"
ok_case "server answers Range at the wrong offset: detected, restarted, finished" "$U/fault/bad-range,cut-once=200000/"
fs_log_has "bytes=200000-${T}206${T}"

bad_case "one corrupted byte: exit 4, nothing cached" 4 "" "$U/fault/corrupt=300000/"
expect_contains "$ERR" "sha256 mismatch"
ok_case "one corrupted byte on the first mirror, the second is good" "$U/fault/corrupt=300000/" "$U/"
bad_case "Content-Length larger than the file: exit 4, nothing cached" 4 "" "$U/fault/bad-length=$((SIZE + 100000))/"
bad_case "Content-Length smaller than the file: exit 4, nothing cached" 4 "" "$U/fault/bad-length=300000/"
expect_contains "$ERR" "size mismatch"
ok_case "lying Content-Length on the first mirror, the second is good" "$U/fault/bad-length=300000/" "$U/"

ok_case "404 on the first mirror, the second is good" "$U/fault/status=404/" "$U/"
fs_log_has "status=404/$A${T}-${T}404"
bad_case "404 on every mirror: exit 3" 3 "" "$U/fault/status=404/" "$U/fault/status=410/"
ok_case "500 on the first mirror: retried, then the second mirror" "$U/fault/status=500/" "$U/"
expect_eq "$(grep -c "status=500/$A" "$FS_LOG")" 3 "tries on the failing mirror"
t0=$SECONDS
bad_case "503 with Retry-After on the only mirror: retried, then exit 3" 3 "" "$U/fault/status=503,retry-after=1/"
expect_eq "$(grep -c "status=503" "$FS_LOG")" 3 "tries"
[ $((SECONDS - t0)) -ge 2 ] || fail "Retry-After: 1 was not honoured (2 waits took $((SECONDS - t0)) s)"
ok_case "503 once with Retry-After: retried on the same mirror" "$U/fault/status-once=503,retry-after=1/"
expect_eq "$(grep -c "status-once=503" "$FS_LOG")" 2 "requests"
bad_case "redirect loop: exit 3" 3 "" "$U/fault/redirect-loop/"
expect_contains "$ERR" "redirect"
ok_case "redirect loop on the first mirror, the second is good" "$U/fault/redirect-loop/" "$U/"
ok_case "slow trickle (400 KB/s): finishes" "$U/fault/trickle=400000/"

DEAD=http://127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ok_case "connection refused on the first mirror, the second is good" "$DEAD/" "$U/"
bad_case "connection refused on every mirror: exit 3" 3 "" "$DEAD/"

# a stall: the low-speed abort (1024 B/s for CUDNNCTL_TEST_LOW_SPEED_TIME s instead of 30 s)
export CUDNNCTL_TEST_LOW_SPEED_TIME=1
bad_case "stalled mirror: abandoned by the low-speed limit, exit 3, partial kept" 3 "$SHA.partial " "$U/fault/stall=8/"
TEST "network: after a stall the next run resumes the partial"
refetch "^GET${T}/$A${T}bytes=[1-9][0-9]*-${T}206"
N=$((N + 1))
ok_case "stalled first mirror, the second is good" "$U/fault/stall=8/" "$U/"
unset CUDNNCTL_TEST_LOW_SPEED_TIME

# damaged cache files: never trusted
TEST "network: a cached archive of zeros (renamed without fsync, then power loss) is re-fetched"
damaged_cache "$SHA.tar.xz" /dev/zero "$SIZE"
refetch "^GET${T}/$A${T}-${T}200${T}$SIZE\$"
expect_eq "$(sha256sum <"$R/var/cache/cudnnctl/$SHA.tar.xz" | cut -d' ' -f1)" "$SHA" "cached archive"
N=$((N + 1))

TEST "network: a stale partial of garbage is resumed, fails verification, is fetched again from zero"
damaged_cache "$SHA.partial" /dev/urandom 100000
refetch "^GET${T}/$A${T}-${T}200${T}$SIZE\$"
expect_eq "$(cache_ls "$R")" "$SHA.tar.xz " "cache"
N=$((N + 1))

TEST "network: a partial longer than the archive is discarded and fetched again"
damaged_cache "$SHA.partial" /dev/urandom $((SIZE + 5000))
refetch
expect_eq "$(cache_ls "$R")" "$SHA.tar.xz " "cache"
N=$((N + 1))

# faults on the manifest download too (no --manifest: both files through the mirror)
TEST "network: 503 once on the manifest and on the archive: both retried"
R=$(new_root)
: >"$FS_LOG"
expect_exit 0 cudnnctl --root "$R" --mirror "$U/fault/status-once=503/" --cuda 12 --platform linux-x86_64 install 9.1.0
fs_log_has "status-once=503/redistrib_9.1.0.json${T}-${T}503"
fs_log_has "status-once=503/redistrib_9.1.0.json${T}-${T}200"
cr_check "$R" --allowed 1 --clean --loader
N=$((N + 1))
TEST "network: a dead first mirror is a warning naming it; -v prints a line per try"
R=$(new_root)
dead=http://127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
expect_exit 0 cudnnctl -v --root "$R" --mirror "$dead/" --mirror "$U/" --cuda 12 --platform linux-x86_64 install 9.1.0
expect_contains "$ERR" "cudnnctl: GET $dead/redistrib_9.1.0.json (try 1 of 3)"
expect_contains "$ERR" "cudnnctl: GET $dead/redistrib_9.1.0.json (try 3 of 3)"
expect_contains "$ERR" "cudnnctl:   next try in "
expect_contains "$ERR" "cudnnctl: warning: mirror $dead/redistrib_9.1.0.json failed ("
expect_contains "$ERR" "); falling back to $U/redistrib_9.1.0.json"
expect_contains "$ERR" "cudnnctl: GET $U/redistrib_9.1.0.json (try 1 of 3)"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" --mirror "$dead/" --mirror "$U/" --cuda 12 --platform linux-x86_64 install 9.1.0
expect_not_contains "$ERR" "(try 1 of"
expect_eq "$(grep -c 'cudnnctl: warning: mirror .* failed' "$ERR")" 1 "fallback warnings without -v"
N=$((N + 1))
TEST "network: a manifest cut in the middle is fetched again"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" --mirror "$U/fault/cut-once=1000/" --cuda 12 --platform linux-x86_64 install 9.1.0
cr_check "$R" --allowed 1 --clean --loader
N=$((N + 1))
TEST "network: a manifest over the 4 MiB limit from a mirror: exit 3 (that mirror failed), nothing changed"
BIG=$E2E_TMP/bigmirror
mkdir -p "$BIG"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["release_label"]="9.80.0"; m["cudnn"]["version"]="9.80.0.1"; m["pad"]="x"*5000000; open(sys.argv[2],"w").write(json.dumps(m))' "$MAN" "$BIG/redistrib_9.80.0.json"
R=$(new_root)
before=$(find "$R" | sort)
expect_exit 3 cudnnctl --root "$R" --mirror "file://$BIG" --cuda 12 install 9.80.0
expect_contains "$ERR" "larger than the limit"
expect_eq "$(find "$R" | sort)" "$before" "the root (nothing created)"
N=$((N + 1))
# The developer build loads libcurl when the first download starts (fetch/curl_lib.hpp); the
# portable release links it in, so this case is for builds configured with it on.
if grep -qx 'CUDNNCTL_CURL_DLOPEN:BOOL=ON' "${CUDNNCTL_BUILD_DIR:-/nonexistent}/CMakeCache.txt" 2>/dev/null; then
  TEST "network: a libcurl that cannot be loaded: install is exit 1 naming it, nothing installed; list, verify and --version need none"
  NOCURL=$E2E_TMP/nocurl
  mkdir -p "$NOCURL"
  echo "not a shared library" >"$NOCURL/libcurl.so.4"
  R=$(new_root)
  expect_exit 1 env LD_LIBRARY_PATH="$NOCURL" "$CUDNNCTL" --root "$R" --manifest "$MAN" --cuda 12 \
    --platform linux-x86_64 --mirror "$U/" install 9.1.0
  expect_contains "$ERR" "cannot load libcurl.so.4 ("
  expect_contains "$ERR" "install libcurl (Debian/Ubuntu: libcurl4, RHEL: libcurl)"
  expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines"
  expect_not_contains "$ERR" "internal error"
  cr_check "$R" --allowed none --clean --history-count 1 --record="-1:failed:install:none"
  expect_exit 0 cudnnctl --root "$R" list
  expect_contains "$OUT" "nothing installed"
  expect_exit 0 inst "$R" "$U/"
  cr_check "$R" --allowed 1 --clean --loader --history-count 2 --record="-1:ok:install:none:1"
  expect_exit 0 env LD_LIBRARY_PATH="$NOCURL" "$CUDNNCTL" --root "$R" list
  expect_contains "$OUT" "9.1.0.70"
  expect_exit 0 env LD_LIBRARY_PATH="$NOCURL" "$CUDNNCTL" --root "$R" verify
  expect_exit 0 env LD_LIBRARY_PATH="$NOCURL" "$CUDNNCTL" --version
  expect_contains "$OUT" "libcurl not found"
  N=$((N + 1))
fi
echo "network cases: $N" >&2
