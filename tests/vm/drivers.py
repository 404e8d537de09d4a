# SPDX-License-Identifier: GPL-2.0
"""The checks of tests/vm's real-driver cases (nvme, virtio, nullq, cpus8,
tags64, scsi, ahci), on the host.

python3 drivers.py TS_FILE KVER KEY=VALUE...: as stacked.py (whose
parsing and output it shares): TS_FILE holds the guest's "@@TS" lines, the
KEY=VALUEs its parameters (CASES, S_NS, K, NVME_QD, SCSI_QD). Prints one
"NAME RC MESSAGE" line per check.

Each run (guest-init.sh's drv_run) is fio's 4 KiB random direct I/O on one
disk, scheduler none, jobs pinned to the two vCPUs, under one truestat -d
DISK run. Every run is checked against the guest's own records:
 - counts: per direction, truestat's ios + missed + unissued equal the
   I/Os in /proc/diskstats, and its bytes + missed_bytes the sectors x 512,
   exactly but for the unissued (completed with no issue seen: their size
   is not known, each at most max_sectors_kb); requests whose issue fell
   while another CPU claimed the disk's entry are in missed
   (issues_unseen); a difference prints the missed completions, requeues
   and claim races
 - requeues: truestat's equal ftrace's block_rq_requeue for the disk (of
   the requests issued, with scsi_debug: guest-init.sh's rq_count)
 - depth: exact, at most the tags of the hardware queues the run used
   (debugfs: each queue's count of requests queued to it), or the
   device's own limit (SCSI host queue, SATA queue_depth); back to 0 at
   the end, in the device and in the OS (never stuck, never negative)
 - Little's law: the in-device depth x time against the timed requests'
   service summed, to within the changes truestat stamped after their
   clock read (reordered_ms) and the JSON's decimals, as in 30-depth; the
   missed requests each up to the slowest service; each issued attempt
   given back (requeue) between nothing (host busy) or S (retried:
   scsi_debug's ndelay) and fio's slowest latency
And per case:
 - nvme_irq, virtio, nullq0-2: both queues used, and the disk's one
   maximum above a single queue's tags: one figure over all its queues
 - cpus8_0-2: the guest has 8 vCPUs, null_blk's 8 submit queues serve one
   CPU each (debugfs) and every CPU issued requests (ftrace's
   block_rq_issue by CPU): 8 CPUs issued and completed on the disk's one
   entry; cpus8_2 (timer) as nullq2: service at least S, and the maximum
   above one queue's tags
 - nvme_ns: both namespaces at once (one tag set): each disk's checks
 - tags64: 64 null_blk disks of TAGS64_K tags (a 2 s timer), all read at
   once under one truestat run: each disk's checks above, folded into one
   line per kind (how many of the 64 passed), and every disk at its full
   TAGS64_K in flight (exact) with no record lost (rq_table_full,
   bio_table_full and unmatched_completions 0): 64 x TAGS64_K records in
   the request table together, how far from their hash -v's last line says
 - nvme_poll: every request went to the poll queue (hipri), counts exact
 - nullq2, scsi*: service S to S + 2% (null_blk's timer, scsi_debug's
   ndelay): for scsi_retry that is service from the last issue, the retry
 - scsi_busy, scsi_retry: requeues > 0, and (run with --by process) every
   request fio's, the requeued ones too: one row per direction, named
   fio's, whose I/Os are the disk's; scsi_error: completions with an
   error (ftrace's block_rq_complete with error != 0) equal fio's failed
   I/Os, > 0, and counted as I/Os; truestat's events.io_errors equals
   them too, exactly
 - ncq: the maximum reaches the guest's queue_depth (offered 64) and
   never exceeds it; ncq1 (queue_depth 1): at most 1 in the device, the
   rest waits in the OS
Not exercised: libata's fall back to a single tag (NCQ off) after a disk's
errors. ncq1 sets queue_depth 1 by hand; no run makes the disk fail a
command, since qemu's AHCI has no error injection of its own (it reports
an NCQ error only when its backing file's I/O fails: a blkdebug backend
that injects EIO might do that, untried).
"""
import json
import os
import sys

import stacked as st
from stacked import check, note, dev

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../scripts'))
import truestat_json as tj  # noqa: E402

P = st.P
RUNS = {
    'nvme': ['nvme_irq', 'nvme_ns', 'nvme_poll'],
    'virtio': ['virtio'],
    'nullq': ['nullq0', 'nullq1', 'nullq2'],
    'cpus8': ['cpus8_0', 'cpus8_1', 'cpus8_2'],
    'tags64': ['tags64'],
    'scsi': ['scsi', 'scsi_busy', 'scsi_retry', 'scsi_error'],
    'ahci': ['ncq', 'ncq1'],
}


# runs on more disks than this print one line per kind of check (folded)
FOLD = 8


def one(c, key, default=None):
    v = c.get(key)
    return v[-1] if v else default


def diskstats(c, tag, disk):
    """disk's /proc/diskstats fields at tag (before, after)"""
    for v in c.get(tag, []):
        f = v.split()
        if len(f) > 3 and f[2] == disk:
            return [int(x) for x in f[3:]]
    return []


def ftrace(c, disk):
    """ftrace's requeues, completions with an error and requeues of issued
    requests (-1: not traced) of disk"""
    for v in c.get('ftrace', []):
        f = v.split()
        if f[0] == disk:
            return [int(x) for x in f[1:4]]
    return [-1, -1, -1]


def hctx_types(c):
    """hardware queue -> its type (default, read, poll)"""
    return dict(v.split()[:2] for v in c.get('hctx', []) if len(v.split()) >= 2)


def irq_deltas(c):
    """queue's interrupt name -> interrupts during the run (all CPUs)"""
    seen = {}
    for v in c.get('irq', []):
        f = v.split()
        nums = []
        for x in f[2:]:
            if not x.isdigit():
                break
            nums.append(int(x))
        seen.setdefault(f[-1], {})[f[0]] = sum(nums)
    return {n: x['after'] - x['before'] for n, x in seen.items() if 'before' in x and 'after' in x}


def counts(tag, c, d):
    """ios + missed + unissued and bytes + missed_bytes per direction against
    diskstats (tj.against_diskstats)"""
    b, a = diskstats(c, 'before', d['device']), diskstats(c, 'after', d['device'])
    ev = d['events']
    # the events that could explain a difference: completions the
    # platform dropped, requests already in flight, events dropped while
    # another CPU set the device's entry up (claim_races)
    why = 'missed_completions %d, requeues %d, unmatched %d, claim_races %d' % (
        ev['missed_completions'], ev['requeues'], ev['unmatched_completions'], ev['claim_races'])
    kb = lambda: int(one(c, 'max_sectors_kb', '0'))
    for op, got, n, gotb, nb, top in tj.against_diskstats(d['ops'], b, a, kb):
        o = d['ops'].get(op) or {}
        msg = '%s: truestat %d + %d missed + %d unissued, diskstats %d' % (
            op, o.get('ios', 0), o.get('missed', 0), o.get('unissued', 0), n)
        bad = got != n
        if nb is not None:
            msg += '; bytes %d + %d missed, diskstats %d' % (o.get('bytes', 0), o.get('missed_bytes', 0), nb)
            msg += ' (up to +%d: unissued)' % top if top else ''
            bad = bad or not 0 <= nb - gotb <= top
        check('%s_%s' % (tag, op), bad, msg + ' (exact; %s)' % why)


def depth(tag, d, limit, why):
    """within limit (flagged not exact: its lower end), back to 0 at the end"""
    cc, oq = d['concurrency'], d['os_queue']
    ev = d['events']
    flags = ', '.join('%s %d' % (k, ev[k]) for k in (
        'missed_completions', 'unmatched_completions', 'rq_table_full', 'claim_races',
        'contended_depth_updates') if ev[k])
    check(tag + '_max', cc['max_min'] > limit,
          'max in-device depth %s, at most %d: %s' % (
              '%d (exact)' % cc['max'] if cc['max_exact'] else
              'flagged not exact, in [%d, %d] (%s)' % (cc['max_min'], cc['max'], flags or 'no event: a sweep'),
              limit, why))
    check(tag + '_end', cc['now'] != 0 or (oq or {}).get('now', 0) != 0,
          'depth at the end: %d in the device, %s in the OS (both 0: nothing stuck, never negative)'
          % (cc['now'], (oq or {}).get('now')))


def little(tag, d, span_ms, attempts=0, attempt_ms=(0, 0)):
    """depth x time against the timed requests' service summed: equal but
    for the depth's changes stamped after their clock read (reordered_ms:
    another vCPU's later change had landed first) and the JSON's 6
    decimals (of the mean over the span, of each service, of span_s x the
    mean); each missed request is in the depth for 0 to its estimated
    service (at most the slowest). attempts: issued attempts that ended in
    a requeue (scsi_retry), each in the depth from its issue to its
    requeue, attempt_ms (least, most) long: not in the per-request service,
    which is from the last issue"""
    al, cc = d['all'], d['concurrency']
    area, svc = cc['mean'] * span_ms, al['ios'] * (al['service_ms'] or 0)
    slack = cc['reordered_ms'] + 5e-7 * (al['ios'] + span_ms) + 5e-4 * cc['mean']
    # a disk without histograms (no slot left: events.no_histograms):
    # fio's slowest latency, which holds every service
    pct = al.get('percentiles_ms')
    slowest = (pct['service']['max'] if pct else attempt_ms[1]) or 0
    lo = svc + attempts * attempt_ms[0] - slack
    hi = svc + attempts * attempt_ms[1] + al['missed'] * slowest + slack
    check(tag + '_little', not lo <= area <= hi,
          'in-device depth x time %.3f ms in [%.3f, %.3f]: service summed %.3f ms (%d x %.6f), reordered %.3f ms, '
          '%d missed x the slowest%s: %+.4f us per I/O' % (
              area, lo, hi, svc, al['ios'], al['service_ms'] or 0, cc['reordered_ms'], al['missed'],
              ', %d failed attempts of %g to %g ms' % ((attempts,) + attempt_ms) if attempts else '',
              (area - svc) * 1000 / max(al['ios'], 1)))


def service(tag, d, s_ms, why, hi=1.02):
    """mean service S to hi x S; hi None: at least S (a guest without
    -icount, whose own path around the device stretches with the host's
    load). With -icount the guest's clock counts its instructions, so the
    driver's path around the device (measured 0.1-0.7% of S, run.sh) is a
    count of instructions: hi = 1.02 holds it with room, whatever the host"""
    svc = d['all']['service_ms']
    check(tag + '_service', svc is None or svc < s_ms or (hi is not None and svc > hi * s_ms),
          'mean service %s ms, S %.4f ms (%s: %s)' % (
              '%.4f' % svc if svc is not None else 'null', s_ms,
              'S to S + %g%%' % round((hi - 1) * 100, 2) if hi else 'at least S', why))


def submitters(tag, d):
    """--by process: all the disk's requests were submitted by fio (one
    process, its jobs threads), the requeued ones too"""
    by = d.get('by') or {}
    rows = by.get('rows', [])
    ios = sum(x['ios'] for x in rows)
    want = sum(x['ios'] for x in d['ops'].values())
    names = sorted(set(str(x.get('name', 'others')) for x in rows))
    bad = [n for n in names if not n.endswith('(fio)')]
    check(tag + '_submitter', not rows or bad or by.get('not_attributed') or ios != want,
          'submitters: %s, %d I/Os, %s not attributed; the disk %d I/Os (all fio\'s, exact)' % (
              ', '.join(names) or 'none', ios, by.get('not_attributed'), want))


def fio_job(c):
    try:
        return json.loads(one(c, 'fio', ''))['jobs'][0]
    except (ValueError, KeyError, IndexError):
        return None


def run(name, c):
    if not c:
        check(name, 1, 'no output from this run')
        return
    if 'insmod_failed' in c or 'no_disk' in c:
        check(name + '_setup', 1, 'the driver did not load or gave no disk')
        return
    if not st.started(name, c):
        return
    docs = [json.loads(l) for l in c.get('json', [])]
    tot = [x for x in docs if x['type'] == 'totals']
    if len(tot) != 1:
        check(name + '_json', 1, 'no totals from truestat')
        return
    job = fio_job(c)
    # fio ends with an error status when an I/O failed, as scsi_error's must
    if job is None or ('fio_failed' in c and name != 'scsi_error'):
        check(name + '_fio', 1, 'fio failed: %s' % one(c, 'fio_failed', 'no JSON'))
        return
    disks = one(c, 'dev', '').split()

    def each(disk):
        d = dev(tot[0], disk)
        tag = name if len(disks) == 1 else '%s_%s' % (name, disk)
        if d is None:
            check(tag + '_json', 1, 'no totals for %s' % disk)
            return
        disk_run(name, tag, c, tot[0], d, job)
    for x in [x for x in c.get('stderr', []) if 'table' in x]:
        note('%s: %s' % (name, x))
    if len(disks) > FOLD:
        folded(name, disks, each)
    else:
        for disk in disks:
            each(disk)


def folded(name, disks, each):
    """each disk's checks (each(disk)), one line per kind: how many disks
    passed it, and the first that failed (else the first disk's line); the
    first disk's notes"""
    kinds, start = {}, len(st.OUT)
    for i, disk in enumerate(disks):
        at = len(st.OUT)
        each(disk)
        prefix = '%s/%s_%s_' % (st.KV, name, disk)
        for line in st.OUT[at:]:
            if line.startswith('# '):
                if i == 0:
                    kinds.setdefault(line, [])
                continue
            full, rc, msg = line.split(' ', 2)
            kind = full[len(prefix):] if full.startswith(prefix) else full.split('/', 1)[1]
            kinds.setdefault(kind, []).append((int(rc), disk, msg))
    del st.OUT[start:]
    for kind, got in kinds.items():
        if kind.startswith('# '):
            st.OUT.append(kind)
            continue
        bad = [x for x in got if x[0]]
        rc, disk, msg = (bad or got)[0]
        check('%s_%s' % (name, kind), bad or len(got) != len(disks),
              '%d of %d disks; %s: %s' % (len(got) - len(bad), len(disks), disk, msg))


def disk_run(name, tag, c, tot, d, job):
    """the checks of one disk (d: its totals) of run name"""
    disk = d['device']
    span_ms = tot['span_s'] * 1000
    types = hctx_types(c)
    # the queues' interrupts, of the disk's own driver (null_blk has none)
    pre = {'nvme': 'nvme', 'vd': 'virtio'}.get(disk[:4] if disk.startswith('nvme') else disk[:2], '-')
    irq = {q: x for q, x in irq_deltas(c).items() if q.startswith(pre)}
    # the queues this run's requests can go to: the poll queues with
    # hipri, the others without
    kind = 'poll' if name == 'nvme_poll' else 'default'
    nr, nq = int(one(c, 'nr_requests')), sum(t == kind for t in types.values()) or int(one(c, 'hw_queues'))
    note('%s on %s: scheduler %s, hardware queues %s, %d tags each; interrupts per queue during the run: %s; '
         'offered %s' % (tag, disk, one(c, 'scheduler'), ' '.join('%s:%s' % x for x in sorted(types.items())),
                         nr, ', '.join('%s %d' % x for x in sorted(irq.items())) or '-', one(c, 'offered')))
    counts(tag, c, d)
    rq, errs, issued = ftrace(c, disk)
    # an issued attempt given back (requeue) held the device from its issue
    # to its requeue: a retried one at least S (scsi_debug answers it ndelay
    # after it gets it), one refused as host busy at least nothing; each
    # inside its request's latency, which fio's slowest holds
    fmax = max(job[k]['lat_ns']['max'] for k in ('read', 'write')) / 1e6
    least = int(P['S_NS']) / 1e6 if name == 'scsi_retry' else 0
    little(tag, d, span_ms, issued if issued >= 0 else rq, (least, fmax))
    kept = one(c, 'ftrace_kept', '')
    # truestat counts the requeues of requests it saw issued (a request
    # given back before its issue never left the OS: bpf on_requeue)
    want = issued if issued >= 0 else rq
    check(tag + '_requeues', d['events']['requeues'] != want,
          'requeues: truestat %d, ftrace block_rq_requeue %d%s (exact; ftrace kept/written %s)'
          % (d['events']['requeues'], rq, ', of requests issued %d, never issued %d' % (issued, rq - issued)
             if issued >= 0 else '', kept.split()[-1] if kept else '?'))
    S_ms = int(P['S_NS']) / 1e6
    qd = one(c, 'queue_depth')
    cc = d['concurrency']
    if name.startswith('scsi'):
        sq = int(P['SCSI_QD'])
        depth(tag, d, sq, 'scsi_debug max_queue %d (the host\'s queue), offered %s'
              % (sq, one(c, 'offered')))
        why = 'scsi_debug answers each command ndelay = S after it gets it'
        if name == 'scsi_retry':
            why += '; the retried commands too: service from the last issue (from the first it would be 2S)'
        if name == 'scsi_error':
            # a failed read's completion goes through the midlayer's sense
            # decoding and the kernel's error report first: no upper bound
            service(tag, d, S_ms, why + '; + the error path of the failed reads', None)
        else:
            service(tag, d, S_ms, why)
        if name in ('scsi_busy', 'scsi_retry'):
            check(tag + '_requeued', rq <= 0, '%d requeues (ftrace), > 0: every 10th command %s' % (
                rq, 'refused as host busy' if name == 'scsi_busy' else 'failed with ABORTED COMMAND and retried'))
            submitters(tag, d)
        if name == 'scsi_error':
            ferr = job.get('total_err', -1)
            check(tag + '_errors', errs <= 0 or ferr != errs,
                  'completions with an error: ftrace %d, fio\'s failed I/Os %d (equal, > 0); counted as I/Os '
                  'above' % (errs, ferr))
            # truestat's own count, from block_rq_complete's error
            # argument, against the same tracepoint as ftrace records it
            ioe = d['events'].get('io_errors')
            check(tag + '_io_errors', ioe is None or errs <= 0 or ioe != errs,
                  'io_errors: truestat %s, ftrace\'s completions with an error %d (exact, > 0; missed '
                  'completions %d)' % (ioe, errs, d['events']['missed_completions']))
        return
    if name.startswith('ncq'):
        qd = int(qd)
        depth(tag, d, qd, 'the disk\'s queue_depth (NCQ tags the guest uses)')
        if name == 'ncq':
            check(tag + '_reach', cc['max'] != qd,
                  'max in-device depth %d reaches queue_depth %d (offered %s)' % (cc['max'], qd, one(c, 'offered')))
        else:
            oq = d['os_queue']
            check(tag + '_os', not (cc['max'] == 1 and d['all']['queue_ms'] > 0 and oq['max'] > 1),
                  'queue_depth 1: max in the device %d (1), queue time %.4f ms > 0, OS depth max %d > 1 (mean %.2f), '
                  'in-device mean %.3f' % (cc['max'], d['all']['queue_ms'], oq['max'], oq['mean'], cc['mean']))
        # the README's NCQ on and off side by side: truestat's own columns
        al, oq = d['all'], d['os_queue']
        note('%s columns: queue_depth %d | IOPS %.1f | QUEUE_ms %.4f | SERVICE_ms %.4f | TOTAL_ms %.4f | CONC %.2f | '
             'CONC_MAX %d | OS_QD %.2f | BUSY%% %.1f | SVCTM_ms %.4f' % (
                 tag, qd, al['iops'], al['queue_ms'], al['service_ms'], al['total_ms'], cc['mean'], cc['max'],
                 oq['mean'], cc['busy_pct'], d['iostat']['svctm_ms']))
        return
    depth(tag, d, nr * nq, '%d tags x %d %s queues' % (nr, nq, kind))
    if name == 'tags64':
        table(tag, d, int(P['TAGS64_K']))
    n = d['all']['ios'] + d['all']['missed']
    if name == 'nvme_poll':
        # hipri sends every request to the poll queue, which has no
        # interrupt: the submitter reaps the completions
        check(tag + '_polled', sum(irq.values()) != 0 or n == 0,
              '%d I/Os, %d interrupts on the interrupt-driven I/O queues (%s): all polled'
              % (n, sum(irq.values()), ', '.join(sorted(irq)) or 'none listed'))
        return
    if name.startswith('cpus8'):
        wide(tag, c, disk, rq)
    if name in ('nullq2', 'cpus8_2'):
        service(tag, d, S_ms, 'null_blk\'s timer fires S after the driver gets the request; no upper bound '
                'without -icount', None)
    if name in ('nvme_irq', 'virtio', 'nullq2', 'cpus8_2'):
        # each vCPU's jobs offer 16 to its own queue: more than its tags,
        # so both queues are full at times, together: the disk's one
        # figure must go above one queue's tags
        busy = [q for q, x in irq.items() if x > 0]
        check(tag + '_queues', cc['max_min'] <= nr or (name[:4] not in ('null', 'cpus') and len(busy) < 2),
              'max in-device depth %s > one queue\'s %d tags: one figure over the queues (interrupts came from %s)'
              % (cc['max_min'], nr, ', '.join(busy) or 'no queue: null_blk has none'))


def table(tag, d, k):
    """tags64: every tag of the disk in flight at once, each request's
    record kept (64 disks: 64 x k records in the request table together)"""
    cc, ev = d['concurrency'], d['events']
    check(tag + '_full', cc['max'] != k or not cc['max_exact'],
          'max in-device depth %d (exact: %s): all %d tags taken' % (cc['max'], cc['max_exact'], k))
    check(tag + '_table', ev['rq_table_full'] or ev['bio_table_full'] or ev['unmatched_completions'],
          'rq_table_full %d, bio_table_full %d, unmatched_completions %d (all 0: every request\'s record '
          'kept, however full the table)' % (ev['rq_table_full'], ev['bio_table_full'], ev['unmatched_completions']))


def wide(tag, c, disk, requeues):
    """8 vCPUs, each default hardware queue serving one CPU of its own, and
    every CPU issuing requests during the run (an ftrace instance's
    block_rq_issue events per CPU, which summed must be the disk's I/Os in
    diskstats plus the requeued ones' issues again)"""
    ncpu = int(one(c, 'ncpu', '0'))
    serves = [v.split()[1:] for v in c.get('hctx_cpus', [])]
    one_each = [x for x in serves if len(x) == 1]
    cpus = set(x[0] for x in one_each)
    issued = dict(v.split()[:2] for v in c.get('issues_on_cpu', []) if len(v.split()) >= 2)
    busy = sorted(int(k) for k, n in issued.items() if int(n) > 0)
    b, a = diskstats(c, 'before', disk), diskstats(c, 'after', disk)
    ios = sum(a[i] - b[i] for i, _ in tj.DISKSTATS.values() if len(a) > i)
    total = sum(int(n) for n in issued.values())
    check(tag + '_cpus', ncpu != 8 or len(cpus) != 8 or busy != list(range(8)) or total != ios + max(requeues, 0),
          '%d vCPUs; %d hardware queues serve one CPU each, %d CPUs among them (8); issues per CPU (ftrace): %s '
          '(all 8 > 0), summed %d = diskstats %d + %d requeued' % (
              ncpu, len(one_each), len(cpus),
              ' '.join('%s:%s' % (k, issued[k]) for k in sorted(issued, key=int)) or 'none',
              total, ios, max(requeues, 0)))


def main():
    cases = st.parse()
    for case in P.get('CASES', '').split():
        for name in RUNS.get(case, []):
            st.judged(name, run, name, cases.get(name))
    if st.OUT:
        print('\n'.join(st.OUT))


main()
