# SPDX-License-Identifier: Apache-2.0
# Issue 34, F6: installs from a genuine site repack whose archive holds each library's file
# before its SONAME link (the order of NVIDIA's archives), repeated under CPU load. The early
# runtime probe must send the GPU child only names that resolve on disk; every install
# succeeds from the repack, and the early loads still happen. docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
command -v zstd >/dev/null || skip "the zstd CLI is not installed (scripts/install-deps)"
TRIALS=${REPACK_RACE_TRIALS:-50}
export LC_ALL=C

M=$(std_mirror)
A91=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
# The archive again, its members ordered directories, files, then links (so every SONAME link
# comes after its file, with the other libraries' files between them), the manifest and its
# pin following the new bytes.
python3 - "$M" "$A91" <<'PY'
import hashlib, io, json, lzma, os, re, sys, tarfile
m, rel = sys.argv[1], sys.argv[2]
p = os.path.join(m, rel)
with tarfile.open(p, "r:xz") as t:
    members = [(x, t.extractfile(x).read() if x.isfile() else None) for x in t.getmembers()]
def rank(x):
    return 0 if x.isdir() else 1 if x.isfile() else 2
members.sort(key=lambda mx: (rank(mx[0]), mx[0].name))
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as out:
    for x, data in members:
        out.addfile(x, io.BytesIO(data) if data is not None else None)
raw = lzma.compress(buf.getvalue(), preset=6)
old = hashlib.sha256(open(p, "rb").read()).hexdigest()
open(p, "wb").write(raw)
new = hashlib.sha256(raw).hexdigest()
man = os.path.join(m, "redistrib_9.1.0.json")
text = open(man).read().replace(old, new)
text = re.sub(r'("relative_path": "%s",\s*"sha256": "%s",\s*"md5": ")[0-9a-f]+(",\s*"size": ")\d+' %
              (re.escape(rel), new), lambda g: g.group(1) + hashlib.md5(raw).hexdigest() + g.group(2) + str(len(raw)), text)
open(man, "w").write(text)
sums = os.path.join(m, "SHA256SUMS")
lines = []
for l in open(sums).read().splitlines():
    h, n = l.split(None, 1)
    n = n.lstrip("*").strip()
    f = os.path.join(m, n)
    lines.append("%s  %s" % (hashlib.sha256(open(f, "rb").read()).hexdigest(), n))
open(sums, "w").write("\n".join(lines) + "\n")
PY
grep -q "$(stat -c %s "$M/$A91")" "$M/redistrib_9.1.0.json" || fail "fixture: the manifest does not give the new size"
tar -tvJf "$M/$A91" | awk '{print substr($1,1,1)}' | tr -d '\n' | grep -qE '^d*-+l+$' ||
  fail "fixture: the archive is not ordered directories, files, links"

start_nginx "$M"
SRC=$MIRROR_URL
D=$E2E_TMP/site
R0=$(new_root)
expect_exit 0 cudnnctl --root "$R0" --mirror "$SRC" --platform linux-x86_64 --cuda 12 \
  mirror 9.1.0 --to "$D" --repack zstd
stop_nginx
start_nginx "$D"

# CPU load beside the installs: two busy loops (stopped on exit).
LOAD_PIDS=()
for _ in 1 2; do
  (while :; do :; done) &
  LOAD_PIDS+=($!)
done
trap 'kill "${LOAD_PIDS[@]}" 2>/dev/null || true; _cr_rc=$?; _cr_stop_servers; (exit $_cr_rc); _e2e_on_exit' EXIT

TEST "$TRIALS installs from the site repack under load: every one succeeds from the repack"
failed=0 early_total=0
for i in $(seq "$TRIALS"); do
  r=$(new_root)
  mkdir -p "$r/etc/cudnnctl/pins.d"
  cp "$D/cudnnctl-pins.sha256" "$r/etc/cudnnctl/pins.d/site.sha256"
  run cudnnctl --root "$r" --mirror "$MIRROR_URL" --require-pin --cuda 12 -vv install 9.1.0
  if [ "$RC" -ne 0 ]; then
    failed=$((failed + 1))
    echo "    trial $i: exit $RC: $(grep -m1 'error' "$ERR")" >&2
  else
    cat "$OUT" "$ERR" | grep -qF "checked every extracted file against the repack's sidecar" ||
      fail "trial $i did not install the repack: $(cat "$OUT" "$ERR")"
    n=$(grep -oP 'the GPU child loaded \K[0-9]+(?= of its)' "$ERR" || echo 0)
    early_total=$((early_total + n))
  fi
  rm -rf "$r"
done
echo "    $TRIALS trials, $failed failed, $early_total early loads in all" >&2
expect_eq "$failed" 0 "installs from the repack that failed"
[ "$early_total" -gt 0 ] || fail "no library was loaded early in any trial"
