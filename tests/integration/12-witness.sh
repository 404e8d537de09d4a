#!/usr/bin/env bash
# truestat's counts against an independent witness (tests/tools/witness:
# per-CPU counters on the block tracepoints, nothing else) and against
# /proc/diskstats, exactly (on vda, less what other software read at the
# windows' edges: see below). The platform drops 0.1-0.5% of
# completion tracepoint calls before any BPF program runs; truestat counts
# such a request as "missed" when it finds it ended. Asserted:
#   ios + missed = completions diskstats counted, per direction;
#   missed = the witness's shortfall (diskstats completions its own
#     block_rq_complete program never saw): a drop hits every program on the
#     tracepoint, so truestat misses exactly what the witness misses;
#   bytes + missed_bytes = diskstats sectors x 512, and missed_bytes = the
#     witness's shortfall in bytes;
#   with TRUESTAT_TEST_MISS_EVERY=N (truestat's completion program also
#     ignores one of every N tracked completions it is given, the first
#     included): missed = shortfall + ceil((completions - shortfall) / N).
#
# Definitions that line up: a completion is a request's last
# block_rq_complete (nr_bytes >= what is left of it), for the witness as for
# truestat; partial ones are neither. A requeued request is issued again and
# completes once. Flush commands count in both (diskstats' flush column).
# Empty preflush writes (fsync) are counted by diskstats but never issued:
# the witness takes their number from block_io_start, where nothing is
# lost, and it is taken off the diskstats side; the zero-byte end of a write
# that went through a flush sequence is counted by neither (its data
# completion is). fio here does no fsync, so both are 0 on the loop device.
# One case would part them: a zero-byte completion of a request whose last
# completion went unseen, its record still there (an empty preflush write
# reusing it), is taken by truestat for that completion (counted in ios).
# 10-counts-vs-diskstats.sh, with fsync, counts those; here the loop device
# has none (checked), and on vda it would take another program's empty
# flush reusing, within milliseconds, a read whose completion was dropped.
#
# Windows. The witness's window W runs from its start (after it attached)
# to its end, after truestat's: it reads diskstats itself at both ends,
# each end re-read until diskstats holds still across its counter read.
# truestat's window T, from its attach to its last snapshot, lies inside W,
# and fio runs inside T.
#   loop: a loop device only this test uses, on a file on / (so that it
#     keeps its 16 requests busy): no I/O reaches it outside fio's run. The
#     test also reads diskstats right before truestat starts and right
#     after it stops; equal deltas to the witness's show that nothing
#     completed in W outside T, so W and T hold the same completions.
#   vda (fio O_DIRECT random reads of a file in /var/tmp; /dev/vda itself
#     cannot be opened): everything on the machine writes to vda, and other
#     users may read from it. Only reads are compared. W and T hold the
#     same reads when none completes between the witness's start and
#     truestat's attach or after truestat's last snapshot, and none is in
#     flight at the attach (none straddles T's start). Reads by other
#     software inside T are counted by all three alike. So the test waits
#     until vda has had no read for a while before it starts the witness,
#     and the programs started at the edges (truestat, the witness) are
#     read into the page cache first: it is reclaimed here, and their own
#     loading read vda. The 'edges' line counts the reads in W outside a
#     diskstats read taken after truestat attached and one taken before
#     its stop, and the reads in flight at the first. None (the usual case
#     when nothing else reads vda, as in CI): W and T hold the same reads,
#     and every check is exact. When another reader touched vda at an edge
#     all the same (here, other people's compilers and tests, about one run
#     in three), each such read may be in T or not: the checks allow for
#     exactly that many (and their bytes; max_sectors_kb for one in
#     flight), and say so.
# The run with TRUESTAT_TEST_MISS_EVERY is on the loop device only: the
# count that picks the completions to ignore runs over every direction, and
# vda's writes (anyone's) are not attributable.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

tool_need "$WITNESS"

# reads_of DEV: completed reads, reads in flight, sectors read
reads_of() {
	echo "$(diskstats "$1" | cut -d' ' -f1) $(awk '{ print $1 }' "/sys/block/$1/inflight") $(diskstats "$1" | cut -d' ' -f3)"
}

# read_quiet DEV: waits (up to 60 s) until DEV has had no read for 0.5 s
read_quiet() {
	local last now still=0 i
	last=$(reads_of "$1")
	for ((i = 0; i < 1200 && still < 10; i++)); do
		sleep 0.05
		now=$(reads_of "$1")
		if [[ $now == "$last" && $(echo "$now" | cut -d' ' -f2) == 0 ]]; then
			still=$((still + 1))
		else
			still=0
		fi
		last=$now
	done
}

# run NAME DEV SCOPE MISS_EVERY FIO_ARGS...: the witness, then truestat
# (TRUESTAT_TEST_MISS_EVERY=MISS_EVERY unless 0), then fio; checks over
# SCOPE: "all" (every direction) or "read".
run() {
	local name=$1 dev=$2 scope=$3 every=$4 out wout d0 d1 r0 r1 r2
	shift 4
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	wout=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $out $out.err $wout"
	: >"$out.err" # files made before the window: no metadata read inside
	if [[ $scope == read ]]; then
		# the programs started inside the window, read now: page cache
		# reclaim (kdamond here) would have them read from vda there
		# shellcheck disable=SC2046 # one path a word
		cat "$TRUESTAT" "$WITNESS" "$(command -v grep)" $(ldd "$TRUESTAT" | awk '/=> \// { print $3 }') >/dev/null
		read_quiet "$dev"
	fi
	witness_start "$wout" "$dev"
	d0=$(diskstats "$dev")
	if ((every)); then
		TRUESTAT_TEST_MISS_EVERY=$every ts_start "$out" -d "$dev" 1 600
	else
		ts_start "$out" -d "$dev" 1 600
	fi
	r1=$(reads_of "$dev")
	fio --name="$name" --direct=1 --bs=4k --ioengine=libaio --iodepth=16 \
		--runtime=3 --time_based --output=/dev/null "$@"
	[[ $scope == read ]] && read_quiet "$dev"
	r2=$(reads_of "$dev")
	ts_stop INT
	d1=$(diskstats "$dev")
	kill -INT "$W_PID"
	W_RC=0
	wait "$W_PID" || W_RC=$?
	check "${name}_exit" $((TS_RC || W_RC)) "truestat exit $TS_RC, witness exit $W_RC"
	check_lines < <(py "
import math
n, scope, every = '$name', '$scope', $every
t = dev(totals('$out'), '$dev')
w = json.load(open('$wout'))
wb, wd = w['bpf'], w['diskstats']
groups = ['read', 'write', 'discard', 'flush'] if scope == 'all' else ['read']
op = lambda g, k: t['ops'].get(g, {}).get(k, 0)
ev = t['events']
print('# ' + n + ' events, truestat: ' + ' '.join('%s=%d' % kv for kv in ev.items() if kv[1]) +
      '; witness: issue %d requeue %d complete %d partial %d io_done %d' % tuple(
      wb[k]['all'] for k in ('issue', 'requeue', 'complete', 'partial', 'io_done')))
# amb, amb_bytes: reads (and their bytes) that may lie in W but not in T
amb = amb_bytes = 0
if scope == 'all':
    b, a = [int(x) for x in '$d0'.split()], [int(x) for x in '$d1'.split()]
    inner = [a[0] - b[0], a[4] - b[4], a[11] - b[11], a[15] - b[15]]
    print(n + '_edges', int(not w['settled'] or inner != [wd['ios'][g] for g in groups]),
          'diskstats deltas from before truestat started to after it stopped %s, the witness window %s (settled %s)'
          % (inner, [wd['ios'][g] for g in groups], w['settled']))
else:
    # reads in W outside the diskstats reads after truestat attached and
    # before its stop, and reads in flight at the first, may be outside T:
    # other software's, at the edges. Each is a read (of at most
    # max_sectors_kb, when in flight) the checks below must allow for.
    r1, r2 = [int(x) for x in '$r1'.split()], [int(x) for x in '$r2'.split()]
    edge, inflight = wd['ios']['read'] - (r2[0] - r1[0]), r1[1]
    amb = edge + inflight
    amb_bytes = wd['bytes']['read'] - (r2[2] - r1[2]) * 512 + inflight * $(cat "/sys/block/$dev/queue/max_sectors_kb") * 1024
    print(n + '_edges', int(edge < 0), 'reads in the witness window %d, %d of them outside truestat\'s, %d in flight at its start: %s'
          % (wd['ios']['read'], edge, inflight, 'the windows line up, all is exact' if not amb
             else 'other software read at the edges: the checks allow for them'))
def between(lo, got, hi):
    return int(not lo <= got <= hi)
def than(want, k):
    return '%d' % want if not k else '%d to %d (%d at the edges)' % (want - k, want, k)
# what diskstats counts that was never issued: empty preflush writes
unissued = {g: wb['io_start_empty'][g] if wb['io_start_empty'] else 0 for g in groups}
sum_g = lambda f: sum(f(g) for g in groups)
done = sum_g(lambda g: wd['ios'][g] - unissued[g])
ios, missed = sum_g(lambda g: op(g, 'ios')), sum_g(lambda g: op(g, 'missed'))
short = sum_g(lambda g: w['shortfall'][g])
print(n + '_completions', between(done - amb, ios + missed, done) or int(done == 0),
      '%s: truestat ios %d + missed %d = %d, diskstats %s' % (scope, ios, missed, ios + missed, than(done, amb)))
for g in groups:
    if wd['ios'][g] or op(g, 'ios') or op(g, 'missed'):
        got, want = op(g, 'ios') + op(g, 'missed'), wd['ios'][g] - unissued[g]
        print('%s_%s_ios' % (n, g), between(want - amb, got, want), 'truestat %d, diskstats %s' % (got, than(want, amb)))
for g in ('read', 'write'):
    if g in groups and wd['bytes'][g]:
        got, want = op(g, 'bytes') + op(g, 'missed_bytes'), wd['bytes'][g]
        print('%s_%s_bytes' % (n, g), between(want - amb_bytes, got, want),
              'truestat bytes + missed_bytes %d, diskstats sectors x 512 %s' % (got, than(want, amb_bytes)))
if scope == 'all':
    # a zero-byte completion whose request's last completion went unseen is
    # taken for that one (10-counts-vs-diskstats.sh): none without fsync
    x = wb['complete_empty']['all'] - ev['completed_unissued'] - ev['flush_sequence_ends']
    print(n + '_zero_byte_ends', int(x != 0), '%d zero-byte completions taken for a request\'s' % x)
if not every:
    # a drop among the reads at the edges is the witness's, not truestat's
    print(n + '_missed', between(short - amb, missed, short),
          'truestat missed %d, witness shortfall %s (of %d completions)' % (missed, than(short, amb), done))
    for g in groups:
        if op(g, 'missed') or w['shortfall'][g]:
            print('%s_%s_missed' % (n, g), between(w['shortfall'][g] - amb, op(g, 'missed'), w['shortfall'][g]),
                  'truestat %d, witness %s' % (op(g, 'missed'), than(w['shortfall'][g], amb)))
    mb, sb = sum_g(lambda g: op(g, 'missed_bytes')), sum_g(lambda g: w['shortfall_bytes'][g])
    print(n + '_missed_bytes', between(sb - amb_bytes, mb, sb),
          'truestat missed_bytes %d, witness shortfall %s bytes' % (mb, than(sb, amb_bytes)))
else:
    # truestat's program is given done - short tracked completions and
    # ignores those whose count (from 0) is a multiple of N
    want = short + math.ceil((done - short) / every)
    print(n + '_missed', int(missed != want or missed <= short),
          'truestat missed %d = witness shortfall %d + ceil((%d - %d) / %d) = %d'
          % (missed, short, done, short, every, want))
")
}

loop_filled 256
run loop "$LOOP" all 0 --filename="/dev/$LOOP" --rw=randrw
run loop_miss "$LOOP" all 97 --filename="/dev/$LOOP" --rw=randrw

# vda, through a file on / (written once, so that its reads reach the disk)
file=$(mktemp /var/tmp/truestat-test.XXXXXX)
on_exit "rm -f '$file'"
fio --name=fill --filename="$file" --size=256M --direct=1 --rw=write --bs=1M \
	--ioengine=libaio --iodepth=4 --output=/dev/null
run vda vda read 0 --filename="$file" --size=256M --rw=randread
finish
