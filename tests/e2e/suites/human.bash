# The human interface (issue 19): one condition, one exit code and one message naming the
# real ways out; mirror problems are exit 3 naming the URL and what came back; state errors
# have their documented error.code (docs/ERRORS.md); discovery (search, latest, did-you-mean);
# help and version; offline archives. Everything under temporary roots, mirrors on loopback.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
cr_templates

# err_is CODE CATEGORY EXIT: the --json error in $OUT; stdout one object, the message one line.
err_is() {
  expect_json 'd["error"]["code"]' "$1"
  expect_json 'd["error"]["category"]' "$2"
  expect_json 'd["error"]["exit_code"]' "$3"
  expect_json 'd["ok"]' false
  grep -qF "| \`$1\` | $3 | $2 |" "$E2E_DIR/../../docs/ERRORS.md" || fail "code $1 is not in docs/ERRORS.md"
}
# msg_has STRING: the --json error message contains STRING.
msg_has() {
  local msg
  msg=$(json_get 'd["error"]["message"]')
  grep -qF -- "$1" <<<"$msg" || fail "error message lacks '$1': $msg"
}

M="file://$CR_MIRROR"
# A root whose CUDA toolkit is CUDA 13.0 (the pip layout: no version.json, the header only).
R13=$(cr_copy empty cuda13)
mkdir -p "$R13/usr/local/cuda/include"
echo '#define CUDART_VERSION 13000' >"$R13/usr/local/cuda/include/cuda_runtime_api.h"
BEFORE=$(tree_snapshot "$R13")

TEST "CUDA 13 toolkit, release without a CUDA 13 build: exit 7, no_cuda_build, with and without --cuda"
for v in 9.1.0 8.9.7; do
  expect_exit 7 cudnnctl --root "$R13" --mirror "$M" --json install "$v"
  err_is no_cuda_build requirement 7
  plain=$(json_get 'd["error"]["message"]')
  expect_exit 7 cudnnctl --root "$R13" --mirror "$M" --json --cuda 12 install "$v"
  err_is no_cuda_build requirement 7
  flagged=$(json_get 'd["error"]["message"]')
  expect_eq "$flagged" "$plain" "the message of the same condition found with --cuda 12"
  msg_has "has no CUDA 13 build for linux-x86_64"
  msg_has "a release with a CUDA 13 build (9.27.0" # from the built-in release list
  msg_has "--cuda 12 --force"
  msg_has "a CUDA 11.x or 12.x toolkit"
  expect_exit 7 cudnnctl --root "$R13" --mirror "$M" --cuda 12 install "$v"
  expect_eq "$(wc -l <"$ERR")" 1 "lines on stderr"
  expect_contains "$ERR" "Ways out:"
done
expect_eq "$(tree_snapshot "$R13")" "$BEFORE" "the root after the refusals"

TEST "the way out the message names works: --cuda 12 --force (dry run)"
expect_exit 0 cudnnctl --root "$R13" --mirror "$M" --json --cuda 12 --force --dry-run install 9.1.0
expect_json 'd["data"]["archive"]["cuda"]' 12
expect_json 'any("--force" in w for w in d["warnings"])' true

TEST "--cuda N of a variant the release lacks, no toolkit: exit 7 naming the other builds"
RE=$(cr_copy empty nocuda)
expect_exit 7 cudnnctl --root "$RE" --mirror "$M" --json --cuda 13 install 9.1.0
err_is no_cuda_build requirement 7
msg_has "with \`--cuda 11\` or \`--cuda 12\`"
expect_exit 7 cudnnctl --root "$RE" --mirror "$M" --json --cuda 11 install 9.27.0
err_is no_cuda_build requirement 7

# --- mirrors ---------------------------------------------------------------------------------
WEB=$E2E_TMP/web
mkdir -p "$WEB/redist" "$WEB/portal"
cp -a "$CR_MIRROR"/. "$WEB/redist/"
for f in "$CR_MIRROR"/redistrib_*.json; do
  printf '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Corporate proxy login</body></html>\n' \
    >"$WEB/portal/$(basename "$f")"
done
start_nginx "$WEB"

TEST "wrong mirror path for a known release: exit 3 mirror_not_found naming the URL and the 404"
expect_exit 3 cudnnctl --root "$RE" --mirror "$MIRROR_URL/wrong/path/" --json --cuda 12 install 8.9.7
err_is mirror_not_found network 3
msg_has "$MIRROR_URL/wrong/path/redistrib_8.9.7.json"
msg_has "404"
json_get 'd["error"]["message"]' | grep -q "unknown cuDNN version" && fail "called a known release unknown"
expect_exit 3 cudnnctl --root "$RE" --mirror "$MIRROR_URL/wrong/path/" --cuda 12 install 8.9.7
expect_eq "$(wc -l <"$ERR")" 1 "lines on stderr"

TEST "a version nobody knows: exit 2 unknown_version with a did-you-mean"
expect_exit 2 cudnnctl --root "$RE" --mirror "$MIRROR_URL/redist/" --json --cuda 12 install 9.1.9
err_is unknown_version usage 2
msg_has "did you mean 9.1.0"
msg_has "$MIRROR_URL/redist/redistrib_9.1.9.json"

TEST "a mirror answering an HTML login page: exit 3 mirror_not_manifest naming a proxy or portal"
expect_exit 3 cudnnctl --root "$RE" --mirror "$MIRROR_URL/portal/" --json --cuda 12 install 9.1.0
err_is mirror_not_manifest network 3
msg_has "$MIRROR_URL/portal/redistrib_9.1.0.json answered an HTML page"
msg_has "proxy or captive portal"
msg_has "Sign in"
# The next mirror is still tried: a good one behind the portal installs (dry run).
expect_exit 0 cudnnctl --root "$RE" --mirror "$MIRROR_URL/portal/" --mirror "$MIRROR_URL/redist/" --json \
  --cuda 12 --dry-run install 9.1.0

# --- state errors ------------------------------------------------------------------------------
R1=$(cr_copy one state1) # 9.1.0 active as generation 1
R2=$(cr_copy two state2) # 9.1.0 = gen 1, 8.9.7 = gen 2 (active)
TEST "state errors: documented codes, exit 2"
state() { # ROOT CODE ARGS...
  local r=$1 code=$2
  shift 2
  expect_exit 2 cudnnctl --root "$r" --json "$@"
  err_is "$code" usage 2
}
state "$RE" nothing_active env
state "$RE" nothing_active verify
state "$RE" nothing_active backup --output "$E2E_TMP/b.tar.zst"
state "$RE" nothing_to_roll_back rollback
state "$R1" nothing_to_roll_back rollback
state "$R2" no_such_generation rollback --to 7
state "$R2" not_installed use 9.27.0
state "$R2" not_installed remove 9.27.0
state "$R2" is_active remove 8.9.7

# --- discovery -----------------------------------------------------------------------------------
TEST "search: releases from the mirror's directory index and the built-in list, with sizes and marks"
expect_exit 0 cudnnctl --root "$R2" --mirror "$MIRROR_URL/redist/" --cuda 12 --json search
expect_json 'd["command"]' search
expect_json 'd["data"]["mirrors_listed"]' "[\"$MIRROR_URL/redist/\"]"
expect_json '[r["label"] for r in d["data"]["releases"] if "'"$MIRROR_URL"'/redist/" in r["sources"]]' \
  '["8.9.6.50", "8.9.7", "9.1.0", "9.27.0"]'
size=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["cudnn"]["linux-x86_64"]["cuda13"]["size"])' \
  "$CR_MIRROR/redistrib_9.27.0.json")
expect_json '[a["size"] for r in d["data"]["releases"] if r["label"] == "9.27.0" for a in r["archives"] if a["platform"] == "linux-x86_64" and a["cuda"] == 13]' "[$size]"
expect_json '[(r["installed"], r["active"], r["pinned"]) for r in d["data"]["releases"] if r["label"] == "8.9.7"]' '[[true, true, true]]'
expect_json '[(r["installed"], r["active"]) for r in d["data"]["releases"] if r["label"] == "9.1.0"]' '[[true, false]]'
expect_json '[r["sources"] for r in d["data"]["releases"] if r["label"] == "9.2.0"]' '[["built-in"]]'
expect_json '[r["date"] for r in d["data"]["releases"] if r["label"] == "9.2.0"]' '["2024-06-06"]'
expect_exit 0 cudnnctl --root "$R2" --mirror "$MIRROR_URL/redist/" --cuda 12 search
expect_contains "$OUT" "*ip 8.9.7"
expect_contains "$OUT" " ip 9.1.0"
grep -q "^  p 9.2.0 .*CUDA 12 717.7 MiB" "$OUT" || fail "the built-in 9.2.0 is not listed with its CUDA 12 size"
# Where each release can come from (issue 37, item 7): the built-in list's own are marked.
grep -q "^  p 9.2.0 .*CUDA 12 717.7 MiB.*  (not on the mirror)$" "$OUT" || fail "9.2.0 is not marked as missing from the mirror"
grep "^ ip 9.1.0 " "$OUT" | grep -qv "not on the mirror" || fail "9.1.0, which the mirror serves, is marked"
expect_contains "$OUT" "(not on the mirror): in cudnnctl's built-in list only; to install one, mirror it first (\`cudnnctl mirror VERSION --to DIR\` where NVIDIA's server is reachable)"
# When the built-in list was made: the newest release it knows.
expect_contains "$OUT" "built-in list: 25 releases, made from NVIDIA's redistrib manifests up to 9.27.0 (released 2026-09-29); newer releases are found on a mirror"
# The gaps between the manifests it was made from are said (issue 37, item 8).
expect_contains "$OUT" "  it lacks 9.11, 9.14 to 9.19, 9.21, 9.23 to 9.26 (no manifest of theirs was at hand when it was made): a mirror that has them lists them"
# Installing one of them says what the mirror serves instead of calling its URL wrong.
expect_exit 3 cudnnctl --root "$R2" --mirror "$MIRROR_URL/redist/" --cuda 12 --json install 9.2.0
err_is mirror_not_found network 3
expect_json 'd["error"]["message"]' "$MIRROR_URL/redist/ serves 8.9.6.50, 8.9.7, 9.1.0, 9.27.0 but not 9.2.0: mirror it there (\`cudnnctl mirror 9.2.0 --to DIR\` where NVIDIA's server is reachable) or add a --mirror that has it (\`cudnnctl search\` marks the releases no mirror serves)"

TEST "search PATTERN: a version prefix; a file:// mirror is listed as a directory; read-only"
BEFORE2=$(tree_snapshot "$R2")
expect_exit 0 cudnnctl --root "$R2" --mirror "file://$CR_MIRROR" --json search 9.1
expect_json 'sorted(set(r["label"] for r in d["data"]["releases"]))' '["9.1.0", "9.1.1"]'
expect_json '[r["sources"] for r in d["data"]["releases"] if r["label"] == "9.1.0"]' "[[\"file://$CR_MIRROR\", \"built-in\"]]"
expect_exit 0 cudnnctl --root "$R2" --mirror "file://$CR_MIRROR" --json search latest
expect_json '[r["label"] for r in d["data"]["releases"]]' '["9.27.0"]'
expect_eq "$(tree_snapshot "$R2")" "$BEFORE2" "the root after search"

TEST "install latest / 9 / 9.1 / 8: the newest release the mirror offers for this CUDA and platform"
for want in latest:9.27.0.42 9:9.27.0.42 9.1:9.1.0.70 8:8.9.7.29 8.9:8.9.7.29; do
  expect_exit 0 cudnnctl --root "$RE" --mirror "$MIRROR_URL/redist/" --cuda 12 --json --dry-run install "${want%%:*}"
  expect_json 'd["data"]["archive"]["version"]' "${want#*:}"
  expect_json 'd["data"]["requested"]' "${want%%:*}"
done
expect_exit 0 cudnnctl --root "$RE" --mirror "$MIRROR_URL/redist/" --cuda 11 --json --dry-run install latest
expect_json 'd["data"]["archive"]["version"]' 9.1.0.70 # 9.27.0 has no CUDA 11 build
expect_exit 0 cudnnctl --root "$R13" --mirror "$MIRROR_URL/redist/" --json --dry-run install 9
expect_json '[d["data"]["archive"]["version"], d["data"]["archive"]["cuda"]]' '["9.27.0.42", 13]'
expect_exit 2 cudnnctl --root "$RE" --mirror "$MIRROR_URL/redist/" --cuda 12 --json --dry-run install 7
err_is unknown_version usage 2
msg_has "$MIRROR_URL/redist/"
msg_has "cudnnctl search"
TEST "install latest really installs it"
expect_exit 0 cudnnctl --root "$RE" --mirror "$MIRROR_URL/redist/" --cuda 12 --json install latest
expect_json 'd["active"]["version"]' 9.27.0.42

TEST "no toolkit, no --cuda: the active build's CUDA major is kept, or the change is a warning (issue 37, item 6)"
RA=$(cr_copy empty activecuda)
expect_exit 0 cudnnctl --root "$RA" --mirror "$M" --cuda 12 --json install 9.1.0
expect_exit 0 cudnnctl --root "$RA" --mirror "$M" --json --dry-run install 9.27.0
expect_json 'd["data"]["archive"]["cuda"]' 12 # the newest variant would be 13
expect_json 'd["warnings"]' '[]'
expect_exit 0 cudnnctl --root "$RA" --mirror "$M" -v --dry-run install 9.27.0
expect_contains "$ERR" "CUDA major 12 from the active build (9.1.0); --cuda N chooses another"
expect_exit 0 cudnnctl --root "$RA" --mirror "$M" --cuda 13 --json --dry-run install 9.27.0
expect_json 'd["data"]["archive"]["cuda"]' 13 # --cuda still decides
RB=$(cr_copy empty activecuda11)
expect_exit 0 cudnnctl --root "$RB" --mirror "$M" --cuda 11 --json install 9.1.0
expect_exit 0 cudnnctl --root "$RB" --mirror "$M" --json --dry-run install 9.27.0
expect_json 'd["data"]["archive"]["cuda"]' 13
expect_json 'd["warnings"]' '["cuDNN 9.27.0.42 has no CUDA 11 build, the active build'"'"'s (9.1.0): this is its CUDA 13 build, which needs a CUDA 13 runtime; give --cuda N to choose"]'

TEST "no toolkit, nothing active, no --cuda: one warning naming the CUDA major taken (issue 37, item 8)"
RC_=$(cr_copy empty nocuda)
expect_exit 0 cudnnctl --root "$RC_" --mirror "$M" install 9.1.0 --no-smoke
expect_eq "$(grep -c 'warning: .*CUDA' "$ERR")" 1 "warnings about the CUDA major"
expect_contains "$ERR" "cudnnctl: warning: cuDNN 9.1.0 for linux-x86_64: no CUDA major requested or detected; using CUDA 12, the highest of CUDA 11, 12 (choose with --cuda 11 or --cuda 12)"
expect_exit 0 cudnnctl --root "$(cr_copy empty nocuda-v)" --mirror "$M" -v install 9.1.0 --no-smoke
expect_contains "$ERR" "no CUDA toolkit found under "

# --- help and version --------------------------------------------------------------------------
TEST "install --help shows the global options and an example"
expect_exit 0 cudnnctl install --help
expect_contains "$OUT" "Global options (before or after the command):"
expect_contains "$OUT" "--mirror"
expect_contains "$OUT" "--dry-run"
expect_contains "$OUT" "Example: cudnnctl install 9.2.0 --dry-run"
expect_contains "$OUT" "--no-smoke"

TEST "help names values as a user would, never CLI11's types and checks; the top-level help has an example (issue 37, item 8)"
expect_exit 0 cudnnctl --help
expect_contains "$OUT" "Example: cudnnctl install 9.2.0; cudnnctl rollback; cudnnctl status; cudnnctl help install"
grep -E '^  --cuda N +CUDA major' "$OUT" >/dev/null || fail "--cuda N: $(grep -- '--cuda' "$OUT")"
grep -E '^  --root DIR +Directory' "$OUT" >/dev/null || fail "--root DIR: $(grep -- '--root' "$OUT")"
grep -E '^  --mirror URL \.\.\. +Mirror' "$OUT" >/dev/null || fail "--mirror URL ...: $(grep -- '--mirror' "$OUT")"
grep -E '^  --lock-timeout SECONDS +Seconds' "$OUT" >/dev/null || fail "--lock-timeout SECONDS: $(grep -- '--lock-timeout' "$OUT")"
for c in "" install use rollback status list history verify search remove gc purge recover smoke mirror adopt backup restore env doctor recommend check bench help completion; do
  # shellcheck disable=SC2086 # no command: the top-level help
  expect_exit 0 cudnnctl $c --help
  grep -nE 'TEXT|INT:INT|FLOAT:FLOAT|:FILE|:DIR| in \[[0-9.]+ - [0-9.]+\]|Excludes:|Needs:' "$OUT" &&
    fail "CLI11 internals in \`cudnnctl $c --help\`"
done
expect_exit 0 cudnnctl env --help
expect_contains "$OUT" "--shell sh|fish|dockerfile"
expect_exit 0 cudnnctl rollback --help
expect_contains "$OUT" "--to GENERATION|ENTRY"
expect_exit 0 cudnnctl mirror --help
expect_contains "$OUT" "--to DIR (required)"
expect_exit 0 cudnnctl completion man
expect_not_contains "$OUT" "docs/ERRORS.md"
expect_contains "$OUT" 'fBconfirmation_required\fR (2)'

TEST "an option of a command before the command: a clear message, exit 2"
expect_exit 2 cudnnctl --root "$RE" --no-smoke install 9.1.0
expect_contains "$ERR" "--no-smoke is an option of \`install\`, not a global option: put it after the command"
expect_eq "$(wc -l <"$ERR")" 1 "lines on stderr"
# Flags before the command take no value: the command's own options are still its own.
expect_exit 2 cudnnctl --root "$RE" --json -q gc --keep 0
msg_has "--keep: Value 0 not in range"
expect_exit 2 cudnnctl --root "$RE" --json -q instal 9.1.0
msg_has 'unknown command "instal" (did you mean install?)'
# The documented placements work: global options before or after the command.
expect_exit 0 cudnnctl --root "$RE" --json status
expect_exit 0 cudnnctl status --root "$RE" --json
expect_json 'd["command"]' status

TEST "unknown command: did-you-mean, hidden commands never offered"
expect_exit 2 cudnnctl --root "$RE" instal 9.1.0
expect_contains "$ERR" 'unknown command "instal" (did you mean install?)'
expect_not_contains "$ERR" "debug-sha256"
expect_exit 2 cudnnctl --root "$RE" --json frobnicate
err_is usage usage 2
expect_not_contains "$OUT" "debug-sha256"

TEST "did-you-mean for a mistyped option and for latest (issue 37, item 8)"
expect_exit 2 cudnnctl --root "$RE" install 9.1.0 --no-smok
expect_eq "$(cat "$ERR")" 'cudnnctl: error: unknown option --no-smok (did you mean --no-smoke?) for `cudnnctl install` (see cudnnctl --help)' "stderr"
expect_exit 2 cudnnctl --root "$RE" --verbos status
expect_contains "$ERR" 'unknown option --verbos (did you mean --verbose?)'
expect_exit 2 cudnnctl --root "$RE" --mirror "$M" --cuda 12 install lates
expect_eq "$(cat "$ERR")" 'cudnnctl: error: invalid VERSION "lates" (did you mean latest?): give a release label like 9.2.0 or a full version like 9.2.0.82' "stderr"

TEST "cudnnctl help [COMMAND]"
expect_exit 0 cudnnctl --root "$RE" help
expect_contains "$OUT" "search"
expect_not_contains "$OUT" "debug-sha256"
expect_exit 0 cudnnctl --root "$RE" help install
expect_contains "$OUT" "cudnnctl install"
expect_contains "$OUT" "--archive"
expect_exit 0 cudnnctl --root "$RE" --json help rollback
expect_json '"--to" in d["data"]["help"]' true
expect_exit 2 cudnnctl --root "$RE" help serch
expect_contains "$ERR" "did you mean search"

TEST "--json --help is one JSON object"
expect_exit 0 cudnnctl --json --help
expect_json '"Exit codes" in d["data"]["help"]' true
expect_exit 0 cudnnctl install --help --json
expect_json '"--components" in d["data"]["help"]' true

TEST "--version: version, commit, libraries; --version --json"
expect_exit 0 cudnnctl --version
grep -Eq '^cudnnctl [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{7,}\)$' "$OUT" || fail "first line: $(head -1 "$OUT")"
expect_contains "$OUT" "libcurl "
expect_contains "$OUT" "libarchive "
expect_contains "$OUT" "openssl "
expect_contains "$OUT" "liblzma "
expect_exit 0 cudnnctl --version --json
expect_json 'sorted(d["libraries"])' '["libarchive", "libcurl", "liblzma", "openssl"]'
expect_json 'len(d["commit"]) >= 7 and all(c in "0123456789abcdef" for c in d["commit"])' true

# --- offline archives --------------------------------------------------------------------------
ARCH=$CR_MIRROR/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz
OFFLINE=(--mirror http://127.0.0.1:9/) # nothing listens: an air-gapped box
RA=$(cr_copy empty offline)
TEST "install --archive FILE without VERSION, offline: checked against the shipped manifest"
# The test archive is not NVIDIA's 8.9.7.29, so the shipped manifest refuses it: exit 4, which
# proves it was consulted without the network (was exit 3 "download of redistrib failed").
BEFOREA=$(tree_snapshot "$RA/etc")
expect_exit 4 cudnnctl --root "$RA" "${OFFLINE[@]}" --json install --archive "$ARCH"
expect_json 'd["error"]["code"]' integrity
expect_json 'd["data"]["requested"]' 8.9.7.29
expect_json 'd["data"]["archive"]["size"]' \
  "$(python3 -c 'import json; print([r for r in json.load(open("'"$E2E_DIR"'/../../manifests/releases.json"))["releases"] if r["label"] == "8.9.7.29"][0]["archives"]["linux-x86_64"]["12"]["size"])')"
expect_no_file "$RA/opt/cudnn/current"
expect_eq "$(ls -A "$RA/opt/cudnn/store" 2>/dev/null)" "" "store entries after the refusal"
expect_eq "$(tree_snapshot "$RA/etc")" "$BEFOREA" "etc after the refusal"

TEST "install --archive FILE --manifest FILE offline: version from the file name, installed"
expect_exit 0 cudnnctl --root "$RA" "${OFFLINE[@]}" --manifest "$CR_MIRROR/redistrib_8.9.7.json" --json \
  install --archive "$ARCH"
expect_json 'd["active"]["version"]' 8.9.7.29
expect_json 'd["active"]["cuda"]' 12

TEST "install --archive of a release nobody vouches for: a clear message"
cp "$ARCH" "$E2E_TMP/cudnn-linux-x86_64-9.98.0.1_cuda12-archive.tar.xz"
expect_exit 3 cudnnctl --root "$RA" "${OFFLINE[@]}" --json install --archive "$E2E_TMP/cudnn-linux-x86_64-9.98.0.1_cuda12-archive.tar.xz"
msg_has "neither a mirror nor the manifests shipped with cudnnctl vouch for"
msg_has "--manifest redistrib_<label>.json"
cp "$ARCH" "$E2E_TMP/renamed.tar.xz"
expect_exit 2 cudnnctl --root "$RA" "${OFFLINE[@]}" --json install --archive "$E2E_TMP/renamed.tar.xz"
msg_has "VERSION is required: the name of $E2E_TMP/renamed.tar.xz does not carry it"
