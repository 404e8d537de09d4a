#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run-all.sh UNIT_TEST_BINARY...: the unit tests, then the integration
# tests; the last line sums both: "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# counts FILE: "passed failed skipped" from a runner's last line, or
# nothing when that line is not a summary (a runner killed mid-way): the
# sums below then count it as failed, never as a number taken from noise.
counts() {
	tail -n 1 "$1" | sed -nE \
		's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/p'
}

tests/run-unit.sh "$@" | tee "$out"
read -r up uf < <(counts "$out")
tests/run-integration.sh | tee "$out"
read -r ip if_ is < <(counts "$out")
echo
echo "unit: ${up:-0} passed, ${uf:-1} failed; integration: ${ip:-0} passed, ${if_:-1} failed, ${is:-0} skipped; ${SECONDS} s"
failed=$((${uf:-1} + ${if_:-1}))
echo "$((${up:-0} + ${ip:-0})) passed, $failed failed, ${is:-0} skipped"
((failed == 0))
