# shellcheck shell=bash
# simdisk.sh: a block device whose timing is known. Source it after
# common.sh, then:
#
#	simdisk_up K S_US [SIZE_MB]	start tests/simdisk (built by make as
#				.output/simdisk) with K units and S µs per
#				request on a FUSE mount in a new temporary
#				directory, and attach a loop device with direct
#				I/O on its file (scheduler none). Sets
#				$SIMDISK_LOOP (e.g. loop3), $SIMDISK_LOG (one
#				line per request, see simdisk.c), $SIMDISK_PID,
#				$SIMDISK_MNT. Teardown is registered with
#				on_exit, so it also happens after a failure.
#	simdisk_down		tear it down now (loop detached, unmounted,
#				daemon ended by pid, files removed); idempotent
#	simdisk_sync		wait until every reply so far is in the log
#	simdisk_lines		how many requests the log holds so far (after
#				simdisk_sync: a run's requests are the lines
#				between two counts)
#	simdisk_mark		simdisk_sync, and remember where the log is
#	simdisk_save PREFIX	simdisk_sync; the requests since simdisk_mark
#				to PREFIX.log, the whole log (its first line
#				the parameters) to PREFIX.full
#	simdisk_left_before	remember the BPF programs there now, for:
#	simdisk_left_behind WHERE	what a script that set up a simulated disk
#				(make demo, scripts/investigate.sh) and wrote
#				WHERE (--keep) left behind, a line each
#	simdisk_py SCRIPT	py (common.sh) with the helpers below preloaded
#	simdisk_judge NAME SCRIPT	its "NAME RC MESSAGE" lines as checks; a
#				script that fails is a failed check
#	"${SIMDISK_FIO_PCT[@]}"	fio options: latency percentiles for fio_pct
#
# One simulated disk at a time. SIMDISK_BW (MB/s) adds size/bandwidth;
# SIMDISK_IOPS caps the disk at that many requests per second, a token
# bucket of SIMDISK_BURST tokens (default 1), as simdisk -i and -B;
# SIMDISK_SLOW=N:US makes every Nth request US microseconds slower (-x);
# SIMDISK_FSYNC=US makes a flush a request of US microseconds, logged as
# op F (-f; without it a flush is answered at once and not logged);
# SIMDISK_SEEK=MIN_US:MAX_US gives each unit an arm that seeks (-S);
# SIMDISK_STORE=1 makes the disk hold what is written (-m), so that a file
# system lives on it.
#
# What the daemon logged is what the tests measure truestat against: per
# request its arrival A and reply R (CLOCK_MONOTONIC, as truestat's), which
# lie inside the block layer's issue D and completion C, since loop passes
# the request to FUSE after D and completes it after the reply. Python
# helpers (simdisk_py):
#	sd_read(path, skip, upto)	the log's requests [skip:upto] as tuples
#					(A, start, finish, R, op, offset, bytes,
#					unit, sent, seq, token, seek)
#	sd_params(path)			the parameters the daemon logged in its
#					first line (units, service_ns, iops,
#					interval_ns, burst, ...), as a dict
#	sd_replay(path, K, S_ns, Bps)	seqs whose start, finish, unit or token
#					differ from the model replayed from the
#					arrivals (with the log's own bucket)
#	sd_bucket(reqs, interval)	the bucket's account of reqs, a dict:
#					held (how many it held back, token > A),
#					capped (ns: the union of their [A,
#					token)), tokens (it gave out then, one
#					an interval), unit_waits (requests that
#					started after their token)
#	sd_knee(steps)			knee.sh's parallelism rule over its JSON
#					steps (the ladder): dict par, still, above
#					(the limit was above the device), at (the
#					doubling a, b that stopped it, with its
#					IOPS and held growth per doubling)
#	Sd(reqs)			n, bytes, ra (sorted R - A), A0, R1 (first
#					arrival, last reply), held_max, busy and
#					idle gaps (union of [A, R]), late (R -
#					finish), contiguous (seqs without a gap)
#	sd_inner(reqs, t0, t1)		those with t0 <= A and R <= t1
#	pct_of(sorted, k)		the k-th smallest (1-based, clamped)
#	fio_pct(job_op, level)		fio's lat percentile at the first listed
#					level >= level (--lat_percentiles), or its
#					max; as an upper bound of the exact value
#	host_load(stat0, stat1)		CPU use between two /proc/stat 'cpu' lines
#	sd_curve(name, conc, curve, missed, P, reqs)	the checks of a -D curve against
#					the daemon's own curve (65-curve, 66-knee)

SIMDISK_BIN=$TS_ROOT/.output/simdisk
SIMDISK_LOOP=
SIMDISK_LOG=
SIMDISK_PID=
SIMDISK_MNT=
SIMDISK_DIR=	# under /tmp/truestat-test.*: run-integration.sh looks for leftovers there
_SIMDISK_HOOKED=

simdisk_up() {
	local k=$1 s=$2 size=${3:-256} conn
	[[ -x $SIMDISK_BIN ]] || { echo "simdisk: $SIMDISK_BIN not built (make $SIMDISK_BIN)"; return 1; }
	[[ -n $_SIMDISK_HOOKED ]] || on_exit simdisk_down
	_SIMDISK_HOOKED=1
	SIMDISK_DIR=$(mktemp -d /tmp/truestat-test.simdisk.XXXXXX)
	SIMDISK_MNT=$SIMDISK_DIR/mnt
	SIMDISK_LOG=$SIMDISK_DIR/requests.log
	mkdir "$SIMDISK_MNT"
	"$SIMDISK_BIN" -k "$k" -s "$s" -z "$size" ${SIMDISK_BW:+-b "$SIMDISK_BW"} \
		${SIMDISK_IOPS:+-i "$SIMDISK_IOPS"} ${SIMDISK_BURST:+-B "$SIMDISK_BURST"} \
		${SIMDISK_SLOW:+-x "$SIMDISK_SLOW"} ${SIMDISK_FSYNC:+-f "$SIMDISK_FSYNC"} \
		${SIMDISK_SEEK:+-S "$SIMDISK_SEEK"} ${SIMDISK_STORE:+-m} \
		-l "$SIMDISK_LOG" "$SIMDISK_MNT" 2>"$SIMDISK_DIR/stderr" &
	SIMDISK_PID=$!
	wait_for "$SIMDISK_PID" 5 mountpoint -q "$SIMDISK_MNT" || true
	if ! mountpoint -q "$SIMDISK_MNT" || [[ ! -f $SIMDISK_MNT/disk ]]; then
		echo "simdisk: did not mount: $(cat "$SIMDISK_DIR/stderr")"
		return 1
	fi
	# FUSE lets only max_background async requests reach the daemon, the
	# rest wait unseen in the kernel: it must be above any depth tested
	conn=/sys/fs/fuse/connections/$(stat -c %d "$SIMDISK_MNT")/max_background
	if [[ -r $conn ]] && (($(<"$conn") < 1024)); then
		echo "simdisk: max_background is $(<"$conn"), expected 4096"
		return 1
	fi
	# without direct I/O, loop serves one request at a time
	SIMDISK_LOOP=$(losetup -f --show --direct-io=on "$SIMDISK_MNT/disk")
	SIMDISK_LOOP=${SIMDISK_LOOP#/dev/}
	[[ $(<"/sys/block/$SIMDISK_LOOP/loop/dio") == 1 ]] ||
		{ echo "simdisk: $SIMDISK_LOOP has no direct I/O"; return 1; }
	udevadm settle 2>/dev/null || sleep 0.5
	echo none >"/sys/block/$SIMDISK_LOOP/queue/scheduler"
	echo 127 >"/sys/block/$SIMDISK_LOOP/queue/nr_requests"
	echo 128 >"/sys/block/$SIMDISK_LOOP/queue/nr_requests"
}

_LEFT_PROGS=
simdisk_left_before() {
	_LEFT_PROGS=$(bpftool prog show 2>/dev/null | awk '/ name ts_/ { print $1 }' | tr -d : | paste -sd ' ')
}

# WHERE holds tmp, simdisk_dir, simdisk_mnt, simdisk_pid, loop, and
# truestat_pid when one truestat ran throughout, db_pid when a database
# server ran
simdisk_left_behind() {
	local -A w
	local k v ids i
	while IFS='=' read -r k v; do w[$k]=$v; done <"$1"
	[[ ! -e ${w[tmp]} ]] || echo "its temporary directory ${w[tmp]}"
	! grep -qs " ${w[tmp]}/" /proc/mounts || echo "a mount under ${w[tmp]}"
	[[ ! -e ${w[simdisk_dir]} ]] || echo "the simulated disk's directory ${w[simdisk_dir]}"
	! grep -qs " ${w[simdisk_mnt]} " /proc/mounts || echo "the FUSE mount ${w[simdisk_mnt]}"
	! losetup -l -n -O BACK-FILE 2>/dev/null | grep -qF "${w[simdisk_dir]}" ||
		echo "a loop device on ${w[simdisk_dir]}/mnt/disk"
	[[ $(cat "/proc/${w[simdisk_pid]}/comm" 2>/dev/null) != simdisk ]] ||
		echo "the simdisk daemon (pid ${w[simdisk_pid]})"
	[[ $(cat "/proc/${w[truestat_pid]:-0}/comm" 2>/dev/null) != truestat ]] ||
		echo "truestat (pid ${w[truestat_pid]})"
	! pgrep -f "truestat .*-d ${w[loop]}( |\$)" >/dev/null || echo "truestat on ${w[loop]}"
	! pgrep -f "filename=/dev/${w[loop]} " >/dev/null || echo "fio on ${w[loop]}"
	! pgrep -x sysbench >/dev/null || echo "sysbench"
	[[ $(cat "/proc/${w[db_pid]:-0}/comm" 2>/dev/null) != mariadbd ]] ||
		echo "the database server (pid ${w[db_pid]})"
	# ts_ programs that were not there before and that no running process
	# holds (a truestat of someone else's holds its own); the kernel frees
	# a program after an RCU grace period once its last holder is gone
	for ((i = 0; i < $(rcu_freed_within) * 10; i++)); do
		ids=$(bpftool -j prog show 2>/dev/null | python3 -c "
import json, sys
before = set('$_LEFT_PROGS'.split())
print(' '.join(str(p['id']) for p in json.load(sys.stdin)
               if p.get('name', '').startswith('ts_') and str(p['id']) not in before
               and not [x for x in p.get('pids', []) if x['pid'] != ${w[truestat_pid]:-0}]))")
		[[ -n $ids ]] || break
		sleep 0.1
	done
	[[ -z $ids ]] || echo "BPF programs $ids"
	return 0
}

# simdisk_sync: every request completed so far is in the log: the daemon
# writes it every 20 ms (however late it gets the CPU) and counts each
# write; the second write after now took whatever the first had left
simdisk_sync() {
	local w
	w=$(cat "$SIMDISK_LOG.writes" 2>/dev/null || echo 0)
	wait_for "$SIMDISK_PID" "$START_GUARD" _simdisk_writes_past $((w + 2)) || true
}
_simdisk_writes_past() { (($(cat "$SIMDISK_LOG.writes" 2>/dev/null || echo 0) >= $1)); }

simdisk_down() {
	# every step may find its part gone already (set -e in the callers)
	if [[ -n $SIMDISK_LOOP ]]; then
		losetup -d "/dev/$SIMDISK_LOOP" 2>/dev/null || true
		SIMDISK_LOOP=
	fi
	if [[ -n $SIMDISK_MNT ]]; then
		# lazily, should the loop device still hold the file
		fusermount3 -u "$SIMDISK_MNT" 2>/dev/null ||
			umount -l "$SIMDISK_MNT" 2>/dev/null || true
		SIMDISK_MNT=
	fi
	if [[ -n $SIMDISK_PID ]]; then
		# unmounting ends the daemon; a signal if it did not
		stop_pid "$SIMDISK_PID" 2 TERM
		SIMDISK_PID=
	fi
	[[ -z $SIMDISK_DIR ]] || rm -rf "$SIMDISK_DIR"
	SIMDISK_DIR=
	return 0
}

simdisk_lines() {
	grep -vc '^#' "$SIMDISK_LOG" || true
}

_SIMDISK_MARK=0
simdisk_mark() {
	simdisk_sync
	_SIMDISK_MARK=$(simdisk_lines)
}

simdisk_save() {
	simdisk_sync
	grep -v '^#' "$SIMDISK_LOG" | tail -n +$((_SIMDISK_MARK + 1)) >"$1.log"
	cp "$SIMDISK_LOG" "$1.full"
}

# fio's latency percentiles for the upper bounds of truestat's (fio_pct):
# submit to reap contains issue to completion, per request
SIMDISK_FIO_PCT=(--lat_percentiles=1
	--percentile_list=1:5:10:50:51:52:53:55:60:90:91:92:93:95:99:99.5:99.9:99.95:99.99)

# (quoted: the Python below may hold any quote)
SIMDISK_PYLIB=$(cat <<'PY'
import math

def sd_read(path, skip=0, upto=None):
    out = []
    for l in open(path):
        if l.startswith("#"):
            continue
        x = l.split()
        out.append((int(x[0]), int(x[1]), int(x[2]), int(x[3]), x[4], int(x[5]),
                    int(x[6]), int(x[7]), int(x[8]), int(x[9]),
                    int(x[10]) if len(x) > 10 else int(x[0]),
                    int(x[11]) if len(x) > 11 else 0))
    return out[skip:upto]

def sd_sweep_min_age_ns():
    # truestat's TS_SWEEP_MIN_AGE_NS (include/truestat.h): a request found
    # idle at a sweep less than that after its issue is left for the next
    import re
    t = open(TS_ROOT + '/include/truestat.h').read()
    return int(eval(re.search(r'#define TS_SWEEP_MIN_AGE_NS \(([^)]*)\)', t).group(1).replace('ULL', '')))

# how late a sweep of truestat's 1 s schedule (no interval) may run: no
# report stamps those sweeps, so this one figure is not measured (a wake-up
# and a sweep of the request table, milliseconds on these hosts)
SD_SWEEP_LATE_NS = 10 * 1000 * 1000

def sd_sweep_ns(gaps_ns=None):
    # How long after its end a request whose completion went unseen can
    # stay counted in the depth, less its own time (at most fio max): the
    # first sweep after the end takes it, or, if it was issued less than
    # TS_SWEEP_MIN_AGE_NS before that sweep, the next one. @gaps_ns: the
    # gaps between the run's sweeps as its reports measured them (their
    # spans, and the totals' rest after the last); None: the 1 s schedule
    # of a run without an interval, each sweep up to SD_SWEEP_LATE_NS late.
    gap = max(gaps_ns) if gaps_ns else 1e9 + SD_SWEEP_LATE_NS
    return gap + sd_sweep_min_age_ns()

def sd_params(path):
    # '# units 4 service_ns 2000000 bytes_per_s 0 iops 0 ...': the first
    # line, if the log has it (a log cut from another has not: {})
    for l in open(path):
        x = l[1:].split() if l.startswith('# units ') else []
        return dict((x[i], int(x[i + 1])) for i in range(0, len(x) - 1, 2))
    return {}

SD_STREAMS = 8  # TS_STREAMS (include/truestat.h)

def sd_streams(reqs):
    # the reads of reqs in arrival order through SD_STREAMS stream heads,
    # as --pattern keeps them: one that starts where a head ends goes on
    # it; else it takes the place of the head begun longest ago. Returns
    # those gone on a stream, and the reads
    ends, nxt, n, reads = [None] * SD_STREAMS, 0, 0, 0
    for x in sorted((x for x in reqs if x[4] == 'R'), key=lambda x: x[9]):
        reads += 1
        if x[5] in ends:
            ends[ends.index(x[5])] = x[5] + x[6]
            n += 1
        else:
            ends[nxt % SD_STREAMS] = x[5] + x[6]
            nxt += 1
    return n, max(reads, 1)

def sd_stream_bounds(reqs, t0, t1):
    # bounds of the share of reads gone on a stream inside truestat's
    # window [t0, t1]: the window's reads alone (heads empty at its start,
    # so up to SD_STREAMS fewer) over the run's reads, and the run's over
    # the window's; what came before the window may have set heads
    (wn, w), (rn, r) = sd_streams([x for x in reqs if t0 <= x[0] and x[3] <= t1]), sd_streams(reqs)
    return max(wn - SD_STREAMS, 0) / r, rn / w

def sd_replay(path, K, S, Bps=0):
    # the model: in arrival order, the unit free first (the lowest on a tie)
    # starts the request at max(token, free), for S (+ bytes / Bps; a
    # flush, op F, for the log's fsync_ns; + the seek from the end of the
    # unit's last request, with the log's seek_min_ns and seek_max_ns); the
    # token is the arrival, or with a bucket (its parameters from the log)
    # TAT - (burst - 1) x interval if later, and TAT = max(TAT, start) +
    # interval after
    prm = sd_params(path)
    iv, burst = prm.get('interval_ns', 0) if prm.get('iops') else 0, prm.get('burst', 1)
    free, head, bad, tat = [0] * K, [0] * K, set(), 0
    for x in sorted(sd_read(path), key=lambda x: x[9]):
        u = min(range(K), key=lambda i: (free[i], i))
        tok = max(x[0], tat - (burst - 1) * iv) if iv else x[0]
        st = max(tok, free[u])
        seek = 0
        if prm.get('seek_max_ns') and x[4] != 'F':
            d = abs(x[5] - head[u])
            head[u] = x[5] + x[6]
            lo, hi = prm['seek_min_ns'], prm['seek_max_ns']
            seek = lo + int((hi - lo) * math.sqrt(d / prm['size'])) if d else 0
        fin = st + seek + (prm['fsync_ns'] if x[4] == 'F' else S) + (x[6] * 1000000000 // Bps if Bps else 0)
        if (x[7], x[1], x[2], x[10], x[11]) != (u, st, fin, tok, seek) or x[3] < x[2]:
            bad.add(x[9])
        free[u] = fin
        if iv:
            tat = max(tat, st) + iv
    return bad

def sd_bucket(reqs, iv):
    # while a request waits for its token the bucket is empty and gives its
    # tokens out as they fall due, one an interval: the union of the waits
    # [A, token) is time the disk ran at its cap. A stretch [a, b] of it
    # ends on a token (b), and with every unit free (no request started
    # after its token) the tokens before it fell at b - interval, b - 2
    # intervals, ... down to a: floor((b - a) / interval) + 1 starts in all
    w = sorted((x[0], x[10]) for x in reqs if x[10] > x[0])
    st = []
    for a, t in w:
        if st and a <= st[-1][1]:
            st[-1][1] = max(st[-1][1], t)
        else:
            st.append([a, t])
    return dict(held=len(w), capped=sum(b - a for a, b in st), tokens=sum((b - a) // iv + 1 for a, b in st),
                unit_waits=sum(1 for x in reqs if x[1] > x[10]))

def sd_knee(rows):
    # knee.sh's rule: the first doubling a..b whose IOPS grew less than +20%
    # names a, unless what the kernel held grew less than +20% there too
    # (then the limit was above the device, and no depth is named)
    rows = [r for r in rows if not r.get('search')]
    for a, b in zip(rows, rows[1:]):
        per = 1 / math.log2(b['depth'] / a['depth'])
        g = (b['iops'] / a['iops']) ** per
        if g < 1.2:
            h = (b['held'] / a['held']) ** per
            return dict(par=None if h < 1.2 else a['depth'], still=False, above=h < 1.2,
                        at=(a['depth'], b['depth'], g, h))
    return dict(par=rows[-1]['depth'], still=True, above=False, at=None)

class Sd:
    def __init__(self, reqs):
        self.reqs = reqs
        self.n = len(reqs)
        self.bytes = sum(x[6] for x in reqs)
        self.ra = sorted(x[3] - x[0] for x in reqs)
        self.sum_ra = sum(self.ra)
        self.late = sorted(x[3] - x[2] for x in reqs)
        self.A0 = min(x[0] for x in reqs)
        self.R1 = max(x[3] for x in reqs)
        self.W = self.R1 - self.A0
        seqs = sorted(x[9] for x in reqs)
        self.contiguous = seqs == list(range(seqs[0], seqs[0] + self.n))
        ev = sorted([(x[0], 1) for x in reqs] + [(x[3], -1) for x in reqs])
        lvl = self.held_max = self.busy = 0
        self.gaps = []
        for i, (t, d) in enumerate(ev):
            if lvl > 0:
                self.busy += t - ev[i - 1][0]
            elif i:
                self.gaps.append(t - ev[i - 1][0])
            lvl += d
            self.held_max = max(self.held_max, lvl)

    def top(self, m):
        return sum(self.ra[len(self.ra) - m:]) if m > 0 else 0

    def bottom(self, m):
        return sum(self.ra[:m]) if m > 0 else 0

def sd_inner(reqs, t0, t1):
    return [x for x in reqs if x[0] >= t0 and x[3] <= t1]

def pct_of(v, k):
    return v[min(max(int(k), 1), len(v)) - 1]

def fio_pct(op, level):
    p = op["lat_ns"].get("percentile", {})
    for key in sorted(p, key=float):
        if float(key) >= level * 100 and p[key] > 0:
            return p[key] * (1 + 1 / 128.0)
    return op["lat_ns"]["max"]

def host_load(a, b):
    x = [int(v) for v in a.split()[1:]]
    y = [int(v) for v in b.split()[1:]]
    d = [q - p for p, q in zip(x, y)] + [0] * 8
    tot = max(sum(d[:8]), 1)
    return "host CPU during the run: %.0f%% busy, %.0f%% stolen by the hypervisor" % (
        100.0 * (tot - d[3] - d[4] - d[7]) / tot, 100.0 * d[7] / tot)

def sd_label(lo, hi):
    # a depth class as truestat names it
    return '%d' % lo if lo == hi else '%d-%d' % (lo, hi)

def sd_curve(n, c, cv, m, P, allreq):
    # truestat's -D curve (cv, with the concurrency c of the same report and
    # its m unseen completions) against the daemon's: P maps each offered
    # depth to (Sd of its requests, fio's read figures with
    # --lat_percentiles), allreq all of them. Prints the checks; returns the
    # daemon's rows by depth_lo, and the (parallelism_depths, still_growing)
    # outcomes its curve allows truestat's rule.
    # How far too high the depth counter may have been when a request was
    # issued: one for each unseen completion not yet found (m at most), and
    # what else truestat's range allows (max - max_min: over a run it is the
    # excess at the maximum only, so m is needed too). A row's requests were
    # issued at depths lo - over .. hi: from the phases offering lo - over
    # or more
    over = c['max'] - c['max_min'] + m if not c['exact'] else 0
    Q = sorted(P)
    rows = cv['rows']
    us = lambda ns: ns / 1000.0
    ms = lambda ns: ns / 1e6

    label = sd_label

    def phases_from(lo):
        return [q for q in Q if q >= lo]

    def fio_union_pct(qs, level):
        # fio's latency percentile of the phases qs together, as an upper bound:
        # the lowest listed value v at which the phases listed at least level
        N = sum(P[q][1]['total_ios'] for q in qs)
        cands = sorted(set(v for q in qs for v in P[q][1]['lat_ns']['percentile'].values()))
        for v in cands:
            got = 0
            for q in qs:
                p = P[q][1]['lat_ns']['percentile']
                got += P[q][1]['total_ios'] * max([float(k) / 100 for k in p if p[k] <= v] + [0])
            if got >= level * N:
                return v * (1 + 1 / 128.0)
        return max(P[q][1]['lat_ns']['max'] for q in qs)

    # each row: its k-th shortest service is at least the k-th shortest A..R of
    # the phases it can hold, and at most their (k + the rest)-th fio latency
    def rank_band(r, qq):
        qs = phases_from(r['depth_lo'] - over)
        ra = sorted(v for q in qs for v in P[q][0].ra)
        N, kk = len(ra), math.ceil(qq * r['ios'])
        return (pct_of(ra, kk) / 1.0625,
                fio_union_pct(qs, min(1.0, (N - r['ios'] + kk) / float(N))) * 1.0625)

    res = []
    for r in rows:
        if not r['ios']:
            continue
        qs = phases_from(r['depth_lo'] - over)
        ra = sorted(v for q in qs for v in P[q][0].ra)
        for key, qq in (('service_p50_ms', 0.5), ('service_p95_ms', 0.95)):
            lo, hi = rank_band(r, qq)
            v = r[key] * 1e6
            res.append((lo <= v <= hi, '%s %s %.3f in [%.3f, %.3f]' % (label(r['depth_lo'], r['depth_hi']), key[8:11], ms(v), ms(lo), ms(hi))))
        # throughput by Little: at most hi requests over the shortest A..R
        if r['iops']:
            top = r['depth_hi'] / (ra[0] / 1e9) * 1.03125
            res.append((r['iops'] <= top, '%s IOPS %.0f <= %.0f' % (label(r['depth_lo'], r['depth_hi']), r['iops'], top)))
    print(n + '_rows', int(not all(x[0] for x in res)),
          'rows (ms; the phases each can hold: A..R rank / 1.0625, fio rank x 1.0625; over %d): ' % over + '; '.join(x[1] for x in res))

    # the daemon's own curve: requests by how many it held on their arrival
    ev = sorted([(x[0], 1, i) for i, x in enumerate(allreq)] + [(x[3], -1, i) for i, x in enumerate(allreq)])
    lvl, last, tl, at = 0, None, {}, {}
    for tt, dd, i in ev:
        if last is not None and lvl > 0:
            tl[lvl] = tl.get(lvl, 0) + tt - last
        last = tt
        lvl += dd
        if dd > 0:
            at[i] = lvl
    dspan = Sd(allreq).W
    D = {}
    for r in rows:
        lo, hi = r['depth_lo'], r['depth_hi']
        T = sum(tl.get(l, 0) for l in range(lo, hi + 1))
        ra = sorted(allreq[i][3] - allreq[i][0] for i in at if lo <= at[i] <= hi)
        if ra and T:
            D[lo] = dict(lo=lo, hi=hi, T=T, ra=ra, mean=sum(l * tl.get(l, 0) for l in range(lo, hi + 1)) / T,
                         svc=sum(ra) / len(ra), p95=pct_of(ra, math.ceil(0.95 * len(ra))),
                         ev=T >= 0.01 * dspan and len(ra) >= 50)
            D[lo]['iops'] = D[lo]['mean'] / (D[lo]['svc'] / 1e9)
    # what FUSE and loop may add to a request of phase q on average, at most:
    # the time its slots spent outside the daemon (Little: at most q in the
    # device over the daemon's span and edges), and fio's latency beyond A..R
    omax = {}
    for q in Q:
        Lq, fq = P[q]
        e = max(fq['lat_ns']['max'] - Lq.ra[0], 0)
        omax[q] = min(q * (Lq.W + 2 * e) - Lq.sum_ra, Lq.n * fq['lat_ns']['mean'] - Lq.sum_ra) / Lq.n

    def omax_of(r):
        # a row's requests run at its depths: the phases offering those
        qs = [q for q in Q if r['depth_lo'] - over <= q <= r['depth_hi']] or Q
        return max(omax[q] for q in qs)

    def rows_of(r):
        # the daemon's rows a truestat row may hold, with the counter's excess
        return [D[x] for x in sorted(D) if D[x]['hi'] >= r['depth_lo'] - over and D[x]['lo'] <= r['depth_hi']]

    def outcomes(ev_rows, test):
        # every (parallelism_depths, still_growing) truestat's rule can give
        # when each step's growth may lie on either side of +20%
        out = set()
        def walk(j, prev):
            if j == len(ev_rows):
                if len(ev_rows) < 2:
                    out.add((None, False))
                else:
                    out.add((label(ev_rows[prev]['depth_lo'], ev_rows[prev]['depth_hi']), True))
                return
            if prev is None:
                walk(j + 1, j)
                return
            for stop in test(ev_rows[prev], ev_rows[j]):
                if stop:
                    out.add((label(ev_rows[prev]['depth_lo'], ev_rows[prev]['depth_hi']), False))
                else:
                    walk(j + 1, j)
        walk(0, None)
        return out

    ev_rows = [r for r in rows if r['evidence']]
    idx = dict((r['depth_lo'], j) for j, r in enumerate(rows))

    def iops_band(r):
        ds = rows_of(r)
        if not ds:
            return (0, float('inf'))
        # truestat's service is A..R plus FUSE+loop (0 to omax), its mean from
        # bucket middles (1/32)
        return (min(x['iops'] * x['svc'] / (x['svc'] + omax_of(r)) for x in ds) / 1.03125,
                max(x['iops'] for x in ds) * 1.03125)

    def growth_test(a, b):
        la, ha = iops_band(a)
        lb, hb = iops_band(b)
        g = 1.0 / (idx[b['depth_lo']] - idx[a['depth_lo']])
        glo = (lb / ha) ** g if ha else 0
        ghi = (hb / la) ** g if la else float('inf')
        return set([glo < 1.2, ghi < 1.2])

    par_ok = outcomes(ev_rows, growth_test)
    got = (cv['parallelism_depths'], cv['still_growing'])
    print(n + '_parallelism', int(got not in par_ok),
          'effective parallelism %s%s; the daemon curve allows %s (its rows widened by what FUSE+loop may add, %s us by phase, 1/32 for bucket means, and the counter %d too high)'
          % (got[0], ' (still growing)' if got[1] else '', ', '.join('%s%s' % (a, ' (still growing)' if g else '') for a, g in sorted(par_ok, key=str)),
             '/'.join('%.0f' % us(omax[q]) for q in Q), over))

    # a row's p95 lies where the rows check above holds it: what FUSE and
    # loop add is bounded on average (omax), not at a percentile, so the
    # daemon's p95 plus that mean is no bound on truestat's p95 (a fresh
    # clone pinned to one CPU: depth 1's p95 2.904 ms against the daemon's
    # p95 widened so, 2.45 ms)
    def p95_band(r):
        return rank_band(r, 0.95)

    sat_ok = set()
    if rows and rows[0]['evidence']:
        b0 = p95_band(rows[0])
        choices = [None]
        for r in rows[1:]:
            if not r['evidence']:
                continue
            lo, hi = p95_band(r)
            can_above, can_below = hi > 3 * b0[0], lo <= 3 * b0[1]
            nxt = []
            for ch in choices:
                if ch is not None:
                    nxt.append(ch)
                    continue
                if can_above:
                    nxt.append(label(r['depth_lo'], r['depth_hi']))
                if can_below:
                    nxt.append(None)
            choices = nxt
        sat_ok = set(choices)
    else:
        sat_ok = {None}
    print(n + '_saturation', int(cv['saturation_depths'] not in sat_ok),
          'saturation %s; the rows\' p95 bands allow %s (A..R rank / 1.0625 to fio rank x 1.0625, as the rows check)'
          % (cv['saturation_depths'], ', '.join(str(x) for x in sorted(sat_ok, key=str))))
    return D, par_ok
PY
)

simdisk_py() {
	py "TS_ROOT = '$TS_ROOT'
$SIMDISK_PYLIB
$1"
}

# simdisk_judge NAME SCRIPT: the "NAME RC MESSAGE" lines simdisk_py SCRIPT
# prints, each a check; a script that fails midway is a failed check
# (NAME_judged), never a few checks fewer
simdisk_judge() {
	local out err rc=0
	err=$(mktemp /tmp/truestat-test.XXXXXX)
	out=$(simdisk_py "$2" 2>"$err") || rc=$?
	[[ -z $out ]] || check_lines <<<"$out"
	((rc == 0)) || check "$1_judged" 1 "the checks stopped: $(grep -v '^ ' "$err" | tail -1)"
	rm -f "$err"
}

