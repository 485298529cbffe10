#!/bin/bash
# Bad input: malformed versions, unknown releases/platforms/variants, malformed manifests
# (served by a mirror and given with --manifest), bad configs and bad flags. Each must be
# exit 2 with a one-line error (stderr is exactly one line, "cudnnctl: error: ..."), with
# --json exactly one JSON object on stdout (ok false, error.category "usage", error.code one
# of docs/ERRORS.md, exit_code 2), and
# nothing changed under the root (not even a file's content; only the lock file's holder
# line may change when the error is found under the lock). docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
cr_templates

# snap ROOT: everything under ROOT (type, mode, owner, size, link text, content digest),
# except the lock file's holder line.
snap() {
  (
    cd "$1"
    find . ! -path ./var/lib/cudnnctl/lock -printf '%p %y %m %U:%G %s %l\n' | LC_ALL=C sort
    find . -type f ! -path ./var/lib/cudnnctl/lock -print0 | LC_ALL=C sort -z | xargs -0 -r md5sum
  )
}

NCASES=0
LOG=$E2E_TMP/cases.txt
: >"$LOG"
# bad ROOT WHY ARGS...: run `cudnnctl --root ROOT ARGS` twice (human, --json); assert the
# contract for bad input. WHY names the case in RELIABILITY.md's list.
bad() {
  local r=$1 why=$2 before
  shift 2
  TEST "bad input: $why"
  before=$(snap "$r")
  expect_exit 2 cudnnctl --root "$r" "$@"
  [ ! -s "$OUT" ] || fail "stdout is not empty on a usage error"
  expect_eq "$(wc -l <"$ERR")" 1 "lines on stderr"
  grep -q '^cudnnctl: error: ' "$ERR" || fail "stderr does not start with 'cudnnctl: error: '"
  expect_exit 2 cudnnctl --root "$r" --json "$@"
  python3 - "$OUT" "$E2E_DIR/../../docs/ERRORS.md" <<'PYEOF' || fail "--json output is not one usage-error object"
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text)  # exactly one JSON value: json.loads refuses trailing data
assert isinstance(d, dict), "not an object"
assert d["ok"] is False and d["changed"] is False, (d["ok"], d["changed"])
assert d["error"]["category"] == "usage", d["error"]
assert "| `%s` | 2 | usage |" % d["error"]["code"] in open(sys.argv[2]).read(), d["error"]
assert d["error"]["exit_code"] == 2, d["error"]
assert "\n" not in d["error"]["message"], "multi-line message"
PYEOF
  expect_eq "$(snap "$r")" "$before" "the root after a usage error"
  echo "$why" >>"$LOG"
  NCASES=$((NCASES + 1))
}

R2=$(cr_copy two badinput) # 9.1.0 = gen 1, 8.9.7 = gen 2 (active)
R1=$(cr_copy one badinput1)
RE=$(cr_copy empty badinput0)
M="--mirror file://$CR_MIRROR"

# --- versions ----------------------------------------------------------------------------
for v in 9..2 -1.0.0 9.2.0.82.1 abc "9.2.0 " " 9.2.0" 9.2.0. .9.2.0 "" 9.2.x \
  99999999999999999999.0.0 9.2.0.99999999999999999999 "../../9.1.0" "9.1.0/../x" $'9.1.0\n' 9,1,0; do
  bad "$RE" "version '$v'" $M --cuda 12 install "$v"
done
# (9 and 9.2 are partial versions: the newest matching release, suite human.)
bad "$R2" "use with a malformed version" use 9.x
bad "$R2" "remove with a malformed version" remove 9..1
# --- releases, platforms, CUDA variants ---------------------------------------------------
bad "$RE" "unknown version on the mirror" $M --cuda 12 install 9.5.5
bad "$RE" "unknown full version on the mirror" $M --cuda 12 install 9.1.0.71
bad "$RE" "unknown platform" $M --cuda 12 --platform linux-foo install 9.1.0
bad "$RE" "platform the release does not offer" $M --cuda 12 --platform linux-aarch64 install 9.1.0
# A CUDA variant the release lacks is exit 7 no_cuda_build (suite human), not bad input.
# --- manifests: served by a mirror and given with --manifest -------------------------------
BM=$E2E_TMP/badmirror
mkdir -p "$BM"
GOOD=$CR_MIRROR/redistrib_9.1.0.json
k=50
# mk LABEL PYTHON_EXPR: write redistrib_LABEL.json as the good 9.1.0 manifest transformed by
# PYTHON_EXPR over `m` (a dict) or, when it yields bytes, those bytes
mkman() {
  python3 - "$GOOD" "$BM/redistrib_$1.json" "$1" "$2" <<'PYEOF'
import json, sys
good, out, label, expr = sys.argv[1:]
m = json.load(open(good))
m["release_label"] = label
ver = label + ".1"
m["cudnn"]["version"] = ver
for p in ("linux-x86_64", "linux-sbsa"):
    for c in m["cudnn"][p].values():
        c["relative_path"] = c["relative_path"].replace("9.1.0.70", ver)
x = eval(expr, {"m": m, "json": json})
if x is None:
    x = m
data = x if isinstance(x, bytes) else json.dumps(x, indent=4).encode()
open(out, "wb").write(data)
PYEOF
  sha256sum "$BM/redistrib_$1.json" | sed "s|$BM/||" >>"$RE/etc/cudnnctl/pins.d/bad.sha256"
}
pkg='m["cudnn"]["linux-x86_64"]["cuda12"]'
manifest_case() { # WHY EXPR
  local label=9.$k.0
  k=$((k + 1))
  mkman "$label" "$2"
  [ -n "${NOT_FROM_MIRROR:-}" ] || bad "$RE" "manifest from a mirror: $1" --mirror "file://$BM" --cuda 12 --platform linux-x86_64 install "$label"
  bad "$RE" "manifest given with --manifest: $1" --manifest "$BM/redistrib_$label.json" --mirror "file://$BM" \
    --cuda 12 --platform linux-x86_64 install "$label"
}
manifest_case "truncated JSON" 'json.dumps(m, indent=4).encode()[:300]'
manifest_case "empty file" 'b""'
# From a mirror an HTML page is exit 3 mirror_not_manifest (suite human); as --manifest, bad input.
NOT_FROM_MIRROR=1 manifest_case "an HTML error page" 'b"<html><body>502 Bad Gateway</body></html>"'
manifest_case "top level is a list" '[m]'
manifest_case "cudnn is a list" 'm.update(cudnn=[1]) or m'
manifest_case "no cudnn product" 'm.pop("cudnn") and m'
manifest_case "no version" 'm["cudnn"].pop("version") and m'
manifest_case "version is a number" 'm["cudnn"].update(version=9) or m'
manifest_case "label and version disagree" 'm["cudnn"].update(version="9.2.0.1") or m'
manifest_case "no sha256" "$pkg.pop(\"sha256\") and m"
manifest_case "sha256 not hex" "$pkg.update(sha256=\"z\" * 64) or m"
manifest_case "sha256 too short" "$pkg.update(sha256=\"ab\") or m"
manifest_case "no size" "$pkg.pop(\"size\") and m"
manifest_case "size as a number" "$pkg.update(size=5000) or m"
manifest_case "negative size" "$pkg.update(size=\"-5\") or m"
manifest_case "huge size" "$pkg.update(size=\"99999999999999999999999\") or m"
manifest_case "size zero" "$pkg.update(size=\"0\") or m"
manifest_case "no relative_path" "$pkg.pop(\"relative_path\") and m"
manifest_case "relative_path with .." "$pkg.update(relative_path=\"cudnn/linux-x86_64/../../../etc/passwd\") or m"
manifest_case "absolute relative_path" "$pkg.update(relative_path=\"/etc/passwd\") or m"
manifest_case "package is a string" "$pkg and m[\"cudnn\"][\"linux-x86_64\"].update(cuda12=\"x\") or m"
manifest_case "huge version string" 'm["cudnn"].update(version=m["cudnn"]["version"] + "9" * 100000) or m'
manifest_case "huge number as the version" 'm["cudnn"].update(version=m["release_label"] + "." + "9" * 40) or m'
manifest_case "deep nesting" 'json.dumps(m, indent=4).replace("{", "{\"extra\": " + "[" * 5000 + "]" * 5000 + ",", 1).encode()'
manifest_case "duplicate keys" 'json.dumps(m, indent=4).replace("\"release_date\"", "\"release_label\": \"9.0.0\", \"release_date\"", 1).encode()'
# --- configs -----------------------------------------------------------------------------
config_case() { # WHY TOML
  TEST "config: $1"
  mkdir -p "$R1/etc/cudnnctl"
  printf '%s\n' "$2" >"$R1/etc/cudnnctl/config.toml"
  bad "$R1" "config: $1" --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
  bad "$R1" "config (read-only command): $1" status
  rm "$R1/etc/cudnnctl/config.toml"
}
config_case "unknown key" 'colour = "blue"'
config_case "wrong type (string for a number)" 'lock_timeout = "soon"'
config_case "wrong type (number for a list)" 'mirrors = 5'
config_case "a table" $'[install]\nmirrors = ["http://x/"]'
config_case "bad TOML (unterminated array)" 'mirrors = ["http://x/"'
config_case "bad TOML (no value)" 'lock_timeout ='
config_case "bad TOML (garbage)" '%%% not toml'
config_case "keep_generations = 0" 'keep_generations = 0'
config_case "negative lock_timeout" 'lock_timeout = -1'
config_case "relative prefix" 'prefix = "opt/cudnn"'
config_case "cuda out of range" 'cuda = 100'
config_case "duplicate key" $'cuda = 12\ncuda = 11'
config_case "unknown platform (issue 34: refused at load, status too)" $'cuda = 12\nplatform = "windows-x86_64"'
expect_error "config.toml:2: platform must be one of linux-x86_64, linux-sbsa, linux-aarch64"
config_case "prefix = / (issue 34: named by its config line, not as a flag)" $'\nprefix = "/"'
expect_error "config.toml:2: prefix / is the root of the system"
expect_json '"--prefix" in d["error"]["message"]' false
# --- flags ---------------------------------------------------------------------------------
bad "$R2" "unknown flag" --frobnicate status
bad "$R2" "unknown subcommand flag" install 9.1.0 --frobnicate
bad "$R2" "unknown command" frobnicate
bad "$R2" "no command"
bad "$R2" "missing value for --mirror" install 9.1.0 --mirror
bad "$R2" "missing VERSION" install
bad "$R2" "two versions" install 9.1.0 8.9.7
bad "$R2" "--cuda abc" --cuda abc install 9.1.0
bad "$R2" "--cuda 0" --cuda 0 install 9.1.0
bad "$R2" "--cuda 100" --cuda 100 install 9.1.0
bad "$R2" "--lock-timeout -1" --lock-timeout -1 use 9.1.0
bad "$R2" "--lock-timeout abc" --lock-timeout abc use 9.1.0
bad "$R2" "--root relative" --root relative/path status
bad "$R2" "--root missing (a typo must not create a tree)" --root "$R2/no-such-root" $M install 9.1.0
bad "$R2" "--root missing, read-only command" --root "$R2/no-such-root" status
bad "$R2" "--root a file" --root "$R2/etc/ld.so.conf" list
bad "$R2" "rollback --to an unknown entry name" rollback --to 9.1.0.70-cuda12-linux-x86_64-adopted-deadbeef
bad "$R2" "--prefix relative" --prefix opt/cudnn status
bad "$R2" "--components bogus" $M install 9.27.0 --components bogus
bad "$R2" "--components empty" $M install 9.27.0 --components ,
bad "$R2" "--cacert missing file" $M --cacert /nonexistent/ca.pem install 9.27.0
bad "$R2" "gc --keep 0" gc --keep 0
expect_contains "$OUT" "not in range 1 to"
bad "$R2" "gc --keep -1" gc --keep -1
bad "$R2" "gc --keep abc" gc --keep abc
bad "$R2" "rollback --to 0" rollback --to 0
bad "$R2" "rollback --to 999" rollback --to 999
bad "$R2" "rollback --to -1" rollback --to -1
bad "$R2" "rollback --to abc" rollback --to abc
# --- requests the state refuses --------------------------------------------------------------
bad "$R2" "remove the active version" remove 8.9.7
bad "$R2" "remove a version that is not installed" remove 9.27.0
bad "$R2" "use a version that is not installed" use 9.27.0
bad "$R1" "rollback with nothing before it" rollback
bad "$RE" "rollback with nothing installed" rollback
bad "$RE" "remove with nothing installed" remove 9.1.0
bad "$RE" "use with nothing installed" use 9.1.0
bad "$RE" "verify with nothing installed" verify
echo "bad-input cases: $NCASES (each twice: human and --json)" >&2
cp "$LOG" "${E2E_BADINPUT_LIST:-/dev/null}" 2>/dev/null || true
