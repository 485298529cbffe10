# SPDX-License-Identifier: Apache-2.0
# Signed recall lists (docs/COMPAT.md) acting on real installs: install/use refuse a recalled
# build (exit 7 before the archive is downloaded, --force overrides); check, verify and doctor
# flag an active recalled build (exit 8); lists with a bad signature, none, an expiry in the
# past or a malformed body are warned about (or refused under require_signed_recalls); and
# `mirror` carries the lists to DIR/cudnnctl-recalls/, from where a host with
# recalls_from_mirror = true honours them. Releases from tests/fixtures/mkrelease.py, served
# by nginx on loopback; keys and signatures made here with the openssl CLI.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
command -v openssl >/dev/null || skip "the openssl CLI is needed to sign recall lists"

unset LD_LIBRARY_PATH LD_PRELOAD CONDA_PREFIX
NOPROC=$E2E_TMP/proc-none # no NVIDIA kernel module: the driver gate has nothing to refuse
mkdir -p "$NOPROC"
export CUDNNCTL_TEST_PROC=$NOPROC

M=$E2E_TMP/src
for rel in "9.1.0 9.1.0.70" "9.14.0 9.14.0.64"; do
  set -- $rel
  mkrelease --mirror "$M" --label "$1" --version "$2" --cuda 12 --platform linux-x86_64 \
    --no-static >/dev/null
done
start_nginx "$M"
URL=$MIRROR_URL/
LOG=$NGINX_DIR/access.log
A914=cudnn-linux-x86_64-9.14.0.64_cuda12-archive.tar.xz

recall_keys site other
REASON="segfault in CI (test)"
LINK=https://example.invalid/recall/914
LIST='{"schema": 1, "expires": "2099-12-31", "recalls": [
  {"version": "9.14.0.64", "cuda": "12", "reason": "'$REASON'", "url": "'$LINK'"}]}'

# recall_root [SIGNER|-]: a root trusting the "site" key whose recalls.d/site.json is LIST,
# signed by SIGNER (default site; "-": not signed).
recall_root() {
  local r
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/keys.d" "$r/etc/cudnnctl/recalls.d"
  cp "$KEYS/site.pem" "$r/etc/cudnnctl/keys.d/site.pem"
  printf '%s\n' "$LIST" >"$r/etc/cudnnctl/recalls.d/site.json"
  [ "${1:-site}" = - ] || sign "${1:-site}" "$r/etc/cudnnctl/recalls.d/site.json"
  echo "$r"
}
ci() { # ROOT ARGS...: cudnnctl under ROOT with the source mirror
  local root=$1
  shift
  cudnnctl --root "$root" --mirror "$URL" --cuda 12 "$@"
}
expect_error() {
  local msg
  msg=$(json_get 'd["error"]["message"]')
  grep -qF -- "$1" <<<"$msg" || fail "error message lacks '$1': $msg"
}
archive_requests() { grep -c "$A914" "$LOG" || true; }
strict() { echo 'require_signed_recalls = true' >"$1/etc/cudnnctl/config.toml"; }

TEST "install refuses a recalled build with exit 7 before the archive is downloaded"
R=$(recall_root)
tree_snapshot "$R" >"$E2E_TMP/before"
n0=$(archive_requests)
expect_exit 7 ci "$R" --json install 9.14.0
expect_json 'd["error"]["code"]' requirement
expect_error "cuDNN 9.14.0.64 (CUDA 12) is recalled: $REASON ($LINK) [recall list /etc/cudnnctl/recalls.d/site.json]"
expect_error "--force"
expect_json '[d["data"]["recalled"][k] for k in ("version", "cuda", "reason", "url", "list")]' \
  "[\"9.14.0.64\", 12, \"$REASON\", \"$LINK\", \"/etc/cudnnctl/recalls.d/site.json\"]"
expect_json '[c["status"] for c in d["data"]["checks"] if c["name"] == "recall"]' '["failed"]'
expect_exit 7 ci "$R" --dry-run install 9.14.0
expect_contains "$ERR" "is recalled: $REASON"
expect_eq "$(archive_requests)" "$n0" "archive requests after the refusals"
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused install changed the root"
# Another release is not affected; --force installs the recalled one, with a warning.
expect_exit 0 ci "$R" --dry-run --json install 9.1.0
expect_json '[c["status"] for c in d["data"]["checks"] if c["name"] == "recall"]' '["passed"]'
expect_exit 0 ci "$R" --force --json install 9.14.0 --no-smoke
expect_json 'any(w.startswith("--force: cuDNN 9.14.0.64 (CUDA 12) is recalled") for w in d["warnings"])' true
expect_json '[c["status"] for c in d["data"]["checks"] if c["name"] == "recall"]' '["warning"]'
expect_json 'd["active"]["version"]' 9.14.0.64

TEST "an active recalled build: check, verify and doctor exit 8 with the reason; use refuses to switch back"
R=$(new_root)
expect_exit 0 ci "$R" --json install 9.1.0 --no-smoke
expect_json '[c["name"] for c in d["data"]["checks"] if c["name"] == "recall"]' '[]' # no list: no gate
expect_exit 0 ci "$R" install 9.14.0 --no-smoke
expect_exit 0 cudnnctl --root "$R" check
mkdir -p "$R/etc/cudnnctl/keys.d" "$R/etc/cudnnctl/recalls.d"
cp "$KEYS/site.pem" "$R/etc/cudnnctl/keys.d/"
printf '%s\n' "$LIST" >"$R/etc/cudnnctl/recalls.d/site.json"
sign site "$R/etc/cudnnctl/recalls.d/site.json"
expect_exit 8 cudnnctl --root "$R" check
expect_contains "$OUT" "cudnnctl: active cuDNN 9.14.0.64 (CUDA 12) is recalled: $REASON ($LINK)"
expect_contains "$OUT" "\`cudnnctl use 9.1.0.70\` (installed, not recalled) or \`cudnnctl rollback\`"
expect_exit 8 cudnnctl --root "$R" --json check --prometheus "$E2E_TMP/prom" --nfd "$E2E_TMP/nfd"
expect_json 'd["data"]["recalled"]["reason"]' "$REASON"
expect_json 'd["data"]["healthy"]' false
expect_contains "$E2E_TMP/prom" "cudnnctl_recalled 1"
expect_contains "$E2E_TMP/nfd" "cudnn.recalled=true"
expect_exit 8 cudnnctl --root "$R" --json verify
expect_error "cuDNN 9.14.0.64 (CUDA 12) is recalled: $REASON ($LINK)"
expect_json 'd["data"]["recalled"]["list"]' /etc/cudnnctl/recalls.d/site.json
expect_exit 8 cudnnctl --root "$R" --json doctor
expect_json '[f["severity"] for f in d["data"]["findings"] if f["code"] == "recalled-release"]' '["error"]'
expect_json '[f["message"] for f in d["data"]["findings"] if f["code"] == "recalled-release"][0]' \
  "cudnnctl's active cuDNN 9.14.0.64 is recalled: $REASON ($LINK) [recall list /etc/cudnnctl/recalls.d/site.json]"
expect_json '[f["fix"] for f in d["data"]["findings"] if f["code"] == "recalled-release"][0]' \
  "switch to a release that is not recalled: \`cudnnctl use 9.1.0.70\`, or \`cudnnctl rollback\`"
expect_json 'd["data"]["recall_lists"][0]["state"]' valid
# Doing what the fix says makes the node healthy; switching back is refused.
expect_exit 0 cudnnctl --root "$R" use 9.1.0 --no-smoke
expect_exit 0 cudnnctl --root "$R" check
expect_exit 0 cudnnctl --root "$R" verify
expect_exit 0 cudnnctl --root "$R" --json doctor
expect_json '[f["severity"] for f in d["data"]["findings"] if f["code"] == "recalled-release"]' '["warning"]'
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/before"
expect_exit 7 cudnnctl --root "$R" --json use 9.14.0 --no-smoke
expect_error "is recalled: $REASON ($LINK) [recall list /etc/cudnnctl/recalls.d/site.json]"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused use changed the prefix"
expect_exit 0 cudnnctl --root "$R" --force use 9.14.0 --no-smoke
expect_contains "$ERR" "--force: cuDNN 9.14.0.64 (CUDA 12) is recalled"

TEST "rollback into a recalled generation warns and switches; restore of a recalled backup is exit 7"
# The root above: 9.14.0.64 (recalled, forced) active. Rollback is the way out of a bad
# release, so it is never refused; it says what it goes back to.
expect_exit 0 cudnnctl --root "$R" backup --output "$E2E_TMP/recalled.tar.gz"
expect_exit 0 cudnnctl --root "$R" use 9.1.0 --no-smoke
expect_exit 0 cudnnctl --root "$R" --dry-run rollback
expect_contains "$ERR" "is recalled: $REASON"
expect_exit 0 cudnnctl --root "$R" --json rollback
expect_json 'd["active"]["version"]' 9.14.0.64
expect_json 'any(w.startswith("rolling back to generation ") and "9.14.0.64 (CUDA 12) is recalled" in w and "cudnnctl check" in w for w in d["warnings"])' true
expect_exit 8 cudnnctl --root "$R" check
# A recall list that cannot be trusted does not stop a rollback either.
expect_exit 0 cudnnctl --root "$R" use 9.1.0 --no-smoke
strict "$R"
echo ' ' >>"$R/etc/cudnnctl/recalls.d/site.json"
expect_exit 8 cudnnctl --root "$R" check # the list is refused: not a healthy node either
expect_exit 0 cudnnctl --root "$R" rollback
expect_contains "$ERR" "recall lists not checked"
rm "$R/etc/cudnnctl/config.toml"
sign site "$R/etc/cudnnctl/recalls.d/site.json"
# restore activates what the backup holds: a recalled build is refused like use (dry runs too).
expect_exit 0 cudnnctl --root "$R" use 9.1.0 --no-smoke
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/before"
expect_exit 7 cudnnctl --root "$R" --json restore "$E2E_TMP/recalled.tar.gz"
expect_json 'd["error"]["code"]' requirement
expect_error "cuDNN 9.14.0.64 (CUDA 12) is recalled: $REASON"
expect_exit 7 cudnnctl --root "$R" --dry-run restore "$E2E_TMP/recalled.tar.gz"
tree_snapshot "$R/opt/cudnn" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused restore changed the prefix"
expect_exit 0 cudnnctl --root "$R" --force --json restore "$E2E_TMP/recalled.tar.gz"
expect_json 'd["active"]["version"]' 9.14.0.64

TEST "bad signature: warned and ignored; refused (exit 4) under require_signed_recalls"
R=$(recall_root other)
expect_exit 0 ci "$R" --dry-run --json install 9.14.0
expect_json 'any("does not verify with any of the 1 key(s)" in w and "ignored" in w for w in d["warnings"])' true
R2=$(recall_root site)
echo ' ' >>"$R2/etc/cudnnctl/recalls.d/site.json" # one byte after signing
expect_exit 0 ci "$R2" --dry-run install 9.14.0
expect_contains "$ERR" "signed by another key, or the file changed after signing"
strict "$R"
tree_snapshot "$R" >"$E2E_TMP/before"
n0=$(archive_requests)
expect_exit 4 ci "$R" --json install 9.14.0
expect_json 'd["error"]["code"]' integrity
expect_error "require_signed_recalls"
expect_exit 4 ci "$R" install 9.1.0 # every install: the lists cannot be trusted
expect_eq "$(archive_requests)" "$n0" "archive requests under require_signed_recalls"
tree_snapshot "$R" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused install changed the root"

TEST "no signature: warned and ignored; refused under require_signed_recalls"
R=$(recall_root -)
expect_exit 0 ci "$R" --dry-run --json install 9.14.0
expect_json 'any("not signed" in w for w in d["warnings"])' true
strict "$R"
expect_exit 4 ci "$R" --json --dry-run install 9.14.0
expect_error "not signed"

TEST "an expired list still refuses, with a warning; refused outright under require_signed_recalls"
LIST_SAVED=$LIST
LIST=${LIST/2099-12-31/2000-01-01}
R=$(recall_root)
LIST=$LIST_SAVED
expect_exit 7 ci "$R" --json --dry-run install 9.14.0
expect_json 'any("expired on 2000-01-01" in w for w in d["warnings"])' true
expect_error "is recalled: $REASON"
strict "$R"
expect_exit 4 ci "$R" --json --dry-run install 9.14.0
expect_error "expired on 2000-01-01"

TEST "a signed list without expires applies; refused (exit 4) under require_signed_recalls (issue 34, F8)"
R=$(recall_root)
L=$R/etc/cudnnctl/recalls.d/site.json
printf '%s\n' "${LIST/\"expires\": \"2099-12-31\", /}" >"$L"
! grep -q expires "$L" || fail "the list still has expires: $(cat "$L")"
sign site "$L"
expect_exit 7 ci "$R" --json --dry-run install 9.14.0
expect_error "is recalled: $REASON"
strict "$R"
expect_exit 4 ci "$R" --json --dry-run install 9.14.0
expect_json 'd["error"]["code"]' integrity
expect_error "has no \"expires\" date"

TEST "a malformed list: warned and ignored; refused (exit 2) under require_signed_recalls"
R=$(recall_root)
L=$R/etc/cudnnctl/recalls.d/site.json
printf '{"schema": 1, "recalls": [{"version": "9.14", "reason": "x"}]}' >"$L"
sign site "$L"
expect_exit 0 ci "$R" --json --dry-run install 9.14.0
expect_json 'any("signed but malformed" in w for w in d["warnings"])' true
printf 'not json' >"$L"
sign site "$L"
expect_exit 0 ci "$R" --dry-run install 9.14.0
expect_contains "$ERR" "not valid JSON"
strict "$R"
expect_exit 2 ci "$R" --json --dry-run install 9.14.0
expect_json 'd["error"]["code"]' usage

TEST "an older list replayed (lower serial) does not lift a recall; exit 4 under require_signed_recalls (issue 34, F7)"
LIST2=${LIST/\"schema\": 1,/\"schema\": 1, \"serial\": 2,}
LIST1='{"schema": 1, "serial": 1, "expires": "2099-12-31", "recalls": []}'
R=$(recall_root)
L=$R/etc/cudnnctl/recalls.d/site.json
KEPT=$R/var/lib/cudnnctl/recall-lists
printf '%s\n' "$LIST2" >"$L"
sign site "$L"
# Read-only commands and dry runs keep nothing (the exit codes do not matter here).
for c in status list check verify doctor recommend env; do
  run ci "$R" "$c"
done
expect_exit 7 ci "$R" --dry-run install 9.14.0
expect_exit 0 ci "$R" --dry-run install 9.1.0
expect_exit 7 ci "$R" install 9.14.0 # a refused install keeps nothing either
expect_no_file "$KEPT"
# A mutating command keeps the newest verified copy.
expect_exit 0 ci "$R" install 9.1.0 --no-smoke
cmp "$L" "$KEPT/site.json" || fail "the kept list differs"
cmp "$L.sig" "$KEPT/site.json.sig" || fail "the kept signature differs"
# The site's older list, validly signed, comes back: the kept serial 2 still recalls 9.14.0.
printf '%s\n' "$LIST1" >"$L"
sign site "$L"
expect_exit 7 ci "$R" --json install 9.14.0
expect_error "is recalled: $REASON"
expect_json 'any("has serial 1, older than serial 2 seen before: an older list replayed (a stale mirror?); the kept serial 2 applies" in w for w in d["warnings"])' true
# Without a serial it counts as 0: older too.
printf '%s\n' "$LIST" >"$L"
sign site "$L"
expect_exit 7 ci "$R" --dry-run install 9.14.0 # LIST recalls it anyway; the warning names serial 0
expect_contains "$ERR" "has serial 0, older than serial 2"
printf '%s\n' "$LIST1" >"$L"
sign site "$L"
strict "$R"
expect_exit 4 ci "$R" --json install 9.14.0
expect_json 'd["error"]["code"]' integrity
expect_error "has serial 1, older than serial 2 seen before"
expect_exit 4 ci "$R" install 9.1.0 --no-smoke
cmp "$KEPT/site.json" <(printf '%s\n' "$LIST2") || fail "the kept list was replaced by an older one"
# A higher serial lifts the recall (the signer's word) and is kept in its place.
printf '%s\n' "${LIST1/\"serial\": 1/\"serial\": 3}" >"$L"
sign site "$L"
expect_exit 0 ci "$R" install 9.14.0 --no-smoke
cmp "$L" "$KEPT/site.json" || fail "serial 3 was not kept"
# Removing the list retires it: the kept copy alone is never applied.
rm "$L" "$L.sig"
expect_exit 0 ci "$R" --dry-run install 9.14.0
expect_not_contains "$ERR" "serial"

TEST "mirror carries the signed lists; a host reading them from the mirror refuses the recalled build"
RM=$(recall_root) # the mirroring host
printf '%s\n' '{"schema": 1, "recalls": []}' >"$RM/etc/cudnnctl/recalls.d/unsigned.json"
D=$E2E_TMP/mirror-out
expect_exit 0 cudnnctl --root "$RM" --mirror "$URL" --platform linux-x86_64 --cuda 12 --json \
  mirror 9.14.0 --to "$D"
expect_json '[(l["source"], l["state"]) for l in d["data"]["recalls_carried"]]' \
  '[["/etc/cudnnctl/recalls.d/site.json", "valid"]]'
expect_json 'any("unsigned.json" in w and "not carried" in w for w in d["warnings"])' true
cmp "$RM/etc/cudnnctl/recalls.d/site.json" "$D/cudnnctl-recalls/site.json" || fail "list differs"
cmp "$RM/etc/cudnnctl/recalls.d/site.json.sig" "$D/cudnnctl-recalls/site.json.sig" || fail "sig differs"
expect_eq "$(grep -v '^#' "$D/cudnnctl-recalls/index")" site.json
expect_no_file "$D/cudnnctl-recalls/unsigned.json"
# Second run: nothing rewritten.
expect_exit 0 cudnnctl --root "$RM" --mirror "$URL" --platform linux-x86_64 --cuda 12 --json \
  mirror 9.14.0 --to "$D"
expect_json 'd["changed"]' false
start_nginx "$D"
MURL=$MIRROR_URL/
host_root() { # a fleet host: the site key, the mirror, recalls_from_mirror
  local r
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/keys.d"
  cp "$KEYS/site.pem" "$r/etc/cudnnctl/keys.d/"
  printf 'mirrors = ["%s"]\nrecalls_from_mirror = true\n' "$MURL" >"$r/etc/cudnnctl/config.toml"
  echo "$r"
}
H=$(host_root)
tree_snapshot "$H" >"$E2E_TMP/before"
expect_exit 7 cudnnctl --root "$H" --cuda 12 --json install 9.14.0
expect_error "is recalled: $REASON ($LINK) [recall list ${MURL}cudnnctl-recalls/site.json]"
tree_snapshot "$H" >"$E2E_TMP/after"
cmp -s "$E2E_TMP/before" "$E2E_TMP/after" || fail "a refused install changed the host's root"
expect_exit 0 cudnnctl --root "$H" --cuda 12 install 9.14.0 --no-smoke --force
expect_exit 8 cudnnctl --root "$H" check
expect_contains "$OUT" "is recalled: $REASON"
# Without recalls_from_mirror the host reads only its own recalls.d.
printf 'mirrors = ["%s"]\n' "$MURL" >"$H/etc/cudnnctl/config.toml"
expect_exit 0 cudnnctl --root "$H" check
# A list changed on the mirror no longer verifies: ignored with a warning.
H=$(host_root)
printf '%s\n' '{"schema": 1, "recalls": []}' >"$D/cudnnctl-recalls/site.json"
expect_exit 0 cudnnctl --root "$H" --cuda 12 --dry-run --json install 9.14.0
expect_json 'any("cudnnctl-recalls/site.json" in w and "does not verify" in w for w in d["warnings"])' true
# mirror without VERSION refreshes the lists only; a list the host dropped is removed.
expect_exit 0 cudnnctl --root "$RM" --json mirror --to "$D"
expect_json '[l["written"] for l in d["data"]["recalls_carried"]]' '[true]'
cmp "$RM/etc/cudnnctl/recalls.d/site.json" "$D/cudnnctl-recalls/site.json" || fail "list not restored"
rm "$RM/etc/cudnnctl/recalls.d/site.json" "$RM/etc/cudnnctl/recalls.d/site.json.sig"
expect_exit 0 cudnnctl --root "$RM" --json mirror --to "$D"
expect_json 'len(d["data"]["recalls_removed"])' 2
expect_no_file "$D/cudnnctl-recalls/site.json"
expect_eq "$(grep -vc '^#' "$D/cudnnctl-recalls/index" || true)" 0
expect_exit 2 cudnnctl --root "$(new_root)" --json mirror --to "$E2E_TMP/empty-out"
expect_error "nothing to mirror"
# A mirror serving no recall lists: the host warns and goes on.
H=$(host_root)
printf 'mirrors = ["%s"]\nrecalls_from_mirror = true\n' "$URL" >"$H/etc/cudnnctl/config.toml"
expect_exit 0 cudnnctl --root "$H" --cuda 12 --dry-run install 9.14.0
expect_contains "$ERR" "no mirror serves cudnnctl-recalls/index"
# A mirror serving an older list of the same name than the one a host kept (issue 34, F7).
mkdir -p "$D/cudnnctl-recalls"
printf '%s\n' "$LIST2" >"$D/cudnnctl-recalls/site.json"
sign site "$D/cudnnctl-recalls/site.json"
echo site.json >"$D/cudnnctl-recalls/index"
H=$(host_root)
expect_exit 0 cudnnctl --root "$H" --cuda 12 install 9.14.0 --no-smoke --force # D has only 9.14.0
expect_file "$H/var/lib/cudnnctl/recall-lists/site.json"
printf '%s\n' "$LIST1" >"$D/cudnnctl-recalls/site.json"
sign site "$D/cudnnctl-recalls/site.json"
expect_exit 8 cudnnctl --root "$H" check # the kept serial 2 still recalls the active build
expect_contains "$ERR" "cudnnctl-recalls/site.json has serial 1, older than serial 2 seen before"
echo 'require_signed_recalls = true' >>"$H/etc/cudnnctl/config.toml"
expect_exit 4 cudnnctl --root "$H" --cuda 12 --json install 9.14.0
expect_error "has serial 1, older than serial 2 seen before"
