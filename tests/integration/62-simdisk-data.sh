#!/usr/bin/env bash
# The simulated disk as a disk a file system and a database can live on
# (tests/simdisk, tests/lib/simdisk.sh):
#  - SIMDISK_STORE: ext4 made on it, a file of random bytes written,
#    unmounted and mounted again: the file reads back as written (sha256),
#    and fsck finds the file system clean;
#  - SIMDISK_SEEK: one unit whose arm seeks, a sequential then a random
#    reader: every request the daemon logged follows the stated model
#    (start, finish and seek replayed from the arrivals and offsets, seek =
#    MIN + (MAX - MIN) x sqrt(distance / size)), the sequential reader
#    seeks at most once, the random one each time; truestat's service time
#    for the random reader holds what the daemon held (its A..R, inside
#    D..C) and lies within fio's completion latency (D..C inside it), the
#    unseen completions bounded by the longest A..R.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 fusermount3 mkfs.ext4 fsck.ext4 sha256sum

make_tmp

# --- data: a file system on the disk ------------------------------------------

SIMDISK_STORE=1 simdisk_up 4 200 512
mkdir "$tmp/mnt"
check_cmd store_mkfs "mkfs.ext4 on $SIMDISK_LOOP (512 MiB)" mkfs.ext4 -q -F "/dev/$SIMDISK_LOOP"
on_exit "umount $tmp/mnt"
mount "/dev/$SIMDISK_LOOP" "$tmp/mnt"
head -c $((32 << 20)) /dev/urandom >"$tmp/random"
cp "$tmp/random" "$tmp/mnt/file"
umount "$tmp/mnt"
mount "/dev/$SIMDISK_LOOP" "$tmp/mnt"
want=$(sha256sum <"$tmp/random" | cut -c1-64)
got=$(sha256sum <"$tmp/mnt/file" | cut -c1-64)
check store_reads_back "$([[ $want == "$got" ]] && echo 0 || echo 1)" \
	"32 MiB written through ext4, read back after a new mount: sha256 ${got:0:16} (wrote ${want:0:16})"
umount "$tmp/mnt"
fsck.ext4 -fn "/dev/$SIMDISK_LOOP" >"$tmp/fsck" 2>&1 && rc=0 || rc=$?
check store_fsck "$rc" "fsck.ext4 -fn: exit $rc $(tail -1 "$tmp/fsck")"
simdisk_down

# --- seeks: one arm, a sequential and a random reader ---------------------------

SIMDISK_SEEK=500:8000 simdisk_up 1 1000 256
run() { # NAME RW
	simdisk_mark
	ts_start "$tmp/$1.json" -d "$SIMDISK_LOOP"
	fio --name="$1" --filename="/dev/$SIMDISK_LOOP" --direct=1 --rw="$2" --bs=4k \
		--ioengine=psync --runtime=1 --time_based \
		--output-format=json --output="$tmp/$1.fio"
	ts_stop INT
	check "${1}_exit" "$TS_RC" "truestat ended with status $TS_RC"
	simdisk_save "$tmp/$1"
}
run seq read
run rand randread
simdisk_judge seek "
P = sd_params('$tmp/rand.full')
bad = sd_replay('$tmp/rand.full', 1, P['service_ns'])
print('seek_model', int(bool(bad) or not P['seek_max_ns']),
      '%d requests, %d off the model (seek %d..%d us over %d MiB, S %d us)'
      % (len(sd_read('$tmp/rand.full')), len(bad), P['seek_min_ns'] / 1000,
         P['seek_max_ns'] / 1000, P['size'] >> 20, P['service_ns'] / 1000))
seq, rnd = sd_read('$tmp/seq.log'), sd_read('$tmp/rand.log')
sk = [x[11] for x in seq if x[11]]
print('seek_sequential', int(len(sk) > 1 or not seq),
      '%d sequential reads, %d of them seeked' % (len(seq), len(sk)))
sk = [x[11] for x in rnd if x[11]]
allr = sorted(sd_read('$tmp/rand.full'), key=lambda x: x[9])
prev = dict((b[9], a[5] + a[6]) for a, b in zip(allr, allr[1:]))
near = sum(1 for x in rnd if prev.get(x[9]) == x[5])   # began where the last ended
print('seek_random', int(not sk or len(sk) + near != len(rnd) or
                         not P['seek_min_ns'] <= min(sk) <= max(sk) <= P['seek_max_ns']),
      '%d random reads, %d seeked (%.3f to %.3f ms, mean %.3f), %d began where the last ended'
      % (len(rnd), len(sk), min(sk, default=0) / 1e6, max(sk, default=0) / 1e6,
         sum(sk) / max(len(sk), 1) / 1e6, near))
rd = dev(totals('$tmp/rand.json'), '$SIMDISK_LOOP')['ops']['read']
f = json.load(open('$tmp/rand.fio'))['jobs'][0]['read']
ra = [x[3] - x[0] for x in rnd]
mine = rd['ios'] * rd['service_ms'] * 1e6
held = sum(ra) - rd['missed'] * max(ra)
reaped = f['clat_ns']['mean'] * f['total_ios']
print('seek_service', int(not held <= mine <= reaped or rd['ios'] + rd['missed'] != len(rnd)),
      'truestat: %d reads (+%d unseen) of %.3f ms service; the daemon held %.1f ms in all, '
      'truestat %.1f ms, fio completion latency %.1f ms' % (rd['ios'], rd['missed'], rd['service_ms'],
      held / 1e6, mine / 1e6, reaped / 1e6))
"
finish
