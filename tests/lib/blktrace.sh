# shellcheck shell=bash
# blktrace.sh: reference block-layer latencies from the kernel's ftrace "blk"
# tracer, for comparing truestat against blkparse/btt.
#
# blktrace(8) cannot open its relay files under lockdown, but the ftrace "blk"
# tracer emits the same struct blk_io_trace records on trace_pipe when
# options/bin=1 and options/context-info=0.  tests/tools/blkrenum.c turns that
# stream into one blkparse accepts (drops "[LOST n EVENTS]" lines, numbers
# records per CPU).
#
#	blk_trace_start DEV OUTDIR	trace DEV (loop0, vdb: a name in /sys/class/block)
#	blk_trace_stop [FROM TO]	drain, restore tracefs, blkparse + btt (idempotent,
#					fine from an EXIT trap); with FROM TO (CLOCK_MONOTONIC
#					ns, the records' clock), only the records in that window
#	blk_trace_abort			the tracer off and tracefs restored, no
#					blkparse/btt (for a trap; idempotent)
#	blk_btt_summary OUTDIR		key=value lines (see below)
#
# Needs root, blkparse, btt, cc.  Only one trace at a time (the blk tracer is
# global); refuses to start if current_tracer is not nop.  Written to work
# under `set -euo pipefail` but does not set shell options itself.
# Knobs: BLK_TRACE_BUF_KB (ring buffer per CPU, default 65536),
# BLK_TRACE_CLOCK (default mono: same clock as blktrace's relay records),
# BLK_TRACE_DRAIN_TIMEOUT (seconds, default 60).

_BLK_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../scripts/lib.sh
. "$_BLK_LIB_DIR/../../scripts/lib.sh"	# stop_pid
_BLK_TRACEFS=/sys/kernel/tracing
_BLK_ACTIVE=0
_BLK_DEV=
_BLK_OUT=
_BLK_READER=
_BLK_TRACING=0	# device trace enabled: stop must convert
_BLK_MOUNTED=0
_BLK_SAVED=()	# "path<TAB>value", restored last to first

_blk_err() {
	echo "blktrace.sh: $*" >&2
}

# _blk_set FILE VALUE: remember FILE's value (relative to tracefs unless
# absolute), then write VALUE.
_blk_set() {
	local f=$1 v=$2 old
	[[ $f == /* ]] || f=$_BLK_TRACEFS/$f
	old=$(<"$f")
	case $f in
	*/trace_clock)
		old=${old#*[}; old=${old%%]*} ;;
	*/buffer_size_kb)	# "7 (expanded: 1408)": not allocated yet
		[[ $old =~ expanded:\ ([0-9]+) ]] && old=${BASH_REMATCH[1]} ;;
	esac
	_BLK_SAVED+=("$f"$'\t'"$old")
	echo "$v" >"$f"
}

_blk_restore() {
	local i f rc=0
	for ((i = ${#_BLK_SAVED[@]} - 1; i >= 0; i--)); do
		f=${_BLK_SAVED[i]%%$'\t'*}
		echo "${_BLK_SAVED[i]#*$'\t'}" >"$f" || { _blk_err "cannot restore $f"; rc=1; }
	done
	_BLK_SAVED=()
	if ((_BLK_MOUNTED)); then
		umount "$_BLK_TRACEFS" || rc=1
		_BLK_MOUNTED=0
	fi
	return $rc
}

# Sum of one field ("overrun", "dropped events", "entries") over all CPUs.
_blk_stat() {
	cat "$_BLK_TRACEFS"/per_cpu/cpu*/stats |
		awk -v k="$1" -F': *' '$1 == k { s += $2 } END { print s + 0 }'
}

blk_trace_start() {
	local dev=$1 out=$2 en=/sys/class/block/$1/trace/enable f
	if ((_BLK_ACTIVE)); then
		_blk_err "already tracing $_BLK_DEV"
		return 1
	fi
	[[ -e $en ]] || { _blk_err "no block device $dev"; return 1; }
	mkdir -p "$out" && out=$(cd "$out" && pwd) || return 1
	rm -f "$out"/raw.bin "$out"/renum.* "$out"/trace.bin "$out"/btt.* "$out"/btt_*
	cc -O2 -Wall -o "$out/blkrenum" "$_BLK_LIB_DIR/../tools/blkrenum.c" || return 1
	_BLK_DEV=$dev _BLK_OUT=$out _BLK_ACTIVE=1 _BLK_TRACING=0
	if [[ ! -e $_BLK_TRACEFS/trace_pipe ]]; then
		mount -t tracefs nodev "$_BLK_TRACEFS" || { blk_trace_stop; return 1; }
		_BLK_MOUNTED=1
	fi
	if [[ $(<"$_BLK_TRACEFS/current_tracer") != nop ]]; then
		_blk_err "current_tracer is $(<"$_BLK_TRACEFS/current_tracer"), not nop: in use?"
		blk_trace_stop
		return 1
	fi
	for f in /sys/class/block/*/trace/enable; do
		if [[ $(<"$f") != 0 ]]; then
			_blk_err "$f is on: another block trace is running"
			blk_trace_stop
			return 1
		fi
	done
	[[ -z $(<"$_BLK_TRACEFS/set_event") ]] ||
		_blk_err "warning: other trace events are on; they share the buffer"
	# Each write below is undone by blk_trace_stop, in reverse order.
	if ! { _blk_set tracing_on 1 &&
		_blk_set trace_clock "${BLK_TRACE_CLOCK:-mono}" &&
		_blk_set buffer_size_kb "${BLK_TRACE_BUF_KB:-65536}" &&
		_blk_set current_tracer blk &&
		_blk_set options/blk_classic 0 &&
		{ [[ ! -e $_BLK_TRACEFS/options/blk_cgroup ]] || _blk_set options/blk_cgroup 0; } &&
		_blk_set options/context-info 0 &&
		_blk_set options/bin 1; }; then
		blk_trace_stop
		return 1
	fi
	# Setting the tracer emptied the buffer; count overruns from here.
	printf 'overrun0=%s\ndropped0=%s\n' "$(_blk_stat overrun)" \
		"$(_blk_stat 'dropped events')" >"$out/ring.txt"
	cat "$_BLK_TRACEFS/trace_pipe" >"$out/raw.bin" &
	_BLK_READER=$!
	_blk_set "$en" 1 || { blk_trace_stop; return 1; }
	_BLK_TRACING=1
}

# Wait until the ring buffer is empty and the reader wrote everything.
_blk_drain() {
	local size=-1 now n=0 max=$((${BLK_TRACE_DRAIN_TIMEOUT:-60} * 10))
	while ((n++ < max)); do
		kill -0 "$_BLK_READER" 2>/dev/null || { _blk_err "reader died"; return 1; }
		now=$(stat -c %s "$_BLK_OUT/raw.bin")
		if [[ $(_blk_stat entries) == 0 && $now == "$size" ]]; then
			return 0
		fi
		size=$now
		sleep 0.1
	done
	_blk_err "trace_pipe not drained after ${BLK_TRACE_DRAIN_TIMEOUT:-60}s"
	return 1
}

blk_trace_stop() {
	local rc=0 out=$_BLK_OUT window=("$@")
	((_BLK_ACTIVE)) || return 0
	_BLK_ACTIVE=0
	if ((_BLK_TRACING)); then
		echo 0 >"/sys/class/block/$_BLK_DEV/trace/enable" || rc=1
	fi
	if [[ -n $_BLK_READER ]]; then
		_blk_drain || rc=1
		stop_pid "$_BLK_READER" 5 TERM
		_BLK_READER=
		printf 'overrun1=%s\ndropped1=%s\n' "$(_blk_stat overrun)" \
			"$(_blk_stat 'dropped events')" >>"$out/ring.txt" || rc=1
	fi
	_blk_restore || rc=1
	((rc == 0 && _BLK_TRACING)) || return $rc
	_BLK_TRACING=0
	"$out/blkrenum" "$(<"/sys/class/block/$_BLK_DEV/dev")" "${window[@]}" <"$out/raw.bin" \
		>"$out/renum.bin" 2>"$out/renum.txt" || return 1
	LC_ALL=C blkparse -i - -d "$out/trace.bin" -f '' <"$out/renum.bin" \
		>"$out/blkparse.txt" || return 1
	(cd "$out" && btt -i trace.bin -o btt -X -l btt -q btt -z btt >/dev/null) || return 1
}

blk_trace_abort() {
	((_BLK_ACTIVE)) || return 0
	# off first: the drain waits for an empty buffer
	((_BLK_TRACING == 0)) || echo 0 >"/sys/class/block/$_BLK_DEV/trace/enable" || true
	_BLK_TRACING=0
	blk_trace_stop
}

# _blk_mean FILES...: "N MEAN_US" over btt's per-IO "time latency" files.
_blk_mean() {
	cat "$@" 2>/dev/null |
		awk '{ s += $2; n++ } END { printf "%d %.3f\n", n, n ? s / n * 1e6 : 0 }'
}

# blk_btt_summary OUTDIR: key=value lines, latencies in microseconds.
#   <x>_n, <x>_{min,mean,max}_us for each row of btt's table: q2q, q2g, g2i,
#     i2d, q2m, m2d, d2c, q2c, ... (rows btt had no samples for are absent);
#     btt_dm_row=Q2Cdm etc. when btt took the disk for device-mapper
#   q2d_n, q2d_mean_us: mean Q->D per I/O, from btt's own per-IO file (-z,
#     which rounds each I/O to 1 us: ~0.1 us off for 1-2 us values);
#     q2c_minus_d2c_us: the same from the table (ns), when the counts agree;
#     d2c_io_mean_us, q2c_io_mean_us: per-IO files -l/-q, cross-check
#   completions: D2C samples = I/Os (bios) completed; a bio merged into
#     another request counts too, so this is diskstats reads + reads merged
#   reads_completed, writes_completed: blkparse's counts of requests
#     (= diskstats reads, writes)
#   records, cpus, lost_events, lost_lines, lost_unknown, other_events,
#     other_devices, outside_window, same_sector, garbage_bytes, truncated:
#     from blkrenum (other_devices: records of disks someone else traced
#     meanwhile, left out; outside_window: records cut by blk_trace_stop
#     FROM TO; same_sector: requests queued at a sector where another was
#     outstanding, which btt's pairing by sector may leave untimed);
#     ring_overrun, ring_dropped: per_cpu/*/stats deltas during the trace
#   lost: events lost (max of the stream's and the ring buffer's count;
#     >0 if the stream said [LOST EVENTS] without a number)
#   capture_ok=1 when nothing was lost, garbled or cut: tests must check it
# BLK_JOIN_PY: python for py, joining truestat --slow=0's requests to the
# blk tracer's records (renum.bin) of the same sector:
#   blk_events(PATH): the Q, G, D and C times (ns, CLOCK_MONOTONIC) by sector
#   blk_join(LINES, EVENTS, queue=True): each "slow" line's C joined to the
#     first blk C at or after truestat's (truestat's probe runs first), its
#     D and Q the last before that C, its G the last between them. Returns
#     (late, apart, ref, off_c): late, what breaks the order (truestat
#     stamps each Q, D, C at or before the blk tracer; Q only with queue,
#     which --light's allocation start does not follow); apart[what], per
#     request |truestat - blk| (ns) of the service and queue time;
#     ref[what], the blk tracer's D2C and Q2D of those requests (Q2D
#     with queue only), and Q2G and G2D of those it traced a G for;
#     off_c, blk C - truestat C of each (ns)
# shellcheck disable=SC2034 # used by the tests
BLK_JOIN_PY=$(cat <<'PY'
import bisect, struct

def blk_events(path):
    blk, raw, at = {}, open(path, 'rb').read(), 0
    while at < len(raw):
        _, _, when, sector, _, action, _, _, _, _, pdu = struct.unpack_from('=IIQQIIIIIHH', raw, at)
        at += 48 + pdu
        kind = {1: 'Q', 4: 'G', 7: 'D', 8: 'C'}.get(action & 0xffff)
        if kind:
            blk.setdefault((kind, sector), []).append(when)
    return blk

def _blk_at(blk, kind, sector, start, end):
    # the blk tracer's last @kind event of @sector in [start, end], or None
    v = blk.get((kind, sector), [])
    i = bisect.bisect_right(v, end) - 1
    return v[i] if i >= 0 and v[i] >= start else None

def blk_join(lines, blk, queue=True):
    late, apart = [], {'service': [], 'queue': []}
    ref, off_c = {'service': [], 'queue': [], 'q2g': [], 'g2d': []}, []
    for x in lines:
        c_ts = x['mono_ns']
        d_ts = c_ts - round(x['service_ms'] * 1e6)
        v = blk.get(('C', x['sector']), [])
        i = bisect.bisect_left(v, c_ts)
        c = v[i] if i < len(v) else None
        dd = c and _blk_at(blk, 'D', x['sector'], 0, c)
        q = dd and _blk_at(blk, 'Q', x['sector'], 0, dd)
        if not q:
            late.append('sector %d: no blk Q/D/C at or after truestat' % x['sector'])
            continue
        if not (q <= d_ts <= dd):
            late.append('sector %d: D at %d, blk Q %d D %d' % (x['sector'], d_ts, q, dd))
        apart['service'].append(abs((c_ts - d_ts) - (c - dd)))
        ref['service'].append(c - dd)
        g = _blk_at(blk, 'G', x['sector'], q, dd)
        if g:
            ref['q2g'].append(g - q)
            ref['g2d'].append(dd - g)
        off_c.append(c - c_ts)
        if queue and x['queue_ms'] is not None:
            q_ts = d_ts - round(x['queue_ms'] * 1e6)
            if q_ts > q:
                late.append('sector %d: Q at %d, blk Q %d' % (x['sector'], q_ts, q))
            apart['queue'].append(abs((d_ts - q_ts) - (dd - q)))
            ref['queue'].append(dd - q)
    return late, apart, ref, off_c
PY
)

blk_btt_summary() {
	local out=$1 n mean
	[[ -s $out/btt.avg ]] || { _blk_err "no btt output in $out"; return 1; }
	# First table of btt.avg.  btt takes majors 253/254 for device-mapper
	# and then names Q2Q, Q2C "Q2Qdm", "Q2Cdm" (virtio disks are 254 too).
	awk '/^====/ && t++ { exit } NF == 5 && $1 ~ /^[A-Z]2[A-Z](dm)?$/ {
		k = tolower(substr($1, 1, 3))
		if ($1 ~ /dm$/) print "btt_dm_row=" $1
		printf "%s_n=%d\n%s_min_us=%.3f\n%s_mean_us=%.3f\n%s_max_us=%.3f\n",
			k, $5, k, $2 * 1e6, k, $3 * 1e6, k, $4 * 1e6
		if (k == "d2c") print "completions=" $5
	}' "$out/btt.avg"
	read -r n mean < <(_blk_mean "$out"/btt_*_q2d.dat)
	echo "q2d_n=$n"
	echo "q2d_mean_us=$mean"
	# Q2D = Q2C - D2C for each I/O, so also for the means of the same I/Os.
	awk '/^====/ && t++ { exit } NF == 5 { k = substr($1, 1, 3); n[k] = $5; m[k] = $3 }
		END { if (n["Q2C"] && n["Q2C"] == n["D2C"])
		printf "q2c_minus_d2c_us=%.3f\n", (m["Q2C"] - m["D2C"]) * 1e6 }' "$out/btt.avg"
	read -r n mean < <(_blk_mean "$out"/btt_*_d2c.dat)
	echo "d2c_io_mean_us=$mean"
	read -r n mean < <(_blk_mean "$out"/btt_*_q2c.dat)
	echo "q2c_io_mean_us=$mean"
	# blkparse: one section per CPU, plus "Total" when there are several.
	awk '/^CPU/ { t = 0 } /^Total/ { t = 1 }
		/Reads Completed/ { r[t] += $3; w[t] += $7; tot += t }
		END { t = tot > 0; printf "reads_completed=%d\nwrites_completed=%d\n", r[t], w[t] }' \
		"$out/blkparse.txt"
	awk -F= 'NR == FNR { print } { v[$1] = $2 } END {
		ro = v["overrun1"] - v["overrun0"]; rd = v["dropped1"] - v["dropped0"]
		stream = v["lost_events"] + v["lost_unknown"]
		lost = stream > ro + rd ? stream : ro + rd
		printf "ring_overrun=%d\nring_dropped=%d\nlost=%d\n", ro, rd, lost
		printf "capture_ok=%d\n", !lost && !v["garbage_bytes"] && !v["truncated"] &&
			v["overrun1"] != ""
	}' "$out/renum.txt" "$out/ring.txt"
}
