# shellcheck shell=bash
# faults.sh: what the fault tests (70-*) share, on top of common.sh.
#
#	bpf_ids PID		the BPF programs and links PID holds, from its
#				fdinfo ("prog ID" / "link ID" lines); waits until
#				all 8 tracepoints are linked (START_GUARD s at
#				most: the attach; less if PID ends first)
#	bpf_left IDS_FILE	how many of those programs and links the kernel
#				still has, once it had the time to free them
#				(rcu_freed_within, common.sh)
#	loop_at FILE [DEV]	attach FILE (direct I/O), on DEV if given (e.g.
#				loop5), else the first free device; its name in
#				$LOOP. Its cleanup detaches it only while it is
#				still backed by FILE: a number this test gave up
#				may belong to someone else by then.
#	loop_gone DEV		wait (up to 5 s) until DEV has no backing file
#	loop_numbers K		K loop numbers from 900 up that no device has,
#				in $LOOP_NUMBERS; each detached and removed at
#				exit
#	loop_ctl add|remove N	make or remove loop device N (/dev/loop-control)
#	COUNTS_PY		python: counts(row, before, after) compares a
#				device's ios + missed per direction with the
#				/proc/diskstats delta (agrees(row) for each);
#				add_rows(rows) sums rows

_bpf_linked() {
	(($(grep -ls "^link_id:" /proc/"$1"/fdinfo/* 2>/dev/null | wc -l || true) >= 8))
}

bpf_ids() {
	local pid=$1 f
	# the attach, with the verifier, takes longer on a slow or busy host:
	# a hang guard, not a measure; a PID that ends stops the wait at once
	wait_for "$pid" "$START_GUARD" _bpf_linked "$pid" || true
	for f in /proc/"$pid"/fdinfo/*; do
		awk '/^prog_type:/ { p = 1 } /^link_id:/ { print "link", $2 }
		     /^prog_id:/ && p { print "prog", $2 }' "$f" 2>/dev/null
	done | sort -u
}

bpf_left() {
	local ids=$1 n progs links end
	end=$(($(date +%s) + $(rcu_freed_within)))
	while :; do
		progs=$(bpftool -j prog show 2>/dev/null)
		links=$(bpftool -j link list 2>/dev/null)
		n=$(python3 -c "
import json, sys
progs = {p['id'] for p in json.loads(sys.argv[1] or '[]')}
links = {l['id'] for l in json.loads(sys.argv[2] or '[]')}
left = 0
for line in open(sys.argv[3]):
    kind, id = line.split()
    left += int(id) in (progs if kind == 'prog' else links)
print(left)" "$progs" "$links" "$ids")
		((n == 0 || $(date +%s) > end)) && break
		sleep 0.1
	done
	echo "$n"
}

_loop_detach_if() {
	[[ $(losetup -nO BACK-FILE "/dev/$1" 2>/dev/null) == *"$2"* ]] &&
		losetup -d "/dev/$1"
}

loop_at() {
	local file=$1 dev
	if [[ -n ${2:-} ]]; then
		losetup --direct-io=on "/dev/$2" "$file" || return 1
		dev=/dev/$2
	else
		dev=$(losetup -f --show --direct-io=on "$file") || return 1
	fi
	LOOP=${dev#/dev/}
	on_exit "_loop_detach_if $LOOP '$file'"
	settle
}

_loop_free() {
	[[ -z $(losetup -nO BACK-FILE "/dev/$1" 2>/dev/null) ]]
}

loop_gone() {
	wait_for "" 5 _loop_free "$1"
}

loop_numbers() {
	local n
	LOOP_NUMBERS=$(python3 -c "
import os
n = [x for x in range(900, 4000) if not os.path.exists('/sys/block/loop%d' % x)]
print(*n[:$1])")
	for n in $LOOP_NUMBERS; do
		on_exit "_loop_number_gone $n"
	done
}

_loop_number_gone() {
	losetup -d "/dev/loop$1" 2>/dev/null
	loop_ctl remove "$1" 2>/dev/null || true
}

loop_ctl() {
	local op=0x4C80 # LOOP_CTL_ADD
	[[ $1 == add ]] || op=0x4C81 # LOOP_CTL_REMOVE
	python3 -c "import fcntl, os
fcntl.ioctl(os.open('/dev/loop-control', os.O_RDWR), $op, $2)"
}

# slot_reuse [3]: two (or three) loop numbers no device has, $N_OLD and
# $N_NEW (and $N_THIRD), and a 16 MiB file for their lives, $REUSE_FILE;
# all gone at exit
slot_reuse() {
	REUSE_FILE=$(mktemp /var/tmp/truestat-test.XXXXXX)
	on_exit "rm -f '$REUSE_FILE'"
	truncate -s 16M "$REUSE_FILE"
	loop_numbers "${1:-2}"
	read -r N_OLD N_NEW N_THIRD <<<"$LOOP_NUMBERS"
}

# loop_life N READS: loop N made on $REUSE_FILE and read READS times
# (direct); prints its diskstats reads once udev has let go of it
loop_life() {
	loop_ctl add "$1"
	losetup --direct-io=on "/dev/loop$1" "$REUSE_FILE"
	dd if="/dev/loop$1" of=/dev/null bs=4k count="$2" iflag=direct status=none
	settle
	diskstats "loop$1" | cut -d' ' -f1
}

# loop_end N: loop N detached and removed (its queue id given back);
# prints its diskstats reads, as they stood before the removal
loop_end() {
	losetup -d "/dev/loop$1"
	loop_gone "loop$1" || true
	settle
	diskstats "loop$1" | cut -d' ' -f1
	loop_ctl remove "$1"
}

# slot_said ERR N [K]: "queue id:slot" in which truestat -v (stderr in
# ERR) said it traced loop N the first (K-th) time, or nothing
slot_said() {
	sed -n "s/^truestat: tracing loop$2 (queue id \([0-9]*\)) in slot \([0-9]*\)$/\1:\2/p" "$1" | sed -n "${3:-1}p"
}

# reuse_lives OUT PORT: truestat started into OUT (ts_start, -v,
# --prometheus=PORT, a report a day) after slot_reuse 3: loop A ($N_OLD)
# read 2,000 times, scraped (a read of the maps: the disk is seen, as a
# report would), removed; B ($N_NEW), made then on the queue id A gave
# back, read 100 times, scraped (into OUT.new.prom); A made again (another
# queue id: B holds A's first), read 300 times, scraped, removed; C
# ($N_THIRD) on that queue id, read 50 times, scraped. Then SIGINT and its
# totals. Checks the exit, that no report fell among the lives (none can:
# the interval is a day), B's reads in its scrape, and that the cases
# happened (-v names each disk's queue id and slot when a read first sees
# it): B on A's first, C on A's second. Sets each disk's diskstats reads:
# LIVES_OLD (A's two lives), LIVES_NEW (B's, at its life), LIVES_NEW_AT_END
# (at SIGINT), LIVES_THIRD (C's, at SIGINT)
reuse_lives() {
	local out=$1 port=$2
	local a1 a2 early s1 s2 sb sc
	_scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"${1:-/dev/null}" || true; }
	loop_life "$a" 2000 >/dev/null
	_scrape
	a1=$(loop_end "$a")
	LIVES_NEW=$(loop_life "$b" 100)
	_scrape "$out.new.prom"
	loop_life "$a" 300 >/dev/null
	_scrape
	a2=$(loop_end "$a")
	loop_life "$c" 50 >/dev/null
	_scrape
	# a report a day: none before SIGINT, so all lives share one span
	early=$(wc -l <"$out")
	LIVES_OLD=$((a1 + a2))
	LIVES_NEW_AT_END=$(diskstats "loop$b" | cut -d' ' -f1)
	LIVES_THIRD=$(diskstats "loop$c" | cut -d' ' -f1)
	ts_stop INT
	check exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"
	check one_interval "$early" \
		"reports written before SIGINT: $early (0: a report a day, so all lives are in one span by construction; the scrapes and SIGINT's totals read them)"
	check_lines < <(py "
got = {}
for l in open('$out.new.prom'):
    for k in ('requests', 'missed_completions'):
        if l.startswith('truestat_%s_total{device=\"loop$b\",layer=\"request\",op=\"read\"} ' % k):
            got[k] = float(l.split()[-1])
n = int(got.get('requests', 0) + got.get('missed_completions', 0))
print('scrape_new', int(not got or n != $LIVES_NEW),
      'loop$b in the scrape after its life (the slot just handed over): requests + missed %d, its diskstats %d (exact)%s'
      % (n, $LIVES_NEW, '' if got else '; no series of it'))
")
	s1=$(slot_said "$out.err" "$a") s2=$(slot_said "$out.err" "$a" 2)
	sb=$(slot_said "$out.err" "$b") sc=$(slot_said "$out.err" "$c")
	check same_slot "$([[ -n $s1 && $s1 == "$sb" ]]; echo $?)" \
		"loop$a and loop$b, queue id:slot as -v named them: ${s1:-none} and ${sb:-none} (the same: the case happened)"
	check same_slot_again "$([[ -n $s2 && $s2 == "$sc" ]]; echo $?)" \
		"loop$a made again and loop$c: ${s2:-none} and ${sc:-none} (the same: A's two lives are one gone row)"
}

# reuse_run OPTS...: truestat OPTS -v --prometheus, a report a day (none
# falls among the lives, whatever the host's speed), into $out (in a new
# $tmp), through reuse_lives; sets $a $b $c, the loop numbers of disks A,
# B and C
reuse_run() {
	make_tmp
	out=$tmp/ts.json
	slot_reuse 3
	a=$N_OLD b=$N_NEW c=$N_THIRD
	local port
	port=$(free_port)
	ts_start "$out" "$@" --prometheus="$port" 86400
	# the exporter listens once attached: the first scrape must see A
	wait_serving "http://127.0.0.1:$port" || true
	reuse_lives "$out" "$port"
}

# shellcheck disable=SC2034 # used by the tests
COUNTS_PY='
OPS = ("read", "write", "discard", "flush", "other")
def add_rows(rows):
    s = {"ops": {}, "events": {}, "device": rows[0]["device"] if rows else None}
    for r in rows:
        for op, v in r["ops"].items():
            o = s["ops"].setdefault(op, {"ios": 0, "missed": 0, "bytes": 0, "missed_bytes": 0, "unissued": 0})
            for k in o:
                o[k] += v[k]
        for k, v in r["events"].items():
            s["events"][k] = s["events"].get(k, 0) + v
    return s
def counts(t, before, after):
    """[(what, truestat, diskstats, slack)]: ios + missed + unissued per
    direction, then bytes + missed_bytes (unissued: completed without an
    issue seen, the empty preflush write of an fsync, or one whose issue
    was dropped while the device was claimed; tj.against_diskstats)"""
    b = [int(x) for x in before.split()]
    a = [int(x) for x in after.split()]
    kb = lambda: int(open("/sys/block/%s/queue/max_sectors_kb" % t["device"]).read())
    r = tj.against_diskstats(t["ops"], b, a, kb)
    plural = {"read": "reads", "write": "writes", "discard": "discards", "flush": "flushes"}
    return ([(plural[op], got, n, 0) for op, got, n, _, _, _ in r] +
            [(op + "_bytes", got, n, top) for op, _, _, got, n, top in r if n is not None])
def agrees(row):
    return 0 <= row[2] - row[1] <= row[3]
def verdict(name, t, before, after):
    """one check line: every figure equal"""
    r = counts(t, before, after)
    bad = [x for x in r if not agrees(x)]
    missed = sum(v.get("missed", 0) for v in t["ops"].values())
    shown = ", ".join("%s %d/%d" % x[:3] + (" (diskstats up to +%d: unissued)" % x[3] if x[3] else "")
                      for x in (bad or r) if x[2] or x[1])
    ev = " ".join("%s=%d" % kv for kv in t["events"].items() if kv[1])
    print(name, int(bool(bad)), ("MISMATCH " if bad else "") +
          "truestat/diskstats: " + (shown or "no I/O") + " (%d unseen)" % missed +
          (" events: " + (ev or "none") if bad else ""))
'
