/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -c/--cgroup and --pid: only one submitter's I/O is counted. Whether a
 * bio is the submitter's is decided once, at its Q, and carried with the
 * submitter to its request (as --by carries it); a request that is not
 * the submitter's is counted in TS_EV_FILTER_OTHER only. Beside it, the
 * submitter's bios are counted as the kernel's io.stat counts them: each
 * submission (a split's remainder is submitted again), bytes once. Off:
 * the verifier removes all of it.
 */
#ifndef TS_FILTER_BPF_H
#define TS_FILTER_BPF_H

#include "core.bpf.h"

const volatile bool filter_cgroup = false;
const volatile bool filter_pid = false;
/* the io controller is on cgroup v2: the cgroup charged, the bio's blkg;
 * else the submitting task's cgroup v2 */
const volatile bool filter_blkg = false;
const volatile __u64 filter_cgroup_id = 0; /* the directory's inode */
const volatile __u32 filter_level = 0;	  /* its depth under the mount */
/* the loader in a cgroup namespace: that depth may not be the kernel's */
const volatile bool filter_any_level = false;
const volatile __u32 filter_tgid = 0;
/* /proc's pid namespace, whose pids --pid takes; 0: the init one */
const volatile __u64 filter_pidns_dev = 0;
const volatile __u64 filter_pidns_ino = 0;

#define filtering (filter_cgroup || filter_pid)

/* struct ts_submitter.flags */
#define TS_WHO_MATCH 1

/* Before 6.1 a cgroup held its ancestors' ids, not the ancestors. */
struct cgroup___old {
	u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

/* The id of @cg's ancestor at level @level (@cg's own at its level). */
static __always_inline u64 cgroup_id_at(struct cgroup *cg, u32 level)
{
	struct cgroup *up = NULL;
	u64 id = 0;
	void *at;

	if (bpf_core_field_exists(((struct cgroup___old *)cg)->ancestor_ids)) {
		at = (void *)cg +
		     bpf_core_field_offset(struct cgroup___old, ancestor_ids);
		bpf_probe_read_kernel(&id, sizeof(id), at + level * 8ULL);
		return id;
	}
	at = (void *)cg + bpf_core_field_offset(struct cgroup, ancestors);
	bpf_probe_read_kernel(&up, sizeof(up), at + level * 8ULL);
	return up ? BPF_CORE_READ(up, kn, id) : 0;
}

/* The cgroup @bio is charged to, or the current task's (see filter_blkg). */
static __always_inline struct cgroup *filter_cgroup_of(struct bio *bio)
{
	struct task_struct *task;

	if (filter_blkg && bpf_core_field_exists(bio->bi_blkg))
		return BPF_CORE_READ(bio, bi_blkg, blkcg, css.cgroup);
	task = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(task, cgroups, dfl_cgrp);
}

/* Cgroup levels compared at most when the level is not known. */
#define TS_CGROUP_LEVELS 32

/*
 * cgroup_id_at behind a call: inlined in a loop, the compiler hoisted the
 * layout's offset out of its bpf_core_field_exists test, and the verifier
 * refused the relocation of the field this kernel lacks.
 */
static __noinline u64 cgroup_id_at_call(struct cgroup *cg, u32 level)
{
	return cgroup_id_at(cg, level);
}

/* Whether @cg (at @level) is the filtered cgroup or below it, any level. */
static __always_inline bool cgroup_under(struct cgroup *cg, int level)
{
	int i;

	for (i = 0; i < TS_CGROUP_LEVELS && i <= level; i++)
		if (cgroup_id_at_call(cg, level - i) == filter_cgroup_id)
			return true;
	return false;
}

/* The current task's process id as /proc shows it (filter_pidns_ino). */
static __always_inline u32 filter_tgid_now(void)
{
	struct bpf_pidns_info ns = {};

	if (!filter_pidns_ino)
		return bpf_get_current_pid_tgid() >> 32;
	if (bpf_get_ns_current_pid_tgid(filter_pidns_dev, filter_pidns_ino,
					&ns, sizeof(ns)))
		return 0; /* not a task of that namespace */
	return ns.tgid;
}

/* At Q (or a split): is @bio the filtered submitter's? */
static __always_inline bool filter_match(struct bio *bio)
{
	struct cgroup *cg;
	int level;

	if (filter_pid)
		return filter_tgid_now() == filter_tgid;
	cg = filter_cgroup_of(bio);
	if (!cg)
		return false;
	level = BPF_CORE_READ(cg, level);
	if (filter_any_level)
		return cgroup_under(cg, level);
	if (level < (int)filter_level)
		return false;
	return cgroup_id_at(cg, filter_level) == filter_cgroup_id;
}

/*
 * A submission of the submitter's @bio, as io.stat counts it: discard, a
 * write (an odd op) or a read; its bytes at its first (@first: Q).
 */
static __always_inline void filter_count_bio(u32 qid, struct bio *bio,
					     bool first)
{
	u32 opf = BPF_CORE_READ(bio, bi_opf), bytes;
	u32 op = opf & REQ_OP_MASK_;
	u32 rwd = op == REQ_OP_DISCARD ? 2 : op & 1;

	count_events(qid, TS_EV_FILTER_READ_IOS + rwd, 1);
	if (!first)
		return;
	bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	if (bytes) /* adds of 0 refused on the 5.10 object */
		count_events(qid, TS_EV_FILTER_READ_BYTES + rwd, bytes);
}

#endif
