#!/usr/bin/env bash
# The truestat binary built here, on Debian's 6.1 kernel in qemu, against a
# null_blk device of known S and K, md raid0 over four of them (bio-based
# md0 and its members; tests/vm/run.sh and tests/vm/stacked.py, where the
# checks are described), and one real driver: a SATA disk on qemu's AHCI
# with NCQ, then queue_depth 1 (tests/vm/drivers.py). The whole matrix
# (6.1, 6.12 and 6.12-rt; device-mapper, NVMe, virtio-blk, null_blk with
# two queues, scsi_debug) is `make test-kernels`; two older kernels and
# one real driver run in every `make test` so that CI sees CO-RE at work.
# Debian bullseye's 5.10 runs the null_blk cases: its BPF has no atomics
# with a result (5.12), so truestat loads its programs whose atomic
# operations take locks there, and its kernel structures (a bio's bi_disk,
# a request's rq_disk) and verifier are the oldest: it has the limits that
# made 5.13's refuse truestat once (a 32-bit spill, a request's disk read as
# a number). Ubuntu 20.04's 5.13, the oldest verifier the default programs
# (with atomics) meet, runs the load case only (base's tp_btf and raw_tp
# runs, and both with --slow, --by and --pattern, whose code the verifier
# sees only when they are on): a change that its verifier refuses fails here,
# not first in make test-kernels, which boots 5.13 and 5.15 for every case.
# 5.10 is fetched through a private sources list (tests/vm/run.sh).
# timeout: 5400 s: CI's whole budget, a last guard; tests/vm/run.sh ends a
# guest that makes no progress first (no tick of its clock while qemu used
# 300 s of CPU). The three guests took 446 s alone and 540 s beside the
# host tests on one 2-core VM, 718-769 s on a slower one (the per-kernel
# times are printed)
# concurrent: yes: tests/run-integration.sh runs it beside the other tests,
# which it would otherwise add its whole time to. Its guests run under
# -icount, whose clock counts instructions: what they measure, and when
# each guest gives up (its clock's guard), are the same however busy or
# slow the host is; the host only ends a guest that stops making progress.
# qemu's disks are files in its own temporary directory:
# it touches no host block or loop device, tracefs or host BPF program,
# which the others use and the leftovers check looks at.
set -euo pipefail
# a SANITIZE=1 build cannot be linked statically for the guest
if ldd "$(dirname "$0")/../../truestat" | grep -q libasan; then
	echo "SKIP: truestat is built with sanitizers (make SANITIZE=1)"
	exit 77
fi
TS_VM_CASES=${TS_VM_CASES:-base raid0 ahci load} \
	exec "$(dirname "$0")/../vm/run.sh" ${TS_TEST_KERNELS:-linux-image-amd64:base,raid0,ahci \
	linux-image-5.10.0-32-amd64:base linux-image-5.13.0-52-generic:load}
