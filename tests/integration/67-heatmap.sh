#!/usr/bin/env bash
# --heatmap: from a real run with two phases of different latency (random
# reads at iodepth 1, a pause, then iodepth 32), the SVG is well formed
# (xmllint), renders headless (rsvg-convert), has one panel per active
# device, direction and kind, its cells add up per interval to truestat's
# own per-interval ios in the JSON, and the rows with I/O move up in the
# second phase. Without an interval, --heatmap is a one-line usage error.
# The phases run on the simulated disk with one unit (SD_K) of SD_S_US
# each: at iodepth 1 a request's service is S and what FUSE and loop add;
# at iodepth 32 the daemon serves one at a time, so a request waits behind
# the others in it (Little: 32 in the device at 1/S at most take 32 x S
# on average), inside truestat's issue to completion. The second phase's
# median is then some 16 times the first's, whatever the host: not a
# property of the disk under a loop file.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 xmllint rsvg-convert
SD_K=1
SD_S_US=1000

make_tmp

# --- usage -----------------------------------------------------------------
rc=0
"$TRUESTAT" --heatmap="$tmp/none.svg" >"$tmp/usage.out" 2>"$tmp/usage.err" || rc=$?
check usage_needs_interval "$([[ $rc == 2 && $(wc -l <"$tmp/usage.err") == 1 ]] &&
	grep -q 'needs an interval' "$tmp/usage.err"; echo $?)" \
	"without an interval: exit $rc, '$(cat "$tmp/usage.err")'"

# --- a real run --------------------------------------------------------------
simdisk_up "$SD_K" "$SD_S_US" 64
dev=$SIMDISK_LOOP
simdisk_mark
out=$tmp/ts.json
svg=$tmp/h.svg
ts_start "$out" --heatmap="$svg" -d "$dev" 0.5
fio_phase() {
	fio --name="qd$1" --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth="$1" --runtime=3 --time_based --output=/dev/null
}
fio_phase 1
# an idle interval between the phases tells them apart. Of the next 3
# reports (a line each), the first may have been taken before fio's last
# I/O and the second holds it at the latest: the third's interval is
# wholly idle. 10 s, 6x the 1.5 s they take, is a guard
wait_for "$TS_PID" 10 _lines_at_least "$out" $(($(wc -l <"$out") + 3))
# the daemon's requests of the first phase: those logged by now
simdisk_sync
n1=$(($(simdisk_lines) - _SIMDISK_MARK))
fio_phase 32
# idle at the end: the sums over the run must then agree exactly
ts_reports_after "$out"
simdisk_save "$tmp/sd"
ts_stop TERM
check ts_exit "$TS_RC" "SIGTERM ends truestat with status $TS_RC, SVG of $(stat -c %s "$svg" 2>/dev/null || echo 0) bytes"

check_cmd xmllint "the SVG is well-formed XML (xmllint --noout)" \
	bash -c "xmllint --noout '$svg' 2>'$tmp/xmllint.err'"
check_cmd rsvg_png "rsvg-convert renders it to PNG" \
	bash -c "rsvg-convert -o '$tmp/h.png' '$svg' && [[ \$(head -c 8 '$tmp/h.png' | od -An -c | tr -d ' ') == '211PNG\r\n032\n' ]]"
[[ -n ${TS_KEEP_PNG:-} ]] && cp "$tmp/h.png" "$TS_KEEP_PNG"

check_lines < <(py "
import os
import xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
root = ET.parse('$svg').getroot()
ivs = [d for d in docs('$out') if d['type'] == 'interval']
tot = dev(totals('$out'), '$dev')

# self-contained: no reference to anything outside the file
refs = [v for e in root.iter() for k, v in e.attrib.items()
        if k.endswith('href') or 'url(' in v and not v.startswith('url(#')]
print('self_contained', int(bool(refs)), 'no external references (%d found)' % len(refs))

panels = {}
for g in root.iter(ns + 'g'):
    if g.get('class') == 'panel':
        panels[(g.get('data-device'), g.get('data-op'), g.get('data-kind'))] = g
want = set()
for op, o in tot['ops'].items():
    if o['ios']:
        want.add(('$dev', op, 'service'))
    if o['queued_ios']:
        want.add(('$dev', op, 'queue'))
print('panels', int(set(panels) != want), 'panels %s, want one per active device/op/kind %s'
      % (sorted(panels), sorted(want)))

# per interval: the cells' counts against the JSON's ios (service) and
# queued_ios (queue). Each snapshot reads the counters, then the histograms:
# an I/O that completes in between is in that interval's histogram and the
# next interval's count. So the histogram's count up to interval k is the
# counters' up to k plus those completed between the two reads of snapshot
# k (never fewer than one per CPU, caught between its own two updates),
# and over the run the two agree exactly: no constant, however long the
# process waited between its reads.
for (d, op, kind), g in sorted(panels.items()):
    key = 'ios' if kind == 'service' else 'queued_ios'
    cells = [r for r in g.iter(ns + 'rect') if r.get('data-count') is not None]
    per = {}
    for r in cells:
        assert r.get('data-intervals') == '1', 'no folding in a short run'
        k = int(r.get('data-interval'))
        per[k] = per.get(k, 0) + int(r.get('data-count'))
    got = [per.get(k, 0) for k in range(1, len(ivs) + 1)]
    exp = []
    for x in ivs:
        o = [y for y in x['devices'] if y['device'] == d]
        exp.append(o[0]['ops'].get(op, {}).get(key, 0) if o else 0)
    diff = [a - b for a, b in zip(got, exp)]
    ahead = [sum(diff[:k + 1]) for k in range(len(diff))]
    cpus = os.cpu_count()
    extra = sorted(k for k in per if k > len(ivs))
    ok = min(ahead) >= -cpus and sum(got) == sum(exp) and not extra
    print('sums_%s_%s' % (op, kind), int(not ok),
          '%d intervals, SVG %d = JSON %s %d over the run; the histogram ahead of the counters by %d to %d up to an interval (>= -%d CPUs)'
          % (len(ivs), sum(got), key, sum(exp), min(ahead), max(ahead), cpus))

# the two phases: runs of intervals with I/O, apart by idle ones
g = panels.get(('$dev', 'read', 'service'))
phases, cur = [], []
for k in range(1, len(ivs) + 1):
    cells = [r for r in g.iter(ns + 'rect') if r.get('data-interval') == str(k)] if g is not None else []
    if cells:
        cur += cells
    elif cur:
        phases.append(cur)
        cur = []
if cur:
    phases.append(cur)
def median_lo(cells):
    cells = sorted(cells, key=lambda r: int(r.get('data-bucket-lo')))
    n = sum(int(r.get('data-count')) for r in cells)
    seen = 0
    for r in cells:
        seen += int(r.get('data-count'))
        if 2 * seen >= n:
            return int(r.get('data-bucket-lo')), int(r.get('data-bucket-hi'))
if len(phases) == 2:
    a, b = median_lo(phases[0]), median_lo(phases[1])
    print('phase_moves_up', int(not b[0] >= a[1]),
          'median service row: iodepth 32 [%d, %d) ns at or above the upper edge of iodepth 1 [%d, %d) ns (%.1fx; simulated disk of $SD_K unit(s) of $SD_S_US us: at depth 32 each waits behind the others, 32/$SD_K x S on average)'
          % (b + a + (b[0] / a[0],)))
else:
    print('phase_moves_up 1 expected two runs of intervals with reads, found %d' % len(phases))
")
# the daemon's own account of the phases (arrival to reply), for the reader
check_lines < <(simdisk_py "
r = sd_read('$tmp/sd.log')
med = lambda x: sorted(v[3] - v[0] for v in x)[len(x) // 2] / 1e3 if x else float('nan')
print('# simulated disk: iodepth 1 %d requests, median A..R %.0f us; iodepth 32 %d, median %.0f us'
      % (len(r[:$n1]), med(r[:$n1]), len(r[$n1:]), med(r[$n1:])))
")
finish
