# Shared library for the e2e suites. Source it first:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
# It turns on `set -eEuo pipefail`, makes a per-suite temp dir $E2E_TMP (removed on success or
# skip, kept and printed on failure) and tears everything down in an EXIT trap.
# Reference: tests/fixtures/README.md.

[ -z "${_E2E_LIB_LOADED:-}" ] || return 0
_E2E_LIB_LOADED=1
set -eEuo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_FIXTURES=$(cd "$E2E_DIR/../fixtures" && pwd)
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cudnnctl-e2e.XXXXXX")
chmod 755 "$E2E_TMP" # so that tests which drop privileges can still reach their roots
E2E_PERSIST=${CUDNNCTL_BUILD_DIR:-/var/tmp}/$(basename "$E2E_TMP").persist # new_persistent_root
OUT=$E2E_TMP/stdout
ERR=$E2E_TMP/stderr
: >"$OUT"
: >"$ERR"
RC=0
E2E_TEST=""
E2E_LAST_CMD=""
E2E_LAST_RC=""
_E2E_NGINX_PIDS=()
exec {_E2E_ERRFD}>&2 # diagnostics go here even while a command's stderr is captured

_e2e_say() { printf '%s\n' "$*" >&"$_E2E_ERRFD"; }

_e2e_on_exit() {
  local rc=$?
  set +eE
  trap - ERR
  stop_nginx
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 125 ]; then
    if [ -n "${E2E_KEEP:-}" ]; then
      _e2e_say "e2e: kept $E2E_TMP"
    else
      rm -rf "$E2E_TMP" "$E2E_PERSIST"
    fi
  else
    _e2e_say "e2e: exit $rc; temp dir kept: $E2E_TMP"
    [ ! -d "$E2E_PERSIST" ] || _e2e_say "e2e: and $E2E_PERSIST"
  fi
  exit "$rc"
}
trap _e2e_on_exit EXIT
trap 'exit 143' TERM # so that the EXIT trap still stops nginx on a timeout or ^C
trap 'exit 130' INT

_e2e_on_err() {
  local rc=$? line=$1 cmd=$2
  # In a subshell or command substitution just pass the status up; the parent reports it.
  [ "$BASH_SUBSHELL" -eq 0 ] || exit "$rc"
  trap - ERR
  fail "unexpected exit $rc at ${BASH_SOURCE[1]:-?}:$line: $cmd"
}
trap '_e2e_on_err "$LINENO" "$BASH_COMMAND"' ERR

# ---- reporting -----------------------------------------------------------------------------

# TEST "name": start a named test (used in failure messages).
TEST() {
  E2E_TEST=$1
  E2E_LAST_CMD=""
  _e2e_say "--- TEST $1"
}

# fail MSG: print the test name, MSG and the last command's stdout/stderr; exit 1.
fail() {
  _e2e_say "FAIL: ${E2E_TEST:-<no test>}: $*"
  if [ -n "$E2E_LAST_CMD" ]; then
    _e2e_say "  last command (exit $E2E_LAST_RC): $E2E_LAST_CMD"
    _e2e_say "  --- stdout ($OUT) ---"
    head -c 6000 "$OUT" 2>/dev/null | sed 's/^/  | /' >&"$_E2E_ERRFD" || true
    _e2e_say "  --- stderr ($ERR) ---"
    head -c 6000 "$ERR" 2>/dev/null | sed 's/^/  | /' >&"$_E2E_ERRFD" || true
  fi
  exit 1
}

# skip MSG: skip the whole suite (exit 125).
skip() {
  _e2e_say "SKIP: ${E2E_TEST:+$E2E_TEST: }$*"
  exit 125
}

# ---- running commands ----------------------------------------------------------------------

# run CMD...: run CMD with stdout/stderr into the files $OUT/$ERR, stdin from /dev/null;
# its exit status goes to $RC. Never fails by itself.
run() {
  E2E_LAST_CMD=$(printf '%q ' "$@")
  RC=0
  "$@" >"$OUT" 2>"$ERR" </dev/null || RC=$?
  E2E_LAST_RC=$RC
}

# expect_exit CODE CMD...: run CMD (like run) and assert its exit status.
# CODE is a number, or '!0' for any nonzero status.
expect_exit() {
  local want=$1
  shift
  run "$@"
  if [ "$want" = '!0' ]; then
    [ "$RC" -ne 0 ] || fail "expected a nonzero exit status, got 0"
  else
    [ "$RC" -eq "$want" ] || fail "expected exit status $want, got $RC"
  fi
}

# cudnnctl ARGS...: run the binary under test, named by $CUDNNCTL (set by ctest).
cudnnctl() {
  [ -n "${CUDNNCTL:-}" ] || skip "CUDNNCTL is not set (path of the cudnnctl binary under test)"
  "$CUDNNCTL" "$@"
}

# require_cudnnctl: skip the suite unless $CUDNNCTL names an executable.
require_cudnnctl() {
  [ -n "${CUDNNCTL:-}" ] && [ -x "$CUDNNCTL" ] ||
    skip "CUDNNCTL is not set or not executable: '${CUDNNCTL:-}'"
}

# as_nobody CMD...: run CMD as nobody:nogroup (tests run as root; see traps.md).
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }

# ---- assertions ----------------------------------------------------------------------------

expect_eq() { [ "$1" == "$2" ] || fail "${3:-values differ}: got '$1', expected '$2'"; }
expect_ne() { [ "$1" != "$2" ] || fail "${3:-values are equal}: both are '$1'"; }

# expect_contains FILE STRING / expect_not_contains FILE STRING (fixed-string match)
expect_contains() {
  [ -f "$1" ] || fail "expect_contains: no file $1"
  grep -qF -- "$2" "$1" || fail "$1 does not contain '$2'"
}
expect_not_contains() {
  [ -f "$1" ] || fail "expect_not_contains: no file $1"
  ! grep -qF -- "$2" "$1" || fail "$1 contains '$2'"
}

# expect_file PATH: a regular file (symlinks followed). expect_dir PATH: a directory.
expect_file() { [ -f "$1" ] || fail "expected a regular file at $1"; }
expect_dir() { [ -d "$1" ] || fail "expected a directory at $1"; }
# flip_byte FILE OFFSET: inverts one byte (writing a constant could leave it as it was).
flip_byte() {
  python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xFF]))' "$1" "$2"
}
# expect_no_file PATH: nothing at PATH, not even a dangling symlink.
expect_no_file() { [ ! -e "$1" ] && [ ! -L "$1" ] || fail "expected nothing at $1"; }

# expect_symlink LINK TARGET: LINK is a symlink whose text is exactly TARGET.
expect_symlink() {
  [ -L "$1" ] || fail "expected a symlink at $1"
  local t
  t=$(readlink -- "$1")
  [ "$t" == "$2" ] || fail "symlink $1 points to '$t', expected '$2'"
}

# json_get EXPR [FILE]: print the value of the python expression EXPR over d = the JSON in
# FILE (default $OUT). Strings print bare, true/false/null as in JSON, lists and objects as
# json.dumps(..., sort_keys=True).
json_get() {
  python3 - "${2:-$OUT}" "$1" <<'EOF'
import json, sys
try:
    with open(sys.argv[1]) as f:
        d = json.load(f)
except Exception as e:
    sys.exit("json_get: %s is not valid JSON: %s" % (sys.argv[1], e))
try:
    v = eval(sys.argv[2], {"d": d})
except Exception as e:
    sys.exit("json_get: %s: %s: %s" % (sys.argv[2], type(e).__name__, e))
if isinstance(v, str):
    print(v)
elif isinstance(v, (dict, list, bool)) or v is None:
    print(json.dumps(v, sort_keys=True))
else:
    print(v)
EOF
}

# expect_json EXPR EXPECTED [FILE]: assert json_get EXPR == EXPECTED, e.g.
#   expect_json 'd["active"]["version"]' 9.1.0.70
#   expect_json 'len(d["generations"])' 2
#   expect_json '"9.1.0" in d["installed"]' true
expect_json() {
  local got rc=0
  got=$(json_get "$1" "${3:-$OUT}" 2>"$E2E_TMP/json_err") || rc=$?
  [ "$rc" -eq 0 ] || fail "expect_json $1: $(cat "$E2E_TMP/json_err")"
  [ "$got" == "$2" ] || fail "expect_json $1: got '$got', expected '$2'"
}

# expect_error STRING: the --json error message ($OUT) contains STRING.
expect_error() {
  local msg
  msg=$(json_get 'd["error"]["message"]')
  grep -qF -- "$1" <<<"$msg" || fail "error message lacks '$1': $msg"
}

# expect_check NAME STATUS [FILE]: data.checks has exactly one NAME, with STATUS.
expect_check() {
  expect_json "[c['status'] for c in d['data']['checks'] if c['name'] == '$1']" "[\"$2\"]" "${3:-$OUT}"
}

# ---- filesystem fixtures -------------------------------------------------------------------

# new_root: make a fresh fake root under $E2E_TMP and print its path. It holds
# etc/ld.so.conf ("include /etc/ld.so.conf.d/*.conf") and an empty etc/ld.so.conf.d/.
new_root() {
  local r
  r=$(mktemp -d "${1:-$E2E_TMP}/root.XXXXXX")
  chmod 755 "$r"
  mkdir -p "$r/etc/ld.so.conf.d"
  echo 'include /etc/ld.so.conf.d/*.conf' >"$r/etc/ld.so.conf"
  echo "$r"
}

# new_persistent_root: a root as new_root makes, on persistent storage: in $E2E_TMP, or where
# that is a tmpfs (scripts/test as root), in $E2E_PERSIST under the build tree (or /var/tmp),
# removed with $E2E_TMP. (Named after $E2E_TMP: a command substitution may make it.)
new_persistent_root() {
  case $(stat -f -c %T "$E2E_TMP") in
  tmpfs | ramfs) ;;
  *) new_root && return ;;
  esac
  mkdir -p -m 755 "$E2E_PERSIST"
  new_root "$E2E_PERSIST"
}

# tree_snapshot DIR > FILE: one line per path under DIR (DIR itself is "."), sorted:
#   PATH TYPE MODE UID:GID SIZE SHA256|->TARGET|-
# TYPE is f d l p s c b. Compare two snapshots with cmp/diff to prove nothing changed.
tree_snapshot() {
  python3 - "$1" <<'EOF'
import hashlib, os, stat, sys
root = sys.argv[1]
if not os.path.isdir(root):
    sys.exit("tree_snapshot: not a directory: %s" % root)
def line(rel, p):
    st = os.lstat(p)
    m = st.st_mode
    kind = ("d" if stat.S_ISDIR(m) else "l" if stat.S_ISLNK(m) else "f" if stat.S_ISREG(m)
            else "p" if stat.S_ISFIFO(m) else "s" if stat.S_ISSOCK(m)
            else "c" if stat.S_ISCHR(m) else "b")
    extra, size = "-", "-"
    if kind == "f":
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for b in iter(lambda: f.read(1 << 20), b""):
                h.update(b)
        extra, size = h.hexdigest(), str(st.st_size)
    elif kind == "l":
        extra = "->" + os.readlink(p)
    name = rel.replace("\\", "\\\\").replace("\n", "\\n")
    return "%s %s %04o %d:%d %s %s" % (name, kind, stat.S_IMODE(m), st.st_uid, st.st_gid,
                                         size, extra)
rows = [(".", line(".", root))]
for d, dirs, files in os.walk(root):
    for n in dirs + files:
        p = os.path.join(d, n)
        rel = os.path.relpath(p, root)
        rows.append((rel, line(rel, p)))
rows.sort(key=lambda r: (r[0] != ".", r[0]))
sys.stdout.write("".join(r + "\n" for _, r in rows))
EOF
}

# snap_tree DIR NAME: tree_snapshot DIR into $E2E_TMP/NAME.before.
# expect_same_tree DIR NAME MSG: DIR's tree_snapshot now ($E2E_TMP/NAME.after) is the one
# snap_tree took (cmp), else fail MSG.
snap_tree() { tree_snapshot "$1" >"$E2E_TMP/$2.before"; }
expect_same_tree() {
  tree_snapshot "$1" >"$E2E_TMP/$2.after"
  cmp -s "$E2E_TMP/$2.before" "$E2E_TMP/$2.after" || fail "$3"
}

# ---- signed recall lists (docs/COMPAT.md) -------------------------------------------------

# recall_keys NAME...: Ed25519 key pairs made by the openssl CLI, $KEYS/NAME.key (private) and
# $KEYS/NAME.pem (public, for keys.d), with KEYS=$E2E_TMP/recall-keys.
# sign NAME FILE: FILE.sig, NAME's raw signature of FILE's exact bytes.
recall_keys() {
  KEYS=$E2E_TMP/recall-keys
  mkdir -p "$KEYS"
  local k
  for k in "$@"; do
    openssl genpkey -algorithm ed25519 -out "$KEYS/$k.key" 2>/dev/null
    openssl pkey -in "$KEYS/$k.key" -pubout -out "$KEYS/$k.pem" 2>/dev/null
  done
}
sign() { openssl pkeyutl -sign -rawin -inkey "$KEYS/$1.key" -in "$2" -out "$2.sig"; }

# ---- fixture roots of tests/fixtures/doctor/mkroot.py --------------------------------------

# mkroot_env: `mk ARGS...` runs tests/fixtures/doctor/mkroot.py (stub libraries built with gcc,
# cached in $E2E_TMP/stubs), the loader environment is unset, and cudnnctl reads a /proc
# without an NVIDIA kernel module ($NOPROC: the driver gate has nothing to refuse). Sets SITE
# (a venv's site-packages under /opt, where doctor and the framework gate look) and MA.
mkroot_env() {
  command -v gcc >/dev/null || skip "gcc is needed to build the stub libraries"
  MK=$E2E_FIXTURES/doctor/mkroot.py
  export DOCTOR_STUB_CACHE=$E2E_TMP/stubs
  unset LD_LIBRARY_PATH LD_PRELOAD CONDA_PREFIX
  NOPROC=$E2E_TMP/proc-none
  mkdir -p "$NOPROC"
  export CUDNNCTL_TEST_PROC=$NOPROC
  SITE=/opt/torch/.venv/lib/python3.12/site-packages
  MA=/usr/lib/x86_64-linux-gnu
}
mk() { python3 "$MK" "$@"; }

# ---- mirror --------------------------------------------------------------------------------

# mkrelease ARGS...: tests/fixtures/mkrelease.py. mkmirror DIR: the standard test mirror.
mkrelease() { python3 "$E2E_FIXTURES/mkrelease.py" "$@"; }
mkmirror() { bash "$E2E_FIXTURES/mkmirror.sh" "$@"; }
# std_mirror: build the standard mirror once per suite in $E2E_TMP/mirror and print its path.
std_mirror() {
  local m=$E2E_TMP/mirror
  [ -f "$m/SHA256SUMS" ] || mkmirror "$m" >&2
  echo "$m"
}
# std_mirror_args [ARGS...]: M=$(std_mirror) and MIRROR=(--mirror file://$M ARGS...).
std_mirror_args() {
  M=$(std_mirror)
  # shellcheck disable=SC2034 # for the suite
  MIRROR=(--mirror "file://$M" "$@")
}

# expect_installed_gated BIN: an installed layout's cudnnctl (a package's, the tarball's) finds
# its smoke helper in ../libexec/cudnnctl/: an install through it is gated (no GPU: "skipped",
# never "not found", which would fail the install). Leaves the root in $R.
expect_installed_gated() {
  R=$(new_root)
  expect_exit 0 env -u CUDNNCTL_SMOKE_HELPER "$1" --root "$R" --mirror "file://$(std_mirror)" --cuda 12 --json install 9.1.0
  expect_json '[c["status"] for c in d["data"]["checks"] if c["name"] == "smoke"]' '["skipped"]'
  expect_json 'd["data"]["smoke"]["message"].startswith("cudnnctl-smoke not found")' false
}

# probe_bin: build tests/fixtures/stub/probe.c once (no RPATH) and print its path.
probe_bin() {
  local p=$E2E_TMP/probe
  [ -x "$p" ] || ${CC:-cc} -O1 -o "$p" "$E2E_FIXTURES/stub/probe.c" -ldl
  echo "$p"
}

# ns_prelude: the first lines of a script that `unshare -m bash SCRIPT` runs as root to let
# cudnnctl write to the real `/`: a private copy of /etc (ldconfig rewrites /etc/ld.so.cache),
# tmpfs over /opt, /var/lib and /var/cache, and over /usr/local (install adopts a hand-made
# cuDNN it finds in /usr/local/cuda and replaces it by links, issue 5: the host's CUDA home,
# which holds a real cuDNN on some machines, stays hidden). The host's files are never touched.
ns_prelude() {
  cat <<'EOF'
set -eu
mount --make-rprivate /
T=$(mktemp -d)
mount -t tmpfs tmpfs "$T"
cp -a /etc "$T/etc"
mount --bind "$T/etc" /etc
for d in /opt /var/lib /var/cache; do mount -t tmpfs tmpfs "$d"; done
mount -t tmpfs tmpfs /usr/local
EOF
}

# nginx_conf DIR <<EOF: write DIR/nginx.conf, a foreground nginx (as root: user root) whose
# pid, logs and temporary files live in DIR, with the lines on stdin at the end of its http block.
nginx_conf() {
  {
    [ "$(id -u)" -ne 0 ] || echo "user root;"
    cat <<EOF
daemon off;
worker_processes 1;
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections 128; }
http {
    access_log $1/access.log;
    client_body_temp_path $1/client_body;
    proxy_temp_path $1/proxy;
    fastcgi_temp_path $1/fastcgi;
    uwsgi_temp_path $1/uwsgi;
    scgi_temp_path $1/scgi;
EOF
    cat
    echo "}"
  } >"$1/nginx.conf"
}

# start_nginx DIR [RATE]: serve DIR on 127.0.0.1 at a free port; sets MIRROR_URL
# (http://127.0.0.1:PORT), NGINX_PID, NGINX_DIR (config, access.log, error.log). RATE is an
# nginx limit_rate value such as 100k. Call it directly, not in $(...). Skips if no nginx.
start_nginx() {
  local root=$1 rate=${2:-0} nginx nd port pid i
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  [ -x "$nginx" ] || skip "nginx is not installed"
  [ -d "$root" ] || fail "start_nginx: no directory $root"
  root=$(cd "$root" && pwd -P)
  for _ in 1 2 3 4 5; do
    nd=$(mktemp -d "$E2E_TMP/nginx.XXXXXX")
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    nginx_conf "$nd" <<EOF
    types { application/json json; application/x-xz xz; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$port;
        root $root;
        autoindex on;
        limit_rate $rate;
    }
EOF
    "$nginx" -p "$nd" -c "$nd/nginx.conf" -e "$nd/error.log" </dev/null >"$nd/stdout" 2>&1 &
    pid=$!
    for i in $(seq 200); do # up to ~10 s
      kill -0 "$pid" 2>/dev/null || break
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        _E2E_NGINX_PIDS+=("$pid")
        NGINX_PID=$pid
        NGINX_DIR=$nd
        MIRROR_URL=http://127.0.0.1:$port
        export MIRROR_URL
        return 0
      fi
      sleep 0.05
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  fail "start_nginx: nginx did not start: $(cat "$nd/error.log" "$nd/stdout" 2>/dev/null)"
}

# stop_nginx [PID]: stop one nginx started by start_nginx, or all of them.
stop_nginx() {
  local p i keep=()
  for p in "${_E2E_NGINX_PIDS[@]}"; do
    if [ $# -gt 0 ] && [ "$p" != "$1" ]; then
      keep+=("$p")
      continue
    fi
    kill -TERM "$p" 2>/dev/null || true
    for i in $(seq 50); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  _E2E_NGINX_PIDS=("${keep[@]}")
}
