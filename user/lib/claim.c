// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include <time.h>

#include "claim.h"

#define POLL_US 10

bool ts_claim_settled(const volatile struct ts_dev_state *st,
		      struct ts_claim *c, unsigned int wait_us)
{
	const struct timespec poll = { .tv_nsec = POLL_US * 1000 };
	unsigned int waited = 0;

	for (;;) {
		c->queue = st->queue;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		c->claimed_ns = st->claimed_ns;
		/* what the slot holds is read after the claim it is of */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(c->queue & 1) && ts_claim_held(st, c))
			return true;
		if (waited >= wait_us)
			return false;
		nanosleep(&poll, NULL);
		waited += POLL_US;
	}
}

bool ts_claim_held(const volatile struct ts_dev_state *st,
		   const struct ts_claim *c)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return st->queue == c->queue && st->claimed_ns == c->claimed_ns;
}

void ts_claim_shared(struct ts_claim_base *b, __u64 claimed_ns, __u64 claims,
		     __u64 prev_stamp, __u64 now_stamp)
{
	if (claimed_ns != b->claimed_ns)
		b->shared = claims - b->claims >= 2 ||
			    (b->claimed_ns &&
			     ts_stamp_since(b->read_stamp, prev_stamp) > 0);
	b->claims = claims;
	b->read_stamp = now_stamp;
}

_Static_assert(sizeof(struct ts_claim_counters) % sizeof(__u64) == 0,
	       "struct ts_claim_counters: __u64 counters only");

void ts_claim_counts(struct ts_claim_base *b, __u64 claimed_ns, bool traced,
		     struct ts_claim_counters *c)
{
	__u64 *now = (__u64 *)c, *last = (__u64 *)&b->last;
	const __u64 *start = (const __u64 *)&b->start;
	__u64 last_end = c->pattern.last_end;
	size_t i;

	/* a disk traced after another starts where the slot stood */
	if (claimed_ns != b->claimed_ns && traced && b->claimed_ns)
		b->start = b->last;
	b->claimed_ns = claimed_ns;
	for (i = 0; i < sizeof(*c) / sizeof(__u64); i++) {
		last[i] = now[i];
		now[i] -= start[i];
	}
	c->pattern.last_end = last_end;
}
