#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/vm/run.sh [KERNEL_PKG...]: the truestat binary built here, run on
# Debian's own older kernels and Ubuntu 22.04's 5.15 (linux-image-5.15.0-N-generic)
# under qemu (TCG, one vCPU), against a null_blk
# device whose service time S and parallelism K the test sets.
#
# Default packages: linux-image-amd64 (bookworm: 6.1),
# linux-image-6.12-amd64 and linux-image-6.12-rt-amd64 (PREEMPT_RT: the
# null_blk cases only); meta-packages are resolved to the image they
# depend on. PKG:CASE,CASE runs only those of TS_VM_CASES on PKG. The .debs are fetched with `apt-get download` into
# $TS_VM_CACHE (default /var/cache/truestat-vm) and unpacked there once;
# everything else (initramfs, console log) lives in one temporary
# directory that is removed at exit, and qemu is ended by its pid, also on
# failure, timeout or a signal. One guest at a time.
#
# Per kernel, the guests (tests/vm/guest-init.sh) run these cases
# (TS_VM_CASES, default all; 95-older-kernel runs base, raid0, ahci and load):
#  base: null_blk with K=4, S=1 ms offered depth 16 (16 psync jobs, fio)
#    for 2 s, four times: scheduler none, mq-deadline, none again with
#    --raw-tp, and none with one completion in 20 dropped
#    (TRUESTAT_TEST_MISS_EVERY=20). Each run is checked here: how truestat
#    attached, its counts against the guest's /proc/diskstats, its service
#    time against S, its device depth against K, the depth the device could
#    not take showing up as OS queue time, and its Q->C against fio's own
#    latency.
#  load: base's first and third runs (tp_btf and raw_tp), and both again
#    with --slow=1000 --by=process --pattern (opts, optsraw: code the
#    verifier sees only with those on), and with those and -p -F
#    --slow-buffer=64M -c of a cgroup v2 that fio runs in, io enabled for
#    it (all, allraw: every option's code at once; the filter's counts
#    are fio's, as every request matches): that every program loads and
#    measures, on a kernel booted for that alone;
#  raid0: md raid0 over four serial null_blk disks (S = 8 ms) read by 1, 4,
#    16 and 64 jobs under one truestat -D -d md0 (md0 and its members);
#  dm: dm-linear, dm-delay and dm-crypt over one null_blk, each read in
#    turn under one truestat run: both layers' counts, the layer time.
#    tests/vm/stacked.py judges these two, and describes its checks.
#  Real drivers, judged by tests/vm/drivers.py (its checks described
#  there), each run fio's 4 KiB random direct I/O under truestat -d DISK:
#  nvme: qemu's NVMe controller, one I/O queue per vCPU, then with a poll
#    queue and io_uring hipri; virtio: virtio-blk with num-queues=2;
#  nullq: null_blk with two submit queues in irqmode 0, 1 and 2 (these
#    three in a second guest with two vCPUs and without -icount);
#  cpus8: null_blk with a submit queue per CPU in irqmode 0, 1 and 2, in a
#    guest of 8 vCPUs, 8 fio jobs, one pinned to each;
#  tags64: 64 null_blk disks of 1,023 tags each, every tag in flight at
#    once (a 2 s timer), under one truestat run tracing all 64: no record
#    lost however full the request table gets;
#  scsi: scsi_debug with max_queue below the offered depth, host-busy
#    and transport-error injection (requeues), a medium error (an I/O
#    error); ahci: a SATA disk on qemu's AHCI, NCQ at its queue_depth,
#    then queue_depth 1.
# The last line: "N passed, N failed".
#
# For experiments: TS_VM_S_NS, TS_VM_K, TS_VM_DEPTH set the base cases' S,
# K and depth (the tolerances below were measured with the defaults),
# TS_VM_CASES the cases, TS_VM_LIMIT the seconds qemu may run,
# TS_VM_KEEP=DIR keeps each guest's console there, TS_VM_INIT another
# guest /init.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

CACHE=${TS_VM_CACHE:-/var/cache/truestat-vm}
S_NS=${TS_VM_S_NS:-1000000}	# null_blk completion_nsec: the device's service time
K=${TS_VM_K:-4}	# null_blk hw_queue_depth: requests the device serves at once
DEPTH=${TS_VM_DEPTH:-16}	# fio jobs, each with one synchronous read in flight
RUNTIME=2	# seconds of I/O per case
# Stacked (bio-based) devices: see tests/vm/stacked.py for the checks.
CASES=${TS_VM_CASES:-base dm raid0 nvme virtio nullq cpus8 tags64 scsi ahci}	# base: the null_blk cases above
# Real drivers (tests/vm/drivers.py judges them), the emulated
# controllers on raw image files here. The multi-queue ones get a guest of
# their own with two vCPUs, so that a device gets a queue per CPU; that
# guest runs without -icount, which hangs qemu 7.2 at the second vCPU's
# start ("x86: Booting SMP configuration", with any -cpu), so its checks
# take no upper bound from the guest's timing.
SMP_CASES="nvme virtio nullq"
WIDE_CASES="cpus8"	# a third guest, of 8 vCPUs (also without -icount)
TAGS64_K=1023	# tags64: 64 null_blk disks of this many tags (NVMe's most a queue)
TAGS64_S_NS=2000000000	# and this service: every tag stays taken
NVME_QD=8	# nvme io_queue_depth: 7 tags per I/O queue
SCSI_QD=4	# scsi_debug max_queue: below the offered depth (32)
VIRTIO_QSIZE=16	# virtio-blk ring: the tags per queue
IMG_MB=256	# each emulated disk's raw file (sparse, in the temporary dir)
RAID_S_NS=8000000	# raid0: four serial null_blk disks (K = 1), S = 8 ms
RAID_CHUNK=64	# KiB
RAID_BS=16k	# block-aligned reads: none crosses a chunk
RAID_JOBS="1 4 16 64"
INTERVAL=0.5	# truestat's reports during raid0: phases are cut from them
TICK=0.25	# raid0's diskstats samples: they tell where all jobs ran
# Each job count's fio run (per job, from its own start), long enough
# that the ticks with all jobs running hold two whole reports: any stretch
# of 3 intervals does; the window loses a tick at each edge to the
# in-flight count and one more before its first tick (reads must grow
# into it), and the jobs start within a tick of each other (64 threads:
# all in flight at the first tick that saw I/O). stacked.py needs one
# report, so one interval to spare.
RAID_RUNTIME=$(awk -v i="$INTERVAL" -v t="$TICK" 'BEGIN { print int((3 * i + 4 * t) * 1000) "ms" }')
DM_DELAY_MS=50	# dm-delay on reads (>= 50: a timer on every kernel)
DM_JOBS=8
DM_RUNTIME=2

# limits CASES: GUARD, the seconds of its own clock after which the guest
# powers itself off, the sum of its cases' (about twice what each case
# took: 6.1 base 91 s with the boot, raid0 and dm 35 s each, scsi up to
# 110 s with the boot; 5.10's base verifies its object in 12.4 s of guest
# time per run against 6.1's 6.0); its clock counts instructions (-icount),
# so this is the same on any host.
limits() {
	local c
	GUARD=40
	for c in $1; do
		case $c in
		base | nvme | nullq) GUARD=$((GUARD + 120)) ;; # 5.10's base: 86-92 s
		load) GUARD=$((GUARD + 240)) ;; # 5.10: six runs, the last two ~40 s
		refuse) GUARD=$((GUARD + 20)) ;;
		scsi) GUARD=$((GUARD + 90)) ;;
		cpus8) GUARD=$((GUARD + 120)) ;;
		tags64) GUARD=$((GUARD + 900)) ;;
		*) GUARD=$((GUARD + 40)) ;;
		esac
	done
}
# The host ends a guest only for making no progress: STALL seconds of
# qemu's own CPU time without a tick of the guest's clock (a tick comes
# every second of it, guest-init.sh), the boot's included. Counted in
# qemu's CPU, not the host's seconds: how much CPU a guest gets depends on
# the host's load (beside the host tests and two busy loops, 25-27 host
# seconds per guest second), how much it needs for a second of its clock
# does not (the boot, its first tick, 11-16 s of CPU; then a tick in
# about 3). LIMIT, in the host's seconds, only ends a qemu left behind by
# a killed script: CI's whole budget, never reached by a run that CI lets
# finish.
STALL=${TS_VM_STALL:-300}
LIMIT=${TS_VM_LIMIT:-5400}
pkgs=("$@")
((${#pkgs[@]})) || pkgs=(linux-image-amd64 linux-image-6.12-amd64 linux-image-6.12-rt-amd64:base,nullq)

if [[ $(id -u) -ne 0 ]]; then
	echo "tests/vm needs root (apt-get download into $CACHE)"
	echo "0 passed, 1 failed"
	exit 1
fi
"$TS_ROOT/scripts/deps.sh" qemu-system-x86 busybox-static xz-utils mdadm dmsetup util-linux
make -C "$TS_ROOT" -s truestat-static

tmp=$(mktemp -d /tmp/truestat-vm.XXXXXX)
on_exit "rm -rf '$tmp'"
mkdir -p "$CACHE"
# every guest gets this copy: the tree's may be rebuilt meanwhile by a
# test running beside this one (89-package's make static)
cp "$TS_ROOT/truestat-static" "$tmp/truestat-static"

# image_pkg PKG: the linux-image package that holds a kernel (a
# meta-package such as linux-image-amd64 names it in Depends; an image
# package depends on no other linux-image)
image_pkg() {
	local p=$1 dep
	dep=$(apt-cache depends "$p" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	echo "${dep:-$p}"
}

# The oldest kernel truestat runs on (user/core/kload.h): older ones are booted
# only to see it refuse them, with one line and exit status 2.
OLDEST=5.10
# Debian's suites beyond the host's sources (bullseye: 5.10), and
# Ubuntu's (jammy, 22.04: 5.15; focal-updates, 20.04's newer kernels: 5.13,
# kernels from the range whose structures and helpers Debian never
# shipped), through a private sources list and
# lists directory under $CACHE: the host's apt configuration is never
# touched.
EXTRA_SUITES="bullseye"
UBUNTU_SUITES="jammy jammy-updates focal-updates"
UBUNTU_URI=http://archive.ubuntu.com/ubuntu
# The key that signs Ubuntu's archive (Ubuntu Archive Automatic Signing Key
# (2018)): Debian does not package Ubuntu's keyring, so it is taken from
# Ubuntu's own ubuntu-keyring package and used only if it holds this key.
UBUNTU_KEY=F6ECB3762474EDA9D21B7022871920D1991BC93C
UBUNTU_KEYRING_DEB=pool/main/u/ubuntu-keyring/ubuntu-keyring_2021.03.26_all.deb

# ubuntu_keyring DIR: DIR/ubuntu.gpg, Ubuntu's archive keyring, checked
# against UBUNTU_KEY; fails when it cannot be had or does not hold it
ubuntu_keyring() {
	local dir=$1 x
	[[ -s $dir/ubuntu.gpg ]] && return 0
	x=$(mktemp -d "$dir/keyring.XXXXXX")
	if curl -fsS -o "$x/k.deb" "$UBUNTU_URI/$UBUNTU_KEYRING_DEB" &&
		dpkg -x "$x/k.deb" "$x/root" &&
		gpg --show-keys --with-colons "$x/root/usr/share/keyrings/ubuntu-archive-keyring.gpg" 2>/dev/null |
		grep -qx "fpr:::::::::$UBUNTU_KEY:"; then
		cp "$x/root/usr/share/keyrings/ubuntu-archive-keyring.gpg" "$dir/ubuntu.gpg"
	fi
	rm -rf "$x"
	[[ -s $dir/ubuntu.gpg ]]
}

# apt_extra CMD ARGS...: apt-get CMD with the private sources of
# EXTRA_SUITES and UBUNTU_SUITES (those only when their key checks out)
apt_extra() {
	local dir=$CACHE/apt-extra uri s
	uri=$(sed -n 's/^URIs: *\(.*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	mkdir -p "$dir/lists/partial"
	{
		for s in $EXTRA_SUITES; do
			echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${uri:-http://deb.debian.org/debian} $s main"
		done
		if ubuntu_keyring "$dir"; then
			for s in $UBUNTU_SUITES; do
				echo "deb [arch=amd64 signed-by=$dir/ubuntu.gpg] $UBUNTU_URI $s main"
			done
		fi
	} >"$dir/sources.list.new"
	# a changed list (a suite added) is fetched anew
	cmp -s "$dir/sources.list.new" "$dir/sources.list" || rm -f "$dir/lists/.updated"
	mv "$dir/sources.list.new" "$dir/sources.list"
	local opts=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	mkdir -p "$dir/cache/archives/partial"
	[[ -e $dir/lists/.updated ]] || { apt-get "${opts[@]}" -q update >/dev/null 2>&1 && touch "$dir/lists/.updated"; }
	apt-get "${opts[@]}" "$@"
}

# older_than_oldest KVER: whether KVER is older than OLDEST
older_than_oldest() {
	[[ $(printf '%s\n%s\n' "${1%%-*}" "$OLDEST" | sort -V | head -n 1) != "$OLDEST" ]]
}

# fetched PKG: the path of PKG's .deb in $CACHE, fetched on first use
# (from EXTRA_SUITES or UBUNTU_SUITES when the host's sources lack it)
fetched() {
	local p=$1 deb
	deb=$(ls "$CACHE/${p}"_*.deb 2>/dev/null | tail -n 1 || true)
	if [[ -z $deb ]]; then
		(cd "$CACHE" && { apt-get download -q "$p" >/dev/null 2>&1 ||
			apt_extra download -q "$p" >/dev/null 2>&1; }) ||
			{ echo "apt-get download $p failed" >&2; return 1; }
		deb=$(ls "$CACHE/${p}"_*.deb | tail -n 1)
	fi
	echo "$deb"
}

# unpacked PKG: the directory where PKG's .deb is unpacked (fetched and
# unpacked on first use, reused after that). Ubuntu splits a kernel: its
# modules, config and the rest of its modules (null_blk among them) come
# from linux-modules-VER and linux-modules-extra-VER, unpacked beside it.
unpacked() {
	local p=$1 dir=$CACHE/$1 deb part
	if [[ ! -e $dir/.unpacked ]]; then
		rm -rf "$dir"
		deb=$(fetched "$p") || return 1
		dpkg -x "$deb" "$dir"
		if [[ $p == linux-image-*-generic ]]; then
			for part in modules modules-extra; do
				deb=$(fetched "linux-$part-${p#linux-image-}") || return 1
				dpkg -x "$deb" "$dir"
			done
		fi
		touch "$dir/.unpacked"
	fi
	echo "$dir"
}

# add_module ROOT MODDIR NAME: copies module NAME (decompressed) into
# ROOT/modules after the modules it depends on; their order of loading
# goes to $mods
add_module() {
	local root=$1 moddir=$2 name=$3 f dep
	[[ " $mods " == *" $name "* ]] && return 0
	f=$(find "$moddir/kernel" -name "$name.ko" -o -name "$name.ko.xz" \
		-o -name "$name.ko.zst" | head -n 1)
	if [[ -z $f ]]; then
		# built into this kernel (Ubuntu builds in some Debian loads)
		grep -q "/$name.ko\$" "$moddir/modules.builtin" 2>/dev/null && return 0
		echo "module $name not in $moddir" >&2
		return 1
	fi
	case $f in
	*.xz) xz -dc "$f" >"$root/modules/$name.ko" ;;
	*.zst) zstd -qdc "$f" >"$root/modules/$name.ko" ;;
	*) cp "$f" "$root/modules/$name.ko" ;;
	esac
	# modules.dep is made by depmod at install: read the module's own list
	for dep in $(tr '\0' '\n' <"$root/modules/$name.ko" |
		sed -n 's/^depends=//p' | tr ',' ' '); do
		add_module "$root" "$moddir" "$dep"
	done
	# the cases load these themselves, with their parameters
	[[ " null_blk nvme virtio_blk scsi_debug ahci " == *" $name "* ]] || mods+=" $name"
}

# copy_with_libs ROOT BINARY: BINARY into ROOT/bin, its libraries (as ldd
# resolves them here) into ROOT/lib, the loader where the binary expects it
copy_with_libs() {
	local root=$1 bin=$2 lib
	cp "$bin" "$root/bin/"
	for lib in $(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
		cp -L "$lib" "$root/lib/"
	done
	mkdir -p "$root/lib64"
	cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
}

# has_module KDIR KVER NAME: whether NAME is a module of that kernel (not
# built in)
has_module() {
	[[ -n $(find "$1/lib/modules/$2/kernel" -name "$3.ko*" | head -n 1) ]]
}

# driver_modules CASES: the modules the real-driver cases among CASES load
driver_modules() {
	local c
	for c in $1; do
		case $c in
		nvme) echo nvme ;;
		virtio) echo virtio_pci virtio_blk ;;
		scsi) echo sd_mod scsi_debug ;;
		ahci) echo sd_mod ahci ;;
		esac
	done
}

# initramfs DIR KVER OUT CASES: the guest's whole root file system
initramfs() {
	local kdir=$1 kver=$2 out=$3 cases=$4 root=$tmp/root a
	rm -rf "$root"
	mkdir -p "$root"/{bin,lib,modules,proc,sys,dev,tmp}
	cp /bin/busybox "$root/bin/"
	for a in $(/bin/busybox --list); do
		[[ -e $root/bin/$a ]] || ln -s busybox "$root/bin/$a"
	done
	cp "$tmp/truestat-static" "$root/truestat"
	copy_with_libs "$root" "$(command -v fio)"
	copy_with_libs "$root" "$(command -v mdadm)"
	copy_with_libs "$root" "$(command -v dmsetup)"
	copy_with_libs "$root" "$(command -v chrt)"	# raid0's sampler
	copy_with_libs "$root" "$(command -v bpftool)"	# dm: the programs' names
	mods=
	for a in null_blk md-mod raid0 dm-mod dm-delay dm-crypt; do
		add_module "$root" "$kdir/lib/modules/$kver" "$a"
	done
	# dm-crypt's cipher_null: built in on 6.1 (CRYPTO_NULL2=y), a module
	# on 6.12
	if has_module "$kdir" "$kver" crypto_null; then
		add_module "$root" "$kdir/lib/modules/$kver" crypto_null
	fi
	# the drivers of the cases here; virtio_pci is built in on 6.12, a
	# module on 6.1
	for a in $(driver_modules "$cases"); do
		[[ $a != virtio_pci ]] || has_module "$kdir" "$kver" $a || continue
		add_module "$root" "$kdir/lib/modules/$kver" "$a"
	done
	cat >"$root/params" <<-EOF
		S_NS=$S_NS K=$K DEPTH=$DEPTH RUNTIME=$RUNTIME GUARD=$GUARD
		MODULES="$mods" CASES="$cases"
		NVME_QD=$NVME_QD SCSI_QD=$SCSI_QD TAGS64_K=$TAGS64_K TAGS64_S_NS=$TAGS64_S_NS
		RAID_S_NS=$RAID_S_NS RAID_CHUNK=$RAID_CHUNK RAID_BS=$RAID_BS
		RAID_JOBS="$RAID_JOBS" RAID_RUNTIME=$RAID_RUNTIME INTERVAL=$INTERVAL TICK=$TICK
		DM_DELAY_MS=$DM_DELAY_MS DM_JOBS=$DM_JOBS DM_RUNTIME=$DM_RUNTIME
	EOF
	cp "${TS_VM_INIT:-$TS_ROOT/tests/vm/guest-init.sh}" "$root/init"
	chmod +x "$root/init"
	(cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) >"$out"
	rm -rf "$root"
}

# boot KERNEL INITRD CONSOLE CASES: runs the guest to its end or to LIMIT
# seconds, with the emulated disks its CASES use; two vCPUs for SMP_CASES,
# eight for WIDE_CASES
boot() {
	local cpus=(-smp 1 -icount shift=0,sleep=off) dev=()
	if [[ " $SMP_CASES " == *" ${4%% *} "* ]]; then
		cpus=(-smp 2)
	elif [[ " $WIDE_CASES " == *" ${4%% *} "* ]]; then
		cpus=(-smp 8)
	fi
	if [[ " $4 " == *" nvme "* ]]; then
		img nvme
		img nvme2
		dev+=(-device nvme,id=nvme0,serial=truestat0
			-drive "if=none,id=nvme,format=raw,file=$tmp/nvme.img"
			-device nvme-ns,drive=nvme,bus=nvme0,nsid=1
			-drive "if=none,id=nvme2,format=raw,file=$tmp/nvme2.img"
			-device nvme-ns,drive=nvme2,bus=nvme0,nsid=2)
	fi
	if [[ " $4 " == *" virtio "* ]]; then
		img virtio
		dev+=(-drive "if=none,id=virtio,format=raw,file=$tmp/virtio.img"
			-device "virtio-blk-pci,drive=virtio,num-queues=2,queue-size=$VIRTIO_QSIZE")
	fi
	if [[ " $4 " == *" ahci "* ]]; then
		img ahci
		dev+=(-drive "if=none,id=ahci,format=raw,file=$tmp/ahci.img"
			-device ahci,id=ahci -device ide-hd,drive=ahci,bus=ahci.0)
	fi
	# -icount: the guest's clock advances 1 ns per emulated instruction
	# (and jumps over idle time), so the guest runs like a 1 GIPS machine
	# whatever the load on the host. Without it, TCG's slowness made the
	# driver's own few microseconds from issue to the timer and from the
	# timer to the completion 60-330 us, and service came out 6-33% above
	# S depending on the host's load; with it, 0.1-0.5%.
	: >"$tmp/ticks"
	timeout -k 5 "$LIMIT" qemu-system-x86_64 -accel tcg -cpu max "${cpus[@]}" "${dev[@]}" \
		-m 1024 -nographic -no-reboot -nodefaults -serial stdio -serial "file:$tmp/ticks" \
		-kernel "$1" -initrd "$2" \
		-append 'console=ttyS0 panic=-1 quiet' </dev/null >"$3" 2>&1 &
	QPID=$!
	watch_ticks "$QPID" "$tmp/ticks"
	BOOT_RC=0
	wait "$QPID" || BOOT_RC=$?
	QPID=
	# what the guest's clock cost in the host's time, for the limits above
	local up
	up=$(tail -n 1 "$tmp/ticks" 2>/dev/null)
	echo "  # guest clock ${up:-?} s in $BOOT_HOST_S s of the host's, $BOOT_CPU_S s of qemu's CPU;" \
		"its first tick after $BOOT_FIRST_S s of CPU, the most between two after that $BOOT_GAP_S s"
	if ((BOOT_STALLED)); then
		BOOT_RC=125
		BOOT_WHY="ended by the host: no tick of the guest's clock while qemu used $STALL s of CPU"
	elif ((BOOT_RC == 124)); then
		BOOT_WHY="killed at the host's last guard, $LIMIT s (CI's budget)"
	else
		BOOT_WHY="powered off by itself"
	fi
}

# cpu_s PID: the CPU seconds (user + system, every thread) of PID's
# child, qemu under timeout; 0 before it runs
cpu_s() {
	local q
	q=$(pgrep -P "$1" | head -n 1)
	[[ -n $q ]] && awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) / hz) }' \
		"/proc/$q/stat" 2>/dev/null || echo 0
}

# watch_ticks PID TICKS: until qemu (PID: its timeout) ends; ends it when
# TICKS has not grown while qemu used STALL s of CPU (BOOT_STALLED=1).
# BOOT_HOST_S: the host's seconds it ran, BOOT_CPU_S qemu's CPU seconds;
# BOOT_FIRST_S: the CPU seconds until the first tick (the boot),
# BOOT_GAP_S: the most it used between two ticks after that.
watch_ticks() {
	local size last=0 cpu=0 start=$SECONDS seen=0
	BOOT_STALLED=0 BOOT_GAP_S=0 BOOT_FIRST_S= BOOT_CPU_S=0
	while kill -0 "$1" 2>/dev/null; do
		sleep 1
		size=$(stat -c %s "$2" 2>/dev/null || echo 0)
		cpu=$(cpu_s "$1")
		((cpu > BOOT_CPU_S)) && BOOT_CPU_S=$cpu
		if ((size != last)); then
			last=$size seen=$BOOT_CPU_S
			BOOT_FIRST_S=${BOOT_FIRST_S:-$seen}
		elif ((BOOT_CPU_S - seen > STALL)); then
			BOOT_STALLED=1
			kill "$1" 2>/dev/null
			break
		fi
		[[ -z $BOOT_FIRST_S ]] || ((BOOT_CPU_S - seen <= BOOT_GAP_S)) ||
			BOOT_GAP_S=$((BOOT_CPU_S - seen))
	done
	BOOT_HOST_S=$((SECONDS - start))
	BOOT_FIRST_S=${BOOT_FIRST_S:-none}
}
# img NAME: a sparse raw disk image of IMG_MB in the temporary directory
img() {
	rm -f "$tmp/$1.img"
	truncate -s "${IMG_MB}M" "$tmp/$1.img"
}

# TERM to timeout ends qemu; after a SIGKILL of this script, timeout still
# ends it at LIMIT
QPID=
on_exit '[[ -z $QPID ]] || { kill $QPID; wait $QPID; }'

# boot_check CASES: the name of the boot's check for a guest of CASES
boot_check() {
	if [[ " $SMP_CASES " == *" ${1%% *} "* ]]; then echo boot_smp
	elif [[ " $WIDE_CASES " == *" ${1%% *} "* ]]; then echo boot_8cpu
	else echo boot; fi
}

# results CONSOLE KVER KDIR CASES: the checks of one guest (the stacked
# cases' in tests/vm/stacked.py, the drivers' in tests/vm/drivers.py)
results() {
	local console=$1 kver=$2 kdir=$3 cases=$4 hz
	tr -d '\r' <"$console" | sed -n 's/^.*@@TS //p' >"$tmp/ts"
	hz=$(sed -n 's/^CONFIG_HZ=//p' "$kdir/boot/config-$kver")
	local name rc msg
	while read -r name rc msg; do
		if [[ $name == "#" ]]; then echo "        $msg"; else check "$name" "$rc" "$msg"; fi
	done < <(python3 -B "$TS_ROOT/tests/vm/base.py" "$tmp/ts" "$kver" CASES="$cases" \
			S_NS="$S_NS" K="$K" DEPTH="$DEPTH" BOOT="$(boot_check "$cases")" ||
			echo "$kver/base 1 tests/vm/base.py ended with status $? (its error above)"
		python3 "$TS_ROOT/tests/vm/stacked.py" "$tmp/ts" "$kver" CASES="$cases" \
			S_NS="$S_NS" K="$K" RAID_S_NS="$RAID_S_NS" RAID_JOBS="$RAID_JOBS" \
			DM_DELAY_MS="$DM_DELAY_MS" DM_JOBS="$DM_JOBS" HZ="${hz:-0}" ||
			echo "$kver/stacked 1 tests/vm/stacked.py ended with status $? (its error above)"
		python3 -B "$TS_ROOT/tests/vm/drivers.py" "$tmp/ts" "$kver" CASES="$cases" \
			S_NS="$S_NS" K="$K" NVME_QD="$NVME_QD" SCSI_QD="$SCSI_QD" TAGS64_K="$TAGS64_K" ||
			echo "$kver/drivers 1 tests/vm/drivers.py ended with status $? (its error above)")
}

# cases_in CASES SET [-v]: those of CASES in SET (words or a comma list;
# -v: those not in it), in order
cases_in() {
	local c out= set=" ${2//,/ } "
	for c in $1; do
		if [[ $set == *" $c "* ]]; then [[ ${3:-} == -v ]] || out+=" $c"
		else [[ ${3:-} != -v ]] || out+=" $c"; fi
	done
	echo "${out# }"
}

# guest KIMG KDIR KVER CASES: one guest that runs CASES, and its checks
guest() {
	local kimg=$1 kdir=$2 kver=$3 cases=$4 before
	limits "$cases"
	echo "-- $kver: $cases"
	initramfs "$kdir" "$kver" "$tmp/initrd" "$cases"
	boot "$kimg" "$tmp/initrd" "$tmp/console" "$cases"
	# a guest that never reached its init ran nothing of ours (the 6.12
	# guests under TCG oops at times while booting): said, booted once more
	if ! grep -q '@@TS guest kernel' "$tmp/console"; then
		echo "  # $kver ($cases): the guest never reached its init (qemu status $BOOT_RC); booted once more; its console ended with:"
		tr -d '\r' <"$tmp/console" | grep -v '^\s*$' | tail -n 8 | sed 's/^/  #   /'
		boot "$kimg" "$tmp/initrd" "$tmp/console" "$cases"
	fi
	check "$kver/qemu ($cases)" "$BOOT_RC" "the guest $BOOT_WHY (qemu status $BOOT_RC; guard: its clock at $GUARD s; the host's: $STALL s of qemu's CPU without a tick)"
	# a guest stopped at the limit says where it was: its kernel's last
	# words and the last line of ours (the run it was in)
	if ((BOOT_RC)); then
		echo "  # $kver ($cases): its console ended with:"
		tr -d '\r' <"$tmp/console" | grep -v '^\s*$' | tail -n 12 | sed 's/^/  #   /'
	fi
	[[ -z ${TS_VM_KEEP:-} ]] || cp "$tmp/console" "$TS_VM_KEEP/console-$kver-${cases// /-}"
	before=$_CHECKS
	results "$tmp/console" "$kver" "$kdir" "$cases"
	if ((_CHECKS == before)); then
		check "$kver" 1 "no results from the guest; its console ends with:"
		tr -d '\r' <"$tmp/console" | tail -n 15
	fi
	rm -f "$tmp"/*.img
}

# refused KIMG KDIR KVER CASES: a kernel older than OLDEST: truestat must
# refuse it with one line naming the kernel, what it lacks and OLDEST, and
# exit 2; each of CASES is named as not run there
refused() {
	local kimg=$1 kdir=$2 kver=$3 cases=$4 c
	limits refuse
	echo "-- $kver: refuse (older than $OLDEST)"
	initramfs "$kdir" "$kver" "$tmp/initrd" refuse
	boot "$kimg" "$tmp/initrd" "$tmp/console" refuse
	check "$kver/qemu (refuse)" "$BOOT_RC" "the guest $BOOT_WHY (qemu status $BOOT_RC)"
	[[ -z ${TS_VM_KEEP:-} ]] || cp "$tmp/console" "$TS_VM_KEEP/console-$kver-refuse"
	tr -d '\r' <"$tmp/console" | sed -n 's/^.*@@TS //p' >"$tmp/ts"
	local line rc btf
	line=$(sed -n 's/^refuse stderr //p' "$tmp/ts" | head -n 1)
	rc=$(sed -n 's/^refuse start_rc //p' "$tmp/ts" | head -n 1)
	btf=$(sed -n 's/^guest btf //p' "$tmp/ts" | head -n 1)
	check "$kver/refused" "$([[ $btf == yes && $rc == 2 && $(sed -n 's/^refuse stderr //p' "$tmp/ts" | wc -l) == 1 &&
		$line == "truestat: Linux $kver cannot run truestat: "*"; truestat needs Linux $OLDEST or later with BTF" ]]; echo $?)" \
		"kernel BTF: $btf; exit status ${rc:-?} (want 2), one line: ${line:-none}"
	for c in $cases; do
		echo "        not run on $kver: $c (truestat refuses this kernel, above)"
	done
}

start_all=$SECONDS
for spec in "${pkgs[@]}"; do
	start=$SECONDS
	p=${spec%%:*} cases=$CASES
	[[ $spec != *:* ]] || cases=$(cases_in "$CASES" "${spec#*:}")
	# load is base's first and third runs: with base, it would run them twice
	[[ " $cases " != *" base "* ]] || cases=$(cases_in "$cases" load -v)
	if [[ -z $cases ]]; then
		check "$p" 1 "none of its cases (${spec#*:}) is in TS_VM_CASES ($CASES): nothing would run"
		continue
	fi
	pkg=$(image_pkg "$p")
	kimg=
	kdir=$(unpacked "$pkg") && kimg=$(ls "$kdir"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	if [[ -z $kimg ]]; then
		check "$p" 1 "no kernel image from package $pkg"
		continue
	fi
	kver=${kimg##*/vmlinuz-}
	echo "== $kver ($pkg)"
	if older_than_oldest "$kver"; then
		refused "$kimg" "$kdir" "$kver" "$cases"
		echo "== $kver: $((SECONDS - start)) s"
		continue
	fi
	for group in "$(cases_in "$cases" "$SMP_CASES $WIDE_CASES" -v)" "$(cases_in "$cases" "$SMP_CASES")" \
		"$(cases_in "$cases" "$WIDE_CASES")"; do
		[[ -n $group ]] || continue
		guest "$kimg" "$kdir" "$kver" "$group"
	done
	echo "== $kver: $((SECONDS - start)) s"
done
echo "== all kernels: $((SECONDS - start_all)) s"
echo "$((_CHECKS - _FAILED)) passed, $_FAILED failed"
((_FAILED == 0))
