#!/usr/bin/env bash
# Every error path: a one-line message on stderr and the documented exit code
# (2: bad usage, 1: cannot run), and clean endings on signals and closed pipes.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need setpriv bpftool

make_tmp

# expect NAME WANT_RC WANT_STDERR_SUBSTRING -- COMMAND...
expect() {
	local name=$1 want_rc=$2 want=$3 rc=0 lines
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	lines=$(grep -vc '^libbpf' "$tmp/err" || true)
	if [[ $rc -eq $want_rc ]] && grep -qF -- "$want" "$tmp/err" && [[ $lines -eq 1 ]]; then
		check "$name" 0 "exit $rc: $(head -1 "$tmp/err")"
	else
		check "$name" 1 "exit $rc (want $want_rc), $lines lines: $(head -3 "$tmp/err")"
	fi
}

T=$TRUESTAT
expect bad_interval_word 2 "bad interval 'abc': not a number" -- $T abc
expect bad_interval_zero 2 "bad interval '0': must be 0.001 to 86400 seconds" -- $T 0
expect bad_interval_negative 2 "bad interval or count '-1': must be positive" -- $T -1
expect bad_interval_huge 2 "must be 0.001 to 86400 seconds" -- $T 1e9
expect bad_interval_empty 2 "bad interval '': not a number" -- $T ""
expect bad_count_zero 2 "bad count '0': must be a whole number >= 1" -- $T 1 0
expect bad_count_fraction 2 "bad count '1.5'" -- $T 1 1.5
expect too_many_args 2 "too many arguments: '3'" -- $T 1 2 3
expect unknown_option 2 "unknown option '--frobnicate' (see truestat --help)" -- $T --frobnicate
expect device_without_value 2 "option '-d' needs a value" -- $T -d
expect unknown_device 2 "unknown device 'nosuchdisk' (disks: " -- $T -d nosuchdisk 1 1
check_cmd unknown_device_lists_disks "the message names the disks that exist" \
	grep -q "$(ls /sys/block | head -1)" "$tmp/err"

# A disk without a request queue (zram0 here: bio-based) is traced at its
# own layer, so no report names it as not traced. --light leaves out the
# block_bio_* programs that trace it: then -d refuses it (a disk truestat
# cannot trace is never reported as idle), and without -d every report
# names it as not traced.
bio=$(for d in /sys/block/*; do [[ -e $d/mq ]] || echo "${d##*/}"; done | head -n 1)
if [[ -n $bio ]]; then
	expect bio_based_light_refused 2 "cannot trace $bio with --light: it is bio-based" -- \
		$T --light -d "$bio" 1 1
	"$T" --light 0.1 1 >"$tmp/out" 2>/dev/null || true
	check_cmd bio_based_light_named "with --light, every report names $bio as not traced" \
		test "$(grep -c "note: not traced, bio-based (--light does not follow bios): .*$bio" "$tmp/out")" = 2
	rc=0
	"$T" -j -d "$bio" 0.1 1 >"$tmp/out" 2>"$tmp/err" || rc=$?
	check bio_based_accepted "$rc" "-d $bio exits $rc: $(head -1 "$tmp/err")"
	"$T" -j 0.1 1 >"$tmp/out" 2>/dev/null || true
	py "
d = docs('$tmp/out')
bad = [x['type'] for x in d if '$bio' in x['not_traced']]
print('bio_based_traced', int(len(d) != 2 or bool(bad)),
      'without --light, %d reports, %d name $bio as not traced' % (len(d), len(bad)))
" | check_lines
else
	echo "  # no bio-based disk on this machine: the bio-based checks did not run"
fi

# Each option that takes a value: malformed, empty, out of range, repeated.
expect flag_with_value 2 "option '--depth' takes no value" -- $T --depth=3
expect bad_hist 2 "bad --hist 'coarse': only --hist=fine" -- $T --hist=coarse 1 1
expect bad_units 2 "bad --units 'x': us or ms (default: per table)" -- $T --units=x 1 1
expect units_without_value 2 "option '--units' needs a value" -- $T --units
expect bad_prometheus_port 2 "bad --prometheus '0': port must be 1 to 65535" -- $T --prometheus=0
expect bad_prometheus_empty 2 "bad --prometheus '': port must be 1 to 65535" -- $T --prometheus=
expect bad_prometheus_huge 2 "bad --prometheus '99999': port must be 1 to 65535" -- $T --prometheus=99999
expect bad_prometheus_host 2 "not a numeric IPv4 or IPv6 address" -- $T --prometheus=localhost:80
expect prometheus_without_value 2 "option '--prometheus' needs a value" -- $T --prometheus
expect prometheus_twice 2 "option '--prometheus' given twice" -- $T --prometheus=9101 --prometheus=9102
expect heatmap_without_interval 2 "--heatmap needs an interval" -- $T --heatmap="$tmp/h.svg"
expect heatmap_empty 2 "bad --heatmap '': needs a file name" -- $T --heatmap= 1
expect heatmap_unwritable 1 "$tmp/none/h.svg" -- $T --heatmap="$tmp/none/h.svg" 0.2 1

# Not root: the capabilities that are missing are named.
install -m 0755 "$T" "$tmp/truestat"
expect not_root 1 "needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON)" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/truestat" 1 1

kv=$(uname -r)
expect no_btf 2 "Linux $kv: no kernel BTF at $tmp/none: truestat needs Linux 5.10 or later built with CONFIG_DEBUG_INFO_BTF=y" -- \
	env TRUESTAT_BTF="$tmp/none" "$T" 1 1

# Older kernels, as their BTF describes them (TRUESTAT_BTF: compiled here
# from stubs of what the loader reads): refused with one line, exit 2
btf_stub() { # NAME ARGS BIO_MEMBER [HOOKS]: issue hook with ARGS, struct bio with it
	printf '%s\n' 'struct request_queue { int id; };' \
		'struct request { struct request_queue *q; };' \
		"struct bio { void *$3; };" \
		"typedef void (*btf_trace_block_rq_issue)(void *, $2);" \
		'btf_trace_block_rq_issue hook; struct bio b;' "${4:-}" >"$tmp/$1.c"
	clang -g -target bpf -c "$tmp/$1.c" -o "$tmp/$1.o"
}
btf_stub no_complete "struct request *" bi_bdev
expect kernel_without_complete 2 "Linux $kv cannot run truestat: no block_rq_complete tracepoint in its BTF; truestat needs Linux 5.10 or later with BTF" -- \
	env TRUESTAT_BTF="$tmp/no_complete.o" "$T" 1 1
btf_stub no_bio_dev "struct request *" bi_nothing
expect kernel_without_bio_device 2 "Linux $kv cannot run truestat: struct bio has neither bi_bdev nor bi_disk; truestat needs Linux 5.10 or later with BTF" -- \
	env TRUESTAT_BTF="$tmp/no_bio_dev.o" "$T" 1 1
# (block_rq_complete as since 5.11: the loader names the first required
# hook it cannot follow, in attach order, and complete comes first)
btf_stub odd_args "struct request_queue *, void *, void *, struct request *" bi_bdev \
	'typedef void (*btf_trace_block_rq_complete)(void *, struct request *, int, unsigned int); btf_trace_block_rq_complete c;'
expect kernel_unknown_layout 2 "Linux $kv cannot run truestat: its block_rq_issue tracepoint takes 4 arguments, not 1 to 3; truestat needs Linux 5.10 or later with BTF" -- \
	env TRUESTAT_BTF="$tmp/odd_args.o" "$T" 1 1
# 5.10's layout (request_queue first, bi_disk) passes the plan here, whose
# BPF has atomics (it fails later, loading against a stub)
hooks510=$(for h in rq_complete:"struct request *, int, unsigned int" \
	bio_queue:"struct request_queue *, struct bio *"; do
	echo "typedef void (*btf_trace_block_${h%%:*})(void *, ${h#*:}); btf_trace_block_${h%%:*} h_${h%%:*};"; done)
btf_stub linux510 "struct request_queue *, struct request *" bi_disk "$hooks510"
env TRUESTAT_BTF="$tmp/linux510.o" "$T" 1 1 >/dev/null 2>"$tmp/err" || true
check_cmd kernel_510_layout_passes_the_plan "a 5.10-like BTF passes the plan (it fails later, loading): $(head -c 200 "$tmp/err")" \
	bash -c "! grep -q 'cannot run truestat' '$tmp/err' && grep -q 'not on Linux $kv: requeues' '$tmp/err'"
expect load_failure 1 "cannot load the BPF programs: Permission denied (-v shows the verifier log)" -- \
	env TRUESTAT_TEST_VERIFIER_FAILURE=1 "$T" 1 1
rc=0
env TRUESTAT_TEST_VERIFIER_FAILURE=1 "$T" -v 1 1 >/dev/null 2>"$tmp/err" || rc=$?
check_cmd load_failure_verbose_log "-v prints the verifier's reason and exits 1 (exit $rc): $(grep -m1 -o 'R[0-9] invalid mem access.*' "$tmp/err" || echo none)" \
	bash -c "[[ $rc == 1 ]] && grep -q 'invalid mem access' '$tmp/err'"
check_cmd help "--help exits 0" "$T" --help >"$tmp/out"
check_cmd help_examples "--help shows examples" grep -q "^Examples:" "$tmp/out"

# Signals: INT and TERM print the totals and exit 0; HUP likewise. Sent
# once it has attached (70-signals covers a signal while it attaches), and
# a second later: a report's worth of tracing
for sig in INT TERM HUP; do
	"$T" -v >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	wait_for "$pid" "$START_GUARD" grep -q "attached with" "$tmp/err" || true
	sleep 1
	kill -"$sig" "$pid"
	rc=0
	wait "$pid" || rc=$?
	grep -q "totals over" "$tmp/out" || rc=$((rc + 100))
	check "sig$sig" $rc "exit status $rc after SIG$sig (100 added when no totals)"
done

# A closed stdout ends it quietly, with status 0.
set +o pipefail
"$T" 0.2 2>"$tmp/err" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
set -o pipefail
check closed_pipe $((rc + $(wc -c <"$tmp/err"))) "exit $rc, $(wc -c <"$tmp/err") bytes on stderr after | head -1"

read -r n links < <(ts_progs_left)
check detached "$((n + links))" "$n truestat programs and $links links left after all of the above (freed within $(rcu_freed_within) s)"
finish
