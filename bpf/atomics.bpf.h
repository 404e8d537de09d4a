/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Addresses as numbers, and the atomic operations whose result a program
 * uses: compare-and-exchange, exchange, fetch-and-add. These are BPF
 * instructions since Linux 5.12; 5.10 and 5.11 have only an add whose
 * result is not returned, and refuse a spin lock in a tracing program.
 *
 * truestat is built twice from this source. The object for 5.12 and later
 * uses the instructions. The object for older kernels (TS_LOCKED_ATOMICS)
 * does each operation under a lock: an entry of word_locks keyed by the
 * word's address, taken by an insert that fails while the entry exists (a
 * hash map's update is atomic under its bucket lock on every kernel), its
 * value the holder's CPU. A lock held by the program this one interrupted
 * on its CPU cannot be waited for, nor one held longer than TS_LOCK_TRIES
 * inserts (a vCPU the host does not run): the operation then fails as a
 * lost race would, and each caller counts what that costs.
 */
#ifndef TS_ATOMICS_BPF_H
#define TS_ATOMICS_BPF_H

#include "core.bpf.h"

/*
 * Low 32 bits of a kernel address as a plain number: a 32-bit move is the
 * one way the verifier lets a (privileged) program turn a typed pointer
 * into a scalar it can hash.
 */
static __always_inline u32 addr_lo(u64 addr)
{
	u32 lo;

	asm volatile("%[lo] = %[addr]" : [lo] "=w"(lo) : [addr] "w"((u32)addr));
	return lo;
}

/*
 * @ptr as a plain number that a helper may read as a map key or value: a
 * pointer copied to the stack and handed to a map helper is not one for
 * the verifier of 6.1 and 6.12 (it loses the pointer's type there, and the
 * program is rejected). A copy through bpf_probe_read_kernel is a number.
 */
static __always_inline u64 ptr_value(const void *ptr)
{
	u64 tmp = (u64)ptr, v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &tmp);
	return v;
}

/* Locks of the object for old kernels: word address -> holder's CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TS_WORD_LOCKS);
	__type(key, u64);
	__type(value, u32);
} word_locks SEC(".maps");

/* One load or store of *@p, as written: READ_ONCE, WRITE_ONCE. */
#define TS_ONCE(p) (*(volatile __typeof__(*(p)) *)(p))

#ifdef TS_LOCKED_ATOMICS

#define TS_LOCK_TRIES 16

/*
 * A global function: the verifier checks it once, not at each of the
 * hundreds of places it is called from (a loop inlined in each took the
 * sweep past the verifier's million instructions).
 */
__noinline int word_lock(u64 key)
{
	u32 cpu = bpf_get_smp_processor_id(), *holder;
	int i;

	for (i = 0; i < TS_LOCK_TRIES; i++) {
		if (!bpf_map_update_elem(&word_locks, &key, &cpu, BPF_NOEXIST))
			return 1;
		holder = bpf_map_lookup_elem(&word_locks, &key);
		if (holder && *holder == cpu)
			return 0; /* the program this one interrupted */
	}
	return 0;
}

static __always_inline void word_unlock(u64 key)
{
	bpf_map_delete_elem(&word_locks, &key);
}

/*
 * The value found (the swap made when it is @o), or one that is not @o:
 * lock not taken (no arithmetic on @o, which may be a pointer's value).
 */
#define ts_cmpxchg(p, o, n)                                                  \
	({                                                                   \
		__typeof__(*(p)) o_ = (o), n_ = (n), v_ = o_ ? 0 : 1;        \
		u64 k_ = ptr_value(p);                                       \
		if (word_lock(k_)) {                                         \
			v_ = TS_ONCE(p);                                     \
			if (v_ == o_)                                        \
				TS_ONCE(p) = n_;                             \
			word_unlock(k_);                                     \
		}                                                            \
		v_;                                                          \
	})

/* The value before adding @v, or ~0: lock not taken, nothing added. */
#define ts_fetch_add(p, v)                                                   \
	({                                                                   \
		__typeof__(*(p)) v_ = ~(__typeof__(*(p)))0;                  \
		u64 k_ = ptr_value(p);                                       \
		if (word_lock(k_)) {                                         \
			v_ = TS_ONCE(p);                                     \
			TS_ONCE(p) = v_ + (v);                               \
			word_unlock(k_);                                     \
		}                                                            \
		v_;                                                          \
	})

/*
 * The value before setting @v. A lock not taken: set anyway, and *@lost
 * set (another CPU's exchange or add meanwhile may be lost).
 */
#define ts_xchg(p, v, lost)                                                  \
	({                                                                   \
		__typeof__(*(p)) o_;                                         \
		u64 k_ = ptr_value(p);                                       \
		bool ok_ = word_lock(k_);                                    \
		o_ = TS_ONCE(p);                                             \
		TS_ONCE(p) = (v);                                            \
		if (ok_)                                                     \
			word_unlock(k_);                                     \
		*(lost) = !ok_;                                              \
		o_;                                                          \
	})

/* Sets *@p to @v, which only its holder changes (a held record, a claim). */
#define ts_release(p, held, v) (TS_ONCE(p) = (v))

#endif

/*
 * Stores @v in *@p after every store before it is visible (a record's
 * fields, then the word saying it is filled). x86 keeps stores in order
 * (its JIT emits plain moves): a compiler barrier is enough. Elsewhere an
 * exchange, a full barrier in BPF, which the object for old kernels does
 * not have: there the order is the compiler's only.
 */
#if defined(__TARGET_ARCH_x86) || defined(TS_LOCKED_ATOMICS)
#define ts_store_release(p, v)                                               \
	do {                                                                 \
		asm volatile("" ::: "memory");                               \
		*(volatile __typeof__(*(p)) *)(p) = (v);                     \
	} while (0)
#else
#define ts_store_release(p, v) ((void)__sync_lock_test_and_set(p, v))
#endif

#ifndef TS_LOCKED_ATOMICS /* the instructions, Linux 5.12 and later */

#define ts_cmpxchg(p, o, n) __sync_val_compare_and_swap(p, o, n)
#define ts_fetch_add(p, v) __sync_fetch_and_add(p, v)
#define ts_xchg(p, v, lost) (*(lost) = false, __sync_lock_test_and_set(p, v))
#define ts_release(p, held, v) __sync_val_compare_and_swap(p, held, v)

#endif

#endif
