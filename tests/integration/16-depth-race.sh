#!/usr/bin/env bash
# The depth updates (one compare-and-swap of depth and the time of its last
# change, bpf/depth.bpf.h depth_step) from every CPU at once on one test
# entry: the registers always hold a possible history and the depth comes
# back to 0 (tests/tools/depth-race.c). Then the same with the object for
# kernels before 5.12 (bpf/depth_locked.bpf.h: a lock per word, changes left
# for its holder), which must also leave no change undone. Last, a departure
# counted twice before an issue: the request filed at depth 1, not under the
# deepest class, and counted in depth_below_zero.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

tool=$TS_ROOT/.output/depth-race
tool_need "$tool"
check_lines < <("$tool" || true)
finish
