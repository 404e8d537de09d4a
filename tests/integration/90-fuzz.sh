#!/usr/bin/env bash
# Bounded libFuzzer runs over the parsers that take outside input: the
# exporter's HTTP request and address parsing, and the command line. Each
# starts from the checked-in corpus (tests/fuzz/corpus; new finds go to a
# temporary copy) and must end without a crash, leak or sanitizer report.
# FUZZ_SECONDS (default 20) bounds each run.
# concurrent: yes: the parsers run in the fuzzer's own process, touching no
# device, BPF program or tracefs, so it runs beside the other tests; a busy
# host makes it try fewer inputs in its time, the same checks.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

secs=${FUZZ_SECONDS:-20}
make_tmp
for target in http args; do
	bin=$TS_ROOT/.output/fuzz_$target
	if [[ ! -x $bin ]]; then
		check "fuzz_$target" 1 "$bin missing (make test builds it)"
		continue
	fi
	cp -r "$TS_ROOT/tests/fuzz/corpus/$target" "$tmp/$target"
	rc=0
	(cd "$tmp" && "$bin" -max_total_time="$secs" -rss_limit_mb=1024 \
		-max_len=4096 "$tmp/$target" >"$tmp/$target.log" 2>&1) || rc=$?
	runs=$(grep -o 'Done [0-9]* runs' "$tmp/$target.log" | grep -o '[0-9]*' || echo 0)
	[[ $rc -ne 0 ]] && grep -E 'ERROR|SUMMARY|runtime error' "$tmp/$target.log" | head -5
	check "fuzz_$target" "$rc" "$runs inputs in ${secs} s, no crash (exit $rc)"
done
finish
