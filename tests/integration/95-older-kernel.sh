#!/usr/bin/env bash
# The truestat binary built here, on Debian's 6.1 kernel in qemu, against a
# null_blk device of known S and K (tests/vm/run.sh, where the checks are
# described). The whole matrix (6.1 and 6.12) is `make test-kernels`; one
# older kernel runs in every `make test` so that CI sees CO-RE at work.
set -euo pipefail
# a SANITIZE=1 build cannot be linked statically for the guest
if ldd "$(dirname "$0")/../../truestat" | grep -q libasan; then
	echo "SKIP: truestat is built with sanitizers (make SANITIZE=1)"
	exit 77
fi
exec "$(dirname "$0")/../vm/run.sh" ${TS_TEST_KERNELS:-linux-image-amd64}
