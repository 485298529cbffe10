#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of the fetch module: cudnnctl_fetchtool against server.py on 127.0.0.1.
# Usage: test_fetch.sh PATH/TO/cudnnctl_fetchtool        (exit 125 = skipped: no python3)
set -u

TOOL=${1:?usage: test_fetch.sh PATH/TO/cudnnctl_fetchtool}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 125; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cudnnctl-fetch-test.XXXXXX")
SERVER_PIDS=()
FAILURES=0
CURRENT=""

cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ "$FAILURES" -eq 0 ]; then
    rm -rf "$WORK"
  else
    echo "files kept in $WORK"
  fi
}
trap cleanup EXIT

TEST() { CURRENT=$1; echo "TEST $1"; }
fail() { echo "  FAIL [$CURRENT]: $*"; echo "    stdout: $OUT"; FAILURES=$((FAILURES + 1)); }

# start_server NAME [server.py options...]: sets ${NAME}_PORT, log in $WORK/NAME.log
start_server() {
  local name=$1
  shift
  local port_file=$WORK/$name.port
  python3 "$HERE/server.py" --root "$WORK/root" --log "$WORK/$name.log" \
    --port-file "$port_file" "$@" >"$WORK/$name.out" 2>&1 &
  SERVER_PIDS+=($!)
  local i
  for i in $(seq 100); do
    [ -s "$port_file" ] && break
    sleep 0.05
  done
  [ -s "$port_file" ] || { echo "server $name did not start"; cat "$WORK/$name.out"; exit 1; }
  printf -v "${name}_PORT" '%s' "$(cat "$port_file")"
  touch "$WORK/$name.log"
}

FAST=(--attempts 3 --backoff-ms 10 --backoff-max-ms 200 --connect-timeout 5 --low-speed-time 5)
OUT=""
RC=0
# run ARGS...: runs the tool with fast retry options; sets OUT, RC, ERR_FILE.
run() {
  local cmd=$1
  shift
  OUT=$("$TOOL" "$cmd" "${FAST[@]}" "$@" 2>"$WORK/stderr")
  RC=$?
}
expect_rc() { [ "$RC" -eq "$1" ] || fail "exit code $RC, expected $1"; }
json_field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval("d"+sys.argv[2]))' "$OUT" "$1" 2>/dev/null; }
expect_out_contains() { [[ "$OUT" == *"$1"* ]] || fail "output lacks '$1'"; }
log_lines() { wc -l <"$WORK/$1.log"; }
# ranges NAME FROM_LINE: the Range header of each request logged from line FROM_LINE+1 on
ranges() { tail -n +"$(($2 + 1))" "$WORK/$1.log" | python3 -c 'import json,sys
for l in sys.stdin: print(json.loads(l)["range"] or "-")'; }
cache_names() { (cd "$1" && ls -A | sort | tr '\n' ' '); }
expect_cache() { # DIR "expected names, space separated"
  local got
  got=$(cache_names "$1")
  [ "$got" = "$2" ] || fail "cache dir holds '$got', expected '$2'"
}
expect_same() { cmp -s "$1" "$2" || fail "$1 differs from $2"; }

# --- fixtures ---
mkdir -p "$WORK/root/sub"
head -c 3000000 /dev/urandom >"$WORK/root/a.tar.xz"
printf '{"release": "9.9.9"}\n' >"$WORK/root/redistrib_9.9.9.json"
cp "$WORK/root/a.tar.xz" "$WORK/root/sub/a.tar.xz"
SHA=$(sha256sum "$WORK/root/a.tar.xz" | cut -d' ' -f1)
SIZE=$(stat -c %s "$WORK/root/a.tar.xz")
JSON_SHA=$(sha256sum "$WORK/root/redistrib_9.9.9.json" | cut -d' ' -f1)
BAD_SHA=$(printf 'other' | sha256sum | cut -d' ' -f1)
start_server http
BASE=http://127.0.0.1:$http_PORT
# A port nobody listens on: bound and released by python.
DEAD_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
DEAD=http://127.0.0.1:$DEAD_PORT

archive() { # CACHE_DIR URL... (more options before via ARCHIVE_OPTS)
  local cache=$1
  shift
  run archive --sha256 "$SHA" --size "$SIZE" --cache "$cache" "${ARCHIVE_OPTS[@]}" "$@"
}
ARCHIVE_OPTS=()

# --- tests ---
TEST "good download lands in the cache under its sha256"
C=$WORK/c1
ARCHIVE_OPTS=(--sink "$WORK/sink1")
archive "$C" "$BASE/ok/a.tar.xz"
expect_rc 0
[ "$(json_field '["path"]')" = "$C/$SHA.tar.xz" ] || fail "path is $(json_field '["path"]')"
expect_cache "$C" "$SHA.tar.xz "
expect_same "$C/$SHA.tar.xz" "$WORK/root/a.tar.xz"
expect_same "$WORK/sink1" "$WORK/root/a.tar.xz"
grep -q '"user_agent": "cudnnctl/' "$WORK/http.log" || fail "no cudnnctl/<version> user agent"

TEST "second run uses the cache without any request"
before=$(log_lines http)
archive "$C" "$BASE/ok/a.tar.xz"
expect_rc 0
[ "$(log_lines http)" -eq "$before" ] || fail "the server saw a request"
expect_same "$WORK/sink1" "$WORK/root/a.tar.xz" # the cached file is replayed through the sink
ARCHIVE_OPTS=()

TEST "a corrupted cache file (same size) is downloaded again"
head -c "$SIZE" /dev/zero >"$C/$SHA.tar.xz"
before=$(log_lines http)
archive "$C" "$BASE/ok/a.tar.xz"
expect_rc 0
[ "$(log_lines http)" -eq $((before + 1)) ] || fail "expected one new request"
expect_same "$C/$SHA.tar.xz" "$WORK/root/a.tar.xz"
expect_cache "$C" "$SHA.tar.xz "

TEST "a truncated cache file is downloaded again"
truncate -s 1000 "$C/$SHA.tar.xz"
archive "$C" "$BASE/ok/a.tar.xz"
expect_rc 0
expect_same "$C/$SHA.tar.xz" "$WORK/root/a.tar.xz"

TEST "404 on the first mirror, success on the second"
C=$WORK/c2
archive "$C" "$BASE/status/404/a.tar.xz" "$BASE/ok/a.tar.xz"
expect_rc 0
expect_cache "$C" "$SHA.tar.xz "
run first "$BASE/status/404" "$BASE/ok" -- redistrib_9.9.9.json
expect_rc 0
[ "$(json_field '["url"]')" = "$BASE/ok/redistrib_9.9.9.json" ] || fail "wrong url"
[ "$(json_field '["sha256"]')" = "$JSON_SHA" ] || fail "wrong body"

TEST "every mirror 404: first exits 2, archive exits 3"
run first "$BASE/status/404" "$BASE/status/410" -- redistrib_9.9.9.json
expect_rc 2
expect_out_contains "not found on any mirror"
C=$WORK/c3
archive "$C" "$BASE/status/404/a.tar.xz" "$BASE/ok/missing.tar.xz"
expect_rc 3
expect_out_contains "download failed on every mirror"
expect_out_contains "$BASE/status/404/a.tar.xz: HTTP 404"
expect_cache "$C" ""

TEST "wrong sha256: exit 4, nothing left in the cache"
C=$WORK/c4
run archive --sha256 "$BAD_SHA" --size "$SIZE" --cache "$C" "$BASE/ok/a.tar.xz" "$BASE/ok/sub/a.tar.xz"
expect_rc 4
expect_out_contains "expected $BAD_SHA, got $SHA"
expect_cache "$C" ""
run archive --sha256 "$SHA" --size 1234 --cache "$C" "$BASE/ok/a.tar.xz"
expect_rc 4
expect_cache "$C" ""

TEST "truncated download resumes with Range"
C=$WORK/c5
before=$(log_lines http)
ARCHIVE_OPTS=(--sink "$WORK/sink5")
archive "$C" "$BASE/trunc/a.tar.xz"
expect_rc 0
expect_same "$C/$SHA.tar.xz" "$WORK/root/a.tar.xz"
expect_same "$WORK/sink5" "$WORK/root/a.tar.xz"
[ "$(ranges http "$before" | tr '\n' ' ')" = "- bytes=$((SIZE / 2))- " ] ||
  fail "requests' Range: $(ranges http "$before" | tr '\n' ' ')"
ARCHIVE_OPTS=()

TEST "a stalled transfer ends by the low-speed limit and resumes"
C=$WORK/c5s
before=$(log_lines http)
start=$(date +%s)
archive "$C" --low-speed-time 1 --low-speed-limit 1000 "$BASE/stall/a.tar.xz"
expect_rc 0
[ "$(ranges http "$before" | tr '\n' ' ')" = "- bytes=$((SIZE / 2))- " ] ||
  fail "requests' Range: $(ranges http "$before" | tr '\n' ' ')"
[ $(($(date +%s) - start)) -lt 20 ] || fail "the stall was not detected"
expect_same "$C/$SHA.tar.xz" "$WORK/root/a.tar.xz"

TEST "a partial left by a failed run is resumed by the next run"
C=$WORK/c6
run archive --sha256 "$SHA" --size "$SIZE" --cache "$C" --attempts 1 "$BASE/trunc/sub/a.tar.xz"
expect_rc 3
expect_cache "$C" "$SHA.partial "
expect_out_contains "for a resume"
before=$(log_lines http)
ARCHIVE_OPTS=(--sink "$WORK/sink6")
archive "$C" "$BASE/ok/a.tar.xz"
expect_rc 0
[ "$(ranges http "$before")" = "bytes=$((SIZE / 2))-" ] || fail "no resume: $(ranges http "$before")"
expect_same "$WORK/sink6" "$WORK/root/a.tar.xz" # partial replayed, then the rest
expect_cache "$C" "$SHA.tar.xz "
ARCHIVE_OPTS=()

TEST "a server that ignores Range: restart from zero"
for mode in norange badrange; do
  C=$WORK/c7-$mode
  mkdir -p "$C"
  head -c 1000000 "$WORK/root/a.tar.xz" >"$C/$SHA.partial"
  before=$(log_lines http)
  ARCHIVE_OPTS=(--sink "$WORK/sink7")
  archive "$C" "$BASE/$mode/a.tar.xz"
  expect_rc 0
  [ "$(ranges http "$before" | tr '\n' ' ')" = "bytes=1000000- - " ] ||
    fail "$mode: requests' Range: $(ranges http "$before" | tr '\n' ' ')"
  [ "$(json_field '["sink_restarts"]')" = 1 ] || fail "$mode: sink restarts $(json_field '["sink_restarts"]')"
  expect_same "$WORK/sink7" "$WORK/root/a.tar.xz"
  expect_cache "$C" "$SHA.tar.xz "
done
ARCHIVE_OPTS=()

TEST "a stale partial (wrong prefix) fails verification once, then downloads from zero"
C=$WORK/c8
mkdir -p "$C"
head -c 1000000 /dev/urandom >"$C/$SHA.partial"
before=$(log_lines http)
archive "$C" "$BASE/ok/a.tar.xz"
expect_rc 0
[ "$(ranges http "$before" | tr '\n' ' ')" = "bytes=1000000- - " ] ||
  fail "requests' Range: $(ranges http "$before" | tr '\n' ' ')"
expect_same "$C/$SHA.tar.xz" "$WORK/root/a.tar.xz"

TEST "more bytes than expected stop the transfer: exit 4, nothing on disk"
for mode in flood bigcl; do
  C=$WORK/c9-$mode
  start=$(date +%s)
  archive "$C" "$BASE/$mode/a.tar.xz"
  expect_rc 4
  expect_out_contains "the server sent more"
  expect_cache "$C" ""
  [ $(($(date +%s) - start)) -lt 20 ] || fail "$mode took too long"
done

TEST "connection refused: exit 3"
C=$WORK/c10
archive "$C" "$DEAD/a.tar.xz"
expect_rc 3
expect_out_contains "$DEAD/a.tar.xz"
expect_cache "$C" ""
run first "$DEAD" -- redistrib_9.9.9.json
expect_rc 3
expect_out_contains "failed on every mirror"

TEST "every mirror 503: retried attempts_per_mirror times, exit 3"
before=$(log_lines http)
archive "$WORK/c11" "$BASE/status/503/a.tar.xz"
expect_rc 3
[ "$(log_lines http)" -eq $((before + 3)) ] || fail "expected 3 requests"
expect_out_contains "HTTP 503 (after 3 tries)"

TEST "503 with Retry-After: 30 is retried after at most backoff_max"
start=$(date +%s)
archive "$WORK/c12" "$BASE/flaky/a.tar.xz"
expect_rc 0
[ $(($(date +%s) - start)) -lt 10 ] || fail "Retry-After was not capped"

TEST "HTTP 403 fails the mirror at once"
before=$(log_lines http)
run first "$BASE/status/403" -- redistrib_9.9.9.json
expect_rc 3
[ "$(log_lines http)" -eq $((before + 1)) ] || fail "403 was retried"

TEST "redirects are followed"
archive "$WORK/c13" "$BASE/redirect/a.tar.xz"
expect_rc 0

TEST "file:// bases and URLs"
run first "file://$WORK/nowhere" "file://$WORK/root" -- redistrib_9.9.9.json
expect_rc 0
[ "$(json_field '["sha256"]')" = "$JSON_SHA" ] || fail "wrong body"
run first "file://$WORK/nowhere" -- redistrib_9.9.9.json
expect_rc 2
C=$WORK/c14
mkdir -p "$C"
head -c 5000 "$WORK/root/a.tar.xz" >"$C/$SHA.partial"
ARCHIVE_OPTS=(--sink "$WORK/sink14")
archive "$C" "file://$WORK/nowhere/a.tar.xz" "file://$WORK/root/a.tar.xz"
expect_rc 0
expect_same "$C/$SHA.tar.xz" "$WORK/root/a.tar.xz"
expect_same "$WORK/sink14" "$WORK/root/a.tar.xz"
[ "$(json_field '["sink_restarts"]')" = 0 ] || fail "the file:// resume restarted"
ARCHIVE_OPTS=()

TEST "first: max size and rejection by accept"
run first --max-size 5 "$BASE/ok" -- redistrib_9.9.9.json
expect_rc 3
expect_out_contains "larger than the limit of 5 bytes"
run first --accept-sha256 "$BAD_SHA" "$BASE/ok" "$DEAD" -- redistrib_9.9.9.json
expect_rc 4
expect_out_contains "rejected body"

if command -v openssl >/dev/null; then
  TEST "https: a self-signed server needs --cacert; https never redirects to http"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
    -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
  start_server tls --cert "$WORK/cert.pem" --key "$WORK/key.pem" --redirect-base "$BASE"
  TLS=https://127.0.0.1:$tls_PORT
  start=$(date +%s)
  archive "$WORK/c15" "$TLS/ok/a.tar.xz"
  expect_rc 3
  expect_out_contains "--cacert"
  [ "$(log_lines tls)" -eq 0 ] || fail "a request got through without trust"
  ARCHIVE_OPTS=(--cacert "$WORK/cert.pem")
  archive "$WORK/c15" "$TLS/ok/a.tar.xz"
  expect_rc 0
  before=$(log_lines http)
  archive "$WORK/c16" "$TLS/redirect/a.tar.xz"
  expect_rc 3
  [ "$(log_lines http)" -eq "$before" ] || fail "followed a redirect from https to http"
  ARCHIVE_OPTS=()
else
  echo "SKIP https tests: openssl not found"
fi

if [ "$FAILURES" -eq 0 ]; then
  echo "all fetch tests passed"
  exit 0
fi
echo "$FAILURES failure(s)"
exit 1
