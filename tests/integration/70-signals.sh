#!/usr/bin/env bash
# Safe to leave running, 1: every way truestat can be stopped (SIGINT,
# SIGTERM, SIGHUP, a closed pipe, SIGKILL, a signal while it is still
# loading) leaves none of its BPF programs or links in the kernel, prints
# or suppresses the totals as the README says, and exits with the
# documented status. Two instances tracing the same disk at once both count
# exactly what /proc/diskstats counts.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need fio python3 bpftool

tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"
loop_new 128
dev=$LOOP
T=$TRUESTAT

# Each signal, once without an interval (totals only) and once with one
# (reports, then the totals): status 0, the totals last, nothing left.
for sig in INT TERM HUP; do
	for mode in totals interval; do
		name=sig${sig}_$mode
		args=(-j -d "$dev")
		[[ $mode == interval ]] && args+=(0.3)
		"$T" "${args[@]}" >"$tmp/out" 2>"$tmp/err" &
		pid=$!
		on_exit "kill -9 $pid"
		bpf_ids "$pid" >"$tmp/ids"
		before=$(diskstats "$dev")
		dd if="/dev/$dev" of=/dev/null bs=4k count=300 iflag=direct status=none
		sleep 0.8
		after=$(diskstats "$dev")
		kill -"$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		check "${name}_exit" "$rc" "exit status $rc after SIG$sig"
		check_lines < <(py "$COUNTS_PY
d = docs('$tmp/out')
kinds = [x['type'] for x in d]
want_intervals = '$mode' == 'interval'
ok = kinds[-1:] == ['totals'] and kinds.count('totals') == 1 and \
     (kinds.count('interval') >= 2) == want_intervals
print('${name}_output', int(not ok), '%d interval reports, then %s' % (
      kinds.count('interval'), kinds[-1] if kinds else 'nothing'))
verdict('${name}_totals', dev(totals('$tmp/out'), '$dev'), '$before', '$after')
")
		n=$(bpf_left "$tmp/ids")
		check "${name}_detached" "$n" "$(wc -l <"$tmp/ids") programs and links held, $n left after SIG$sig"
		check "${name}_stderr" "$(grep -vc -e '^libbpf' "$tmp/err" || true)" \
			"nothing on stderr: $(head -c 200 "$tmp/err")"
	done
done

# A signal while the programs are still loading and attaching: the handler
# is installed before the load, so it still ends with the totals and 0.
for delay in 0.02 0.1 0.2; do
	"$T" -j >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	on_exit "kill -9 $pid"
	sleep "$delay"
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	got=$(py "print(' '.join(x['type'] for x in docs('$tmp/out')) or 'nothing')")
	[[ $got == totals ]] || rc=$((rc + 100))
	check "early_term_$delay" "$rc" "SIGTERM ${delay} s after the start: exit $((rc % 100)), printed: $got"
done

# SIGKILL: no totals, of course, but the kernel drops everything with the
# last file descriptor: nothing is pinned, so nothing can stay behind.
"$T" -j 0.2 >"$tmp/out" 2>"$tmp/err" &
pid=$!
on_exit "kill -9 $pid"
bpf_ids "$pid" >"$tmp/ids"
sleep 0.5
kill -KILL "$pid"
rc=0
wait "$pid" 2>/dev/null || rc=$?
n=$(bpf_left "$tmp/ids")
check sigkill_detached "$n" "exit $rc (137: killed), $(wc -l <"$tmp/ids") programs and links held, $n left"

# A closed stdout: `truestat 1 | head -3` ends at the next report, quietly
# (no message, no totals since nobody reads them), with status 0. A fifo
# stands for the pipe so that the test knows truestat's pid.
for fmt in table json; do
	args=(1)
	[[ $fmt == json ]] && args=(-j 0.3)
	rm -f "$tmp/fifo" && mkfifo "$tmp/fifo"
	start=$SECONDS
	"$T" "${args[@]}" >"$tmp/fifo" 2>"$tmp/err" &
	pid=$!
	on_exit "kill -9 $pid"
	head -3 <"$tmp/fifo" >"$tmp/head" &
	hpid=$!
	bpf_ids "$pid" >"$tmp/ids"
	wait "$hpid" || true
	rc=0
	timeout 10 tail --pid="$pid" -f /dev/null || rc=124
	wait "$pid" || rc=$?
	check "pipe_${fmt}_exit" "$rc" "'truestat ${args[*]} | head -3': exit $rc after $((SECONDS - start)) s, head got $(wc -l <"$tmp/head") lines"
	check "pipe_${fmt}_quiet" "$(wc -c <"$tmp/err")" "$(wc -c <"$tmp/err") bytes on stderr"
	n=$(bpf_left "$tmp/ids")
	check "pipe_${fmt}_detached" "$n" "$(wc -l <"$tmp/ids") programs and links held, $n left"
done
# the same through a real pipe, as a user types it
set +o pipefail
"$T" 1 2>"$tmp/err" | head -3 >/dev/null
rc=${PIPESTATUS[0]}
set -o pipefail
check pipe_shell "$((rc + $(wc -c <"$tmp/err")))" "'truestat 1 | head -3': exit $rc, $(wc -c <"$tmp/err") bytes on stderr"

# Two instances on the same disk under fio: each sees every I/O, as if
# alone. Both start first, diskstats is read around fio, both stop last.
a=$tmp/a.json b=$tmp/b.json
ts_start "$a" -d "$dev"
pid_a=$TS_PID
ts_start "$b" -d "$dev" 0.5
pid_b=$TS_PID
bpf_ids "$pid_a" >"$tmp/ids"
bpf_ids "$pid_b" >>"$tmp/ids"
before=$(diskstats "$dev")
fio --name=two --filename="/dev/$dev" --direct=1 --rw=randrw \
	--bssplit=4k/60:64k/40 --ioengine=libaio --iodepth=8 --numjobs=2 \
	--runtime=3 --time_based --output=/dev/null
after=$(diskstats "$dev")
TS_PID=$pid_b ts_stop TERM
rc_b=$TS_RC
TS_PID=$pid_a ts_stop INT
rc_a=$TS_RC
check two_exit "$((rc_a + rc_b))" "exit status $rc_a (SIGINT) and $rc_b (SIGTERM)"
check_lines < <(py "$COUNTS_PY
verdict('two_first', dev(totals('$a'), '$dev'), '$before', '$after')
verdict('two_second', dev(totals('$b'), '$dev'), '$before', '$after')
ta, tb = dev(totals('$a'), '$dev'), dev(totals('$b'), '$dev')
sa, sb = ta['all']['service_ms'], tb['all']['service_ms']
print('two_same_service', int(not within(sa, sb, 0.05)),
      'mean service %.4f ms and %.4f ms (5%%)' % (sa, sb))
")
n=$(bpf_left "$tmp/ids")
check two_detached "$n" "$(wc -l <"$tmp/ids") programs and links held by the two, $n left"
finish
