# SPDX-License-Identifier: Apache-2.0
# What the slot suites (slots, slotviews) start from: the standard mirror ($M), a root $R whose
# CUDA home has no toolkit files (the CUDA-home links are made, no CUDA major is detected), `c`
# (cudnnctl against both), and the store entries of the builds they switch between. Source
# after lib.bash.

[ -z "${_E2E_SLOTS_LIB_LOADED:-}" ] || return 0
_E2E_SLOTS_LIB_LOADED=1

M=$(std_mirror)
R=$(new_root)
mkdir -p "$R/usr/local/cuda/include" "$R/usr/local/cuda/lib64"
c() { cudnnctl --root "$R" --mirror "file://$M" "$@"; }
E9=9.27.0.42-cuda13-linux-x86_64
E8=8.9.7.29-cuda12-linux-x86_64
E91=9.1.0.70-cuda12-linux-x86_64
