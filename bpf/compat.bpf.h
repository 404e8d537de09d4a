/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels truestat loads on (5.10 and later),
 * read through CO-RE and through constants the loader sets from the
 * running kernel's BTF: the verifier removes the branches that kernel
 * does not take, so a newer kernel pays nothing for an older one's.
 */
#ifndef TS_COMPAT_BPF_H
#define TS_COMPAT_BPF_H

#include "core.bpf.h"

#include "kfeatures.h"

/*
 * How far each hook's request or bio argument moved right of where it is
 * since 5.11 (block tracepoints that still took the request_queue first):
 * the loader counts the hook's arguments in the kernel's BTF.
 */
const volatile __u8 tp_shift[TS_TP_COUNT];

/*
 * Argument @i of @ctx, one load of a constant offset: written in asm so
 * that the compiler cannot fold the loads of TS_ARG into one load from a
 * computed address, which the verifier refuses for a context.
 */
#define CTX_ARG(ctx, i)                                                \
	({                                                             \
		u64 __v;                                               \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                  \
			     : "=r"(__v) : "r"(ctx), "i"((i) * 8));    \
		__v;                                                   \
	})

/* Argument @base (as since 5.11) of hook @tp in @ctx. */
#define TS_ARG(ctx, base, tp)                                          \
	(tp_shift[tp] == 2 ? CTX_ARG(ctx, (base) + 2) :                \
	 tp_shift[tp] == 1 ? CTX_ARG(ctx, (base) + 1) : CTX_ARG(ctx, base))

/* Before 5.12 a bio named its disk and partition, not a block_device. */
struct bio___old {
	struct gendisk *bi_disk;
	u8 bi_partno;
} __attribute__((preserve_access_index));

/* The disk @bio is on. */
static __always_inline struct gendisk *bio_disk(struct bio *bio, bool direct)
{
	struct block_device *bdev;
	struct gendisk *disk = NULL;

	if (bpf_core_field_exists(bio->bi_bdev)) {
		LOAD(direct, bdev, bio->bi_bdev);
		if (bdev)
			LOAD(direct, disk, bdev->bd_disk);
	} else {
		LOAD(direct, disk, ((struct bio___old *)bio)->bi_disk);
	}
	return disk;
}

/* The request queue @bio is on. */
static __always_inline struct request_queue *bio_queue(struct bio *bio,
							bool direct)
{
	struct block_device *bdev = NULL;
	struct request_queue *q = NULL;
	struct gendisk *disk;

	if (bpf_core_field_exists(bio->bi_bdev) &&
	    bpf_core_field_exists(bdev->bd_queue)) {
		LOAD(direct, bdev, bio->bi_bdev);
		if (bdev)
			LOAD(direct, q, bdev->bd_queue);
		return q;
	}
	/* 5.12-5.15: a block_device has no bd_queue; before, no bi_bdev */
	disk = bio_disk(bio, direct);
	if (disk)
		LOAD(direct, q, disk->queue);
	return q;
}

/* The dev_t (kernel encoding) of the disk or partition @bio is on, or 0. */
static __always_inline u32 bio_devt(struct bio *bio, bool direct)
{
	struct block_device *bdev;
	struct gendisk *disk;
	u32 dev = 0;
	int major, minor;
	u8 partno;

	if (bpf_core_field_exists(bio->bi_bdev)) {
		LOAD(direct, bdev, bio->bi_bdev);
		if (bdev)
			LOAD(direct, dev, bdev->bd_dev);
		return dev;
	}
	LOAD(direct, disk, ((struct bio___old *)bio)->bi_disk);
	if (!disk)
		return 0;
	LOAD(direct, major, disk->major);
	LOAD(direct, minor, disk->first_minor);
	LOAD(direct, partno, ((struct bio___old *)bio)->bi_partno);
	return (u32)major << 20 | (minor + partno);
}

/*
 * Whether @bio is on disk @dev itself, told from its block_device's first
 * cache line, which the kernel has just read for the queue and the I/O
 * statistics. False says only that the disk's number must be read: a
 * partition (its own number), or before 5.12 (no bi_bdev).
 */
static __always_inline bool bio_on_disk(struct bio *bio, u32 dev, bool direct)
{
	struct block_device *bdev;
	u32 bd_dev = 0;

	if (!bpf_core_field_exists(bio->bi_bdev))
		return false;
	LOAD(direct, bdev, bio->bi_bdev);
	if (bdev)
		LOAD(direct, bd_dev, bdev->bd_dev);
	return bd_dev && bd_dev == dev;
}

/* bio_queue() through probe reads: -1 when @bio's memory is unreadable. */
static __always_inline int bio_queue_read(struct bio *b,
					  struct request_queue **q)
{
	struct block_device *bdev = NULL;
	struct gendisk *disk;

	if (bpf_core_field_exists(b->bi_bdev) &&
	    bpf_core_field_exists(bdev->bd_queue))
		return bpf_core_read(&bdev, sizeof(bdev), &b->bi_bdev) ||
		       bpf_core_read(q, sizeof(*q), &bdev->bd_queue) ? -1 : 0;
	if (bpf_core_field_exists(b->bi_bdev)) {
		if (bpf_core_read(&bdev, sizeof(bdev), &b->bi_bdev) ||
		    bpf_core_read(&disk, sizeof(disk), &bdev->bd_disk))
			return -1;
	} else if (bpf_core_read(&disk, sizeof(disk),
				 &((struct bio___old *)b)->bi_disk)) {
		return -1;
	}
	return bpf_core_read(q, sizeof(*q), &disk->queue) ? -1 : 0;
}

/*
 * Zeroes: a value never written, as large as the largest one cleared by
 * copying from it (a histogram set, a depth or size histogram). One helper call,
 * no loop: the verifier's work does not grow with the size.
 */
#define TS_MAX2(a, b) ((a) > (b) ? (a) : (b))
struct ts_zeroes {
	u8 b[TS_MAX2(sizeof(struct ts_size_hist),
		     TS_MAX2(sizeof(struct ts_depth_hist), sizeof(struct ts_hist)))];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ts_zeroes);
} zeroes SEC(".maps");

/* Zeroes @size bytes at @dst, a map value (@size a constant). */
static __always_inline void zero_value(void *dst, u32 size)
{
	u32 key = 0;
	void *z = bpf_map_lookup_elem(&zeroes, &key);

	if (z)
		bpf_probe_read_kernel(dst, size, z);
}

/*
 * The bit of bio->bi_flags that the kernel sets at Q and clears when it
 * traces the bio's C (BIO_TRACE_COMPLETION: its value differs between
 * kernels, so the loader reads it from the kernel's BTF). The sweep takes a
 * bio-layer record whose bio has it clear for a completion it did not see.
 * 0xff: unknown, never repaired that way.
 */
const volatile __u32 bio_traced_bit = 0xff;

#endif
