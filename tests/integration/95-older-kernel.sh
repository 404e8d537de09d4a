#!/usr/bin/env bash
# The truestat binary built here, on Debian's 6.1 kernel in qemu, against a
# null_blk device of known S and K, md raid0 over four of them (bio-based
# md0 and its members; tests/vm/run.sh and tests/vm/stacked.py, where the
# checks are described), and one real driver: a SATA disk on qemu's AHCI
# with NCQ, then queue_depth 1 (tests/vm/drivers.py). The whole matrix
# (6.1, 6.12 and 6.12-rt; device-mapper, NVMe, virtio-blk, null_blk with
# two queues, scsi_debug) is `make test-kernels`; one older kernel and
# one real driver run in every `make test` so that CI sees CO-RE at work.
# Ubuntu 22.04's 5.15 and Ubuntu 20.04's newer 5.13 run the null_blk cases:
# the range (5.12-5.16) whose kernel structures, helpers and verifier
# differ most from Debian's (5.13's verifier refused a loop that 5.15's
# takes, and its request has no queue->disk). Debian bullseye's 5.10 is booted too:
# truestat must refuse it with one line and exit status 2, its BPF lacking
# atomics with a result (5.12). Both are fetched through a private sources
# list (tests/vm/run.sh).
set -euo pipefail
# a SANITIZE=1 build cannot be linked statically for the guest
if ldd "$(dirname "$0")/../../truestat" | grep -q libasan; then
	echo "SKIP: truestat is built with sanitizers (make SANITIZE=1)"
	exit 77
fi
TS_VM_CASES=${TS_VM_CASES:-base raid0 ahci} \
	exec "$(dirname "$0")/../vm/run.sh" ${TS_TEST_KERNELS:-linux-image-amd64 linux-image-5.15.0-204-generic:base linux-image-5.13.0-52-generic:base linux-image-5.10.0-32-amd64}
