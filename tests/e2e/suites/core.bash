# Core pipeline end to end (issue 2): the real binary against nginx on loopback serving a mirror
# generated at test time, every command under its own temporary --root.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl

MIRROR=$(std_mirror)
start_nginx "$MIRROR"
URL=$MIRROR_URL
MAIN_NGINX=$NGINX_PID

R=$(new_root)
c() { cudnnctl --root "$R" --mirror "$URL/" --cuda 12 "$@"; }
entry_of() { readlink "$R/opt/cudnn/generations/$1"; }

# The ld.so cache under the root must resolve SONAME into the active store entry.
expect_ldcache() {
  local soname=$1 entry=$2 got
  got=$(ldconfig -r "$R" -p | awk -v s="$soname" '$1 == s && /x86-64/ {print $NF; exit}')
  expect_eq "$got" "/opt/cudnn/store/$entry/lib/$soname" "ld.so cache entry for $soname"
}

TEST "install: resolve, download, verify, extract, switch"
expect_exit 0 c --json install 9.27.0
expect_json 'd["ok"]' true
expect_json 'd["changed"]' true
expect_json 'd["command"]' install
expect_json 'd["active"]["version"]' 9.27.0.42
expect_json 'd["active"]["cuda"]' 12
expect_json 'd["active"]["platform"]' linux-x86_64
expect_json 'd["active"]["generation"]' 1
expect_json 'd["previous"]' null
expect_json 'd["data"]["archive"]["url"]' "$URL/cudnn/linux-x86_64/cudnn-linux-x86_64-9.27.0.42_cuda12-archive.tar.xz"
manifest_sha=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cudnn"]["linux-x86_64"]["cuda12"]["sha256"])' "$MIRROR/redistrib_9.27.0.json")
expect_json 'd["data"]["archive"]["sha256"]' "$manifest_sha"
expect_symlink "$R/opt/cudnn/current" generations/1
expect_symlink "$R/opt/cudnn/generations/1" ../store/9.27.0.42-cuda12-linux-x86_64
expect_symlink "$R/opt/cudnn/current/lib/libcudnn.so" libcudnn.so.9
expect_symlink "$R/opt/cudnn/current/lib/libcudnn.so.9" libcudnn.so.9.27.0
expect_file "$R/opt/cudnn/current/include/cudnn_version.h"
expect_no_file "$R/opt/cudnn/current/lib/libcudnn_ops_static_v9.a" # default: no static libs
expect_contains "$R/etc/ld.so.conf.d/00-cudnnctl.conf" /opt/cudnn/store/9.27.0.42-cuda12-linux-x86_64/lib
expect_ldcache libcudnn.so.9 9.27.0.42-cuda12-linux-x86_64
expect_file "$R/var/cache/cudnnctl/$manifest_sha.tar.xz"
expect_no_file "$R/var/lib/cudnnctl/journal.json"

TEST "install: a second and a third version side by side, each active in turn"
expect_exit 0 c --json install 9.1.0
expect_json 'd["active"]["generation"]' 2
expect_json 'd["previous"]["version"]' 9.27.0.42
expect_exit 0 c --json install 8.9.7
expect_json 'd["active"]["version"]' 8.9.7.29
expect_json 'd["active"]["generation"]' 3
expect_json 'd["previous"]["version"]' 9.1.0.70
expect_ldcache libcudnn.so.8 8.9.7.29-cuda12-linux-x86_64
expect_symlink "$R/opt/cudnn/current/lib/libcudnn_ops_infer.so.8" libcudnn_ops_infer.so.8.9.7
expect_dir "$R/opt/cudnn/store/9.27.0.42-cuda12-linux-x86_64"
expect_dir "$R/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64"

TEST "idempotent reinstall of the active version: no change, no network"
stop_nginx "$MAIN_NGINX"
expect_exit 0 c --json install 8.9.7
expect_json 'd["changed"]' false
expect_json 'd["active"]["generation"]' 3
expect_exit 0 c --json install 8.9.7.29
expect_json 'd["changed"]' false

TEST "rollback twice walks back through what was active, without the network"
expect_exit 0 c --json rollback
expect_json 'd["changed"]' true
expect_json 'd["active"]["version"]' 9.1.0.70
expect_json 'd["active"]["generation"]' 2
expect_json 'd["previous"]["generation"]' 3
expect_symlink "$R/opt/cudnn/current" generations/2
expect_ldcache libcudnn.so.9 9.1.0.70-cuda12-linux-x86_64
expect_exit 0 c --json rollback
expect_json 'd["active"]["version"]' 9.27.0.42
expect_json 'd["active"]["generation"]' 1
expect_ldcache libcudnn.so.9 9.27.0.42-cuda12-linux-x86_64

TEST "rollback with nothing before it fails loudly and changes nothing"
tree_snapshot "$R/opt" >"$E2E_TMP/before"
expect_exit 2 c --json rollback
expect_json 'd["ok"]' false
expect_json 'd["error"]["code"]' nothing_to_roll_back
expect_contains "$OUT" "generation 1"
tree_snapshot "$R/opt" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "rollback with nothing before it changed the prefix"

TEST "list, status and history tell what is installed, active, and how it got there"
expect_exit 0 c --json list
expect_json 'len(d["data"]["installed"])' 3
expect_json '[e["version"] for e in d["data"]["installed"] if e["active"]]' '["9.27.0.42"]'
expect_json 'sorted(g["generation"] for g in d["data"]["generations"])' '[1, 2, 3]'
expect_exit 0 c --json status
expect_json 'd["active"]["generation"]' 1
expect_json 'd["data"]["interrupted_transaction"]' false
expect_exit 0 c --json history
expect_json '[r["command"] for r in d["data"]["history"]]' '["install", "install", "install", "rollback", "rollback"]'
expect_json '[r["result"] for r in d["data"]["history"]]' '["ok", "ok", "ok", "ok", "ok"]'
expect_json 'd["data"]["history"][3]["from"]["generation"]' 3
expect_json 'd["data"]["history"][3]["to"]["generation"]' 2
expect_exit 0 c history
expect_contains "$OUT" "rollback"

TEST "use activates an installed version as a new generation; rollback undoes the use"
expect_exit 0 c --json use 8.9.7
expect_json 'd["active"]["version"]' 8.9.7.29
expect_json 'd["active"]["generation"]' 4
expect_eq "$(entry_of 4)" ../store/8.9.7.29-cuda12-linux-x86_64
expect_exit 0 c --json rollback
expect_json 'd["active"]["generation"]' 1
expect_exit 0 c --json use 8.9.7.29
expect_json 'd["active"]["generation"]' 5
expect_exit 0 c --json use 8.9.7
expect_json 'd["changed"]' false
expect_exit 2 c --json use 9.5.0
expect_contains "$OUT" "not installed"

TEST "remove: never the active version; removes the entry and its generations"
expect_exit 2 c --json remove 8.9.7
expect_contains "$OUT" "active"
expect_exit 0 c --json remove 9.1.0
expect_json 'd["changed"]' true
expect_no_file "$R/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64"
expect_no_file "$R/opt/cudnn/generations/2"
expect_exit 2 c --json remove 9.1.0
expect_contains "$OUT" "not installed"

TEST "gc --keep: keeps the newest generations and the active one"
expect_exit 0 c --json gc --keep 1
expect_json 'd["data"]["deleted_generations"]' '[1, 3, 4]'
expect_json 'd["data"]["deleted_entries"]' '["9.27.0.42-cuda12-linux-x86_64"]'
expect_symlink "$R/opt/cudnn/current" generations/5
expect_exit 0 c verify
expect_exit 0 c --json gc --keep 1 --cache
expect_json 'd["data"]["deleted_generations"]' '[]'
[ -z "$(ls -A "$R/var/cache/cudnnctl")" ] || fail "gc --cache left files in the cache"
expect_exit 2 c gc --keep 0

start_nginx "$MIRROR"
URL=$MIRROR_URL

TEST "--dry-run and read-only commands create nothing at all"
R2=$(new_root)
tree_snapshot "$R2" >"$E2E_TMP/before"
expect_exit 0 cudnnctl --root "$R2" --mirror "$URL/" --cuda 12 --json --dry-run install 9.1.0
expect_json 'd["changed"]' true
expect_json 'd["data"]["archive"]["version"]' 9.1.0.70
expect_json 'd["data"]["archive"]["size"] > 0' true
for cmd in status list history; do
  expect_exit 0 cudnnctl --root "$R2" --json "$cmd"
done
expect_exit 0 cudnnctl --root "$R2" --mirror "$URL/" --dry-run gc
tree_snapshot "$R2" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a read-only or --dry-run command wrote under the root"
# And without root privileges (read-only commands must work for anyone).
as_nobody "$CUDNNCTL" --root "$R" --json status >"$OUT" 2>"$ERR" || fail "status as nobody failed"
expect_json 'd["active"]["version"]' 8.9.7.29

TEST "checksum mismatch: exit 4, both values printed, no cache entry, nothing changed"
BAD=$E2E_TMP/bad-mirror
mkrelease --mirror "$BAD" --label 9.50.0 --version 9.50.0.1 --cuda 12 --platform linux-x86_64 --defect bad-sha256 >/dev/null
start_nginx "$BAD"
R3=$(new_root)
expect_exit 4 cudnnctl --root "$R3" --mirror "$MIRROR_URL/" --cuda 12 --json install 9.50.0
expect_json 'd["error"]["code"]' integrity
expect_contains "$OUT" "expected"
expect_contains "$OUT" "got"
expect_no_file "$R3/opt/cudnn/current"
[ -z "$(ls -A "$R3/var/cache/cudnnctl" 2>/dev/null)" ] || fail "a bad archive was left in the cache: $(ls "$R3/var/cache/cudnnctl")"

TEST "truncated archive on the server: exit 4 (size mismatch), nothing activated"
TRUNC=$E2E_TMP/trunc-mirror
mkrelease --mirror "$TRUNC" --label 9.51.0 --version 9.51.0.1 --cuda 12 --platform linux-x86_64 >/dev/null
f=$(find "$TRUNC/cudnn" -name '*.tar.xz')
truncate -s $(($(stat -c %s "$f") / 2)) "$f"
start_nginx "$TRUNC"
expect_exit 4 cudnnctl --root "$R3" --mirror "$MIRROR_URL/" --cuda 12 --json install 9.51.0
expect_contains "$OUT" "size mismatch"
expect_no_file "$R3/opt/cudnn/current"

TEST "404 on the first mirror, success on the second"
EMPTY=$E2E_TMP/empty-mirror
mkdir -p "$EMPTY"
start_nginx "$EMPTY"
R4=$(new_root)
expect_exit 0 cudnnctl --root "$R4" --mirror "$MIRROR_URL/" --mirror "$URL/" --cuda 12 --json install 9.1.0
expect_json 'd["active"]["version"]' 9.1.0.70
expect_contains "$NGINX_DIR/access.log" "redistrib_9.1.0.json"

TEST "unknown version: exit 2, saying what is known"
expect_exit 2 cudnnctl --root "$R4" --mirror "$URL/" --cuda 12 --json install 9.99.0
expect_json 'd["error"]["code"]' unknown_version
expect_contains "$OUT" "9.99.0"
expect_contains "$OUT" "did you mean 9.9.0" # the closest known releases are suggested
expect_contains "$OUT" "cudnnctl search"

TEST "unknown platform (exit 2) and CUDA variant (exit 7): listing what the manifest offers"
expect_exit 7 cudnnctl --root "$R4" --mirror "$URL/" --cuda 13 --json install 9.1.0
expect_contains "$OUT" "CUDA 11, 12"
expect_exit 2 cudnnctl --root "$R4" --mirror "$URL/" --platform linux-ppc64le --json install 9.1.0
expect_contains "$OUT" "linux-ppc64le"

TEST "malformed manifest: exit 2"
MAL=$E2E_TMP/malformed-mirror
mkdir -p "$MAL"
printf '{"release_label": "9.52.0", "cudnn": {' >"$MAL/redistrib_9.52.0.json"
start_nginx "$MAL"
expect_exit 2 cudnnctl --root "$R4" --mirror "$MIRROR_URL/" --cuda 12 --json install 9.52.0
expect_json 'd["error"]["code"]' usage
expect_contains "$OUT" "malformed manifest"

TEST "a rewritten manifest for a pinned release is refused (exit 4)"
FAKE=$E2E_TMP/fake-pinned
mkrelease --mirror "$FAKE" --label 9.2.0 --version 9.2.0.82 --cuda 12 --platform linux-x86_64 >/dev/null
start_nginx "$FAKE"
R5=$(new_root)
expect_exit 4 cudnnctl --root "$R5" --mirror "$MIRROR_URL/" --cuda 12 --json install 9.2.0
expect_json 'd["error"]["code"]' integrity
expect_contains "$OUT" "does not match its pin"
expect_no_file "$R5/opt/cudnn/current"
[ -z "$(ls -A "$R5/var/cache/cudnnctl" 2>/dev/null)" ] || fail "an archive of the rewritten release was downloaded"

TEST "busy lock: exit 6 naming the holder; --lock-timeout waits"
R6=$(new_root)
mkdir -p "$R6/var/lib/cudnnctl"
exec {lockfd}>"$R6/var/lib/cudnnctl/lock"
echo "pid 4242: cudnnctl install 9.1.0 (test holder)" >&$lockfd
flock -x "$lockfd"
expect_exit 6 cudnnctl --root "$R6" --mirror "$URL/" --cuda 12 --lock-timeout 0 --json install 9.1.0
expect_json 'd["error"]["code"]' busy
expect_contains "$OUT" "test holder"
start=$(date +%s)
expect_exit 6 cudnnctl --root "$R6" --mirror "$URL/" --cuda 12 --lock-timeout 1 install 9.1.0
[ $(($(date +%s) - start)) -ge 1 ] || fail "--lock-timeout 1 did not wait"
# The wait is never silent: at once, who holds the lock and since when, and for how long
# this command waits (issue 37).
expect_contains "$ERR" "cudnnctl: waiting for the lock $R6/var/lib/cudnnctl/lock, held by "
# The holder is the kernel's (/proc/locks: this shell's flock) with the file's content as a hint,
# or, where /proc/locks cannot tell (a container's), the file's content alone.
if grep -qF "held by pid 4242: cudnnctl install 9.1.0 (test holder) (up to 1 s: --lock-timeout)" "$ERR"; then
  echo "  (/proc/locks did not name the holder here: the lock file's content was used)"
else
  expect_contains "$ERR" "(the lock file was last written by: pid 4242: cudnnctl install 9.1.0 (test holder)) (up to 1 s: --lock-timeout)"
fi
expect_eq "$(grep -c 'waiting for the lock' "$ERR")" 1 "wait lines in a pipe, 1 s"
# On a terminal, a line every few seconds.
E2E_LAST_CMD="script (pty): cudnnctl --lock-timeout 7 install 9.1.0"
script -qec "$(printf '%q ' "$CUDNNCTL" --root "$R6" --mirror "$URL/" --cuda 12 --lock-timeout 7 install 9.1.0)" /dev/null >"$ERR" 2>&1 </dev/null || true
expect_contains "$ERR" "cudnnctl: still waiting for the lock, 5 s of 7 s: held by "
# Interrupted while waiting: nothing changed, whatever journal the holder has.
echo '{}' >"$R6/var/lib/cudnnctl/journal.json"
"$CUDNNCTL" --root "$R6" --mirror "$URL/" --cuda 12 --lock-timeout 60 install 9.1.0 >"$OUT" 2>"$ERR" </dev/null &
waiter=$!
for _ in $(seq 200); do grep -q "waiting for the lock" "$ERR" && break; sleep 0.1; done
kill -INT "$waiter"
rc=0
wait "$waiter" || rc=$?
expect_eq "$rc" 130 "exit status of the interrupted wait"
expect_contains "$ERR" "cudnnctl: interrupted by SIGINT while waiting for the lock (held by "
expect_contains "$ERR" "): nothing was changed, the installed and active cuDNN are as they were"
expect_not_contains "$ERR" "a transaction is unfinished"
rm "$R6/var/lib/cudnnctl/journal.json"
exec {lockfd}>&-
expect_exit 0 cudnnctl --root "$R6" --mirror "$URL/" --cuda 12 --lock-timeout 0 install 9.1.0

TEST "kill -9 in the middle of an install, then a run that converges"
R7=$(new_root)
expect_exit 0 cudnnctl --root "$R7" --mirror "$URL/" --cuda 12 install 9.27.0
fifo=$E2E_TMP/pause.fifo
mkfifo "$fifo"
CUDNNCTL_TEST_PAUSE_AT="after-staging:$fifo" "$CUDNNCTL" --root "$R7" --mirror "$URL/" --cuda 12 install 9.1.0 >/dev/null 2>&1 &
victim=$!
for _ in $(seq 100); do ls "$R7"/opt/cudnn/store/.staging-* >/dev/null 2>&1 && break; sleep 0.1; done
ls -d "$R7"/opt/cudnn/store/.staging-* >/dev/null 2>&1 || fail "the install never reached its staging step"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
expect_file "$R7/var/lib/cudnnctl/journal.json"
expect_symlink "$R7/opt/cudnn/current" generations/1
expect_exit 0 cudnnctl --root "$R7" --json status
expect_json 'd["data"]["interrupted_transaction"]' true
expect_exit 0 cudnnctl --root "$R7" --mirror "$URL/" --cuda 12 --json install 9.1.0
expect_json 'd["active"]["version"]' 9.1.0.70
expect_contains "$OUT" "undid"
expect_no_file "$R7/var/lib/cudnnctl/journal.json"
[ -z "$(ls -a "$R7/opt/cudnn/store" | grep -E '^\.(staging|trash)-' || true)" ] || fail "leftovers in the store"
expect_exit 0 cudnnctl --root "$R7" verify
expect_exit 0 cudnnctl --root "$R7" --json history
expect_json '[r["result"] for r in d["data"]["history"]]' '["ok", "undone-by-recover", "ok"]'

TEST "gc keeps what rollback walks back to, not merely the newest numbers"
R8=$(new_root)
c8() { cudnnctl --root "$R8" --mirror "$URL/" --cuda 12 "$@"; }
expect_exit 0 c8 install 9.27.0 # 1
expect_exit 0 c8 install 9.1.0  # 2 (parent 1)
expect_exit 0 c8 install 8.9.7  # 3 (parent 2)
expect_exit 0 c8 rollback       # -> 2
expect_exit 0 c8 rollback       # -> 1
expect_exit 0 c8 use 8.9.7      # 4 (parent 1)
expect_exit 0 c8 --json gc --keep 2
expect_json 'd["data"]["deleted_generations"]' '[2, 3]'
expect_json 'd["data"]["deleted_entries"]' '["9.1.0.70-cuda12-linux-x86_64"]'
expect_exit 0 c8 --json rollback
expect_json 'd["active"]["version"]' 9.27.0.42

TEST "global options before or after the command; --help for every command; JSON usage errors"
expect_exit 0 cudnnctl status --root "$R" --json
expect_json 'd["active"]["version"]' 8.9.7.29
expect_exit 0 cudnnctl --json status --root "$R"
expect_json 'd["command"]' status
for cmd in install use rollback list status history verify remove gc recover; do
  expect_exit 0 cudnnctl "$cmd" --help
  expect_contains "$OUT" "$cmd"
done
expect_exit 0 cudnnctl --help
expect_contains "$OUT" "Exit codes"
expect_exit 2 cudnnctl --root "$R" --json install
expect_json 'd["ok"]' false
expect_json 'd["error"]["code"]' usage
expect_exit 2 cudnnctl --root "$R" frobnicate --json
expect_json 'd["error"]["code"]' usage
expect_exit 2 cudnnctl --root "$R" install 9.1.0 --bogus-flag
[ "$(wc -l <"$ERR")" -eq 1 ] || fail "a usage error must be one line on stderr: $(cat "$ERR")"
expect_contains "$ERR" "cudnnctl: error:"
