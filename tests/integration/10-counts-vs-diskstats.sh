#!/usr/bin/env bash
# I/O counts and bytes per direction equal the kernel's /proc/diskstats deltas
# exactly, over mixed sizes, reads, writes, discards and flushes; once with
# tp_btf (the default), once through the raw_tp fallback, and once with
# TRUESTAT_TEST_MISS_EVERY=N: truestat's completion program then also
# ignores one of every N tracked completions it is given, as if the platform
# had dropped them, and every count must still come out right.
# tests/tools/witness runs beside truestat each time (see 12-witness.sh):
# the completions it did not see are the ones truestat missed.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio blkdiscard python3

tool_need "$WITNESS"
EVERY=61

loop_new 256
dev=$LOOP
for attach in tp_btf raw_tp miss; do
out=$(mktemp /tmp/truestat-test.XXXXXX)
wout=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err $wout"
every=0

witness_start "$wout" "$dev"
case $attach in
raw_tp) ts_start "$out" -d "$dev" --raw-tp ;;
miss) every=$EVERY; TRUESTAT_TEST_MISS_EVERY=$every ts_start "$out" -d "$dev" ;;
*) ts_start "$out" -d "$dev" ;;
esac
kind=${attach/miss/tp_btf}
check_cmd "${attach}_attached" "attached with $kind" grep -q "attached with $kind" "$out.err"
before=$(diskstats "$dev")
fio --name=mixed --filename="/dev/$dev" --direct=1 --rw=randrw \
	--bssplit=4k/50:16k/30:64k/20 --ioengine=libaio --iodepth=8 \
	--runtime=3 --time_based --fsync=64 --output=/dev/null
blkdiscard -o 0 -l 8M "/dev/$dev"
after=$(diskstats "$dev")
ts_stop INT
check "${attach}_exit" "$TS_RC" "SIGINT ends truestat with status $TS_RC"
kill -INT "$W_PID"
W_RC=0
wait "$W_PID" || W_RC=$?
check "${attach}_witness_exit" "$W_RC" "SIGINT ends the witness with status $W_RC"

check_lines < <(py "
import math
t = dev(totals('$out'), '$dev')
w = json.load(open('$wout'))
every = $every
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
ks = lambda op, k: t['ops'].get(op, {}).get(k, 0)
ev = t['events']
print('# ${attach} events:', ' '.join('%s=%d' % kv for kv in ev.items() if kv[1]))
# Empty preflush writes (fsync) are served by a flush command, not issued
# themselves: diskstats counts them as writes, truestat as completed_unissued.
# A completion the BPF program never saw is reported per direction as
# 'missed' (and not in ios, nor in bytes: in missed_bytes).
ios = lambda op: ks(op, 'ios') + ks(op, 'missed')
missed = sum(ks(op, 'missed') for op in t['ops'])
pairs = [
    ('read_ios', ios('read'), a[0] - b[0]),
    ('write_ios', ios('write') + ev['completed_unissued'], a[4] - b[4]),
    ('discard_ios', ios('discard'), a[11] - b[11]),
    ('discard_bytes', ks('discard', 'bytes') + ks('discard', 'missed_bytes'), (a[13] - b[13]) * 512),
    ('flush_ios', ios('flush'), a[15] - b[15]),
    ('read_bytes', ks('read', 'bytes') + ks('read', 'missed_bytes'), (a[2] - b[2]) * 512),
    ('write_bytes', ks('write', 'bytes') + ks('write', 'missed_bytes'), (a[6] - b[6]) * 512),
]
total = sum(ks(op, 'ios') for op in t['ops'])
# An fsync's empty preflush write is seen only through its bio and its
# completion. When that completion is unseen, nothing is left to count but
# the bio, which shows up as a stale bio when its address is reused, or
# else as a bio still waiting in the OS queue once all I/O has ended: such
# a write can be missing, and only as many as there are of those.
unseen_writes = ev.get('stale_bios', 0) + t['os_queue']['now']
# The witness: diskstats' completions that no completion program saw, the
# empty preflush writes (counted where they start) apart.
wd, short = w['diskstats']['ios'], w['shortfall']['all']
unissued = (w['bpf']['io_start_empty'] or {}).get('write', 0)
done = sum(ios(op) for op in t['ops'])
print('${attach}_witness_window', int(wd['read'] != a[0] - b[0] or wd['write'] != a[4] - b[4]),
      'witness window: %d reads, %d writes; inside truestat\'s: %d, %d' % (wd['read'], wd['write'], a[0] - b[0], a[4] - b[4]))
print('${attach}_write_ios_exact', int(ios('write') != wd['write'] - unissued),
      'truestat %d, diskstats %d - %d empty preflush writes' % (ios('write'), wd['write'], unissued))
# A zero-byte completion (an empty preflush write ending) of a request
# whose last completion went unseen must not be taken for that completion:
# truestat forgets the old record (counted missed) and counts the write as
# unissued. x: zero-byte ends the witness saw that truestat did not count
# as such; 19 in 1201 drops before that was fixed.
x = w['bpf']['complete_empty']['all'] - ev['completed_unissued'] - ev['flush_sequence_ends']
print('${attach}_zero_byte_ends', int(x != 0), '%d zero-byte completions taken for a request\'s' % x)
if every:
    # the program is given the done - short completions of requests it
    # tracked and ignores the ones whose count (from 0) is a multiple of N
    want = short + math.ceil((done - short) / every)
    print('${attach}_missed', int(missed != want),
          'truestat missed %d = witness shortfall %d + ceil((%d - %d) / %d) = %d'
          % (missed, short, done, short, every, want))
else:
    print('${attach}_missed', int(missed != short),
          'truestat missed %d, witness shortfall %d' % (missed, short))
lost = short if every else missed
# The rate of unseen completions is set by the platform and other software
# on the host (README), not by truestat: a figure. A truestat bug that
# dropped completions fails the witness check above.
print('# ${attach}: %d completions unseen of %d (%.3f%%)' % (lost, total, 100.0 * lost / max(total, 1)))
for name, got, want in pairs:
    slack = unseen_writes if name == 'write_ios' else 0
    ok = want > 0 and 0 <= want - got <= slack
    note = ' (%d bios left unseen)' % slack if slack else ''
    print('$attach' + '_' + name, int(not ok), 'truestat %d, diskstats %d%s' % (got, want, note))
")
done
finish
