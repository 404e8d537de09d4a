#!/usr/bin/env bash
# --prometheus with an interval: truestat_finding and its figures are the
# findings of the last interval report, exactly as the same process printed
# them in JSON (truestat_findings_windows_total says which report: the
# N-th). A simulated disk of one unit under fio at iodepth 8 gives windows
# with findings (or notes); a window after fio's end has none, and its
# series are gone. Then the same without an interval, over windows of
# takes.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 curl promtool

simdisk_up 1 1000
dev=$SIMDISK_LOOP
make_tmp
[[ -n ${KEEP_TMP:-} ]] && on_exit "cp -r $tmp $KEEP_TMP"
port=$(free_port)
url=http://127.0.0.1:$port
out=$tmp/ts.json
ts_start "$out" --prometheus="$port" -d "$dev" 1

# scrape N: /metrics to $tmp/mN once the next report is out
scrape() {
	ts_reports_after "$out"
	curl -sf "$url/metrics" >"$tmp/m$1"
}
fio --name=deep --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=8 --runtime=4 --time_based \
	--output=/dev/null &
fio_pid=$!
on_exit "kill $fio_pid 2>/dev/null || true"
scrape 1
scrape 2
wait "$fio_pid"
scrape 3
scrape 4
ts_stop INT
check ts_exit "$TS_RC" "truestat ended at SIGINT, status $TS_RC"
check_cmd promtool_check "promtool check metrics accepts the findings' series" \
	bash -c "promtool check metrics <'$tmp/m2' >/dev/null 2>&1"

# Without an interval the findings come from a window of takes (60, a
# minute; TRUESTAT_TEST_FINDINGS_WINDOW=2 here): a scrape once two windows
# ended under fio has the note or finding of a window under load; one once
# a whole window after fio ended, none. With --pattern, random-reads is
# among them: fio's random 4 KiB reads keep the disk busy, as that rule
# wants (the rules' own test is 64-findings).
port2=$(free_port)
windows() {
	curl -sf "http://127.0.0.1:$port2/metrics" >"$tmp/w" &&
		awk '$1 == "truestat_findings_windows_total" { print $2 }' "$tmp/w"
}
at_least() { [[ $(windows) -ge $1 ]]; }
TRUESTAT_TEST_FINDINGS_WINDOW=2 ts_start "$tmp/nowin.json" \
	--prometheus="$port2" --pattern -d "$dev"
fio --name=deep --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
	--ioengine=libaio --iodepth=8 --runtime=7 --time_based \
	--output=/dev/null &
fio_pid=$!
# two windows counted from fio's first I/O, not from truestat's start: on
# a busy host fio may take a window or more to begin
reads0=$(diskstats "$dev" | cut -d' ' -f1)
reads_grew() { [[ $(diskstats "$dev" | cut -d' ' -f1) -gt $reads0 ]]; }
wait_for "$fio_pid" "$START_GUARD" reads_grew || true
begun=$(windows)
wait_for "$TS_PID" 20 at_least $((begun + 2)) && cp "$tmp/w" "$tmp/w_load"
wait "$fio_pid"
after=$(windows)
wait_for "$TS_PID" 20 at_least $((after + 2)) && cp "$tmp/w" "$tmp/w_idle"
ts_stop INT
check_lines < <(py "
def scrape(path):
    try:
        return dict(l.rsplit(' ', 1) for l in open(path) if l.strip() and not l.startswith('#'))
    except OSError:
        return {}
for name, path, want in (('window_load', '$tmp/w_load', True), ('window_idle', '$tmp/w_idle', False)):
    m = scrape(path)
    n = sum(1 for k in m if k.startswith('truestat_finding{'))
    span = float(m.get('truestat_findings_window_seconds', -1))
    # two takes a second apart on deadlines: 2 s, each take's lateness apart
    ok = m and 1 < span < 3 and (n > 0) == want
    print(name, int(not ok), 'window %s of %.2f s (two takes): %d findings (%s)'
          % (m.get('truestat_findings_windows_total', 'none').strip(), span, n, 'some' if want else 'none'))
    if want:
        ids = sorted(k for k in m if k.startswith('truestat_finding{'))
        print('window_pattern', int(not any('finding=\"random-reads\"' in k for k in ids)),
              '--pattern without an interval: random-reads in a window under random reads: %s' % ids)
")

check_lines < <(py "
import re
def labels(k):
    return dict(re.findall(r'(\w+)=\"([^\"]*)\"', k))
ivs = [x for x in docs('$out') if x['type'] != 'totals']
seen = 0
for i in (1, 2, 3, 4):
    m = scrape('$tmp/m%d' % i)
    n = int(m['truestat_findings_windows_total'])
    doc = ivs[n - 1]
    want = {(f['device'], f['op'], f['id']): f for f in doc['findings']}
    got = {}
    for k, v in m.items():
        if k.startswith('truestat_finding{'):
            l = labels(k)
            got[(l['device'], l['op'], l['finding'])] = l['severity']
    same = set(got) == set(want) and all(got[k] == want[k]['severity'] for k in want)
    figs = all(abs(m['truestat_finding_figure{device=\"%s\",op=\"%s\",finding=\"%s\",figure=\"%s\"}' % (k + (x['name'],))] - x['value'])
               <= 1e-6 * max(1, abs(x['value'])) for k, f in want.items() for x in f['figures']) if same else False
    exact = all(m['truestat_finding_exact{device=\"%s\",op=\"%s\",finding=\"%s\"}' % k] == int(f['exact'])
                for k, f in want.items()) if same else False
    span = abs(m['truestat_findings_window_seconds'] - doc['span_s']) < 1e-3
    print('scrape%d_findings' % i, int(not (same and figs and exact and span)),
          'window %d: exported %s, JSON %s; figures, exactness and span equal: %s' %
          (n, sorted(got), sorted(want), figs and exact and span))
    if i <= 2:
        seen += len(want)
    else:
        last = (n, len(want), doc['all']['ios'] if 'all' in doc else None)
# the rules test's finding series carry the labels served here
# (86-service checks the rest of the rules against its own scrape)
served = {frozenset(labels(k)) for i in (1, 2) for k in scrape('$tmp/m%d' % i) if k.startswith('truestat_finding{')}
test = [frozenset(re.findall(r'(\w+)=\"', l)) - {'instance', 'job'}
        for l in re.findall(r\"series: 'truestat_finding\\{([^}]*)\\}'\", open('$TS_ROOT/prometheus/truestat.rules.test.yml').read())]
print('rules_test_labels', int(not test or not served or any(t not in served for t in test)),
      '%d truestat_finding series in the rules test, labels as served: %s' % (len(test), sorted(map(sorted, served))))
print('findings_under_load', int(not seen), '%d findings in the two windows under fio (a 1-unit disk at depth 8)' % seen)
print('none_when_idle', int(last[1] != 0), 'window %d after fio: %d findings' % last[:2])
")
finish
