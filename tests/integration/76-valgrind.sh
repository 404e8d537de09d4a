#!/usr/bin/env bash
# truestat under valgrind over a run with several reports (table, JSON,
# histograms, the curve, scrapes of /metrics) and real I/O: no leak, no
# invalid access, no use of uninitialised memory. tests/valgrind.supp holds the one known false
# report, inside Debian's libbpf.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need valgrind fio curl
# a SANITIZE=1 build runs under ASan already, which valgrind cannot host
if ldd "$TRUESTAT" | grep -q libasan; then
	echo "SKIP: truestat is built with sanitizers (make SANITIZE=1)"
	exit 77
fi

loop_new 64
dev=$LOOP
make_tmp
port=$(free_port)
for mode in table json prometheus; do
	args=(-v -H -D -d "$dev" 0.5 4)
	[[ $mode == json ]] && args=(-j "${args[@]}")
	[[ $mode == prometheus ]] && args=(--prometheus="$port" "${args[@]}")
	valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
		--suppressions="$TS_ROOT/tests/valgrind.supp" --error-exitcode=9 \
		"$TRUESTAT" "${args[@]}" >"$tmp/$mode.out" 2>"$tmp/$mode.vg" &
	pid=$!
	on_exit "kill -9 $pid"
	# valgrind loads slowly: the I/O starts once truestat has attached
	wait_for "$pid" "$START_GUARD" grep -q "attached with" "$tmp/$mode.vg" || true
	fio --name=vg --filename="/dev/$dev" --direct=1 --rw=randrw --bs=4k \
		--ioengine=libaio --iodepth=4 --runtime=2 --time_based --output=/dev/null
	if [[ $mode == prometheus ]]; then
		curl -s "http://127.0.0.1:$port/metrics" >"$tmp/metrics" || true
		curl -s "http://127.0.0.1:$port/nope" >/dev/null || true
	fi
	rc=0
	wait "$pid" || rc=$?
	summary=$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$tmp/$mode.vg" || echo "no summary")
	leaks=$(grep -E -o 'All heap blocks were freed|definitely lost: [0-9,]* bytes' "$tmp/$mode.vg" | head -1)
	check "valgrind_$mode" "$rc" "exit $rc, $summary, ${leaks:-no leak report}, $(grep -c interval "$tmp/$mode.out") reports"
done
finish
