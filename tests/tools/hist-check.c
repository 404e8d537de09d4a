// SPDX-License-Identifier: GPL-2.0
/*
 * hist-check: the bucket functions of include/hist.h as the BPF compiler
 * built them (program ts_hist_check, run with BPF_PROG_TEST_RUN) against the
 * same functions built for userspace, on every bucket boundary, one below
 * and one above it, and on every power of two of bytes. Then, with the
 * object for old kernels, a claim that finds the histogram slots' lock
 * held must get its histograms at the next sweep (ts_hist_claim_check,
 * hists_retry in bpf/hists.bpf.h). Needs root. Prints
 * "NAME RC MESSAGE" lines (RC 0: pass) for tests/integration/15-hist-bpf.sh,
 * the first differences on stderr.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "truestat.h"
#include "checks.skel.h"
#include "checks-locked.skel.h"

static int fill(__u64 *in)
{
	int n = 0, b, k;

	for (b = 0; b < TS_HIST_SLOTS; b++) {
		__u64 lo = ts_hist_lower(b);

		if (lo)
			in[n++] = lo - 1;
		in[n++] = lo;
		in[n++] = lo + 1;
	}
	for (k = 0; k < 64; k++) {
		in[n++] = 1ULL << k;
		in[n++] = (1ULL << k) + 1;
	}
	in[n++] = ~0ULL;
	return n;
}

/* The object for old kernels: a claim's histograms when its lock was held. */
static int claim_retry(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct checks_locked_bpf *skel = checks_locked_bpf__open();
	struct bpf_program *prog;
	int err, rc;

	if (!skel) {
		printf("hist_claim_open 1 cannot open the BPF object\n");
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog,
					  prog == skel->progs.ts_hist_claim_check);
	err = checks_locked_bpf__load(skel);
	if (!err)
		err = bpf_prog_test_run_opts(
			bpf_program__fd(skel->progs.ts_hist_claim_check), &run);
	if (err) {
		printf("hist_claim_run 1 %s\n", strerror(-err));
		checks_locked_bpf__destroy(skel);
		return 1;
	}
	rc = skel->bss->hist_claim_first || !skel->bss->hist_claim_after;
	printf("hist_claim_retry %d with the lock held the claim got slot %u "
	       "(0: none), at the sweep after slot %u\n", rc,
	       skel->bss->hist_claim_first, skel->bss->hist_claim_after);
	checks_locked_bpf__destroy(skel);
	return rc;
}

int main(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct bpf_program *prog;
	struct checks_bpf *skel;
	int n, i, bad_bucket = 0, bad_size = 0, err;

	if (geteuid()) {
		printf("hist_bpf_root 1 needs root (loads a BPF program)\n");
		return 1;
	}
	skel = checks_bpf__open();
	if (!skel) {
		printf("hist_bpf_open 1 cannot open the BPF object\n");
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.ts_hist_check);
	err = checks_bpf__load(skel);
	if (err) {
		printf("hist_bpf_load 1 %s\n", strerror(-err));
		return 1;
	}
	n = fill(skel->bss->hist_check_in);
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.ts_hist_check), &run);
	if (err) {
		printf("hist_bpf_run 1 %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < n; i++) {
		__u64 v = skel->bss->hist_check_in[i];

		if (skel->bss->hist_check_bucket[i] != ts_hist_bucket(v) &&
		    bad_bucket++ < 5)
			fprintf(stderr, "bucket(%llu): BPF %u, userspace %u\n",
			       (unsigned long long)v,
			       skel->bss->hist_check_bucket[i], ts_hist_bucket(v));
		if (skel->bss->hist_check_size[i] != ts_size_bucket(v) &&
		    bad_size++ < 5)
			fprintf(stderr, "size bucket(%llu): BPF %u, userspace %u\n",
			       (unsigned long long)v,
			       skel->bss->hist_check_size[i], ts_size_bucket(v));
	}
	printf("hist_bpf_buckets %d %d values at every bucket edge, %d differ\n",
	       !!bad_bucket, n, bad_bucket);
	printf("hist_bpf_sizes %d %d values, %d differ\n", !!bad_size, n,
	       bad_size);
	checks_bpf__destroy(skel);
	return claim_retry() || bad_bucket || bad_size;
}
