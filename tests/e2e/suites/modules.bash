# modules: the Tcl and Lua module files of every store entry (integrate/modulefiles.hpp),
# loaded by the real Lmod (Debian's lmod package) and the real Environment Modules
# (modulecmd.tcl of Debian's environment-modules package; the two packages conflict, so
# scripts/install-deps installs lmod and unpacks environment-modules into
# /opt/cudnnctl-test/environment-modules). A program compiled against $CUDNN_INCLUDE_DIR
# prints CUDNN_MAJOR, one that does a plain dlopen("libcudnn.so.9") names the store entry.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl
M=$(std_mirror)
MIRROR=(--mirror "file://$M" --cuda 12)
LMOD_INIT=/usr/share/lmod/lmod/init/bash
EM_ROOT=${CUDNNCTL_ENVMODULES_DIR:-/opt/cudnnctl-test/environment-modules}
EM_CMD=$EM_ROOT/usr/lib/x86_64-linux-gnu/modulecmd.tcl

TEST "system mode: a Tcl and a Lua file per entry, store paths only, default = the active one"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.27.0
MF=$R/opt/cudnn/modulefiles
E1=/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64
E2=/opt/cudnn/store/9.27.0.42-cuda12-linux-x86_64
expect_file "$MF/cudnn/9.1.0-cuda12"
expect_file "$MF/cudnn/9.27.0-cuda12"
expect_file "$MF/lmod/cudnn/9.1.0-cuda12.lua"
expect_file "$MF/lmod/cudnn/9.27.0-cuda12.lua"
expect_eq "$(head -n1 "$MF/cudnn/9.1.0-cuda12")" "#%Module1.0"
expect_contains "$MF/cudnn/9.1.0-cuda12" "setenv CUDNN_PATH \"$E1\""
expect_contains "$MF/cudnn/9.1.0-cuda12" "prepend-path LD_LIBRARY_PATH \"$E1/lib\""
expect_contains "$MF/cudnn/9.1.0-cuda12" "conflict cudnn"
expect_contains "$MF/lmod/cudnn/9.27.0-cuda12.lua" "setenv(\"CUDNN_INCLUDE_DIR\", \"$E2/include\")"
expect_contains "$MF/lmod/cudnn/9.27.0-cuda12.lua" "prepend_path(\"CPATH\", \"$E2/include\")"
expect_contains "$MF/lmod/cudnn/9.27.0-cuda12.lua" 'conflict("cudnn")'
! grep -rq current "$MF" || fail "a module file names current/"
expect_contains "$MF/cudnn/.version" 'set ModulesVersion "9.27.0-cuda12"'
expect_symlink "$MF/lmod/cudnn/default" 9.27.0-cuda12.lua

TEST "rollback moves the default; remove and gc take the entry's module files with them"
expect_exit 0 cudnnctl --root "$R" rollback
expect_contains "$MF/cudnn/.version" 'set ModulesVersion "9.1.0-cuda12"'
expect_symlink "$MF/lmod/cudnn/default" 9.1.0-cuda12.lua
expect_exit 0 cudnnctl --root "$R" remove 9.27.0
expect_no_file "$MF/cudnn/9.27.0-cuda12"
expect_no_file "$MF/lmod/cudnn/9.27.0-cuda12.lua"
expect_file "$MF/cudnn/9.1.0-cuda12"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 8.9.7
expect_file "$MF/cudnn/8.9.7-cuda12"
expect_exit 0 cudnnctl --root "$R" gc --keep 1
expect_no_file "$MF/cudnn/9.1.0-cuda12"
expect_no_file "$MF/lmod/cudnn/9.1.0-cuda12.lua"
expect_contains "$MF/cudnn/.version" 'set ModulesVersion "8.9.7-cuda12"'

TEST "cuda_module in config.toml: prereq on the CUDA module; a site's own file is left alone"
mkdir -p "$R/etc/cudnnctl"
printf 'cuda_module = "cuda/{cuda}.x"\n' >"$R/etc/cudnnctl/config.toml"
echo '#%Module1.0' >"$MF/cudnn/site-own"
expect_exit 0 cudnnctl --root "$R" recover
expect_contains "$MF/cudnn/8.9.7-cuda12" "prereq cuda/12.x"
expect_contains "$MF/lmod/cudnn/8.9.7-cuda12.lua" 'prereq("cuda/12.x")'
expect_file "$MF/cudnn/site-own"
printf 'cuda_module = "cuda {cuda}"\n' >"$R/etc/cudnnctl/config.toml"
expect_exit 2 cudnnctl --root "$R" status
expect_contains "$ERR" "cuda_module must be a module name"
rm "$R/etc/cudnnctl/config.toml"

TEST "an install from before module files gets them from recover; a second recover changes nothing"
rm -rf "$MF"
expect_exit 0 cudnnctl --root "$R" --json recover
expect_json 'd["changed"]' true
expect_file "$MF/cudnn/8.9.7-cuda12"
expect_symlink "$MF/lmod/cudnn/default" 8.9.7-cuda12.lua
snap=$(tree_snapshot "$MF")
expect_exit 0 cudnnctl --root "$R" --json recover
expect_json 'd["changed"]' false
expect_eq "$(tree_snapshot "$MF")" "$snap" "a second recover rewrote module files"
printf 'module_files = false\n' >"$R/etc/cudnnctl/config.toml"
expect_exit 0 cudnnctl --root "$R" recover
expect_no_file "$MF/cudnn/8.9.7-cuda12"
expect_no_file "$MF/lmod/cudnn/default"
rm "$R/etc/cudnnctl/config.toml"

TEST "adopt: the adopted entry gets its module files, and the default"
RA=$(new_root)
cuda_home_plain "$RA"
hand_copy "$(release_dir 9.1.0 12)" "$RA/usr/local/cuda" cp-P
expect_exit 0 cudnnctl --root "$RA" adopt
AE=$(ls "$RA/opt/cudnn/store")
AM=$(ls "$RA/opt/cudnn/modulefiles/cudnn") # the module version: the adopted label, -cuda12
[[ "$AM" =~ ^9\.1\.0(\.70)?-cuda12$ ]] || fail "adopted module files: '$AM'"
expect_contains "$RA/opt/cudnn/modulefiles/cudnn/$AM" "setenv CUDNN_PATH \"/opt/cudnn/store/$AE\""
expect_contains "$RA/opt/cudnn/modulefiles/cudnn/.version" "set ModulesVersion \"$AM\""
expect_symlink "$RA/opt/cudnn/modulefiles/lmod/cudnn/default" "$AM.lua"

# The real module tools need the store paths to exist on this host: --user with HOME in the
# temporary directory (root /, nothing written outside HOME; the user suite proves that).
H=$E2E_TMP/home
mkdir -m 755 "$H"
userctl() { HOME=$H XDG_DATA_HOME= XDG_STATE_HOME= XDG_CACHE_HOME= XDG_CONFIG_HOME= cudnnctl --user "$@"; }
expect_exit 0 userctl "${MIRROR[@]}" --force install 9.1.0
expect_exit 0 userctl "${MIRROR[@]}" --force install 9.27.0
UP=$H/.local/share/cudnnctl
UE1=$UP/store/9.1.0.70-cuda12-linux-x86_64
UE2=$UP/store/9.27.0.42-cuda12-linux-x86_64
cat >"$E2E_TMP/major.c" <<'EOF'
#include <cudnn_version.h>
#include <stdio.h>
int main(void) { printf("major=%d minor=%d\n", CUDNN_MAJOR, CUDNN_MINOR); return 0; }
EOF
cat >"$E2E_TMP/which.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
int main(void) {
  void* h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  struct link_map* lm = NULL;
  dlinfo(h, RTLD_DI_LINKMAP, &lm);
  size_t (*v)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
  printf("loaded=%s version=%zu\n", lm ? lm->l_name : "?", v ? v() : 0);
  return 0;
}
EOF
${CC:-cc} -O1 -o "$E2E_TMP/which" "$E2E_TMP/which.c" -ldl
# in_modules INIT-SNIPPET DIR SCRIPT: a clean bash with the module command of one tool.
in_modules() {
  env -i PATH=/usr/bin:/bin HOME="$H" CC="${CC:-cc}" T="$E2E_TMP" bash -c "$1
module use '$2' || exit 9
$3"
}
consumer_checks() { # consumer_checks TOOL: what a user does after module load
  cat <<'EOF'
echo "path=$CUDNN_PATH root=$CUDNN_ROOT inc=$CUDNN_INCLUDE_DIR libdir=$CUDNN_LIB_DIR lib=$CUDNN_LIBRARY"
echo "cpath=$CPATH library_path=$LIBRARY_PATH ld=$LD_LIBRARY_PATH"
$CC -o "$T/major.$$" "$T/major.c" && "$T/major.$$"
"$T/which"
EOF
}
LMOD_SETUP="source $LMOD_INIT"
EM_SETUP="module() { eval \"\$(tclsh8.6 '$EM_CMD' bash \"\$@\")\"; }"

TEST "real Lmod: module load cudnn/<v> sets the store paths; a compiled program finds both"
[ -f "$LMOD_INIT" ] || skip "Lmod is not installed ($LMOD_INIT; scripts/install-deps installs lmod)"
run in_modules "$LMOD_SETUP" "$UP/modulefiles/lmod" "module load cudnn/9.1.0-cuda12 && $(consumer_checks)"
[ "$RC" -eq 0 ] || fail "Lmod load failed"
expect_contains "$OUT" "path=$UE1 root=$UE1 inc=$UE1/include libdir=$UE1/lib lib=$UE1/lib/libcudnn.so"
expect_contains "$OUT" "cpath=$UE1/include library_path=$UE1/lib ld=$UE1/lib"
expect_contains "$OUT" "major=9 minor=1"
expect_contains "$OUT" "loaded=$UE1/lib/libcudnn.so.9 version=90100"
run in_modules "$LMOD_SETUP" "$UP/modulefiles/lmod" "module load cudnn && $(consumer_checks)"
[ "$RC" -eq 0 ] || fail "Lmod load of the default failed"
expect_contains "$OUT" "loaded=$UE2/lib/libcudnn.so.9 version=92700"
run in_modules "$LMOD_SETUP" "$UP/modulefiles/lmod" "module -t avail cudnn 2>&1; module avail cudnn 2>&1"
expect_contains "$OUT" "cudnn/9.27.0-cuda12 (D)"
expect_contains "$OUT" "cudnn/9.1.0-cuda12"
# Swapping versions: the one-name rule and `conflict cudnn` leave one cudnn loaded.
run in_modules "$LMOD_SETUP" "$UP/modulefiles/lmod" "module load cudnn/9.1.0-cuda12; module load cudnn/9.27.0-cuda12; echo ld=\$LD_LIBRARY_PATH"
expect_contains "$OUT" "ld=$UE2/lib"
expect_not_contains "$OUT" "$UE1"

TEST "real Environment Modules: the Tcl files load the same way, .version marks the default"
[ -f "$EM_CMD" ] || skip "Environment Modules is not unpacked at $EM_ROOT (scripts/install-deps)"
command -v tclsh8.6 >/dev/null || skip "tclsh8.6 is missing"
run in_modules "$EM_SETUP" "$UP/modulefiles" "module load cudnn/9.27.0-cuda12 && $(consumer_checks)"
[ "$RC" -eq 0 ] || fail "Environment Modules load failed"
expect_contains "$OUT" "path=$UE2 root=$UE2 inc=$UE2/include libdir=$UE2/lib lib=$UE2/lib/libcudnn.so"
expect_contains "$OUT" "cpath=$UE2/include library_path=$UE2/lib ld=$UE2/lib"
expect_contains "$OUT" "major=9 minor=27"
expect_contains "$OUT" "loaded=$UE2/lib/libcudnn.so.9 version=92700"
expect_exit 0 userctl rollback
run in_modules "$EM_SETUP" "$UP/modulefiles" "module avail cudnn 2>&1; module load cudnn && $(consumer_checks)"
[ "$RC" -eq 0 ] || fail "Environment Modules load of the default failed"
expect_contains "$OUT" "cudnn/9.1.0-cuda12(default)"
expect_contains "$OUT" "loaded=$UE1/lib/libcudnn.so.9 version=90100"
run in_modules "$EM_SETUP" "$UP/modulefiles" "module load cudnn/9.1.0-cuda12; module load cudnn/9.27.0-cuda12; echo rc=\$?"
expect_not_contains "$OUT" "rc=0"
expect_contains "$ERR" "Module cannot be loaded due to a conflict"
