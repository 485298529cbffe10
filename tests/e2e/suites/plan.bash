# The plan, the steps and the summary (issue 19, observations 1 and 7): --dry-run prints, in
# order, what the command would do (the same list as the JSON "actions"); executed commands
# print their steps on stderr as they happen and end with a one-line summary; less noise.
# Terminal output checked in a real pty (script). Temporary roots, file:// and nginx mirrors.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl
std_mirror_args
R9=$(release_dir 9.1.0 12)
command -v script >/dev/null || skip "script(1) is needed for the pty checks"

# A root with a hand-copied (cp without -P) cuDNN 9.1.0 in /usr/local/cuda: install adopts it.
handmade_root() {
  local r
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/pins.d"
  cp "$M/SHA256SUMS" "$r/etc/cudnnctl/pins.d/test-mirror.sha256"
  cuda_home_plain "$r"
  hand_copy "$R9" "$r/usr/local/cuda" cp
  echo "$r"
}

# ---------------------------------------------------------------------------------------------
TEST "install --dry-run: the plan lists adopt, download (host, bytes), disk, entry, generation, loader, links, smoke"
R=$(handmade_root)
BEFORE=$(tree_snapshot "$R")
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" --dry-run install 8.9.7
expect_eq "$(tree_snapshot "$R")" "$BEFORE" "the root after install --dry-run"
expect_contains "$OUT" "plan (--dry-run: nothing is changed):"
plan=$(sed -n 's/^  [0-9]*\. //p' "$OUT")
n=$(grep -c . <<<"$plan")
[ "$n" -ge 8 ] || fail "only $n plan steps: $plan"
# In the order they would happen.
order=""
while IFS= read -r line; do
  case $line in
  "would adopt the unmanaged cuDNN 9.1.0 in /usr/local/cuda ("*" files) before installing"*"generation 1") order+=A ;;
  "would download cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz from a local file: "*" bytes ("*) order+=D ;;
  "would need about "*" of disk in $R/opt/cudnn/store ("*" free)") order+=S ;;
  "would install cuDNN 8.9.7.29 (CUDA 12, linux-x86_64) as store entry $R/opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64") order+=E ;;
  "would create generation 2 (parent: nothing active) and point $R/opt/cudnn/current at it") order+=G ;;
  "would write the loader drop-in $R/etc/ld.so.conf.d/00-cudnnctl.conf naming /opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64/lib, then run ldconfig") order+=L ;;
  "would link the entry's cudnn*.h and libcudnn* names in $R/usr/local/cuda/include, $R/usr/local/cuda/lib64 (CUDA-home links)") order+=H ;;
  "would run the GPU smoke test on every visible GPU"*) order+=K ;;
  esac
done <<<"$plan"
expect_eq "$order" ADSEGLHK "the plan's steps in order (A adopt, D download, S space, E entry, G generation, L loader, H links, K smoke)"
expect_contains "$OUT" "would install and activate cuDNN 8.9.7.29 (CUDA 12, linux-x86_64)"
# One source: the human plan is the JSON "actions", line for line.
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" --dry-run install 8.9.7 --json
# (The free space is read by each run: other processes writing to the disk may move it.)
nofree() { sed -E 's/\([0-9.]+ [KMGT]?i?B free\)/(N free)/'; }
expect_eq "$(json_get '"\n".join(d["actions"])' | nofree)" "$(nofree <<<"$plan")" "the human plan against the JSON actions"
expect_json 'd["data"]["archive"]["size"] > 0' true

TEST "-v adds the detail --json has: URL, sha256, the adopted files"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" --dry-run install 8.9.7 --json
url=$(json_get 'd["data"]["archive"]["url"]')
sha=$(json_get 'd["data"]["archive"]["sha256"]')
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" -v --dry-run install 8.9.7
expect_contains "$OUT" "       $url"
expect_contains "$OUT" "       sha256 $sha"
expect_contains "$OUT" "       /usr/local/cuda/lib64/libcudnn.so.9"
[ "$(grep -c '^       ' "$OUT")" -gt 10 ] || fail "-v shows little detail: $(cat "$OUT")"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" --dry-run install 8.9.7
grep -q '^       ' "$OUT" && fail "without -v the plan shows detail: $(cat "$OUT")"

TEST "install: the steps on stderr as they happen (adoption before the install's smoke test), a summary line"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 8.9.7
adopted=$(grep -n '^\* adopted cuDNN 9.1.0 from /usr/local/cuda (.* files) as generation 1' "$ERR" | cut -d: -f1)
smoke=$(grep -n '^running the GPU smoke test on 8.9.7.29' "$ERR" | cut -d: -f1)
[ -n "$adopted" ] && [ -n "$smoke" ] || fail "steps missing on stderr: $(cat "$ERR")"
[ "$adopted" -lt "$smoke" ] || fail "the adoption is said after the next version's smoke test: $(cat "$ERR")"
grep -q '^\* downloaded and verified cudnn-linux-x86_64-8.9.7.29' "$ERR" || fail "no download step: $(cat "$ERR")"
grep -q "^\* loader drop-in $R/etc/ld.so.conf.d/00-cudnnctl.conf names /opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64/lib (inside the root); ran ldconfig" "$ERR" ||
  fail "no loader step: $(cat "$ERR")"
# Under --root a path a user can open is the host's; one as the root sees it says so (issue 37,
# item 5).
grep -q "^\* extracted 8.9.7.29 (CUDA 12, linux-x86_64) into $R/opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64\$" "$ERR" ||
  fail "no host path for the entry: $(cat "$ERR")"
grep -q "^\* CUDA home: .* removed in $R/usr/local/cuda/include, $R/usr/local/cuda/lib64\$" "$ERR" ||
  fail "no host paths for the CUDA home: $(cat "$ERR")"
grep -q "^\* loader check: the ld.so cache under $R resolves libcudnn.so.8 to /opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64/lib/libcudnn.so.8 (inside the root)\$" "$ERR" ||
  fail "the loader check does not say whose path it names: $(cat "$ERR")"
grep -q '^\* activated generation 2 (8.9.7.29-cuda12-linux-x86_64)' "$ERR" || fail "no generation step: $(cat "$ERR")"
# The result line names the build, the summary after it only what is new (issue 37, item 8:
# three closing lines said nearly the same).
expect_eq "$(tail -n 2 "$OUT" | head -n 1)" "cuDNN 8.9.7.29 (CUDA 12, linux-x86_64) is active as generation 2: $R/opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64" "the result line"
last=$(tail -n 1 "$OUT")
case $last in
"done in "*" s; store "*", download cache "*" in $R/var/cache/cudnnctl (\`cudnnctl gc --cache\` empties it)") ;;
*) fail "no summary line at the end of stdout: $(cat "$OUT")" ;;
esac
expect_eq "$(cat "$OUT" "$ERR" | grep -c 'generation 2')" 2 "lines naming generation 2 (the step and the result)"
expect_eq "$(grep -c 'download cache' "$OUT")" 1 "lines about the download cache"
# Nothing of it under --json: stdout one object.
R2=$(handmade_root)
expect_exit 0 cudnnctl --root "$R2" "${MIRROR[@]}" install 8.9.7 --json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" || fail "stdout is not one JSON object"
[ ! -s "$ERR" ] || fail "--json printed on stderr: $(cat "$ERR")"

TEST "noise: one summary warning for a non -P adopt (the files under -v and in --json)"
R3=$(handmade_root)
expect_exit 0 cudnnctl --root "$R3" "${MIRROR[@]}" install 8.9.7
expect_eq "$(grep -c 'regular file' "$ERR")" 1 "warnings about regular files where links belong"
expect_contains "$ERR" "libraries in /usr/local/cuda are regular files where symlinks belong"
R4=$(handmade_root)
expect_exit 0 cudnnctl --root "$R4" "${MIRROR[@]}" -v install 8.9.7
[ "$(grep -c '^  - .* is a regular file where a symlink to ' "$ERR")" -ge 2 ] || fail "-v lists no files: $(cat "$ERR")"
R5=$(handmade_root)
expect_exit 0 cudnnctl --root "$R5" "${MIRROR[@]}" install 8.9.7 --json
[ "$(json_get 'len([w for w in d["warnings"] if "is a regular file where a symlink to" in w])')" -ge 2 ] ||
  fail "--json lost the per-file warnings"

TEST "noise: the smoke-skip message once per install (stderr), not also on stdout"
expect_exit 0 cudnnctl --root "$R3" "${MIRROR[@]}" install 9.27.0
expect_eq "$(cat "$OUT" "$ERR" | grep -c 'smoke test.*skipped')" 1 "lines saying the smoke test was skipped"
grep -q 'smoke test' "$OUT" && fail "the smoke skip is on stdout: $(cat "$OUT")"

TEST "noise: doctor says soname-not-symlink once for a cp copy, naming each file, and suggests adopt (issue 37, item 8)"
RD=$(handmade_root)
run cudnnctl --root "$RD" doctor
[ "$RC" -eq 0 ] || [ "$RC" -eq 8 ] || fail "doctor exit $RC"
expect_eq "$(grep -c 'soname-not-symlink:' "$OUT")" 1 "soname-not-symlink findings"
for lib in libcudnn.so.9 libcudnn_ops.so.9 libcudnn_graph.so.9; do
  grep 'soname-not-symlink:' "$OUT" | grep -q "[ (]$lib[,)]" || fail "the finding does not name $lib: $(cat "$OUT")"
  expect_contains "$OUT" "/usr/local/cuda/lib64/$lib"
done
expect_contains "$OUT" "fix: \`cudnnctl adopt\` takes this copy over"
expect_contains "$OUT" "problem(s) in this directory: see the findings below"
run cudnnctl --root "$RD" --json doctor
expect_json '[len(f["paths"]) >= 3 for f in d["data"]["findings"] if f["code"] == "soname-not-symlink"]' '[true]'

TEST "use and rollback --dry-run: generation, loader, CUDA-home links counted"
expect_exit 0 cudnnctl --root "$R3" --dry-run use 8.9.7
expect_contains "$OUT" "would create generation 4 (parent: generation 3)"
expect_contains "$OUT" "would change CUDA-home links: "
expect_contains "$OUT" "would run the GPU smoke test"
expect_exit 0 cudnnctl --root "$R3" --dry-run rollback
expect_contains "$OUT" "would switch $R3/opt/cudnn/current from generation 3 to generation 2 (no download, no smoke test)"
expect_contains "$OUT" "would change CUDA-home links: "
grep -v 'no smoke test' "$OUT" | grep -q 'smoke' && fail "rollback plans a smoke test: $(cat "$OUT")"
expect_exit 0 cudnnctl --root "$R3" -v --dry-run rollback
expect_contains "$OUT" "       /usr/local/cuda/lib64/libcudnn.so.8 -> "
expect_exit 0 cudnnctl --root "$R3" rollback
expect_contains "$ERR" "* switched from generation 3 to generation 2"
case $(tail -n 1 "$OUT") in "done in "*" s; store "*", download cache "*) ;; *) fail "rollback: no summary: $(cat "$OUT")" ;; esac

TEST "noise: history shows the command without --root and the global options (--json keeps argv)"
expect_exit 0 cudnnctl --root "$R3" history
grep -q -- '--root\|--mirror' "$OUT" && fail "history repeats the global options: $(cat "$OUT")"
grep -qE '  install 9\.27\.0  ok  ' "$OUT" || fail "history lacks the command: $(cat "$OUT")"
grep -qE '  rollback  ok  ' "$OUT" || fail "history lacks the rollback: $(cat "$OUT")"
expect_exit 0 cudnnctl --root "$R3" history --json
expect_json 'any("--root" in r.get("argv", "") for r in d["data"]["history"])' true

TEST "noise: status while a live process holds the lock says a transaction is in progress (pid)"
expect_exit 0 cudnnctl --root "$R3" status --json
expect_json 'd["data"]["in_progress"]' null
# A transaction in flight: its journal, and the lock held by a live process.
printf '{"txid":"t","command":"install","argv":"install 9.1.0","phase":"prepare"}\n' >"$R3/var/lib/cudnnctl/journal.json"
flock -o "$R3/var/lib/cudnnctl/lock" sleep 30 &
HOLDER=$!
for _ in $(seq 50); do grep -q FLOCK /proc/locks && break; sleep 0.1; done
expect_exit 0 cudnnctl --root "$R3" status
expect_contains "$OUT" "running:  pid "
grep -q 'interrupted transaction is pending' "$OUT" "$ERR" && fail "a running transaction called interrupted: $(cat "$OUT" "$ERR")"
expect_exit 0 cudnnctl --root "$R3" status --json
expect_json 'd["data"]["interrupted_transaction"]' false
expect_json 'd["data"]["in_progress"].startswith("pid ")' true
kill "$HOLDER" 2>/dev/null || true
wait "$HOLDER" 2>/dev/null || true
expect_exit 0 cudnnctl --root "$R3" status --json
expect_json 'd["data"]["interrupted_transaction"]' true
expect_json 'd["data"]["in_progress"]' null
rm -f "$R3/var/lib/cudnnctl/journal.json"

TEST "pty: the progress bar is labelled download, ends with a total; steps and summary on the terminal"
start_nginx "$M"
R6=$(new_root)
mkdir -p "$R6/etc/cudnnctl/pins.d"
cp "$M/SHA256SUMS" "$R6/etc/cudnnctl/pins.d/test-mirror.sha256"
script -qec "$(printf '%q ' "$CUDNNCTL" --root "$R6" --mirror "$MIRROR_URL/" --cuda 12 install 9.1.0)" /dev/null >"$E2E_TMP/pty.out" </dev/null ||
  fail "install in a pty failed: $(cat "$E2E_TMP/pty.out")"
tr '\r' '\n' <"$E2E_TMP/pty.out" >"$E2E_TMP/pty.lines"
grep -q '^download \(\[\| \)' "$E2E_TMP/pty.lines" || fail "no bar labelled download in the pty: $(cat -v "$E2E_TMP/pty.out")"
grep -qE '^extract .*\| download ([0-9]|[1-9][0-9])%' "$E2E_TMP/pty.lines" &&
  fail "the bar is labelled extract while the download drives it: $(cat -v "$E2E_TMP/pty.out")"
grep -qE '^download [0-9.]+ [KMG]?i?B in [0-9:]+, .*; extract ' "$E2E_TMP/pty.lines" || fail "no total at the end: $(cat -v "$E2E_TMP/pty.out")"
grep -q '^\* activated generation 1' "$E2E_TMP/pty.lines" || fail "no step lines in the pty"
grep -q '^done in .* s; store .*, download cache ' "$E2E_TMP/pty.lines" || fail "no summary in the pty"
# No line glued to the bar (issue 37, item 8): every step starts a line of its own.
grep -q '.\* downloaded and verified' "$E2E_TMP/pty.lines" && fail "a step glued to the bar: $(cat -v "$E2E_TMP/pty.out")"
grep -q '^\* downloaded and verified cudnn-linux-x86_64-9.1.0.70' "$E2E_TMP/pty.lines" || fail "no download step in the pty"
# In a pipe: no bar (no carriage returns), the same steps and summary.
R7=$(new_root)
mkdir -p "$R7/etc/cudnnctl/pins.d"
cp "$M/SHA256SUMS" "$R7/etc/cudnnctl/pins.d/test-mirror.sha256"
cudnnctl --root "$R7" --mirror "$MIRROR_URL/" --cuda 12 install 9.1.0 2>&1 | cat >"$E2E_TMP/pipe.out"
grep -q $'\r' "$E2E_TMP/pipe.out" && fail "a progress bar in a pipe"
grep -q '^\* activated generation 1' "$E2E_TMP/pipe.out" || fail "no step lines in a pipe"
grep -q '^done in .* s; store .*, download cache ' "$E2E_TMP/pipe.out" || fail "no summary in a pipe"
stop_nginx

