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
#	blk_trace_stop			drain, restore tracefs, blkparse + btt (idempotent,
#					fine from an EXIT trap)
#	blk_btt_summary OUTDIR		key=value lines (see below)
#
# Needs root, blkparse, btt, cc.  Only one trace at a time (the blk tracer is
# global); refuses to start if current_tracer is not nop.  Written to work
# under `set -euo pipefail` but does not set shell options itself.
# Knobs: BLK_TRACE_BUF_KB (ring buffer per CPU, default 65536),
# BLK_TRACE_CLOCK (default mono: same clock as blktrace's relay records),
# BLK_TRACE_DRAIN_TIMEOUT (seconds, default 60).

_BLK_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_BLK_TRACEFS=/sys/kernel/tracing
_BLK_ACTIVE=0
_BLK_DEV=
_BLK_OUT=
_BLK_READER=
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
	local dev=$1 out=$2 en f
	if ((_BLK_ACTIVE)); then
		_blk_err "already tracing $_BLK_DEV"
		return 1
	fi
	en=/sys/class/block/$dev/trace/enable
	[[ -e $en ]] || { _blk_err "no block device $dev"; return 1; }
	mkdir -p "$out"
	cc -O2 -Wall -o "$out/blkrenum" "$_BLK_LIB_DIR/../tools/blkrenum.c" || return 1
	if [[ ! -e $_BLK_TRACEFS/trace_pipe ]]; then
		mount -t tracefs nodev "$_BLK_TRACEFS" || return 1
		_BLK_MOUNTED=1
	fi
	if [[ $(<"$_BLK_TRACEFS/current_tracer") != nop ]]; then
		_blk_err "current_tracer is $(<"$_BLK_TRACEFS/current_tracer"), not nop: in use?"
		_blk_restore
		return 1
	fi
	for f in /sys/class/block/*/trace/enable; do
		if [[ $(<"$f") != 0 ]]; then
			_blk_err "$f is on: another block trace is running"
			_blk_restore
			return 1
		fi
	done
	_BLK_DEV=$dev _BLK_OUT=$out _BLK_ACTIVE=1
	rm -f "$out"/raw.bin "$out"/btt* "$out"/trace.bin
	# Each write below is undone by blk_trace_stop, in reverse order.
	_blk_set tracing_on 1 &&
		_blk_set trace_clock "${BLK_TRACE_CLOCK:-mono}" &&
		_blk_set buffer_size_kb "${BLK_TRACE_BUF_KB:-65536}" &&
		_blk_set current_tracer blk &&
		_blk_set options/blk_classic 0 &&
		_blk_set options/blk_cgroup 0 &&
		_blk_set options/blk_cgname 0 &&
		_blk_set options/context-info 0 &&
		_blk_set options/bin 1 || { blk_trace_stop; return 1; }
	# The tracer change emptied the buffer; counters start from here.
	printf 'overrun0=%s\ndropped0=%s\n' "$(_blk_stat overrun)" \
		"$(_blk_stat 'dropped events')" >"$out/ring.txt"
	cat "$_BLK_TRACEFS/trace_pipe" >"$out/raw.bin" &
	_BLK_READER=$!
	_blk_set "$en" 1 || { blk_trace_stop; return 1; }
}

# Wait until the ring buffer is empty and the reader wrote everything.
_blk_drain() {
	local size=-1 now n=0 max=$((${BLK_TRACE_DRAIN_TIMEOUT:-60} * 10))
	while ((n++ < max)); do
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
	local rc=0 out=$_BLK_OUT
	((_BLK_ACTIVE)) || return 0
	_BLK_ACTIVE=0
	echo 0 >"/sys/class/block/$_BLK_DEV/trace/enable" || rc=1
	if [[ -n $_BLK_READER ]]; then
		_blk_drain || rc=1
		kill "$_BLK_READER" 2>/dev/null || true
		wait "$_BLK_READER" 2>/dev/null || true
		_BLK_READER=
	fi
	printf 'overrun1=%s\ndropped1=%s\n' "$(_blk_stat overrun)" \
		"$(_blk_stat 'dropped events')" >>"$out/ring.txt" || rc=1
	_blk_restore || rc=1
	((rc == 0)) || return $rc
	"$out/blkrenum" <"$out/raw.bin" >"$out/renum.bin" 2>"$out/renum.txt" || return 1
	LC_ALL=C blkparse -i - -d "$out/trace.bin" -f '' <"$out/renum.bin" \
		>"$out/blkparse.txt" || return 1
	(cd "$out" && btt -i trace.bin -o btt -X -l btt -q btt -z btt >/dev/null) || return 1
}

# _blk_mean FILES...: "N MEAN_US" over btt's per-IO "time latency" files.
_blk_mean() {
	cat "$@" 2>/dev/null |
		awk '{ s += $2; n++ } END { printf "%d %.3f\n", n, n ? s / n * 1e6 : 0 }'
}

# Prints key=value lines:
#   <x>_n, <x>_{min,mean,max}_us for each row of btt's table (x = q2q, q2g,
#     g2i, i2d, m2i, q2m, d2c, q2c, ... whatever btt found)
#   q2d_n, q2d_mean_us: from btt -z (per-IO Q->D), d2c_io_mean_us and
#     q2c_io_mean_us from btt -l/-q (same means, 1 us resolution per IO)
#   completions: D2C count (requests completed, as in /proc/diskstats)
#   reads_completed, writes_completed: blkparse's totals
#   records, lost_events, lost_lines, lost_unknown, garbage_bytes, truncated,
#     ring_overrun, ring_dropped; lost = sum of the loss counters: a test
#     must fail unless lost=0.
blk_btt_summary() {
	local out=$1 n mean
	[[ -s $out/btt.xvg ]] || { _blk_err "no btt output in $out"; return 1; }
	awk 'NF == 5 && $1 ~ /^[A-Z]2[A-Z]$/ {
		k = tolower($1)
		printf "%s_n=%d\n%s_min_us=%.3f\n%s_mean_us=%.3f\n%s_max_us=%.3f\n",
			k, $5, k, $2 * 1e6, k, $3 * 1e6, k, $4 * 1e6
		if (k == "d2c") print "completions=" $5
	}' "$out/btt.xvg"
	read -r n mean < <(_blk_mean "$out"/btt_*_q2d.dat)
	echo "q2d_n=$n"
	echo "q2d_mean_us=$mean"
	read -r n mean < <(_blk_mean "$out"/btt_*_d2c.dat)
	echo "d2c_io_mean_us=$mean"
	read -r n mean < <(_blk_mean "$out"/btt_*_q2c.dat)
	echo "q2c_io_mean_us=$mean"
	# blkparse: one section per CPU, plus "Total" when there are several.
	awk '/^CPU/ { t = 0 } /^Total/ { t = 1 }
		/Reads Completed/ { r[t] += $3; w[t] += $7; tot += t }
		END { t = tot > 0; printf "reads_completed=%d\nwrites_completed=%d\n", r[t], w[t] }' \
		"$out/blkparse.txt"
	grep -E '^(records|lost_events|lost_lines|lost_unknown|garbage_bytes|truncated)=' \
		"$out/renum.txt"
	awk -F= '{ v[$1] = $2 } END {
		printf "ring_overrun=%d\nring_dropped=%d\n",
			v["overrun1"] - v["overrun0"], v["dropped1"] - v["dropped0"]
	}' "$out/ring.txt"
	awk -F= '{ v[$1] = $2 } END {
		print "lost=" v["lost_events"] + v["lost_unknown"] + v["garbage_bytes"] + \
			v["truncated"] + v["overrun1"] - v["overrun0"] + v["dropped1"] - v["dropped0"]
	}' "$out/renum.txt" "$out/ring.txt"
}
