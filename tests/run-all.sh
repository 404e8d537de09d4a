#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run-all.sh UNIT_TEST_BINARY...: the unit tests, then the integration
# tests; the last line sums both: "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

tests/run-unit.sh "$@" | tee "$out"
read -r up uf < <(tail -n 1 "$out" | awk '{ print $1, $3 }')
tests/run-integration.sh | tee "$out"
read -r ip if_ is < <(tail -n 1 "$out" | awk '{ print $1, $3, $5 }')
echo
echo "unit: ${up:-0} passed, ${uf:-1} failed; integration: ${ip:-0} passed, ${if_:-1} failed, ${is:-0} skipped; ${SECONDS} s"
failed=$((${uf:-1} + ${if_:-1}))
echo "$((${up:-0} + ${ip:-0})) passed, $failed failed, ${is:-0} skipped"
((failed == 0))
