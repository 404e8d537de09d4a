#!/usr/bin/env bash
# The histogram bucket functions (include/hist.h) as compiled for BPF give
# the same buckets as the userspace build, on every bucket edge, one below
# and one above it (tests/unit/test_hist.c checks the userspace build
# against exact values). Then, with the object for old kernels, a claim
# that finds the histogram slots' lock held gets its histograms at the
# next sweep, not never.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

tool=$TS_ROOT/.output/hist-check
tool_need "$tool"
check_lines < <("$tool" || true)
finish
