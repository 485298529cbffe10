# Helpers shared by the issue-14 suites (suites/redteam.bash, suites/protocol.bash) and
# suites/resources.bash. Source after lib.bash and crash_lib.bash.
[ -z "${_E2E_REDTEAM_LIB_LOADED:-}" ] || return 0
_E2E_REDTEAM_LIB_LOADED=1

E91=9.1.0.70-cuda12-linux-x86_64
E897=8.9.7.29-cuda12-linux-x86_64
HAVE_NS=1
unshare -m true 2>/dev/null || HAVE_NS=0
N=0
export CUDNNCTL CR_MIRROR CRASH_CHECK

# rt_start WHY: the start of the issue-14 suites: $CUDNNCTL set, root (WHY: what for), the
# template roots (cr_templates)
rt_start() {
  require_cudnnctl
  [ "$(id -u)" -eq 0 ] || skip "needs root: $1"
  cr_templates
}

# in_ns SCRIPT: bash SCRIPT as root in a private mount namespace (mounts vanish with it);
# SCRIPT may call ns_tmpfs
in_ns() { unshare -m bash -c "set -euo pipefail; $(declare -f ns_tmpfs); $1"; }

# ns_tmpfs DIR SIZE (in an in_ns SCRIPT): DIR's content moves onto a tmpfs of SIZE mounted
# over DIR (a copy of it stays beside it, DIR.copy)
ns_tmpfs() {
  cp -a "$1" "$1.copy"
  mount -t tmpfs -o "size=$2,mode=0755" tmpfs "$1"
  cp -a "$1.copy/." "$1/"
}

# bounded SECONDS ARGS...: cudnnctl ARGS under `timeout` (like run: $RC, $OUT, $ERR); a hang
# is a failure naming the command
bounded() {
  local t=$1
  shift
  run timeout -k 2 "$t" "$CUDNNCTL" "$@"
  [ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || fail "cudnnctl $* hung (killed after $t s)"
}

# one_error_line: stderr of the last command holds exactly one "cudnnctl: error:" line
one_error_line() {
  expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines"
}

# rt_case ID FUNCTION [ARGS...]: run one case. RT_ONLY=ID,ID... runs only those;
# RT_KEEP_GOING=1 runs each in a subshell and appends "ID rc" to $RT_RESULTS instead of
# stopping at the first failure (how main's results in docs/RELIABILITY.md were collected).
RT_RESULTS=${RT_RESULTS:-$E2E_TMP/results}
rt_case() {
  if [ -n "${RT_ONLY:-}" ] && [[ ",$RT_ONLY," != *",$1,"* ]]; then
    return 0
  fi
  if [ "${RT_KEEP_GOING:-}" = 1 ]; then
    local rc=0
    ("${@:2}") || rc=$?
    echo "$1 $rc" >>"$RT_RESULTS"
  else
    "${@:2}"
  fi
  N=$((N + 1))
}
