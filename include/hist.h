/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Log-linear latency buckets, compiled into the BPF programs and into
 * userspace alike (tests/unit/test_hist.c checks both against exact values).
 *
 * Below 32 ns each nanosecond has its own bucket. Above, each power of two
 * [2^e, 2^(e+1)) is split into 16 equal buckets, so a bucket is at most
 * 1/16 of its lower bound wide: a percentile read from the histogram is
 * within 6.25% of the true value. The last octave starts at 2^37 ns (137 s);
 * everything from 2^38 ns (4.6 minutes) on shares the last bucket.
 */
#ifndef TS_HIST_H
#define TS_HIST_H

#define TS_HIST_SUB_BITS 4
#define TS_HIST_SUB (1U << TS_HIST_SUB_BITS)
#define TS_HIST_MAX_EXP 37
/* (37 - 3) * 16 + 16 buckets up to 2^38 ns, and one for the rest */
#define TS_HIST_SLOTS ((int)((TS_HIST_MAX_EXP - 2) * TS_HIST_SUB + 1))

/* Values tests/tools/hist-check.c runs through the BPF build. */
#define TS_HIST_CHECK_N 4096

/* Request sizes: bucket k holds [2^k, 2^(k+1)) bytes, bucket 0 also 0. */
#define TS_SIZE_SLOTS 32

/* floor(log2(@v)) for @v > 0, without a loop (none in BPF hot paths). */
static __always_inline unsigned int ts_log2(__u64 v)
{
	unsigned int e = 0;

	if (v >> 32) {
		v >>= 32;
		e += 32;
	}
	if (v >> 16) {
		v >>= 16;
		e += 16;
	}
	if (v >> 8) {
		v >>= 8;
		e += 8;
	}
	if (v >> 4) {
		v >>= 4;
		e += 4;
	}
	if (v >> 2) {
		v >>= 2;
		e += 2;
	}
	if (v >> 1)
		e += 1;
	return e;
}

/* Bucket of a latency of @ns nanoseconds: 0 .. TS_HIST_SLOTS - 1. */
static __always_inline unsigned int ts_hist_bucket(__u64 ns)
{
	unsigned int e;

	if (ns < 2 * TS_HIST_SUB)
		return ns;
	e = ts_log2(ns);
	if (e > TS_HIST_MAX_EXP)
		return TS_HIST_SLOTS - 1;
	return (e - TS_HIST_SUB_BITS + 1) * TS_HIST_SUB +
	       (unsigned int)(ns >> (e - TS_HIST_SUB_BITS)) - TS_HIST_SUB;
}

/* Smallest latency in bucket @b (inverse of ts_hist_bucket). */
static inline __u64 ts_hist_lower(unsigned int b)
{
	unsigned int e, sub;

	if (b < 2 * TS_HIST_SUB)
		return b;
	if (b >= TS_HIST_SLOTS - 1)
		return 1ULL << (TS_HIST_MAX_EXP + 1);
	e = b / TS_HIST_SUB + TS_HIST_SUB_BITS - 1;
	sub = b % TS_HIST_SUB;
	return (__u64)(TS_HIST_SUB + sub) << (e - TS_HIST_SUB_BITS);
}

/* Bucket of a request of @bytes. */
static __always_inline unsigned int ts_size_bucket(__u64 bytes)
{
	unsigned int e = bytes ? ts_log2(bytes) : 0;

	return e < TS_SIZE_SLOTS ? e : TS_SIZE_SLOTS - 1;
}

#endif /* TS_HIST_H */
