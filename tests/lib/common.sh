# shellcheck shell=bash
# common.sh: what every integration test shares. Source it, then:
#
#	loop_new SIZE_MB [DIR]	attach a loop device (direct I/O) on a new file
#				in DIR (default /var/tmp); its name in $LOOP
#				(not in $(...): cleanup must be registered here);
#				LOOP_FLAGS adds losetup flags (-P: partitions)
#	loop_filled SIZE_MB	loop_new, its whole file written once (real reads)
#	queue_set DEV ATTR VAL	write /sys/block/DEV/queue/ATTR, restored at exit
#	zram_new SIZE_MB	size zram0 (bio-based), reset at exit; skips the
#				test when zram0 is missing or already in use
#	diskstats DEV		the device's /proc/diskstats fields, 1-based after
#				the name: "reads rmerged rsect rms writes ..."
#	ts_start OUT ARGS...	run ./truestat -j ARGS in the background, JSON to
#				OUT; returns once it has attached
#	ts_stop [SIG]		signal it (default INT) and wait; sets TS_RC
#	ts_reports_after OUT	wait until OUT has two more report lines: the
#				second was read after the call, so the reports
#				up to it hold all the I/O before the call
#	tool_need PATH		a test tool ($WITNESS, $SPANS) is built, or a
#				failed check ends the test
#	witness_start OUT DEV	the witness on DEV in the background, its JSON
#				to OUT; returns once it counts (W_PID: its pid)
#	spans_start OUT DEV [ends]	tests/tools/spans on DEV (ends: C and
#				E only), its lines to OUT, until spans_stop
#				(sets S_RC)
#	check NAME RC MSG	record one assertion (RC 0 passes): "ok"/"FAIL" + MSG
#	check_cmd NAME MSG CMD	the same, passing when CMD succeeds
#	check_lines		"NAME RC MSG" lines on stdin, each a check; a
#				line starting with # is printed, a figure
#	check_refuses NAME WHAT CMD...	CMD refuses: status 1, nothing on
#				stdout, one line on stderr that names WHAT
#	public_copy SCRIPT	a copy of scripts/SCRIPT anyone can read (this
#				tree may not be), for a run as nobody: its path
#				in $PUBLIC (not in $(...): cleanup is registered)
#	interrupt_at PATTERN OUT CMD...	CMD in a process group of its own,
#				its output to OUT; once OUT holds PATTERN (or
#				CMD ended), SIGINT to the group: its status in
#				INT_RC
#	finish			print the verdict; exit 0 only if every check passed
#
# Every test sources this with `set -euo pipefail`; cleanup() runs on any exit
# and undoes everything in reverse order: truestat and fio killed, loop
# devices detached, files removed, queue settings restored. With
# TS_KEEP_FAILED=DIR (tests/run-integration.sh sets it), a test that failed
# has the files its cleanup removes (up to 8 MB each) copied first to
# DIR/TEST.PID/, so that a failure seen once can still be read.

TS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# die, stop_pid, wait_for, ...: what the scripts share with the tests
# shellcheck source=../../scripts/lib.sh
. "$TS_ROOT/scripts/lib.sh"
TRUESTAT=$TS_ROOT/truestat
TS_PID=
TS_RC=
_CLEANUP=()	# shell commands, run last to first
_CHECKS=0
_FAILED=0

on_exit() {
	_CLEANUP+=("$1")
}

# cleanup: every on_exit command, whatever fails on the way: errexit is
# off here (a copy that fails, a command substitution's status, must not
# end the shell before the loop device is detached)
cleanup() {
	local rc=$? i
	set +e
	((rc == 0 || rc == 77)) && ((_FAILED == 0)) || _keep_failed
	for ((i = ${#_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${_CLEANUP[i]}" >/dev/null 2>&1 || true
	done
	_CLEANUP=()
}
# The files that on_exit's "rm -rf PATH..." / "rm -f 'PATH'" would remove.
_keep_failed() {
	local c path dest
	[[ -n ${TS_KEEP_FAILED:-} ]] || return 0
	dest=$TS_KEEP_FAILED/$(basename "$0" .sh).$$
	for c in "${_CLEANUP[@]}"; do
		[[ $c =~ ^rm\ -r?f\ ([^\;\&\|\$]+)$ ]] || continue
		for path in ${BASH_REMATCH[1]//\'/}; do
			mkdir -p "$dest" || return 0
			(cd "${path%/*}" && find "${path##*/}" -type f -size -8M \
				-exec cp -p --parents {} "$dest" \;) 2>/dev/null || true
		done
	done
	echo "  # the failed test's files are in $dest"
}
trap cleanup EXIT
# a timeout that ends a test sends its TERM twice (to the script, then to
# its process group): the second must not cut the cleanup short
trap 'trap "" INT TERM; exit 130' INT TERM

need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
	done
}

# settle: udev has handled the events so far (devices made, removed);
# udevadm's own timeout (120 s) is the guard, and a failure says so
settle() {
	udevadm settle || die 1 "udevadm settle failed: udev still busy, or udevadm missing"
}

loop_new() {
	local size=$1 dir=${2:-/var/tmp} file dev
	file=$(mktemp "$dir/truestat-test.XXXXXX")
	on_exit "rm -f '$file'"
	truncate -s "${size}M" "$file"
	# shellcheck disable=SC2086 # LOOP_FLAGS: extra losetup flags, e.g. -P
	dev=$(losetup -f --show --direct-io=on ${LOOP_FLAGS:-} "$file")
	on_exit "losetup -d '$dev'"
	settle
	LOOP=${dev#/dev/}
	# a loop device keeps its queue settings across detach: start from the
	# defaults (scheduler none, 128 tags), whatever a last user left
	queue_set "$LOOP" scheduler none
	queue_set "$LOOP" nr_requests 128
}

# nr_requests can read back its old value while the tags behind it stay
# smaller (after a scheduler switch): writing another value first makes
# the kernel resize them (notes/machine-facts.md).
# loop_filled SIZE_MB: loop_new on a file on / (vda), written once so that
# reads reach the disk: unlike a loop over /dev/shm it fills its tags.
loop_filled() {
	loop_new "$1"
	fio --name=fill --filename="/dev/$LOOP" --direct=1 --rw=write --bs=1M \
		--ioengine=libaio --iodepth=4 --output=/dev/null
}

queue_write() {
	local f=/sys/block/$1/queue/$2
	[[ $2 == nr_requests ]] && echo $(($3 - 1)) >"$f"
	echo "$3" >"$f"
}

queue_set() {
	local f=/sys/block/$1/queue/$2 old
	old=$(<"$f")
	[[ $2 == scheduler ]] && { old=${old#*[}; old=${old%%]*}; }
	on_exit "queue_write $1 $2 '$old'"
	queue_write "$1" "$2" "$3"
}

zram_new() {
	local z=/sys/block/zram0
	[[ -w $z/disksize ]] || { echo "SKIP: no zram0"; exit 77; }
	[[ $(<"$z/disksize") == 0 ]] || { echo "SKIP: zram0 is in use"; exit 77; }
	on_exit "echo 1 >$z/reset"
	echo "${1}M" >"$z/disksize"
}

# make_tmp: sets $tmp, a directory of the test's own, removed at exit
make_tmp() {
	tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
	on_exit "rm -rf $tmp"
}

diskstats() {
	awk -v d="$1" '$3 == d { for (i = 4; i <= NF; i++) printf "%s ", $i; print "" }' /proc/diskstats
}

ts_start() {
	local out=$1
	shift
	# emptied here, not by the redirection in the child: a test that runs
	# truestat twice into one file would otherwise find the first run's
	# "attached with" before the second truncates it, and start its
	# workload before the second attached
	: >"$out"
	: >"$out.err"
	"$TRUESTAT" -j -v "$@" >"$out" 2>"$out.err" &
	TS_PID=$!
	on_exit "kill -9 $TS_PID"
	wait_for "$TS_PID" "$START_GUARD" grep -q "attached with" "$out.err" && return 0
	echo "truestat did not attach:"
	grep -v "^libbpf" "$out.err" | tail -5
	return 1
}

# wait_serving URL [CURL-ARGS...]: until the truestat of ts_start answers
# URL/ (START_GUARD s at most; 1 as soon as it has ended)
wait_serving() {
	local url=$1
	shift
	wait_for "$TS_PID" "$START_GUARD" curl -sf -o /dev/null "$@" "$url/"
}

# ts_start_as KIND OUT ARGS...: ts_start with the programs of KIND: tp_btf,
# raw_tp (the fallback) or locked (those for kernels before 5.12), checked
# as attached so (check KIND_attached)
ts_start_as() {
	local kind=$1 out=$2 says
	shift 2
	case $kind in
	raw_tp) ts_start "$out" "$@" --raw-tp; says="attached with raw_tp" ;;
	locked) TRUESTAT_TEST_LOCKED=1 ts_start "$out" "$@"; says="before 5.12" ;;
	*) ts_start "$out" "$@"; says="attached with tp_btf" ;;
	esac
	check_cmd "${kind}_attached" "$says" grep -q "$says" "$out.err"
}

ts_reports_after() {
	wait_for "$TS_PID" 10 _lines_at_least "$1" $(($(wc -l <"$1") + 2))
}
_lines_at_least() { [[ $(wc -l <"$1") -ge $2 ]]; }

ts_stop() {
	kill "-${1:-INT}" "$TS_PID"
	TS_RC=0
	wait "$TS_PID" || TS_RC=$?
}

# tp_links PID: the tracepoints PID's BPF links are attached to, as the
# kernel names them in /proc/PID/fdinfo (tp_name), sorted, one line
tp_links() {
	local f
	for f in /proc/$1/fd/*; do
		[[ $(readlink "$f") == anon_inode:bpf_link ]] || continue
		awk '$1 == "tp_name:" { print $2 }' "/proc/$1/fdinfo/${f##*/}"
	done | sort | tr '\n' ' '
}

WITNESS=$TS_ROOT/.output/witness

# tool_need PATH: a test tool (tests/tools) is built, or a failed check
# naming the make target that builds it
tool_need() {
	[[ -x $1 ]] && return 0
	check "${1##*/}_built" 1 "$1 missing: make ${1#"$TS_ROOT"/} builds it (make test does)"
	finish
	exit 1
}

witness_start() {
	tool_need "$WITNESS"
	exec {W_FD}< <(exec "$WITNESS" "$2" 2>&1 >"$1")
	W_PID=$!
	on_exit "kill -9 $W_PID"
	read -r -t 10 -u "$W_FD" W_SAID && [[ $W_SAID == "witness: counting"* ]] ||
		{ echo "witness did not attach: ${W_SAID:-}"; return 1; }
}

# rcu_freed_within: seconds to wait for the kernel to free a BPF program
# once its last link and fd are closed. A link goes at once; its program
# after an RCU grace period (bpf_link_free defers the put to call_rcu): 60
# ms here when idle, over 0.3 s under the suite's load. A grace period
# longer than the kernel's RCU stall timeout is a stall the kernel itself
# reports: that is the bound (21 s, the kernel's default, where it is not
# shown).
rcu_freed_within() {
	cat /sys/module/rcupdate/parameters/rcu_cpu_stall_timeout 2>/dev/null || echo 21
}

# ts_progs_left: truestat's programs (named ts_*) and the links to them
# still in the kernel, "PROGS LINKS", once it had the time to free them
ts_progs_left() {
	local end n
	end=$(($(date +%s) + $(rcu_freed_within)))
	while :; do
		n=$(python3 -c "
import json, subprocess
run = lambda *a: json.loads(subprocess.run(['bpftool', '-j'] + list(a), capture_output=True, text=True).stdout or '[]')
ids = {p['id'] for p in run('prog', 'show') if p.get('name', '').startswith('ts_')}
print(len(ids), sum(l.get('prog_id') in ids for l in run('link', 'list')))")
		[[ $n == "0 0" || $(date +%s) -gt $end ]] && break
		sleep 0.1
	done
	echo "$n"
}

# spans_start OUT DEVICE [ends]: tests/tools/spans on the disk, its lines
# into OUT, until spans_stop
SPANS=$TS_ROOT/.output/spans

spans_start() {
	tool_need "$SPANS"
	exec {S_FD}< <(exec "$SPANS" "$(cat "/sys/block/$2/dev")" ${3:+"$3"} 2>&1 >"$1")
	S_PID=$!
	on_exit "kill -9 $S_PID"
	read -r -t 10 -u "$S_FD" S_SAID && [[ $S_SAID == "spans: tracing"* ]] ||
		{ echo "spans did not attach: ${S_SAID:-}"; return 1; }
}

spans_stop() {
	kill -INT "$S_PID"
	S_RC=0
	wait "$S_PID" || S_RC=$?
}

# cgroup_new NAME: a cgroup v2 of the test's, CG its directory, removed at
# exit (it must be empty by then: the processes put in it have ended);
# skips the test where no cgroup v2 is mounted
cgroup_new() {
	local root
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[[ -n $root ]] || { echo "SKIP: no cgroup v2 mounted"; exit 77; }
	CG=$root/truestat-test.$$.$1
	mkdir "$CG"
	on_exit "rmdir $CG"
}

# cgroup_exec DIR COMMAND...: runs COMMAND inside cgroup DIR
cgroup_exec() {
	bash -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$@"
}

# check_schema NAME FILE...: every JSON line of the files is valid against
# schema/truestat.schema.json
check_schema() {
	local name=$1
	shift
	check_lines < <(py "
try:
    import jsonschema
except ImportError:
    print('$name 1 no python3 jsonschema (Debian: python3-jsonschema, make deps-test)')
    sys.exit(0)
v = jsonschema.Draft202012Validator(json.load(open('$TS_ROOT/schema/truestat.schema.json')))
errs = [e.message for f in sys.argv[1:] for d in docs(f) for e in v.iter_errors(d)]
print('$name', int(bool(errs)), 'reports valid against the schema: %s' % (errs[:2] or 'yes'))
" "$@")
}

# check_lines: reads "NAME RC MESSAGE..." lines (e.g. from py) into check.
check_lines() {
	local line name rc msg
	while read -r line; do
		# a figure for the reader, not a check
		[[ $line == '#'* ]] && { echo "  $line"; continue; }
		read -r name rc msg <<<"$line"
		check "$name" "$rc" "$msg"
	done
}

# check_cmd NAME MESSAGE COMMAND...: a pass when COMMAND succeeds.
check_cmd() {
	local name=$1 msg=$2
	shift 2
	if "$@"; then check "$name" 0 "$msg"; else check "$name" 1 "$msg"; fi
}

# check NAME RC MESSAGE: RC 0 is a pass.
check() {
	_CHECKS=$((_CHECKS + 1))
	if [[ $2 -eq 0 ]]; then
		echo "  ok    $1: $3"
	else
		_FAILED=$((_FAILED + 1))
		echo "  FAIL  $1: $3"
	fi
}

# free_port: a free TCP port on loopback, chosen by the kernel
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# py SCRIPT [ARG...]: run python3 with the JSON helpers below preloaded;
# the ARGs in sys.argv[1:]. A script that dies prints the failed check
# py_script (with the error), so that check_lines never sees fewer checks.
py() {
	python3 -B -c "
import json, sys, traceback
def _failed(kind, value, tb):
    # a script that dies is a failed check, never fewer checks
    traceback.print_exception(kind, value, tb)
    print('py_script 1 the check script failed: %s: %s' % (kind.__name__, value), flush=True)
    sys.exit(1)
sys.excepthook = _failed
sys.path.insert(0, '$TS_ROOT/scripts')
import truestat_json as tj
from truestat_json import docs, totals
def dev(doc, name):
    x = tj.device(doc, name)
    if x is None:
        raise LookupError('device %s not in report' % name)
    return x
DEPTH_CAUSES = tuple(tj.DEPTH_CAUSES)
def within(a, b, rel):
    return abs(a - b) <= rel * abs(b)
def scrape(path):
    # a /metrics scrape's samples: 'name{labels}' to value
    m = {}
    for l in open(path):
        if not l.startswith('#') and l.strip():
            k, v = l.rsplit(' ', 1)
            m[k] = float(v)
    return m
def little(name, depth, span_ms, summed, n, unseen, slowest, what='service'):
    # Little's law: the depth registers' area (depth: a concurrency or
    # os_queue object) against the n requests' own times summed (ms): equal
    # but for the depth's changes stamped after their clock read
    # (reordered_ms) and the JSON's 6 decimals (of the mean over the span,
    # of each of the n times, of span_s times the mean); each unseen
    # request is in the depth for 0 to its estimated time, at most slowest
    area = depth['mean'] * span_ms
    slack = depth['reordered_ms'] + 5e-7 * (n + span_ms) + 5e-4 * depth['mean']
    lo, hi = summed - slack, summed + unseen * (slowest or 0) + slack
    print(name, int(not lo <= area <= hi), 'depth x time %.3f ms in [%.3f, %.3f]: %s summed %.3f ms (%d), '
          'reordered %.3f ms, %d unseen x the slowest' % (area, lo, hi, what, summed, n, depth['reordered_ms'], unseen))
$1" "${@:2}"
}

check_refuses() {
	local name=$1 what=$2 rc=0 o e
	shift 2
	o=$(mktemp /tmp/truestat-test.XXXXXX)
	e=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $o $e"
	"$@" >"$o" 2>"$e" || rc=$?
	check "$name" "$( ((rc == 1)) && [[ ! -s $o && $(wc -l <"$e") == 1 ]] && grep -q "$what" "$e"; echo $?)" \
		"status $rc, $(wc -l <"$e") line: $(head -1 "$e")"
}

public_copy() {
	local pub
	pub=$(mktemp -d /tmp/truestat-test.XXXXXX)
	on_exit "rm -rf '$pub'"
	mkdir "$pub/scripts"
	cp "$TS_ROOT/scripts/$1" "$pub/scripts/"
	chmod -R a+rX "$pub"
	PUBLIC=$pub/scripts/$1
}

interrupt_at() {
	local pattern=$1 out=$2 pid i
	shift 2
	set -m
	"$@" >"$out" 2>&1 &
	pid=$!
	set +m
	on_exit "kill -9 -- -$pid"
	on_exit "rm -f '$out'"
	for ((i = 0; i < 1200; i++)); do
		grep -q -- "$pattern" "$out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -INT -- "-$pid"
	INT_RC=0
	wait "$pid" || INT_RC=$?
}

finish() {
	echo "  $((_CHECKS - _FAILED)) of $_CHECKS checks passed"
	[[ $_FAILED -eq 0 && $_CHECKS -gt 0 ]]
}
