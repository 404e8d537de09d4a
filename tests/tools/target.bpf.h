/* SPDX-License-Identifier: GPL-2.0 */
/* The one disk a test tool's BPF programs count: on_target(rq). */
#ifndef TARGET_BPF_H
#define TARGET_BPF_H

/* The disk: major << 20 | first minor, as the block tracepoints print it. */
const volatile __u32 target_dev = 0;

/* Kernels before 5.16 kept the disk in the request. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline bool on_target(struct request *rq)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(rq->q->disk))
		disk = rq->q->disk;
	else
		disk = ((struct request___old *)rq)->rq_disk;
	if (!disk)
		return false;
	return ((__u32)disk->major << 20 | disk->first_minor) == target_dev;
}

#endif
