# The dynamic loader's view (issue 2): a process that loaded libcudnn.so.N before a switch keeps
# getting sub-libraries of its own generation after it; and, with root "/" inside a private mount
# namespace, a real child process resolves libcudnn.so.N into the active store entry.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl

MIRROR=$(std_mirror)
start_nginx "$MIRROR"
URL=$MIRROR_URL

# A program built without RPATH: dlopen the shim at argv[1], print where it came from, wait for
# a line on stdin, then load argv[2] through the shim (its RUNPATH $ORIGIN, lazily, as real
# cuDNN 9 does) and print that sub-library's version and path.
LATE=$E2E_TMP/late_sub
cat >"$E2E_TMP/late_sub.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
static const char* where(void* h) {
  struct link_map* lm = NULL;
  return dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm ? lm->l_name : "?";
}
int main(int argc, char** argv) {
  void* shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!shim) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  size_t (*v)(void) = (size_t (*)(void))dlsym(shim, "cudnnGetVersion");
  printf("shim=%s\nshim_version=%zu\n", where(shim), v ? v() : 0);
  fflush(stdout);
  char line[64];
  if (!fgets(line, sizeof line, stdin)) return 2;
  int (*load_sub)(const char*) = (int (*)(const char*))dlsym(shim, "cudnnctl_stub_load_sub");
  if (!load_sub) return 3;
  printf("sub=%d\n", load_sub(argv[2]));
  void* h = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
  printf("sub_path=%s\n", h ? where(h) : "?");
  return 0;
}
EOF
${CC:-cc} -O1 -o "$LATE" "$E2E_TMP/late_sub.c" -ldl

# run_late SHIM: start late_sub on SHIM, switch generations while it waits, then let it load the
# graph sub-library; prints the sub-library's version number.
run_late() {
  local shim=$1 fifo=$E2E_TMP/late.$RANDOM out=$E2E_TMP/late.out
  shift
  mkfifo "$fifo"
  "$LATE" "$shim" libcudnn_graph.so.9 <"$fifo" >"$out" 2>&1 &
  local pid=$!
  exec {w}>"$fifo"
  for _ in $(seq 100); do grep -q '^shim=' "$out" && break; sleep 0.05; done
  grep -q '^shim=' "$out" || fail "late_sub did not load the shim: $(cat "$out")"
  "$@" >/dev/null 2>&1 || true
  echo go >&$w
  exec {w}>&-
  wait "$pid" || fail "late_sub failed: $(cat "$out")"
  rm -f "$fifo"
  cat "$out"
}

TEST "a running process keeps its own generation's sub-libraries across a switch"
R=$(new_root)
c() { cudnnctl --root "$R" --mirror "$URL/" --cuda 12 "$@"; }
expect_exit 0 c install 9.1.0
old_entry=9.1.0.70-cuda12-linux-x86_64
# The loader sees what the drop-in names: the immutable store entry.
dropin_dir=$(grep -v '^#' "$R/etc/ld.so.conf.d/00-cudnnctl.conf")
expect_eq "$dropin_dir" "/opt/cudnn/store/$old_entry/lib"
shim="$R$dropin_dir/libcudnn.so.9"
out=$(run_late "$shim" cudnnctl --root "$R" --mirror "$URL/" --cuda 12 install 9.27.0)
expect_symlink "$R/opt/cudnn/current" generations/2
grep -q '^shim_version=90100$' <<<"$out" || fail "expected the 9.1.0 shim: $out"
grep -q '^sub=90100$' <<<"$out" || fail "the sub-library loaded after the switch is not 9.1.0's: $out"
grep -q "^sub_path=$R/opt/cudnn/store/$old_entry/lib/libcudnn_graph.so.9$" <<<"$out" ||
  fail "the sub-library came from the wrong place: $out"

TEST "control: through 'current' the same process would mix generations (why the drop-in names the store)"
out=$(run_late "$R/opt/cudnn/current/lib/libcudnn.so.9" cudnnctl --root "$R" rollback)
expect_symlink "$R/opt/cudnn/current" generations/1
# The shim came from 9.27.0, the lazily loaded sub-library from 9.1.0: a mixed process.
grep -q '^shim_version=92700$' <<<"$out" || fail "expected the 9.27.0 shim: $out"
grep -q '^sub=90100$' <<<"$out" || fail "expected the mix through current/: $out"

TEST "root / in a private mount namespace: the real loader resolves into the active store entry"
[ "$(id -u)" -eq 0 ] || skip "needs root for unshare -m"
command -v unshare >/dev/null || skip "unshare is not installed"
unshare -m true 2>/dev/null || skip "unshare -m is not permitted here"
WHICH=$E2E_TMP/which_cudnn
cat >"$E2E_TMP/which.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
int main(int argc, char** argv) {
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  struct link_map* lm = NULL;
  dlinfo(h, RTLD_DI_LINKMAP, &lm);
  size_t (*v)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
  printf("%s %zu\n", lm ? lm->l_name : "?", v ? v() : 0);
  return 0;
}
EOF
${CC:-cc} -O1 -o "$WHICH" "$E2E_TMP/which.c" -ldl
# Everything the test writes lands on tmpfs inside the namespace (ns_prelude).
{
  ns_prelude
  cat <<EOF
unset LD_LIBRARY_PATH
# The host's /usr/local/cuda is CUDA 13: --force accepts the CUDA 12 builds (exit 7 otherwise).
"$CUDNNCTL" --mirror "$URL/" --cuda 12 --force install 9.1.0 >&2
echo "first: \$("$WHICH" libcudnn.so.9)"
"$CUDNNCTL" --mirror "$URL/" --cuda 12 --force install 9.27.0 >&2
echo "second: \$("$WHICH" libcudnn.so.9)"
"$CUDNNCTL" rollback >&2
echo "rolled: \$("$WHICH" libcudnn.so.9)"
echo "dropin: \$(grep -v '^#' /etc/ld.so.conf.d/00-cudnnctl.conf)"
EOF
} >"$E2E_TMP/inside.sh"
host_cache=$(sha256sum /etc/ld.so.cache)
host_cudnn() { find /usr/local -maxdepth 5 \( -name 'libcudnn*' -o -name 'cudnn*.h' \) -printf '%p %y %s %T@ %l\n' 2>/dev/null | sort; }
host_cudnn_before=$(host_cudnn)
host_opt=$(ls -A /opt | sort | tr '\n' ' ')
expect_exit 0 unshare -m bash "$E2E_TMP/inside.sh"
expect_contains "$OUT" "first: /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9 90100"
expect_contains "$OUT" "second: /opt/cudnn/store/9.27.0.42-cuda12-linux-x86_64/lib/libcudnn.so.9 92700"
expect_contains "$OUT" "rolled: /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib/libcudnn.so.9 90100"
expect_contains "$OUT" "dropin: /opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib"
expect_eq "$(sha256sum /etc/ld.so.cache)" "$host_cache" "the host's ld.so.cache changed"
expect_eq "$(host_cudnn)" "$host_cudnn_before" "the host's cuDNN files under /usr/local changed"
expect_eq "$(ls -A /opt | sort | tr '\n' ' ')" "$host_opt" "the host's /opt changed"
[ ! -e /etc/ld.so.conf.d/00-cudnnctl.conf ] || fail "the host got a cudnnctl drop-in"
[ ! -e /var/lib/cudnnctl ] || fail "the host got /var/lib/cudnnctl"
