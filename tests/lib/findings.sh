# shellcheck shell=bash
# findings.sh: runs of truestat's findings on the simulated disk, judged
# against what the disk logged (64-findings, 64b-matrix). Sourcing it
# sources common.sh and simdisk.sh, needs fio, and makes $tmp; then run,
# steps and judge below.

. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
. "$(dirname "${BASH_SOURCE[0]}")/simdisk.sh"
need fio python3 fusermount3
make_tmp

# run NAME TS_ARGS FIO_ARGS...: truestat -D (and TS_ARGS) over one fio run
# on the simulated disk; the disk's log of it in $tmp/NAME.log
run() {
	local name=$1 ts_args=$2
	shift 2
	simdisk_mark
	# shellcheck disable=SC2086 # TS_ARGS: options, split
	ts_start "$tmp/$name.json" -D -d "$SIMDISK_LOOP" $ts_args
	fio --filename="/dev/$SIMDISK_LOOP" --direct=1 --bs=4k --rw=randread \
		--ioengine=psync --time_based --output-format=json \
		--output="$tmp/$name.fio" "$@"
	ts_stop INT
	check "${name}_exit" "$TS_RC" "truestat ended with status $TS_RC"
	simdisk_save "$tmp/$name"
}

# run_within NAME TS_ARGS FIRST SPAN FIO_ARGS...: as run, but truestat's
# window lies inside the load: it starts once the disk has served FIRST of
# fio's requests and stops once it has served SPAN more, while fio still
# runs (its runtime a guard only): a finding that needs a busy device sees
# one by construction, whatever fio's start-up and exit cost this host
run_within() {
	local name=$1 ts_args=$2 first=$3 span=$4 fio_pid base
	shift 4
	simdisk_mark
	fio --filename="/dev/$SIMDISK_LOOP" --direct=1 --bs=4k --rw=randread \
		--ioengine=psync --time_based --runtime=600 \
		--output=/dev/null "$@" &
	fio_pid=$!
	on_exit "kill $fio_pid 2>/dev/null"
	base=$(simdisk_lines)
	wait_for "$fio_pid" "$START_GUARD" test_lines_past $((base + first)) || true
	# shellcheck disable=SC2086 # TS_ARGS: options, split
	ts_start "$tmp/$name.json" -D -d "$SIMDISK_LOOP" $ts_args
	base=$(simdisk_lines)
	wait_for "$fio_pid" "$START_GUARD" test_lines_past $((base + span)) || true
	ts_stop INT
	check "${name}_exit" "$TS_RC" "truestat ended with status $TS_RC"
	check_cmd "${name}_within" "fio ran past truestat's window" \
		kill -0 "$fio_pid"
	kill "$fio_pid"
	wait "$fio_pid" || true
	simdisk_save "$tmp/$name"
}

# test_lines_past N: the disk's log holds N requests or more
test_lines_past() { (($(simdisk_lines) >= $1)); }

# steps END_MS N@FROM_MS...: fio jobs of N readers each, from FROM_MS
# after the start to END_MS, all ending together
steps() {
	local end=$1 i=0 s
	shift
	for s in "$@"; do
		printf -- '--name=s%d --numjobs=%d --startdelay=%dms --runtime=%dms ' \
			"$i" "${s%@*}" "${s#*@}" $((end - ${s#*@}))
		i=$((i + 1))
	done
}

# judge NAME SCRIPT: SCRIPT with d (the totals' row of the disk), F (the
# findings about it by id), reqs (the disk's log of the run), P (its
# parameters), t0, t1 (truestat's window on the disk's clock)
judge() {
	simdisk_judge "$1" "
import re
name = '$1'
t = totals('$tmp/$1.json')
d = dev(t, '$SIMDISK_LOOP')
F = dict((f['id'], f) for f in t['findings'] if f['device'] == '$SIMDISK_LOOP')
fig = lambda f: dict((x['name'], x['value']) for x in f['figures'])
P = sd_params('$tmp/$1.full')
reqs = sd_read('$tmp/$1.log')
win = re.search(r'totals from ([0-9.]+) to ([0-9.]+) s', open('$tmp/$1.json.err').read())
t0, t1 = float(win.group(1)) * 1e9, float(win.group(2)) * 1e9
K, S = P['units'], P['service_ns']
def has(fid, sev=None):
    f = F.get(fid)
    print(name + '_' + fid.replace('-', '_'), int(f is None or (sev is not None and f['severity'] != sev)),
          '%s stated%s: %s' % (fid, ' (%s)' % sev if sev else '', f['sentence'] if f else 'no; findings: %s'
                               % ([x['id'] for x in t['findings']] or 'none')))
    return fig(f) if f else {}
def hasnt(fid):
    f = F.get(fid)
    print(name + '_no_' + fid.replace('-', '_'), int(f is not None),
          '%s not stated%s' % (fid, ': ' + f['sentence'] if f else ''))
def flush_share_held(f):
    # each flush A..R of the disk's log in the window is in the time of
    # one durable write at least: their sum over the writes' time is the
    # share's floor, whatever the merging
    s = d['sync']
    Fl = [x[3] - x[0] for x in reqs if x[4] == 'F' and t0 <= x[0] and x[3] <= t1]
    total = s['ios'] * s['total_ms'] * 1e6
    share = f.get('flush_share', -1)
    print(name + '_share', int(not sum(Fl) / total <= share <= 1),
          'flush share %.3f: >= the disk\'s summed flush A..R %.1f ms over the durable writes\' %.1f ms (%.3f), <= 1'
          % (share, sum(Fl) / 1e6, total / 1e6, sum(Fl) / total))
def concludes_not(fid):
    # no conclusion of rule fid: absent, or its cannot-tell note
    f = F.get(fid)
    print(name + '_no_' + fid.replace('-', '_'), int(f is not None and f['severity'] != 'cannot_tell'),
          '%s concludes nothing%s' % (fid, ': ' + f['sentence'] if f else ''))
def iops_cap():
    # by Little, a row's IOPS is its mean depth over its mean service,
    # taken from bucket middles: at most half a bucket (1/32) below
    return K / (S / 1e9) * 1.03125
$2"
}
