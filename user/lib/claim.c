// SPDX-License-Identifier: GPL-2.0
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
