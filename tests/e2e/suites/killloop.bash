#!/bin/bash
# The bounded version of bench/crash_loop.sh for ctest: 35 random kill -9 trials of install,
# use, rollback, gc, adopt, restore, mirror and the slot switches (install --alongside,
# rollback --slot) with smaller archives (the long run:
# bench/crash_loop.sh 300).
# A fixed seed per day keeps failures reproducible (the seed is printed).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
CRASH_LOOP_PAD=${CRASH_LOOP_PAD:-3000000} CRASH_LOOP_SEED=${CRASH_LOOP_SEED:-$(date +%Y%m%d)} \
  bash "$E2E_DIR/../../bench/crash_loop.sh" "${CRASH_LOOP_TRIALS:-35}" ||
  fail "bench/crash_loop.sh found a violation (see above)"
