#!/bin/bash
# The device call of 2026-12-03 night for issue 21: the runtime probe's libraries loaded by
# install's GPU child as the repack's pass verifies them (ops/early_probe.hpp) against the
# build before it (main 3b39a48's behaviour: every load after the pass).
# 2026-12-02-cachewriter/ab.py's alternated rounds from file:// (ROUNDS, the after build's
# site), one -vv install of each kept whole, then bench/bench.py --only repack --runs RUNS for
# after and before, each build repacking its own site (run-1.txt: the first build, whose
# inventory read waited for a last line that early loads follow: 120 s; run-2.txt: fixed;
# run-3.txt: ROUNDS=2 BENCH_BINS=after RUNS_after=5, a second machine).
#   RUNS_after=5 RUNS_before=3 bash docs/gpu-runs/2026-12-03-early/run.sh   (carry: .carry/d27 with before/ and after/,
#   each cudnnctl (RUNPATH $ORIGIN/lib) + cudnnctl-smoke + lib/libarchive.so.13; bin/ with
#   nginx, zstd, GNU time; stub/ the stub-9.18.1 mirror)
R=$(cd "$(dirname "$0")/../../.." && pwd); C=$R/.carry/${CARRY:-d27}
O=${OUT:-/tmp/out}; mkdir -p "$O"
exec > >(tee -a "$O/run.txt") 2>&1
echo "== $(date -u) $(uname -r) nproc $(nproc)"; uptime
chmod +x "$C"/bin/* "$C"/*/cudnnctl*
export PATH=$C/bin:$PATH BENCH_GNU_TIME=$C/bin/time
mkdir -p /var/log/nginx /var/lib/nginx
nvidia-smi --query-gpu=name,persistence_mode,compute_cap,driver_version --format=csv
PIP=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn | head -1)
M=$(BENCH_CUDA=$PIP BENCH_XZ_THREADS=16 bash "$R/bench/build_archive.sh" /tmp/bc) || { echo "build_archive failed"; exit 1; }
echo "== ab.py: ${ROUNDS:-12} alternated rounds from file://, the after build's site"
PYTHONUNBUFFERED=1 python3 "$R/docs/gpu-runs/2026-12-02-cachewriter/ab.py" "$C" "$M" /tmp/ab "${ROUNDS:-12}" before after
# One install of each with -vv kept whole: where the GPU child's time goes.
for b in after before; do
  T=/tmp/ab/vv-$b; rm -rf "$T"; mkdir -p "$T/etc/ld.so.conf.d" "$T/etc/cudnnctl/pins.d"
  echo "include /etc/ld.so.conf.d/*.conf" >"$T/etc/ld.so.conf"
  cp /tmp/ab/site/cudnnctl-pins.sha256 "$T/etc/cudnnctl/pins.d/site.sha256"
  echo "== -vv install, $b"
  "$C/$b/cudnnctl" --root "$T" --mirror file:///tmp/ab/site --platform linux-x86_64 --cuda 13 \
    -vv install 9.19.0 --no-smoke 2>&1 >/dev/null | grep -E 'timing|runtime probe|GPU check|GPU child'
done
for b in ${BENCH_BINS:-after before}; do
  runs=RUNS_$b; runs=${!runs:-${RUNS:-3}} # RUNS_after, RUNS_before: per build
  echo "== bench.py --only repack --runs $runs: $b"
  python3 "$R/bench/bench.py" --cudnnctl "$C/$b/cudnnctl" --mirror "$M" --stub-mirror "$C/stub" \
    --out "$O/bench-$b" --runs "$runs" --only repack --tmp /tmp
done
echo "== done $(date -u)"; uptime
