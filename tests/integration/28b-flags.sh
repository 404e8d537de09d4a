#!/usr/bin/env bash
# -F: request-flag classes as the device saw them (rq->cmd_flags at C),
# held against /proc/diskstats over the same window, on a loop device:
# (a) fio direct random writes: each carries REQ_SYNC (dio writes are
#     WRITE|SYNC|IDLE): the write sync class holds every write diskstats
#     counts, the none class none.
# (b) N O_DSYNC direct writes at iodepth 1: where queue/fua is 0 (a loop
#     device: write cache, no FUA) the FUA bit is cleared before issue and
#     flushes are sent instead (here two a write: the post-flush of its
#     FUA write and the fsync of O_DSYNC): no fua request, and the preflush
#     class of the flush op holds every flush diskstats counts (field 16,
#     flush requests completed); where it is 1, the write fua class holds
#     the N writes. Every one of the N writes carries REQ_SYNC.
# (c) direct reads: no readahead request at all; a buffered read after
#     blockdev --flushbufs: readahead holds most reads. Classes overlap (a
#     request counts in each class whose bit it carries), so "all" (each
#     request once) is what equals diskstats; each class is at most it, and
#     each request is in one class at least (none included).
# Three runs: tp_btf, the raw_tp fallback, and the programs for kernels
# before 5.12 (TRUESTAT_TEST_LOCKED).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 blockdev

loop_new 64
dev=$LOOP
N=32

# phase KIND NAME COMMAND...: truestat -F around COMMAND; $out, $before,
# $after (diskstats of $dev) for the checks
phase() {
	local kind=$1 name=$2
	shift 2
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $out $out.err"
	case $kind in
	raw_tp) ts_start "$out" -d "$dev" -F --raw-tp ;;
	locked) TRUESTAT_TEST_LOCKED=1 ts_start "$out" -d "$dev" -F ;;
	*) ts_start "$out" -d "$dev" -F ;;
	esac
	before=$(diskstats "$dev")
	"$@"
	after=$(diskstats "$dev")
	ts_stop INT
	check_schema "${kind}_${name}_schema" "$out"
}

# the py preamble: diskstats deltas d[i], the device's totals t, class c()
pre() {
	cat <<PY
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
d = [y - x for x, y in zip(b, a)]
t = dev(totals('$out'), '$dev')
def c(op, cls, key='ios'):
    return t['flags'].get(op, {}).get(cls, {}).get(key, 0)
def missed(op):
    return t['ops'].get(op, {}).get('missed', 0)
PY
}

for kind in tp_btf raw_tp locked; do
	phase "$kind" randwrite fio --name=w --filename="/dev/$dev" --direct=1 \
		--rw=randwrite --bs=4k --size=16M --ioengine=libaio --iodepth=8 \
		--output=/dev/null
	check_lines < <(py "$(pre)
k = '${kind}'
print(k + '_write_sync', int(c('write', 'sync') + missed('write') != d[4]),
      'write sync class %d + %d missed, diskstats writes %d (exact)'
      % (c('write', 'sync'), missed('write'), d[4]))
print(k + '_write_all', int(c('write', 'all') != c('write', 'sync')),
      'write: all %d, sync %d' % (c('write', 'all'), c('write', 'sync')))
print(k + '_write_none', int(c('write', 'none') != 0), 'write none class %d' % c('write', 'none'))
print(k + '_write_pct', int(c('write', 'sync') > 0 and
      t['flags']['write']['sync']['percentiles_ms']['service']['p99'] is None),
      'write sync service p99 %s ms' % t['flags']['write']['sync']['percentiles_ms']['service']['p99'])
")

	fua=$(cat "/sys/block/$dev/queue/fua")
	phase "$kind" dsync dd if=/dev/zero of="/dev/$dev" bs=4k count=$N \
		oflag=direct,dsync status=none
	check_lines < <(py "$(pre)
k, n, fua = '${kind}', $N, $fua
fuas = sum(c(op, 'fua') for op in t['flags'])
print('# %s: queue/fua %d, %d writes, %d flushes in diskstats, preflush class %d'
      % (k, fua, d[4], d[15] if len(d) > 15 else -1, c('flush', 'preflush')))
if fua:
    print(k + '_fua', int(c('write', 'fua') != n), 'write fua class %d, %d O_DSYNC writes' % (c('write', 'fua'), n))
else:
    print(k + '_no_fua', int(fuas != 0), 'fua class %d on a disk without FUA' % fuas)
    print(k + '_preflush', int(len(d) <= 15 or c('flush', 'preflush') + missed('flush') != d[15]),
          'flush preflush class %d + %d missed, diskstats flush requests %d (exact)'
          % (c('flush', 'preflush'), missed('flush'), d[15] if len(d) > 15 else -1))
print(k + '_dsync_sync', int(c('write', 'sync') != c('write', 'all') or c('write', 'all') < n),
      'write: sync %d, all %d, %d O_DSYNC writes' % (c('write', 'sync'), c('write', 'all'), n))
")

	phase "$kind" direct_read fio --name=r --filename="/dev/$dev" --direct=1 \
		--rw=randread --bs=4k --size=16M --ioengine=libaio --iodepth=8 \
		--output=/dev/null
	check_lines < <(py "$(pre)
k = '${kind}'
print(k + '_direct_no_readahead', int(c('read', 'readahead') != 0),
      'direct reads: readahead class %d' % c('read', 'readahead'))
print(k + '_direct_reads', int(c('read', 'all') + missed('read') != d[0]),
      'read all %d + %d missed, diskstats reads %d (exact)' % (c('read', 'all'), missed('read'), d[0]))
")

	blockdev --flushbufs "/dev/$dev"
	phase "$kind" buffered_read dd if="/dev/$dev" of=/dev/null bs=1M \
		count=32 status=none
	check_lines < <(py "$(pre)
k = '${kind}'
f = t['flags'].get('read', {})
all_ = c('read', 'all')
print(k + '_buffered_reads', int(all_ + missed('read') != d[0]),
      'read all %d + %d missed, diskstats reads %d (exact)' % (all_, missed('read'), d[0]))
print(k + '_readahead_most', int(2 * c('read', 'readahead') <= all_),
      'readahead class %d of %d reads' % (c('read', 'readahead'), all_))
over = [x for x in f if x != 'all' and f[x]['ios'] > all_]
print(k + '_classes_within', int(bool(over)), 'classes above all: %s' % (over or 'none'))
print(k + '_classes_cover', int(sum(f[x]['ios'] for x in f if x != 'all') < all_),
      'classes sum %d >= all %d (they overlap)' % (sum(f[x]['ios'] for x in f if x != 'all'), all_))
")
done
finish
