# shapes: every shape of hand-made cuDNN install found in the wild (issue 15), each run through
# adopt -> install another version -> rollback -> use -> adopt --undo. After every step, and
# again after a system-style `ldconfig -r ROOT` (what every package install runs: it rewrites
# SONAME links in every directory the loader config names): the CUDA home's libcudnn* and
# cudnn*.h resolve to the active entry, `grep CUDNN_MAJOR -A 2` reads the active version,
# the ld.so cache resolves libcudnn.so.N into the active entry, and that ldconfig run changed
# nothing under /usr or the store. After --undo every original path holds its original bytes,
# mode and link text. Shapes that cannot be taken over safely are refused, nothing changed.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl
M=$(std_mirror)
MIRROR=(--mirror "file://$M" --cuda 12)
R8=$(release_dir 8.9.7 12)
R9=$(release_dir 9.1.0 12)
E91=9.1.0.70-cuda12-linux-x86_64
E927=9.27.0.42-cuda12-linux-x86_64
MA=/usr/lib/x86_64-linux-gnu

# toolkit ROOT DIR VERSION: a CUDA toolkit at ROOT/DIR (include/, lib64/, a runtime header).
toolkit() {
  local r=$1 d=$2 v=$3
  mkdir -p "$r$d/include" "$r$d/lib64"
  echo "#define CUDART_VERSION ${v%%.*}0${v#*.}0" >"$r$d/include/cuda_runtime_api.h"
  printf 'stub cudart\n' >"$r$d/lib64/libcudart.so.$v.140"
}

# plain_home ROOT cp|cp-P [LOADER_DIR]: a CUDA 12.2 toolkit at /usr/local/cuda with 8.9.7 copied
# in by hand; LOADER_DIR (if given) in /etc/ld.so.conf.d/cuda-12-2.conf, as CUDA's packages do.
plain_home() {
  toolkit "$1" /usr/local/cuda 12.2
  hand_copy "$R8" "$1/usr/local/cuda" "$2"
  [ -z "${3:-}" ] || echo "$3" >"$1/etc/ld.so.conf.d/cuda-12-2.conf"
}

# sys_ldconfig ROOT: the system's own ldconfig run (links updated, unlike cudnnctl's -X).
sys_ldconfig() { ldconfig -r "$1" 2>/dev/null; }

# first_provider ROOT SONAME: the file the ld.so cache under ROOT gives SONAME (first entry).
first_provider() { ldconfig -r "$1" -p | awk -v s="$2" '$1 == s && /x86-64/ { print $NF; exit }'; }

# usr_snapshot ROOT: /usr and the store, for "ldconfig changed nothing".
usr_snapshot() { tree_snapshot "$1/usr" && { [ ! -d "$1/opt" ] || tree_snapshot "$1/opt"; }; }
# expect_adopt_advice FILE TEXT: FILE (the output) contains TEXT, and advises `cudnnctl adopt`.
expect_adopt_advice() {
  expect_contains "$1" "$2"
  expect_contains "$1" "cudnnctl adopt"
}

# header_reads ROOT HEADER X.Y.Z: `grep CUDNN_MAJOR -A 2 HEADER` reads X, Y, Z.
header_reads() {
  local h got
  h=$(in_root "$1" "$2")
  [ -f "$h" ] || fail "no $2"
  got=$(grep CUDNN_MAJOR -A 2 "$h" | awk '/#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{print $3}' | paste -sd.)
  expect_eq "$got" "$3" "grep CUDNN_MAJOR -A 2 $2"
}

# check_active ROOT ENTRY X.Y.Z [HOME]: what every step must leave, before and after a system
# ldconfig run.
check_active() {
  local r=$1 entry=$2 ver=$3 home=${4:-/usr/local/cuda} major pass why
  major=${ver%%.*}
  for pass in cudnnctl system-ldconfig; do
    if [ "$pass" = system-ldconfig ]; then
      usr_snapshot "$r" >"$E2E_TMP/usr.before-ldconfig"
      sys_ldconfig "$r"
      usr_snapshot "$r" >"$E2E_TMP/usr.after-ldconfig"
      diff "$E2E_TMP/usr.before-ldconfig" "$E2E_TMP/usr.after-ldconfig" >"$E2E_TMP/usr.diff" ||
        fail "ldconfig -r changed what cudnnctl left: $(head -4 "$E2E_TMP/usr.diff")"
    fi
    why=$(python3 "$E2E_FIXTURES/adopt/check_home_links.py" "$r" "$entry" "$home" 2>&1) ||
      fail "after $pass: $why"
    header_reads "$r" "$home/include/cudnn_version.h" "$ver"
    case $(first_provider "$r" "libcudnn.so.$major") in
      "/opt/cudnn/store/$entry/lib/"*) ;;
      *) fail "after $pass: ldconfig -r resolves libcudnn.so.$major to '$(first_provider "$r" "libcudnn.so.$major")', not into $entry" ;;
    esac
    expect_exit 0 cudnnctl --root "$r" status --json
    expect_json 'd["active"]["version"].startswith("'"$ver"'")' true
    expect_exit 0 cudnnctl --root "$r" verify
  done
}

# run_shape ROOT [HOME]: adopt -> install 9.1.0 -> rollback -> use 9.1.0 -> adopt --undo, every
# step checked; before adopt, the machine as it is after its own ldconfig run. The adopted
# build is 8.9.7 (ADOPTED_VERSION overrides) and the other version 9.1.0 (OTHER, OTHER_ENTRY).
run_shape() {
  local r=$1 home=${2:-/usr/local/cuda} av=${ADOPTED_VERSION:-8.9.7} ov=${OTHER:-9.1.0}
  local oe=${OTHER_ENTRY:-$E91} ea
  sys_ldconfig "$r"
  tree_snapshot "$r/usr" >"$E2E_TMP/shape.before"
  expect_exit 0 cudnnctl --root "$r" adopt --json
  expect_json 'd["changed"]' true
  ea=$(json_get 'd["data"]["entry"]')
  check_active "$r" "$ea" "$av" "$home"
  expect_exit 0 cudnnctl --root "$r" "${MIRROR[@]}" install "$ov" --json
  check_active "$r" "$oe" "$ov" "$home"
  expect_exit 0 cudnnctl --root "$r" rollback --json
  check_active "$r" "$ea" "$av" "$home"
  expect_exit 0 cudnnctl --root "$r" use "$ov" --json
  check_active "$r" "$oe" "$ov" "$home"
  expect_exit 0 cudnnctl --root "$r" adopt --undo --json
  expect_json 'd["active"]' null
  expect_json 'd["warnings"]' '[]'
  for pass in cudnnctl system-ldconfig; do
    [ "$pass" = cudnnctl ] || sys_ldconfig "$r"
    diff "$E2E_TMP/shape.before" <(tree_snapshot "$r/usr") >"$E2E_TMP/shape.diff" ||
      fail "after --undo ($pass) /usr differs from before adopt: $(head -6 "$E2E_TMP/shape.diff")"
  done
}

# ---------------------------------------------------------------------------------------------
TEST "shape 1 (the bug): cp without -P, the CUDA lib dir in the loader config"
R=$(new_root)
plain_home "$R" cp /usr/local/cuda/lib64
[ -f "$R/usr/local/cuda/lib64/libcudnn.so.8" ] && [ ! -L "$R/usr/local/cuda/lib64/libcudnn.so.8" ] || fail "fixture: expected the cp mistake"
# The issue as reported: install straight away (it adopts first); libcudnn must not vanish.
R1=$(new_root)
cp -a "$R/." "$R1/"
expect_exit 0 cudnnctl --root "$R1" "${MIRROR[@]}" install 9.1.0 --json
check_active "$R1" "$E91" 9.1.0
ls "$R1/usr/local/cuda/lib64/" | grep -q '^libcudnn.so.9$' || fail "libcudnn vanished from lib64"
expect_exit 0 cudnnctl --root "$R1" "${MIRROR[@]}" install 9.27.0 --json
check_active "$R1" "$E927" 9.27.0
expect_exit 0 cudnnctl --root "$R1" rollback --json
check_active "$R1" "$E91" 9.1.0
expect_exit 0 cudnnctl --root "$R1" rollback --json
expect_json 'd["active"]["version"]' 8.9.7
expect_exit 0 cudnnctl --root "$R1" adopt --undo --json
expect_json 'd["warnings"]' '[]'
run_shape "$R"

TEST "shape 2: cp -P (the correct recipe), the CUDA lib dir in the loader config"
R=$(new_root)
plain_home "$R" cp-P /usr/local/cuda/lib64
run_shape "$R"

for conf in /usr/local/cuda/lib64 /usr/local/cuda-12.2/lib64; do
  TEST "shape 3: /usr/local/cuda -> cuda-12.2, the loader config naming $conf"
  R=$(new_root)
  toolkit "$R" /usr/local/cuda-12.2 12.2
  ln -s cuda-12.2 "$R/usr/local/cuda"
  hand_copy "$R8" "$R/usr/local/cuda-12.2" cp
  echo "$conf" >"$R/etc/ld.so.conf.d/cuda-12-2.conf"
  run_shape "$R"
done

TEST "shape 4: targets/x86_64-linux/{lib,include}, lib64 and include links, cp without -P"
R=$(new_root)
T=$R/usr/local/cuda-12.2/targets/x86_64-linux
mkdir -p "$T/lib" "$T/include"
ln -s targets/x86_64-linux/lib "$R/usr/local/cuda-12.2/lib64"
ln -s targets/x86_64-linux/include "$R/usr/local/cuda-12.2/include"
ln -s cuda-12.2 "$R/usr/local/cuda"
echo '#define CUDART_VERSION 12020' >"$T/include/cuda_runtime_api.h"
hand_copy "$R8" "$R/usr/local/cuda-12.2" cp
echo /usr/local/cuda-12.2/targets/x86_64-linux/lib >"$R/etc/ld.so.conf.d/cuda-12-2.conf"
run_shape "$R"
expect_eq "$(find "$T/lib" -name 'libcudnn*' -type l | wc -l)" 0 "links left in targets/x86_64-linux/lib after --undo"
cmp -s "$R8/lib/libcudnn.so.8.9.7" "$T/lib/libcudnn.so.8.9.7" || fail "original bytes"

TEST "shape 5: a cudnn8-devel image (held libcudnn8 + libcudnn8-dev, _v8 headers behind alternatives) plus cudnnctl's 9.x"
if command -v dpkg-deb >/dev/null && command -v dpkg >/dev/null && command -v update-alternatives >/dev/null; then
  R=$(new_root)
  mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers" \
    "$R/var/lib/dpkg/alternatives" "$R/etc/alternatives" "$R$MA"
  : >"$R/var/lib/dpkg/status"
  printf '/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' >"$R/etc/ld.so.conf.d/x86_64-linux-gnu.conf"
  echo /usr/local/cuda/lib64 >"$R/etc/ld.so.conf.d/000_cuda.conf"
  toolkit "$R" /usr/local/cuda-12.2 12.2
  ln -s cuda-12.2 "$R/usr/local/cuda"
  # NVIDIA's packages: the libraries in the multiarch directory, the headers as cudnn*_v8.h.
  V8=$E2E_TMP/v8
  mkdir -p "$V8/include" "$V8/lib"
  for h in "$R8"/include/cudnn*.h; do n=$(basename "$h" .h); cp "$h" "$V8/include/${n}_v8.h"; done
  bash "$E2E_FIXTURES/adopt/mkdeb.sh" "$E2E_TMP/libcudnn8.deb" libcudnn8 8.9.7.29-1+cuda12.2 "$R8" "$MA" -
  bash "$E2E_FIXTURES/adopt/mkdeb.sh" "$E2E_TMP/libcudnn8-dev.deb" libcudnn8-dev 8.9.7.29-1+cuda12.2 "$V8" - /usr/include/x86_64-linux-gnu
  for d in libcudnn8 libcudnn8-dev; do
    expect_exit 0 dpkg --root="$R" --force-not-root --force-script-chrootless --log=/dev/null -i "$E2E_TMP/$d.deb"
    echo "$d hold" | dpkg --root="$R" --set-selections
  done
  slaves=()
  for h in "$R8"/include/cudnn*.h; do
    n=$(basename "$h" .h)
    [ "$n" = cudnn ] || slaves+=(--slave "/usr/include/$n.h" "lib${n}_h" "/usr/include/x86_64-linux-gnu/${n}_v8.h")
  done
  update-alternatives --root "$R" --log /dev/null --install /usr/include/cudnn.h libcudnn \
    /usr/include/x86_64-linux-gnu/cudnn_v8.h 80 "${slaves[@]}" >/dev/null
  expect_symlink "$R/usr/include/cudnn_version.h" /etc/alternatives/libcudnn_version_h
  sys_ldconfig "$R"
  foreign5() { for d in "$MA" /usr/include /var/lib/dpkg /etc/alternatives; do tree_snapshot "$R$d" | sed "s|^|$d |"; done; }
  foreign5 >"$E2E_TMP/f5.before"
  check5() {
    diff "$E2E_TMP/f5.before" <(foreign5) >"$E2E_TMP/f5.diff" || fail "dpkg or alternatives files changed: $(head -4 "$E2E_TMP/f5.diff")"
    expect_eq "$(first_provider "$R" libcudnn.so.8)" "$MA/libcudnn.so.8" "libcudnn.so.8 (dpkg's)"
    header_reads "$R" /usr/include/cudnn_version.h 8.9.7
  }
  expect_exit 0 cudnnctl --root "$R" adopt --json # nothing in the CUDA home: nothing adopted
  expect_json 'd["changed"]' false
  check5
  expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0 --json
  check_active "$R" "$E91" 9.1.0
  check5
  expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.27.0 --json
  check_active "$R" "$E927" 9.27.0
  check5
  expect_exit 0 cudnnctl --root "$R" rollback --json
  check_active "$R" "$E91" 9.1.0
  check5
  expect_exit 0 cudnnctl --root "$R" use 9.27.0 --json
  check_active "$R" "$E927" 9.27.0
  check5
  expect_exit 2 cudnnctl --root "$R" adopt --undo
  expect_contains "$ERR" "nothing to undo"
  check5
  for d in libcudnn8 libcudnn8-dev; do
    expect_exit 0 dpkg --root="$R" --verify "$d"
    expect_eq "$(cat "$OUT")" "" "dpkg --verify $d"
    expect_exit 0 dpkg-query --root="$R" -W -f='${Status}' "$d"
    expect_eq "$(cat "$OUT")" "hold ok installed" "$d status"
  done
else
  fail "dpkg-deb, dpkg and update-alternatives are needed for shape 5"
fi

TEST "shape 6: a stale cudnn_version.h (8) beside 9.x libraries is refused, nothing changed"
R=$(new_root)
toolkit "$R" /usr/local/cuda 12.2
hand_copy "$R9" "$R/usr/local/cuda" cp-P
cp "$R8/include/cudnn_version.h" "$R/usr/local/cuda/include/cudnn_version.h"
echo /usr/local/cuda/lib64 >"$R/etc/ld.so.conf.d/cuda-12-2.conf"
sys_ldconfig "$R"
usr_snapshot "$R" >"$E2E_TMP/r6.before"
expect_exit 2 cudnnctl --root "$R" adopt
expect_contains "$ERR" "/usr/local/cuda/include/cudnn_version.h says 8.9.7"
expect_contains "$ERR" "9.1.0"
expect_contains "$ERR" "cudnnctl adopt"
expect_exit 2 cudnnctl --root "$R" "${MIRROR[@]}" install 9.27.0
expect_contains "$ERR" "says 8.9.7"
diff "$E2E_TMP/r6.before" <(usr_snapshot "$R") >"$E2E_TMP/r6.diff" || fail "a refused adopt changed /usr or made a store: $(head -4 "$E2E_TMP/r6.diff")"
expect_no_file "$R/var/lib/cudnnctl/cuda-home.json"
# What the message says to do: put the matching header back. Then the whole cycle works.
cp "$R9/include/cudnn_version.h" "$R/usr/local/cuda/include/cudnn_version.h"
ADOPTED_VERSION=9.1.0 OTHER=9.27.0 OTHER_ENTRY=$E927 run_shape "$R"

TEST "shape 7: two toolkits (cuda-12.2, cuda-13.0), cuDNN copied into both, cuda -> cuda-12.2"
R=$(new_root)
toolkit "$R" /usr/local/cuda-12.2 12.2
toolkit "$R" /usr/local/cuda-13.0 13.0
ln -s cuda-12.2 "$R/usr/local/cuda"
hand_copy "$R8" "$R/usr/local/cuda-12.2" cp
hand_copy "$R8" "$R/usr/local/cuda-13.0" cp
echo /usr/local/cuda-12.2/lib64 >"$R/etc/ld.so.conf.d/cuda-12-2.conf"
echo /usr/local/cuda-13.0/lib64 >"$R/etc/ld.so.conf.d/cuda-13-0.conf"
sys_ldconfig "$R"
tree_snapshot "$R/usr/local/cuda-13.0" >"$E2E_TMP/c13.before"
run_shape "$R"
diff "$E2E_TMP/c13.before" <(tree_snapshot "$R/usr/local/cuda-13.0") >/dev/null || fail "the other toolkit's copy changed"

# ---------------------------------------------------------------------------------------------
TEST "a managed CUDA home that a switch would leave without its libraries: exit 4 before the flip"
R=$(new_root)
plain_home "$R" cp /usr/local/cuda/lib64
expect_exit 0 cudnnctl --root "$R" adopt
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0
cp "$R9/lib/libcudnn_graph.so.9.1.0" "$R/usr/local/cuda/lib64/libcudnn_extra.so.9" # a new hand copy
usr_snapshot "$R" >"$E2E_TMP/flip.before"
expect_exit 4 cudnnctl --root "$R" rollback
expect_adopt_advice "$ERR" "/usr/local/cuda/lib64 holds cuDNN files cudnnctl does not manage (libcudnn_extra.so.9)"
expect_exit 0 cudnnctl --root "$R" status --json
expect_json 'd["active"]["version"]' 9.1.0.70
diff "$E2E_TMP/flip.before" <(usr_snapshot "$R") >/dev/null || fail "a refused switch changed /usr or the store"

# ---------------------------------------------------------------------------------------------
# doctor: what these shapes break.
# doctor_json ROOT: `doctor --json` (exit 0, or 8 with problems).
doctor_json() {
  run cudnnctl --root "$1" doctor --json
  [ "$RC" -eq 0 ] || [ "$RC" -eq 8 ] || fail "doctor exit $RC"
}
expect_finding() { # CODE [TEXT IN ITS FIX]
  local got
  got=$(json_get "[f['fix'] for f in d['data']['findings'] if f['code'] == '$1']")
  [ "$got" != "[]" ] || fail "no finding $1 (found: $(json_get "[f['code'] for f in d['data']['findings']]"))"
  [ -z "${2:-}" ] || [[ $got == *"$2"* ]] || fail "finding $1: fix $got does not say '$2'"
}
expect_no_finding() {
  [ "$(json_get "[f for f in d['data']['findings'] if f['code'] == '$1']")" = "[]" ] || fail "unexpected finding $1"
}

TEST "doctor: a CUDA home with cuDNN headers but no libraries, and the reverse"
R=$(new_root)
toolkit "$R" /usr/local/cuda 12.2
cp "$R8"/include/cudnn*.h "$R/usr/local/cuda/include/"
doctor_json "$R"
expect_finding cuda-home-headers-without-libraries "cudnnctl adopt"
expect_no_finding cuda-home-libraries-without-headers
rm "$R"/usr/local/cuda/include/cudnn*.h
cp -P "$R8"/lib/libcudnn* "$R/usr/local/cuda/lib64/"
doctor_json "$R"
expect_finding cuda-home-libraries-without-headers "cudnnctl install"
expect_no_finding cuda-home-headers-without-libraries
cp "$R8"/include/cudnn*.h "$R/usr/local/cuda/include/"
doctor_json "$R"
expect_no_finding cuda-home-libraries-without-headers
expect_no_finding cuda-home-headers-without-libraries
expect_no_finding header-other-major

TEST "doctor: headers in /usr/include, or in an unmanaged CUDA home, of another major than a plain process loads"
R=$(new_root)
toolkit "$R" /usr/local/cuda 12.2
mkdir -p "$R/etc/cudnnctl" "$R/usr/include"
echo 'manage_cuda_home = false' >"$R/etc/cudnnctl/config.toml"
cp "$R8"/include/cudnn*.h "$R/usr/local/cuda/include/"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0
doctor_json "$R"
expect_finding header-other-major "cudnnctl adopt"
expect_contains "$OUT" "/usr/local/cuda/include/cudnn_version.h declares cuDNN 8.9.7 but a plain process loads cuDNN 9"
cp "$R8"/include/cudnn*.h "$R/usr/include/"
rm "$R"/usr/local/cuda/include/cudnn*.h
doctor_json "$R"
expect_finding header-other-major "cudnnctl env"
expect_contains "$OUT" "/usr/include/cudnn_version.h declares cuDNN 8.9.7"
rm "$R"/usr/include/cudnn*.h
doctor_json "$R"
expect_no_finding header-other-major

TEST "doctor: env's CUDNN_INCLUDE_DIR does not exist (a runtime-only install)"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.1.0 --components runtime
expect_exit 0 cudnnctl --root "$R" env
expect_contains "$OUT" "CUDNN_INCLUDE_DIR="
doctor_json "$R"
expect_finding env-include-dir-missing "--components runtime,headers"
expect_exit 0 cudnnctl --root "$R" "${MIRROR[@]}" install 9.27.0
doctor_json "$R"
expect_no_finding env-include-dir-missing

# ---------------------------------------------------------------------------------------------
TEST "status on a machine with an unmanaged cuDNN says so and suggests cudnnctl adopt"
R=$(new_root)
plain_home "$R" cp
usr_snapshot "$R" >"$E2E_TMP/st.before"
expect_exit 0 cudnnctl --root "$R" status
expect_adopt_advice "$OUT" "unmanaged: cuDNN 8.9.7 in /usr/local/cuda"
expect_exit 0 cudnnctl --root "$R" status --json
expect_json 'd["data"]["unmanaged"]["version"]' 8.9.7
expect_json 'd["data"]["unmanaged"]["cuda_home"]' /usr/local/cuda
expect_json 'd["data"]["unmanaged"]["files"] > 0' true
diff "$E2E_TMP/st.before" <(usr_snapshot "$R") >/dev/null || fail "status changed something"
expect_no_file "$R/var/lib/cudnnctl"
expect_exit 0 cudnnctl --root "$R" adopt
expect_exit 0 cudnnctl --root "$R" status --json
expect_json 'd["data"]["unmanaged"]' null

TEST "two adopted entries of one version are told apart by the names list prints"
# First adoption: the cp mistake. --undo, then the same release copied with cp -P: other bytes
# (links, not files), so another entry of the same version.
expect_exit 0 cudnnctl --root "$R" list --json
EA=$(json_get 'd["data"]["installed"][0]["entry"]')
expect_exit 0 cudnnctl --root "$R" adopt --undo
rm -f "$R"/usr/local/cuda/lib64/libcudnn* "$R"/usr/local/cuda/include/cudnn*.h
hand_copy "$R8" "$R/usr/local/cuda" cp-P
expect_exit 0 cudnnctl --root "$R" adopt --json
EB=$(json_get 'd["data"]["entry"]')
expect_ne "$EA" "$EB" "entry names of the two adoptions"
GB=$(json_get 'd["active"]["generation"]')
expect_exit 0 cudnnctl --root "$R" list
expect_contains "$OUT" "$EA"
expect_contains "$OUT" "$EB"
expect_exit 0 cudnnctl --root "$R" use 8.9.7 --json # a version cannot pick the other one
expect_json 'd["changed"]' false
expect_exit 0 cudnnctl --root "$R" use "$EA" --json
expect_json 'd["changed"]' true
expect_json 'd["active"]["path"].endswith("/'"$EA"'")' true
expect_home_links "$R" "$EA"
expect_exit 0 cudnnctl --root "$R" rollback --to "$EB" --json
expect_json 'd["active"]["generation"]' "$GB"
expect_home_links "$R" "$EB"
expect_exit 0 cudnnctl --root "$R" remove "$EA" --json
expect_exit 0 cudnnctl --root "$R" list --json
expect_json '[e["entry"] for e in d["data"]["installed"]]' "[\"$EB\"]"
expect_exit 2 cudnnctl --root "$R" use "$EA"
expect_not_contains "$ERR" "cudnnctl install"
expect_contains "$ERR" "cudnnctl list"
expect_exit 2 cudnnctl --root "$R" rollback --to "$EA"
expect_contains "$ERR" "cudnnctl list"
