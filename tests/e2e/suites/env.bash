# env: `cudnnctl env` prints what build systems look for, read-only; cudnn.pc follows every
# switch; a small CMake project finds cuDNN through both and builds a program that includes
# cudnn_version.h and runs against the active generation.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl
command -v cmake >/dev/null && command -v pkg-config >/dev/null || skip "cmake or pkg-config missing"
M=$(std_mirror)
MIRROR=(--mirror "file://$M" --cuda 12)
R=$(new_root)

TEST "env with nothing active: exit 2, nothing created"
expect_exit 2 cudnnctl --root "$R" env --json
expect_json 'd["error"]["code"]' nothing_active
[ ! -e "$R/var" ] && [ ! -e "$R/opt" ] || fail "env created files"

TEST "env prints CUDNN_PATH, CUDNN_ROOT, CUDNN_INCLUDE_DIR, CUDNN_LIB_DIR, CUDNN_LIBRARY, CUDNN_INSTALL_PATH, TF_CUDNN_VERSION (sh), read-only"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0
tree_snapshot "$R" >"$E2E_TMP/root.before"
expect_exit 0 cudnnctl --root "$R" env
cp "$OUT" "$E2E_TMP/env.sh"
expect_contains "$OUT" "export CUDNN_PATH='$R/opt/cudnn/current';"
expect_contains "$OUT" "export CUDNN_INCLUDE_DIR='$R/opt/cudnn/current/include';"
expect_contains "$OUT" "export CUDNN_LIBRARY='$R/opt/cudnn/current/lib/libcudnn.so';"
expect_contains "$OUT" "export CUDNN_ROOT='$R/opt/cudnn/current';"
expect_contains "$OUT" "export CUDNN_LIB_DIR='$R/opt/cudnn/current/lib';"
expect_contains "$OUT" "export CUDNN_INSTALL_PATH='$R/opt/cudnn/current';"
expect_contains "$OUT" "export TF_CUDNN_VERSION='9';"
expect_not_contains "$OUT" LD_LIBRARY_PATH
expect_eq "$(wc -l <"$OUT")" 7 "lines"
got=$(env -i bash -c ". '$E2E_TMP/env.sh'; echo \"\$CUDNN_PATH|\$CUDNN_INCLUDE_DIR|\$CUDNN_LIBRARY\"")
expect_eq "$got" "$R/opt/cudnn/current|$R/opt/cudnn/current/include|$R/opt/cudnn/current/lib/libcudnn.so"
expect_exit 0 cudnnctl --root "$R" env --ld-library-path --json
expect_json 'd["data"]["CUDNN_PATH"]' "$R/opt/cudnn/current"
expect_json 'd["data"]["LD_LIBRARY_PATH"]' "$R/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib"
expect_json 'd["data"]["pkg_config_path"]' "$R/opt/cudnn/lib/pkgconfig"
expect_exit 0 cudnnctl --root "$R" env --ld-library-path
expect_contains "$OUT" "export LD_LIBRARY_PATH='$R/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib'\"\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\";"
got=$(env -i LD_LIBRARY_PATH=/x bash -c "eval \"\$1\"; echo \"\$LD_LIBRARY_PATH\"" _ "$(cat "$OUT")")
expect_eq "$got" "$R/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib:/x"
expect_exit 0 cudnnctl --root "$R" env --shell fish --ld-library-path
expect_contains "$OUT" "set -gx CUDNN_PATH '$R/opt/cudnn/current';"
expect_contains "$OUT" "set -gx LD_LIBRARY_PATH '$R/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64/lib' \$LD_LIBRARY_PATH;"
if command -v fish >/dev/null; then
  got=$(fish -c "$(cat "$OUT"); echo \$CUDNN_PATH")
  expect_eq "$got" "$R/opt/cudnn/current"
fi
expect_exit 2 cudnnctl --root "$R" env --shell csh
cmp -s "$E2E_TMP/root.before" <(tree_snapshot "$R") || fail "env changed the root"

TEST "cudnn.pc is maintained at every switch"
PC=$R/opt/cudnn/lib/pkgconfig/cudnn.pc
expect_file "$PC"
expect_eq "$(PKG_CONFIG_PATH=$R/opt/cudnn/lib/pkgconfig pkg-config --modversion cudnn)" 9.1.0.70
expect_eq "$(PKG_CONFIG_PATH=$R/opt/cudnn/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R pkg-config --cflags --libs cudnn | sed "s/ *$//")" \
  "-I$R/opt/cudnn/current/include -L$R/opt/cudnn/current/lib -lcudnn"

TEST "a CMake project finds cuDNN through env and pkg-config, builds and runs against it"
build_consumer() { # build_consumer DIR: configure and build with the environment `env` gives
  local b=$1
  (
    eval "$(cudnnctl --root "$R" env --ld-library-path)"
    export PKG_CONFIG_PATH=$R/opt/cudnn/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R
    cmake -S "$E2E_FIXTURES/adopt/cmake-consumer" -B "$b" -DCMAKE_SKIP_BUILD_RPATH=ON >"$b.log" 2>&1 &&
      cmake --build "$b" >>"$b.log" 2>&1 &&
      "$b/via_env" >"$b.env.out" && "$b/via_pc" >"$b.pc.out"
  ) || fail "consumer build/run failed: $(tail -20 "$b.log")"
}
build_consumer "$E2E_TMP/b9"
expect_contains "$E2E_TMP/b9/found.txt" "env_library=$R/opt/cudnn/current/lib/libcudnn.so"
expect_contains "$E2E_TMP/b9/found.txt" "pc_version=9.1.0.70"
expect_contains "$E2E_TMP/b9/found.txt" "pc_include=$R/opt/cudnn/current/include"
expect_eq "$(cat "$E2E_TMP/b9.env.out")" "header=9.1.0 runtime=90100" "via env"
expect_eq "$(cat "$E2E_TMP/b9.pc.out")" "header=9.1.0 runtime=90100" "via pkg-config"

TEST "after a switch the same project configures against the new generation"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 8.9.7
expect_eq "$(PKG_CONFIG_PATH=$R/opt/cudnn/lib/pkgconfig pkg-config --modversion cudnn)" 8.9.7.29
build_consumer "$E2E_TMP/b8"
expect_contains "$E2E_TMP/b8/found.txt" "pc_version=8.9.7.29"
expect_eq "$(cat "$E2E_TMP/b8.env.out")" "header=8.9.7 runtime=8907" "via env after the switch"
expect_eq "$(cat "$E2E_TMP/b8.pc.out")" "header=8.9.7 runtime=8907" "via pkg-config after the switch"
expect_exit 0 cudnnctl --root "$R" rollback
expect_contains "$PC" "Version: 9.1.0.70"
