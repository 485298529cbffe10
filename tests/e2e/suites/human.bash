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
cp "$CR_MIRROR"/redistrib_*.json "$WEB/redist/"
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
