// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "truestat.h"
#include "kfeatures.h"
#include "truestat.skel.h"
#include "truestat-locked.skel.h"
#include "lib/bounds.h"
#include "lib/claim.h"
#include "kload.h"
#include "lib/depth.h"
#include "tracer.h"
#include "features/who.h"
#include "features/partitions.h"

#define TS_MAX_LINKS 16

struct ts_tracer {
	struct truestat_bpf *skel;
	struct bpf_link *links[TS_MAX_LINKS];
	int nlinks;
	__u64 start_ns; /* when attaching began (CLOCK_MONOTONIC) */
	struct bpf_link *remap; /* block_bio_remap, once stack_traced() */
	unsigned int kdevs[TS_MAX_DEVS]; /* -d's disks and their stacks' */
	int nkdevs;			 /* 0: every disk is traced */
	const char *kind;
	const struct ts_dev_state *state; /* mmap of dev_state */
	size_t state_len;
	const struct ts_hist *hists; /* mmap of hists */
	size_t hists_len;
	const struct ts_depth_hist *depth_hists; /* mmap of depth_hists */
	size_t depth_hists_len;
	/* each histogram slot's counts widened to 64 bits (ts_depth_widen) */
	struct ts_depth_counts depth_total[TS_HIST_DEVS];
	struct ts_depth_hist depth_seen[TS_HIST_DEVS];
	__u64 depth_claim[TS_HIST_DEVS]; /* claimed_ns of the disk followed */
	/* --pattern: service by size, likewise (ts_size_widen) */
	const struct ts_size_hist *size_hists; /* mmap of size_hists */
	size_t size_hists_len;
	struct ts_size_counts size_total[TS_HIST_DEVS];
	struct ts_size_hist size_seen[TS_HIST_DEVS][TS_PATTERN_OPS];
	__u64 size_claim[TS_HIST_DEVS];
	int ncpus;
	struct ts_dev_stats *percpu;
	struct ts_claim_base *claims; /* each slot's counters per disk */
	__u64 counted_ns; /* CLOCK_MONOTONIC just after the last read of them */
	struct ts_dev_snap *last; /* each slot as last read (ts_slot_next) */
	struct ts_snapshot *gone; /* disks gone since ts_tracer_gone */
	const struct ts_repair *repairs; /* mmap of repairs */
	size_t repairs_len;
	__u64 repairs_read; /* repairs taken from the log so far */
	unsigned int seq;   /* span ends so far */
	struct ts_bounds bounds;
	__u32 rq_slots; /* the request table's size (size_tables) */
	const struct ts_rq_slot *rq_table; /* mmap of rq_slots (the sweep) */
	size_t rq_table_len;
	/* the sweeps (-v at the end): how many, their time in BPF (with
	 * preemption off), its longest part, their time in all */
	__u64 sweeps, sweep_ns, sweep_part_max_ns, sweep_wall_ns;
	const char *test_stamp_age; /* TRUESTAT_TEST_STAMP_AGE, else NULL */
	FILE *test_repair_log; /* TRUESTAT_TEST_REPAIR_LOG, else NULL */
	bool test_sweep_between; /* TRUESTAT_TEST_SWEEP_BETWEEN */
	__u64 restamped_ns; /* the depth words' last restamp (CLOCK_MONOTONIC) */
	bool pattern; /* --pattern: the patterns map is read */
	struct ts_who_ledger *who; /* --by: the table's reader's memory */
	struct ring_buffer *slow; /* --slow, else NULL */
	int (*on_slow)(void *ctx, const struct ts_slow_event *e);
	void (*on_slow_batch)(void *ctx, bool end);
	void *on_slow_ctx;
	pthread_t slow_reader; /* --slow: drains the ring as it fills */
	bool slow_reading;     /* slow_reader runs */
	atomic_bool slow_stop; /* asks slow_reader to return */
	__u64 slow_read, slow_cpu_ns; /* records it read, its CPU time */
};

static bool verbose;
/* What this kernel loads (plan_kernel); whether it was refused. */
static struct ts_load_plan plan;
static bool kernel_refused;
/* Added to the depth words' clock (TRUESTAT_TEST_CLOCK_WRAP), else 0. */
static __u64 clock_offset;

bool ts_tracer_kernel_refused(void)
{
	return kernel_refused;
}
/* BIO_TRACE_COMPLETION in the kernel's BTF, 0xff: not found */
static __u32 bio_traced_bit = 0xff;

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	return verbose ? vfprintf(stderr, fmt, args) : 0;
}

/* Whether BTF has struct @type with member @member. */
static bool has_member(struct btf *btf, const char *type, const char *member)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id, i;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return true;
	return false;
}

/* Value of enumerator @name in BTF (in any enum, named or not), or -1. */
static long long enum_value(struct btf *btf, const char *name)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, n = btf__type_cnt(btf), i;

	for (id = 1; id < n; id++) {
		t = btf__type_by_id(btf, id);
		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (i = 0; i < btf_vlen(t); i++, e++)
			if (!strcmp(btf__name_by_offset(btf, e->name_off), name))
				return e->val;
	}
	return -1;
}

/*
 * Number of arguments of tracepoint @tp's BPF hook (the first is the
 * probe's data), or -1 when the kernel has no such tracepoint.
 */
static int tracepoint_args(struct btf *btf, const char *tp)
{
	const struct btf_type *t;
	char name[64];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	t = btf__type_by_id(btf, t->type); /* pointer */
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(btf, t->type); /* function prototype */
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t);
}

/* The @n disks @kdevs into set @map (a dev_t -> 1 hash). */
static int fill_set(struct bpf_map *map, const unsigned int *kdevs, int n)
{
	int fd = bpf_map__fd(map), i;
	__u8 one = 1;

	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &kdevs[i], &one, BPF_ANY))
			return -1;
	return 0;
}

static int set_filter(struct truestat_bpf *skel, const struct ts_tracer_opts *o)
{
	if (fill_set(skel->maps.dev_filter, o->kdevs, o->nkdevs))
		return -1;
	return fill_set(skel->maps.dev_exclude, o->excluded, o->nexcluded);
}

/* The hook of @prog, TS_TP_COUNT: none (the sweep, a test's program). */
static enum ts_tp hook_of(const struct bpf_program *prog)
{
	return ts_tp_of_section(bpf_program__section_name(prog));
}

/* The tables' sizes, in slots. */
struct table_sizes {
	__u32 rq, bio;
};

/* A power of two in [@least, @most], @want or more if it can. */
static __u32 table_slots(unsigned long want, __u32 least, __u32 most)
{
	__u32 slots = least;

	while (slots < most && slots < want)
		slots *= 2;
	return slots;
}

/*
 * The tables' sizes for the disks of @o: the request table has room for
 * twice their driver tags (records live from issue to completion, so no
 * more than the tags are in flight; twice keeps the probes short), the bio
 * table for four times (include/truestat.h). Disks that appear later are
 * not counted: when a table fills, what it cannot hold is counted
 * (rq_table_full, bio_table_full).
 */
/* The submitter is kept from Q to C: --slow, --by and the filters. */
static bool keeps_who(const struct ts_tracer_opts *o)
{
	return o->slow || o->by || o->filter.cgroup || o->filter.pid;
}

static struct table_sizes size_tables(const struct ts_tracer_opts *o)
{
	unsigned long tags = ts_disk_tags("/sys", o->kdevs, o->nkdevs);
	struct table_sizes n = {
		.rq = table_slots(2 * tags, TS_RQ_SLOTS, TS_RQ_SLOTS_MAX),
		.bio = table_slots(4 * tags, TS_BIO_SLOTS, TS_BIO_SLOTS_MAX),
	};

	if (o->test_rq_slots > n.rq) /* bench/overhead.sh: the sweep at 16x */
		n.rq = o->test_rq_slots;

	if (verbose)
		fprintf(stderr, "truestat: request table of %u slots, bio table "
			"of %u, for %lu driver tags%s\n", n.rq, n.bio, tags,
			n.bio < 4 * tags ? " (their maximum)" : "");
	return n;
}

/* The tables and the maps indexed like them, @n long. */
static void size_maps(struct truestat_bpf *skel,
		      const struct ts_tracer_opts *o, struct table_sizes n)
{
	bpf_map__set_max_entries(skel->maps.rq_slots, n.rq);
	bpf_map__set_max_entries(skel->maps.layer_recs, n.rq);
	skel->rodata->rq_mask = (o->test_rq_slots ?: n.rq) - 1;
	bpf_map__set_max_entries(skel->maps.bio_slots, n.bio);
	skel->rodata->bio_mask = n.bio - 1;
	/* a feature's maps that are never written: one entry each */
	if (!o->by)
		bpf_map__set_max_entries(skel->maps.by_who, 1);
	bpf_map__set_max_entries(skel->maps.slow_events,
				 o->slow ? o->slow_ring : 4096);
	if (!keeps_who(o)) {
		bpf_map__set_max_entries(skel->maps.bio_who, 1);
		bpf_map__set_max_entries(skel->maps.rq_extra, 1);
	} else {
		bpf_map__set_max_entries(skel->maps.rq_extra, n.rq);
		bpf_map__set_max_entries(skel->maps.bio_who, n.bio);
	}
	if (!plan.locked && !o->test_locked)
		bpf_map__set_max_entries(skel->maps.word_locks, 1);
	if (!o->pattern) { /* not 400 KB and 2 MB */
		bpf_map__set_max_entries(skel->maps.patterns, 1);
		bpf_map__set_max_entries(skel->maps.size_hists, 1);
	}
	if (!o->flags) /* not 3.4 MB */
		bpf_map__set_max_entries(skel->maps.flag_stats, 1);
	if (!o->partitions) /* not 320 KB */
		bpf_map__set_max_entries(skel->maps.part_stats, 1);
	else if (o->test_part_slots)
		bpf_map__set_max_entries(skel->maps.part_stats,
					 o->test_part_slots);
}

/*
 * Both objects come from one source and differ only in how their atomic
 * operations are made: one skeleton serves both.
 */
_Static_assert(sizeof(struct truestat_bpf) == sizeof(struct truestat_locked_bpf),
	       "the two objects have the same maps and programs");
_Static_assert(sizeof(*((struct truestat_bpf *)0)->rodata) ==
		       sizeof(*((struct truestat_locked_bpf *)0)->rodata) &&
	       sizeof(*((struct truestat_bpf *)0)->bss) ==
		       sizeof(*((struct truestat_locked_bpf *)0)->bss),
	       "the two objects have the same globals");

/* The object for this kernel (@locked: before 5.12), opened. */
static struct truestat_bpf *open_object(const struct bpf_object_open_opts *opts,
					bool locked)
{
	struct truestat_bpf *obj;
	int err;

	if (!locked)
		return truestat_bpf__open_opts(opts);
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return NULL;
	err = truestat_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)truestat_locked_bpf__elf_bytes(
			&obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, opts);
	}
	if (err) {
		truestat_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/* Loads, of the hooks planned, the programs of set @set ("btf" or "raw"). */
static void choose_programs(struct truestat_bpf *skel, const char *set)
{
	struct bpf_program *prog;
	char suffix[16];
	size_t len, slen;

	snprintf(suffix, sizeof(suffix), "_%s", set);
	slen = strlen(suffix);
	bpf_object__for_each_program(prog, skel->obj) {
		const char *name = bpf_program__name(prog);

		len = strlen(name);
		bpf_program__set_autoload(prog, !strcmp(name, "ts_sweep") ||
				(len > slen && !strcmp(name + len - slen, suffix) &&
				 hook_of(prog) < TS_TP_COUNT &&
				 plan.load[hook_of(prog)]));
	}
}

/* The programs' settings (.rodata) from the options @o. */
static void set_globals(struct truestat_bpf *skel,
			const struct ts_tracer_opts *o)
{
	memcpy((void *)skel->rodata->tp_shift, plan.tp_shift,
	       sizeof(plan.tp_shift));
	skel->rodata->light = o->light;
	skel->rodata->filter_devices = o->nkdevs > 0;
	skel->rodata->exclude_devices = o->nexcluded > 0;
	skel->rodata->test_verifier_failure = o->test_verifier_failure;
	skel->rodata->bench_empty = o->bench_empty;
	skel->rodata->bench_clock = o->bench_clock;
	skel->rodata->test_miss_every = o->test_miss_every;
	skel->rodata->test_miss_dev = o->test_miss_dev;
	skel->rodata->test_clock_offset = clock_offset;
	if (o->max_devs)
		skel->rodata->max_devs = o->max_devs;
	if (o->qid_near)
		skel->rodata->qid_near_ids = o->qid_near;
	skel->rodata->bio_traced_bit = bio_traced_bit;
	skel->rodata->pattern = o->pattern;
	skel->rodata->flag_classes = o->flags;
	skel->rodata->partitions = o->partitions;
	skel->rodata->slow = o->slow;
	skel->rodata->by = o->by;
	skel->rodata->keep_who = keeps_who(o);
	skel->rodata->filter_cgroup = o->filter.cgroup;
	skel->rodata->filter_pid = o->filter.pid;
	skel->rodata->filter_blkg = o->filter.blkg;
	skel->rodata->filter_cgroup_id = o->filter.cgroup_id;
	skel->rodata->filter_level = o->filter.level;
	skel->rodata->filter_any_level = o->filter.any_level;
	skel->rodata->filter_tgid = o->filter.tgid;
	skel->rodata->filter_pidns_dev = o->filter.pidns_dev;
	skel->rodata->filter_pidns_ino = o->filter.pidns_ino;
	skel->rodata->slow_ns = o->slow_ns;
}

/* Loads only the programs of set @set ("btf" or "raw"), the tables @n
 * long. */
static struct truestat_bpf *load_set(const struct ts_tracer_opts *o,
				     const char *set, struct table_sizes n,
				     int *error)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	struct truestat_bpf *skel;

	/*
	 * Named even when it is the kernel's own: libbpf then never walks the
	 * modules' BTF for a CO-RE type vmlinux lacks (-p's struct hd_struct
	 * after 5.10), with BPF_BTF_GET_NEXT_ID, which needs CAP_SYS_ADMIN and
	 * failed the whole load under CAP_BPF alone. truestat's types are all
	 * in vmlinux.
	 */
	open_opts.btf_custom_path = o->btf_path;
	skel = open_object(&open_opts, plan.locked || o->test_locked);
	if (!skel) {
		*error = errno;
		return NULL;
	}
	choose_programs(skel, set);
	set_globals(skel, o);
	size_maps(skel, o, n);
	*error = -truestat_bpf__load(skel);
	/* the filter must be in place before the first event claims a disk */
	if (!*error && set_filter(skel, o))
		*error = errno;
	if (*error) {
		truestat_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Whether the sysfs block device at @dir is stacked on others (slaves/). */
static bool stacked_on(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *m;
	bool found = false;
	DIR *slaves;

	snprintf(path, sizeof(path), "%s/slaves", dir);
	slaves = opendir(path);
	if (!slaves)
		return false;
	while (!found && (m = readdir(slaves)))
		found = m->d_name[0] != '.';
	closedir(slaves);
	return found;
}

/* Any disk stacked on others (md, dm) into @name; false: none. */
static bool any_stacked(char *name, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	bool found = false;
	DIR *d;

	d = opendir("/sys/block");
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s", e->d_name);
		found = stacked_on(path);
		if (found)
			snprintf(name, len, "%s", e->d_name);
	}
	closedir(d);
	return found;
}

/* The name of the device sysfs link @path points to, into @name. */
static void link_name(const char *path, char *name, size_t len)
{
	char target[PATH_MAX];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	const char *base;

	target[n > 0 ? n : 0] = '\0';
	base = strrchr(target, '/');
	snprintf(name, len, "%s", base ? base + 1 : path);
}

/*
 * Whether a traced disk is stacked on others, its name into @name. -d
 * traced the chosen disks and the members of those stacked (their
 * stacks): block_bio_remap is followed only when one of them is stacked.
 * A traced member whose stacked device is not traced gains nothing from
 * it (the remap links a member bio only to a bio of a traced stacked
 * device), and a partition's every I/O fires it too: on an LVM host a
 * plain disk traced alone would pay a fourth program per I/O. Without
 * -d every disk is traced: any stacked disk on the host. Looked at again
 * at every snapshot: a device stacked later (a dm table loaded, a new
 * dm device without -d) switches it on.
 */
static bool stack_traced(const struct ts_tracer *t, char *name, size_t len)
{
	char path[PATH_MAX];
	int i;

	if (!t->nkdevs)
		return any_stacked(name, len);
	for (i = 0; i < t->nkdevs; i++) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u",
			 t->kdevs[i] >> 20, t->kdevs[i] & 0xfffff);
		if (stacked_on(path)) {
			link_name(path, name, len);
			return true;
		}
	}
	return false;
}

/* Appends " @name" to the list in @buf. */
static void add_name(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, " %s", name);
}

/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns, in ns. */
static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Attaches the loaded programs in the order of include/hooks.def, all but
 * block_bio_remap's (follow_stacks).
 */
static int attach_in_order(struct ts_tracer *t)
{
	struct bpf_program *prog;
	struct bpf_link *link;
	char names[512] = "";
	int tp;

	for (tp = 0; tp < TS_TP_REMAP; tp++) {
		bpf_object__for_each_program(prog, t->skel->obj) {
			if (!bpf_program__autoload(prog) || (int)hook_of(prog) != tp)
				continue;
			link = bpf_program__attach(prog);
			if (!link)
				return -errno;
			if (t->nlinks == TS_MAX_LINKS) {
				bpf_link__destroy(link);
				return -E2BIG;
			}
			t->links[t->nlinks++] = link;
			add_name(names, sizeof(names), bpf_program__name(prog));
		}
		/* requests allocated from now on have their issue traced */
		if (tp == TS_TP_ISSUE)
			t->skel->data->issue_traced_ns = mono_ns();
	}
	if (verbose)
		fprintf(stderr, "truestat: programs attached:%s\n", names);
	return 0;
}

/*
 * Attaches the block_bio_remap program once a traced disk is stacked
 * (stack_traced); -v says so.
 */
static void follow_stacks(struct ts_tracer *t)
{
	struct bpf_program *prog;
	char name[NAME_MAX + 1];

	if (t->remap || !stack_traced(t, name, sizeof(name)))
		return;
	bpf_object__for_each_program(prog, t->skel->obj) {
		if (!bpf_program__autoload(prog) || hook_of(prog) != TS_TP_REMAP)
			continue;
		t->remap = bpf_program__attach(prog);
		if (t->remap && verbose)
			fprintf(stderr, "truestat: programs attached: %s (%s is stacked)\n",
				bpf_program__name(prog), name);
		return;
	}
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Whether the kernel's BPF has atomic fetch-and-add and cmpxchg (5.12). */
static bool probe_atomics(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10,
		  .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1,
		  .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* What the running kernel has (its BTF in @btf, NULL: none). */
static void probe_kernel(struct btf *btf, struct ts_kfeatures *f)
{
	static struct utsname u;
	int tp;

	memset(f, 0, sizeof(*f));
	f->release = uname(&u) ? "?" : u.release;
	f->btf = btf != NULL;
	for (tp = 0; tp < TS_TP_COUNT; tp++)
		f->tp_args[tp] = btf ? tracepoint_args(btf, ts_tp_name(tp)) : -1;
	f->bio_bdev = btf && has_member(btf, "bio", "bi_bdev");
	f->bio_disk = btf && has_member(btf, "bio", "bi_disk");
	f->atomics = probe_atomics();
	f->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) > 0;
}

/* Decides what to load here (@plan); false with @err if nothing can be. */
static int plan_kernel(struct btf *btf, const struct ts_tracer_opts *o,
		       char *err, size_t errlen)
{
	struct ts_kfeatures f;
	int i;

	probe_kernel(btf, &f);
	ts_load_plan(&f, o->light, &plan);
	if (plan.refused) {
		kernel_refused = true;
		return fail(err, errlen, "%s", plan.why);
	}
	if (verbose && (plan.locked || o->test_locked))
		fprintf(stderr, "truestat: Linux %s: BPF without atomic "
			"compare-and-exchange (before 5.12): the programs that "
			"take a lock for each\n", f.release);
	for (i = 0; i < plan.nunavailable; i++)
		fprintf(stderr, "truestat: not on Linux %s: %s\n", f.release,
			plan.unavailable[i]);
	return 0;
}

static int open_btf(const struct ts_tracer_opts *o, char *err, size_t errlen)
{
	struct btf *btf;
	long long bit;
	int rc;

	kernel_refused = false;
	if (access(o->btf_path, R_OK)) {
		struct ts_kfeatures f;

		probe_kernel(NULL, &f);
		kernel_refused = true;
		return fail(err, errlen, "Linux %s: no kernel BTF at %s: "
			    "truestat needs Linux " TS_OLDEST_KERNEL " or "
			    "later built with CONFIG_DEBUG_INFO_BTF=y",
			    f.release, o->btf_path);
	}
	btf = btf__parse(o->btf_path, NULL);
	if (!btf)
		return fail(err, errlen, "cannot read kernel BTF at %s: %s",
			    o->btf_path, strerror(errno));
	rc = plan_kernel(btf, o, err, errlen);
	bit = enum_value(btf, "BIO_TRACE_COMPLETION");
	if (bit >= 0 && bit < 32)
		bio_traced_bit = bit;
	btf__free(btf);
	return rc;
}

/* Read-only mapping of a BPF_F_MMAPABLE array; NULL with errno on failure. */
static void *map_shared(const struct bpf_map *map, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*len = (size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	*len = (*len + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

static int on_slow_event(void *ctx, void *data, size_t len);

/* What is in the ring now, to the printer, as one batch. */
static int consume_slow(struct ts_tracer *t)
{
	int n;

	if (t->on_slow_batch)
		t->on_slow_batch(t->on_slow_ctx, false);
	n = ring_buffer__consume(t->slow);
	if (t->on_slow_batch)
		t->on_slow_batch(t->on_slow_ctx, true);
	return n;
}

/* --slow's reader: its pause after a batch, and when it found none */
static const struct timespec slow_busy = { .tv_nsec = 1000000 },
			     slow_idle = { .tv_nsec = 10000000 };

/*
 * --slow: a thread of its own drains the ring on its own clock: every
 * millisecond while records come, every 10 ms when none did. The programs
 * submit without waking it (BPF_RB_NO_WAKEUP): a wakeup would run in the
 * completion path of the request that caused it. 64 MiB hold 1.4 s of
 * records at 500,000 a second, 1 MiB 10 ms of a million.
 */
static void *slow_reader(void *arg)
{
	struct ts_tracer *t = arg;
	struct timespec cpu;
	int n;

	while (!atomic_load(&t->slow_stop)) {
		n = consume_slow(t);
		if (n > 0)
			t->slow_read += n;
		nanosleep(n > 0 ? &slow_busy : &slow_idle, NULL);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	t->slow_cpu_ns = cpu.tv_sec * 1000000000ULL + cpu.tv_nsec;
	return NULL;
}

static int open_slow(struct ts_tracer *t, const struct ts_tracer_opts *o,
		     char *err, size_t errlen)
{
	sigset_t all, old;
	int rc;

	t->on_slow = o->on_slow;
	t->on_slow_batch = o->on_slow_batch;
	t->on_slow_ctx = o->on_slow_ctx;
	t->slow = ring_buffer__new(bpf_map__fd(t->skel->maps.slow_events),
				   on_slow_event, t, NULL);
	if (!t->slow) {
		fail(err, errlen, "cannot open the ring buffer of --slow: %s",
		     strerror(errno));
		return -1;
	}
	/* signals stay with the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->slow_reader, NULL, slow_reader, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		fail(err, errlen, "cannot start the reader of --slow: %s",
		     strerror(rc));
		return -1;
	}
	t->slow_reading = true;
	return 0;
}

/*
 * Tests: the offset that makes the depth words' 44-bit stamps wrap @s
 * seconds from now (0: none).
 */
static __u64 wrap_offset(unsigned int s)
{
	if (!s)
		return 0;
	return (TS_CLOCK_MASK + 1 - ((mono_ns() + s * 1000000000ULL) &
				     TS_CLOCK_MASK)) & TS_CLOCK_MASK;
}

/*
 * Tests: every depth histogram bucket starts at 2^32 - @n (0: at 0), so
 * that a short run wraps them; the widened counts start from zero.
 */
static int preset_depth(struct ts_tracer *t, unsigned int n)
{
	int fd = bpf_map__fd(t->skel->maps.depth_hists), c, s;
	__u32 slot;

	if (!n)
		return 0;
	for (c = 0; c < TS_DEPTH_CLASSES; c++)
		for (s = 0; s < TS_HIST_SLOTS; s++)
			t->depth_seen[0].service[c][s] = -n;
	for (slot = 0; slot < TS_HIST_DEVS; slot++) {
		t->depth_seen[slot] = t->depth_seen[0];
		if (bpf_map_update_elem(fd, &slot, &t->depth_seen[slot], 0))
			return -errno;
	}
	return 0;
}

/* The programs loaded for @o: tp_btf's, else raw_tp's. */
static int load_programs(struct ts_tracer *t, const struct ts_tracer_opts *o,
			 char *err, size_t errlen)
{
	struct table_sizes sizes = size_tables(o);
	int error = 0;

	t->kind = "tp_btf";
	t->rq_slots = sizes.rq;
	if (!o->raw_tp)
		t->skel = load_set(o, "btf", sizes, &error);
	if (!t->skel) {
		if (!o->raw_tp && verbose)
			fprintf(stderr, "truestat: tp_btf failed (%s), trying raw_tp\n",
				strerror(error));
		t->kind = "raw_tp";
		t->skel = load_set(o, "raw", sizes, &error);
	}
	if (!t->skel)
		return fail(err, errlen, "cannot load the BPF programs: %s%s",
			    strerror(error),
			    verbose ? "" : " (-v shows the verifier log)");
	return 0;
}

/* The maps userspace reads in place, and room for the per-CPU ones. */
static int map_state(struct ts_tracer *t, char *err, size_t errlen)
{
	t->state = map_shared(t->skel->maps.dev_state, &t->state_len);
	t->hists = map_shared(t->skel->maps.hists, &t->hists_len);
	t->depth_hists = map_shared(t->skel->maps.depth_hists,
				    &t->depth_hists_len);
	t->size_hists = map_shared(t->skel->maps.size_hists,
				   &t->size_hists_len);
	t->repairs = map_shared(t->skel->maps.repairs, &t->repairs_len);
	t->rq_table = map_shared(t->skel->maps.rq_slots, &t->rq_table_len);
	if (!t->state || !t->hists || !t->depth_hists || !t->size_hists ||
	    !t->repairs ||
	    !t->rq_table || !t->skel->bss)
		return fail(err, errlen, "cannot map the device state: %s",
			    strerror(errno));
	t->ncpus = libbpf_num_possible_cpus();
	t->percpu = calloc(t->ncpus > 0 ? t->ncpus : 1, sizeof(*t->percpu));
	t->claims = calloc(TS_MAX_DEVS, sizeof(*t->claims));
	t->last = calloc(TS_MAX_DEVS, sizeof(*t->last));
	t->gone = calloc(1, sizeof(*t->gone));
	if (t->ncpus <= 0 || !t->percpu || !t->claims || !t->last || !t->gone)
		return fail(err, errlen, "cannot size the per-CPU maps");
	return 0;
}

struct ts_tracer *ts_tracer_open(const struct ts_tracer_opts *o, char *err,
				 size_t errlen)
{
	struct ts_tracer *t = calloc(1, sizeof(*t));
	int error;

	verbose = o->verbose;
	libbpf_set_print(print_libbpf);
	clock_offset = wrap_offset(o->test_clock_wrap_s);
	if (!t || open_btf(o, err, errlen))
		goto fail;
	t->test_stamp_age = o->test_stamp_age;
	t->test_repair_log = o->test_repair_log;
	t->test_sweep_between = o->test_sweep_between;
	t->pattern = o->pattern;
	t->nkdevs = o->nkdevs < TS_MAX_DEVS ? o->nkdevs : TS_MAX_DEVS;
	if (t->nkdevs)
		memcpy(t->kdevs, o->kdevs, t->nkdevs * sizeof(*t->kdevs));
	if (load_programs(t, o, err, errlen))
		goto fail;
	error = preset_depth(t, o->test_depth_wrap);
	t->start_ns = mono_ns();
	if (!error)
		error = attach_in_order(t);
	if (error) {
		fail(err, errlen, "cannot attach to the block tracepoints: %s",
		     strerror(-error));
		goto fail;
	}
	follow_stacks(t);
	if (verbose && !t->remap && plan.load[TS_TP_REMAP])
		fprintf(stderr, "truestat: block_bio_remap not followed: "
			"no traced disk is stacked (md, dm)\n");
	if (map_state(t, err, errlen))
		goto fail;
	if (o->slow && open_slow(t, o, err, errlen))
		goto fail;
	return t;
fail:
	ts_tracer_close(t);
	return NULL;
}

void ts_tracer_set_service_hint(struct ts_tracer *t, unsigned int qid,
				__u64 service_ns)
{
	bpf_map_update_elem(bpf_map__fd(t->skel->maps.service_hint), &qid,
			    &service_ns, BPF_ANY);
}

const char *ts_tracer_kind(const struct ts_tracer *t)
{
	return t->kind;
}

void ts_tracer_begin(struct ts_tracer *t, __u64 mono_ns)
{
	ts_bounds_init(&t->bounds, mono_ns);
}

__u64 ts_tracer_start_ns(const struct ts_tracer *t)
{
	return t->start_ns;
}

/* The kernel's information of @prog: false when it is not loaded. */
static bool prog_info(const struct bpf_program *prog,
		      struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_program__fd(prog) >= 0 &&
	       !bpf_obj_get_info_by_fd(bpf_program__fd(prog), info, &len);
}

static __u64 lost_events(struct ts_tracer *t)
{
	struct bpf_prog_info info;
	struct bpf_program *prog;
	__u64 sum = 0;

	bpf_object__for_each_program(prog, t->skel->obj)
		if (prog_info(prog, &info))
			sum += info.recursion_misses;
	return sum;
}

int ts_tracer_prog_stats(struct ts_tracer *t, struct ts_prog_stat *out,
			 int max)
{
	struct bpf_prog_info info;
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, t->skel->obj) {
		if (n == max || !prog_info(prog, &info))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s",
			 bpf_program__name(prog));
		out[n].run_ns = info.run_time_ns;
		out[n].runs = info.run_cnt;
		n++;
	}
	return n;
}

__u64 ts_prog_runs(const struct ts_prog_stat *s, int n)
{
	__u64 runs = 0;
	int i;

	for (i = 0; i < n; i++)
		runs += s[i].runs;
	return runs;
}

/* @dst[i] += @src[i] for @n 64-bit counters. */
static void add_u64s(void *dst, const void *src, size_t n)
{
	const __u64 *s = src;
	__u64 *d = dst;
	size_t i;

	for (i = 0; i < n; i++)
		d[i] += s[i];
}

/*
 * Device @qid's figures summed over CPUs, with what nested completions
 * added (nested_stats); false: unread.
 */
static bool sum_stats(struct ts_tracer *t, unsigned int qid,
		      struct ts_dev_stats *out)
{
	const size_t n = sizeof(struct ts_op_stats) / sizeof(__u64);
	struct ts_nested_stats nested;
	int cpu, op;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.dev_stats), &qid,
				t->percpu) ||
	    bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.nested_stats), &qid,
				&nested))
		return false;
	for (cpu = 0; cpu < t->ncpus; cpu++)
		add_u64s(out, &t->percpu[cpu], sizeof(*out) / sizeof(__u64));
	for (op = 0; op < TS_NR_OPS; op++)
		add_u64s(&out->op[op], &nested.op[op], n);
	out->adding = 0;
	return true;
}

/* Device @qid's access pattern (--pattern, else zeros); false: unread. */
static bool read_pattern(struct ts_tracer *t, unsigned int qid,
			 struct ts_pattern *out)
{
	memset(out, 0, sizeof(*out));
	return !t->pattern ||
	       !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.patterns), &qid, out);
}

/*
 * The durable writes between Q and C now (durable_bios) into @keys and
 * @vals (room for TS_DURABLE_BIOS): read bucket by bucket, so that the
 * programs deleting keys meanwhile cannot make the walk start over, as
 * bpf_map_get_next_key from a deleted key does. Returns how many.
 */
static size_t durable_read(struct ts_tracer *t, __u64 *keys,
			   struct ts_durable *vals)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_map__fd(t->skel->maps.durable_bios);
	__u32 batch, count;
	void *in = NULL;
	size_t n = 0;
	int err;

	do {
		count = TS_DURABLE_BIOS - n;
		err = bpf_map_lookup_batch(fd, in, &batch, keys + n, vals + n,
					   &count, &opts);
		n += count;
		in = &batch;
	} while (!err && n < TS_DURABLE_BIOS);
	return n;
}

static __u64 durable_keys[TS_DURABLE_BIOS];
static struct ts_durable durable_vals[TS_DURABLE_BIOS];

/* Durable writes between Q and C now, by queue id. */
static void durable_in_flight(struct ts_tracer *t, unsigned int *count)
{
	size_t n = durable_read(t, durable_keys, durable_vals), i;

	memset(count, 0, TS_MAX_DEVS * sizeof(*count));
	for (i = 0; i < n; i++)
		if (durable_vals[i].qid < TS_MAX_DEVS)
			count[durable_vals[i].qid]++;
}

/*
 * Runs part @part of the sweep, over the first @n slots or keys in
 * sweep_keys; its time in BPF, where it runs with preemption off, counted.
 */
static void sweep_part(struct ts_tracer *t, __u64 part, __u64 n)
{
	__u64 args[2] = { part, n }, took;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.ts_sweep),
				   &opts))
		return;
	took = t->skel->bss->sweep_part_ns;
	t->sweep_ns += took;
	if (took > t->sweep_part_max_ns)
		t->sweep_part_max_ns = took;
}

/* The durable bios' sweep, TS_SWEEP_KEYS keys at a time. */
static void sweep_durable(struct ts_tracer *t)
{
	size_t n = durable_read(t, durable_keys, durable_vals), i, k;

	for (i = 0; i < n; i += k) {
		k = n - i < TS_SWEEP_KEYS ? n - i : TS_SWEEP_KEYS;
		memcpy(t->skel->bss->sweep_keys, durable_keys + i,
		       k * sizeof(*durable_keys));
		sweep_part(t, TS_SWEEP_DURABLE, k);
	}
}

/*
 * The request slots that hold a record, read from the table's memory,
 * TS_SWEEP_KEYS at a time to the BPF side: its time goes with what is in
 * flight, not with the table's size. A slot filled after it was read here
 * is young (the next sweep sees it); one freed meanwhile, the BPF side
 * finds free.
 */
static void sweep_slots(struct ts_tracer *t)
{
	__u64 *keys = t->skel->bss->sweep_keys, rq;
	__u32 idx, k = 0;

	for (idx = 0; idx < t->rq_slots; idx++) {
		rq = __atomic_load_n(&t->rq_table[idx].rq, __ATOMIC_RELAXED);
		if (!rq || (rq & 1))
			continue;
		keys[k++] = idx;
		if (k == TS_SWEEP_KEYS) {
			sweep_part(t, TS_SWEEP_SLOTS, k);
			k = 0;
		}
	}
	if (k)
		sweep_part(t, TS_SWEEP_SLOTS, k);
}

/*
 * Repairs requests completed without our program seeing them (BPF side),
 * a part at a time: no bpf_loop, which kernels before 5.17 lack.
 */
static void sweep(struct ts_tracer *t)
{
	__u64 t0 = mono_ns();

	sweep_part(t, TS_SWEEP_BEGIN, 0);
	sweep_slots(t);
	sweep_durable(t);
	sweep_part(t, TS_SWEEP_END, 0);
	sweep_part(t, TS_SWEEP_RESTAMP, 0);
	t->restamped_ns = mono_ns();
	t->sweep_wall_ns += t->restamped_ns - t0;
	t->sweeps++;
}


/* Sweeps a snapshot makes at most while requests are too young to judge. */
#define TS_SETTLE_SWEEPS 3

/* Requests the last sweep found idle but too young to repair. */
static unsigned int suspects(const struct ts_tracer *t)
{
	unsigned int qid, n = 0;

	for (qid = 0; qid < TS_MAX_DEVS; qid++)
		if (t->state[qid].queue && t->state[qid].mode == TS_DEV_TRACED)
			n += t->state[qid].suspects;
	return n;
}

/*
 * Sweeps until no idle request is too young to repair: a request caught
 * between the issue tracepoint and the kernel marking it in flight proves
 * live at the next look, one whose completion went unseen is old enough by
 * then to be repaired and counted in this span. Only what is still young
 * at the last look makes the span's depth not exact without an event.
 */
static void settle(struct ts_tracer *t)
{
	const struct timespec age = { 0, TS_SWEEP_MIN_AGE_NS + 1000000 };
	int i;

	for (i = 0;; i++) {
		sweep(t);
		if (!suspects(t) || i == TS_SETTLE_SWEEPS - 1)
			return;
		nanosleep(&age, NULL);
	}
}

/*
 * Moves the stamp of depth word *@w back, as of @now, until it is @age old
 * (no further when it is already); unless it changed meanwhile. Returns
 * the ns it moved.
 */
static __u64 age_word(volatile __u64 *w, __u64 age, __u64 now)
{
	__u64 old = *w, was = (now - old) & TS_CLOCK_MASK, by, new;

	if (was >= age)
		return 0;
	by = age - was;
	new = (old & ~TS_CLOCK_MASK) | ((old - by) & TS_CLOCK_MASK);
	if (!__atomic_compare_exchange_n((__u64 *)w, &old, new, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return 0;
	return by;
}

static bool traced(const volatile struct ts_dev_state *st)
{
	return st->queue && !(st->queue & 1) && st->mode == TS_DEV_TRACED;
}

/* Every traced device's depth words in @st made @age old; @by[] += moves. */
static void age_all(volatile struct ts_dev_state *st, __u64 age,
		    __u64 (*by)[2])
{
	unsigned int qid;
	__u64 now;

	for (qid = 0; qid < TS_MAX_DEVS; qid++) {
		if (!traced(&st[qid]))
			continue;
		now = mono_ns() + clock_offset;
		by[qid][0] += age_word(&st[qid].in_device, age, now);
		by[qid][1] += age_word(&st[qid].in_os, age, now);
	}
}

/*
 * Every traced device's depth words as after @age without a change: aged
 * a TS_RESTAMP_NS at a time, restamped after each as the main loop does
 * (ts_tracer_tick). What each word moved is said on stderr: the time
 * that passed for it, the test's expected depth x time.
 */
static void age_words(struct ts_tracer *t, __u64 age)
{
	static __u64 by[TS_MAX_DEVS][2];
	size_t len = t->state_len;
	volatile struct ts_dev_state *st;
	unsigned int qid;
	__u64 step;

	st = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		  bpf_map__fd(t->skel->maps.dev_state), 0);
	if (st == MAP_FAILED)
		return;
	memset(by, 0, sizeof(by));
	for (; age; age -= step) {
		step = age < TS_RESTAMP_NS ? age : TS_RESTAMP_NS;
		age_all(st, step, by);
		if (step == TS_RESTAMP_NS)
			sweep_part(t, TS_SWEEP_RESTAMP, 0);
	}
	for (qid = 0; qid < TS_MAX_DEVS; qid++)
		if (traced(&st[qid]))
			fprintf(stderr, "truestat: test: slot %u: stamps aged, "
				"device %llu ns, os %llu ns\n", qid,
				(unsigned long long)by[qid][0],
				(unsigned long long)by[qid][1]);
	munmap((void *)st, len);
}

/*
 * Tests (TRUESTAT_TEST_STAMP_AGE=FILE): when FILE exists, the time since
 * the last snapshot stands for as much as makes every traced device's
 * depth words as old as the ns FILE holds. No event changed them
 * meanwhile (the test keeps the disk idle, or held by a stopped simulated
 * disk), so what that time does to them is their stamps growing older.
 * FILE is removed once done.
 */
static void test_age_stamps(struct ts_tracer *t)
{
	unsigned long long age;
	FILE *f;

	if (!t->test_stamp_age || !(f = fopen(t->test_stamp_age, "r")))
		return;
	if (fscanf(f, "%llu", &age) == 1)
		age_words(t, age);
	fclose(f);
	unlink(t->test_stamp_age);
}

/*
 * Tests (TRUESTAT_TEST_REPAIR_LOG=FILE): repair @r as a line, its queue id,
 * times, address and time at each low depth, so that a test can hold them
 * to another tracer's log.
 */
static void test_log_repair(struct ts_tracer *t, const struct ts_repair *r)
{
	int i;

	if (!t->test_repair_log)
		return;
	fprintf(t->test_repair_log, "%u %llu %llu %llx", r->qid,
		(unsigned long long)r->issue_ns,
		(unsigned long long)r->found_ns, (unsigned long long)r->addr);
	for (i = 0; i < TS_LOW_DEPTHS; i++)
		fprintf(t->test_repair_log, " %llu",
			(unsigned long long)r->low_ns[i]);
	fputc('\n', t->test_repair_log);
	fflush(t->test_repair_log);
}

/*
 * The repairs logged since the last read. A record still being written, or
 * overwritten before this read, makes the bounds fall back to counts.
 */
static void read_repairs(struct ts_tracer *t)
{
	__u64 n = *(volatile __u64 *)&t->skel->bss->repair_count;
	const volatile struct ts_repair *r;
	struct ts_repair copy;

	if (n - t->repairs_read > TS_REPAIR_SLOTS) {
		ts_bounds_lost(&t->bounds);
		t->repairs_read = n - TS_REPAIR_SLOTS;
	}
	for (; t->repairs_read < n; t->repairs_read++) {
		r = &t->repairs[t->repairs_read % TS_REPAIR_SLOTS];
		if (ts_repair_read(r, t->repairs_read, &copy)) {
			ts_bounds_repair(&t->bounds, &copy);
			test_log_repair(t, &copy);
		} else
			ts_bounds_lost(&t->bounds);
	}
}

/*
 * The repair log holds TS_REPAIR_SLOTS: read every TS_REPAIR_READ_NS, it
 * keeps up with that many repairs in that time (41,000 a second: 0.7% of
 * 5.8M IOPS lost), whatever the interval.
 */
#define TS_REPAIR_READ_NS 100000000ULL

__u64 ts_tracer_tick(struct ts_tracer *t)
{
	__u64 now = mono_ns(), restamp_due;

	if (now - t->restamped_ns >= TS_RESTAMP_NS) {
		sweep_part(t, TS_SWEEP_RESTAMP, 0);
		t->restamped_ns = now;
	}
	read_repairs(t);
	restamp_due = t->restamped_ns + TS_RESTAMP_NS;
	return now + TS_REPAIR_READ_NS < restamp_due ? now + TS_REPAIR_READ_NS :
						       restamp_due;
}

/* The bounds of device @d's depth, read from @st and its counters. */
static void read_bounds(struct ts_tracer *t,
			const volatile struct ts_dev_state *st,
			struct ts_dev_snap *d, __u64 now_ns)
{
	const __u64 *ev = d->stats.events;
	struct ts_bounds_read in = {
		.qid = d->qid,
		.queue = d->queue,
		.claimed_ns = d->claimed_ns,
		.device_peak_taken = st->device_peak_taken,
		.os_peak_taken = st->os_peak_taken,
		.suspects = st->suspects,
		.under = ev[TS_EV_RQ_FULL] + ev[TS_EV_UNMATCHED] +
			 ev[TS_EV_DEPTH_BELOW] +
			 ev[TS_EV_CLAIMING] + ev[TS_EV_UNORDERED],
		.missed = ev[TS_EV_MISSED_C] + d->repairs_uncounted,
		.contended = ev[TS_EV_CONTENDED],
	};
	struct ts_bounds_out out;

	ts_bounds_device(&t->bounds, &in, now_ns, &out);
	d->suspects = in.suspects;
	d->device_span = out.span;
	d->device_run = out.run;
	d->os_peak = out.os_peak;
	d->os_peak_run = out.os_peak_run;
}

/* Issue time of the device's oldest request in flight at the sweep, or 0. */
static __u64 oldest_issue(struct ts_tracer *t, unsigned int qid)
{
	__u64 ns = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.oldest_issue), &qid,
				&ns) || ns == ~0ULL)
		return 0;
	return ns;
}

/*
 * @st's depth words and level registers, as of the clock read right after
 * their copy (d->levels_ns): the span of the depth figures runs from one
 * such read to the next, so that a pause between the copy and the clock
 * read of a report's end (a busy host) cannot stretch or shrink it.
 */
static void read_levels(const volatile struct ts_dev_state *st,
			struct ts_dev_snap *d)
{
	__u64 now;
	__u64 raw_dev[TS_LEVEL_REGS], raw_os[TS_LEVEL_REGS];
	__u64 word_dev, word_os;

	memcpy(raw_dev, (const void *)st->device_level, sizeof(raw_dev));
	memcpy(raw_os, (const void *)st->os_level, sizeof(raw_os));
	word_dev = st->in_device;
	word_os = st->in_os;
	d->levels_ns = mono_ns();
	d->in_device = ts_depth_of(word_dev);
	d->in_os = ts_depth_of(word_os);
	now = d->levels_ns + clock_offset;
	ts_levels_at(raw_dev, word_dev, now, d->device_time);
	ts_levels_at(raw_os, word_os, now, d->os_time);
}

/*
 * Depth histogram slot @slot of the disk claimed at @claim, widened to 64
 * bits into @out. A new disk in the slot (the BPF side emptied it) counts
 * from zero.
 */
static void read_depth(struct ts_tracer *t, __u64 claim, unsigned int slot,
		       struct ts_depth_counts *out)
{
	if (t->depth_claim[slot] && t->depth_claim[slot] != claim) {
		memset(&t->depth_total[slot], 0, sizeof(t->depth_total[0]));
		memset(&t->depth_seen[slot], 0, sizeof(t->depth_seen[0]));
	}
	t->depth_claim[slot] = claim;
	ts_depth_widen(&t->depth_total[slot], &t->depth_seen[slot],
		       &t->depth_hists[slot]);
	*out = t->depth_total[slot];
}

/* Histogram slot @slot's service by size (--pattern), widened, into @s. */
static void read_sizes(struct ts_tracer *t, __u64 claim, unsigned int slot,
		       struct ts_snapshot *s)
{
	if (!t->pattern)
		return;
	if (t->size_claim[slot] && t->size_claim[slot] != claim) {
		memset(&t->size_total[slot], 0, sizeof(t->size_total[0]));
		memset(t->size_seen[slot], 0, sizeof(t->size_seen[0]));
	}
	t->size_claim[slot] = claim;
	ts_size_widen(&t->size_total[slot], t->size_seen[slot],
		      &t->size_hists[slot * TS_PATTERN_OPS]);
	s->sizes[slot] = t->size_total[slot];
	s->has_sizes = true;
}

/* Slot @qid's counters, of claim @c: the disk's own (lib/claim.h). */
static void read_counters(struct ts_tracer *t, unsigned int qid,
			  const struct ts_claim *c, struct ts_dev_snap *d)
{
	struct ts_claim_counters now;

	/* a map that could not be read: its counters as last read */
	if (!sum_stats(t, qid, &now.stats))
		now.stats = t->claims[qid].last.stats;
	t->counted_ns = mono_ns();
	if (!read_pattern(t, qid, &now.pattern))
		now.pattern = t->claims[qid].last.pattern;
	ts_claim_counts(&t->claims[qid], c->claimed_ns, !d->untraced, &now);
	d->stats = now.stats;
	d->pattern = now.pattern;
}

/* Traced disk @d's histograms into @s (none beyond TS_HIST_DEVS). */
static void read_hists(struct ts_tracer *t,
		       const volatile struct ts_dev_state *st,
		       const struct ts_claim *c, struct ts_snapshot *s,
		       struct ts_dev_snap *d)
{
	d->hist_slot = st->hist_slot <= TS_HIST_DEVS ? st->hist_slot : 0;
	if (!d->hist_slot)
		return;
	memcpy(s->hist[d->hist_slot - 1],
	       &t->hists[(d->hist_slot - 1) * TS_HIST_SETS], sizeof(s->hist[0]));
	read_depth(t, c->claimed_ns, d->hist_slot - 1,
		   &s->depth[d->hist_slot - 1]);
	read_sizes(t, c->claimed_ns, d->hist_slot - 1, s);
}

/* Whether slot @qid counted a request since its counters were last read. */
static bool counts_moved(struct ts_tracer *t, unsigned int qid)
{
	const struct ts_dev_stats *then = &t->claims[qid].last.stats;
	struct ts_dev_stats now;
	int op;

	if (!sum_stats(t, qid, &now))
		return false;
	for (op = 0; op < TS_NR_OPS; op++)
		if (now.op[op].ios != then->op[op].ios)
			return true;
	return false;
}

/*
 * Repairs of slot @qid that began (taking a request out of the depth) and
 * were not counted missed in the counters last read: read after the levels,
 * those repairs may be in them (bpf/records.bpf.h, forget_request).
 */
static __u64 repairs_uncounted(struct ts_tracer *t,
			       const volatile struct ts_dev_state *st,
			       unsigned int qid)
{
	__u64 counted = t->claims[qid].last.stats.events[TS_EV_MISSED_C], begun;

	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* after the levels' reads */
	begun = __atomic_load_n(&st->repairs_begun, __ATOMIC_RELAXED);
	return begun > counted ? begun - counted : 0;
}

/* What only a traced disk's entry @d holds, in snapshot @s. */
static void fill_traced(struct ts_tracer *t,
			const volatile struct ts_dev_state *st,
			const struct ts_claim *c, unsigned int durable,
			struct ts_snapshot *s, struct ts_dev_snap *d)
{
	int tries;

	/*
	 * The counters and the histograms are two reads: requests that
	 * complete between them are in one and not the other, and a report
	 * of a few (a short burst, the loader held up between the reads)
	 * could find them all in the previous report's histograms. Both are
	 * read again while the counters moved; three times at most: under
	 * steady I/O the few at the edges do not matter. The levels come
	 * last, with the counters again while a repair that may have changed
	 * them is not yet in missed: its span would read exact.
	 */
	for (tries = 1;; tries++) {
		read_hists(t, st, c, s, d);
		if (tries == 3 || !counts_moved(t, d->qid)) {
			read_levels(st, d);
			d->repairs_uncounted = repairs_uncounted(t, st, d->qid);
			if (tries == 3 || !d->repairs_uncounted)
				break;
		}
		read_counters(t, d->qid, c, d);
	}
	d->sync_in_flight = durable;
	read_bounds(t, st, d, d->levels_ns);
	d->oldest_issue_ns = oldest_issue(t, d->qid);
}

/* Slot @qid, of claim @c, as snapshot @s's next device. */
static void fill_slot(struct ts_tracer *t, unsigned int qid,
		      const struct ts_claim *c, unsigned int durable,
		      struct ts_snapshot *s)
{
	const volatile struct ts_dev_state *st = &t->state[qid];
	struct ts_dev_snap *d = &s->dev[s->ndev], gone;

	memset(d, 0, sizeof(*d));
	d->qid = qid;
	d->queue = c->queue;
	d->queue_id = st->queue_id;
	d->kdev = st->dev;
	d->claimed_ns = c->claimed_ns;
	d->layer = st->layer;
	d->untraced = st->mode != TS_DEV_TRACED;
	read_counters(t, qid, c, d);
	if (t->test_sweep_between)
		settle(t); /* its repairs after the counters, before the levels */
	if (!d->untraced)
		fill_traced(t, st, c, durable, s, d);
	if (ts_slot_next(&t->last[qid], d, &gone))
		ts_snapshot_keep_gone(t->gone, &gone);
}

/*
 * Slot @qid into snapshot @s once claimed: the claim it holds once any
 * under way has ended, read again when a claim began while it was read
 * (lib/claim.h). A slot left out of one report would have its next report
 * count its disk from the slot's start.
 */
static bool read_slot(struct ts_tracer *t, unsigned int qid,
		      unsigned int durable, struct ts_snapshot *s)
{
	const volatile struct ts_dev_state *st = &t->state[qid];
	struct ts_claim c;

	do {
		if (!ts_claim_settled(st, &c, TS_CLAIM_WAIT_US)) {
			fprintf(stderr, "truestat: device slot %u still being "
				"claimed after %u s: left out of this report, "
				"counted from its start in the next\n", qid,
				TS_CLAIM_WAIT_US / 1000000);
			return false;
		}
		if (!c.queue)
			return false;
		fill_slot(t, qid, &c, durable, s);
	} while (!ts_claim_held(st, &c));
	return true;
}

void ts_tracer_snapshot(struct ts_tracer *t, struct ts_snapshot *s,
			bool span_end)
{
	static unsigned int durable[TS_MAX_DEVS];
	unsigned int qid;

	follow_stacks(t);
	test_age_stamps(t);
	if (!t->test_sweep_between)
		settle(t);
	read_repairs(t);
	durable_in_flight(t, durable);
	s->ndev = 0;
	t->counted_ns = 0;
	for (qid = 0; qid < TS_MAX_DEVS; qid++)
		if (read_slot(t, qid, durable[qid], s))
			s->ndev++;
	/* as of the counters' reads: a request that completes after the last
	 * one (while the rest of its device is read) is the next span's */
	s->mono_ns = t->counted_ns ? t->counted_ns : mono_ns();
	s->lost_events = lost_events(t);
	s->seq = 0;
	if (span_end) {
		s->seq = ++t->seq;
		ts_bounds_end_span(&t->bounds, s->mono_ns);
	}
}

void ts_tracer_gone(struct ts_tracer *t, struct ts_snapshot *gone)
{
	int i;

	for (i = 0; i < t->gone->ndev; i++)
		ts_snapshot_keep_gone(gone, &t->gone->dev[i]);
	t->gone->ndev = 0;
}

int ts_tracer_untraced(struct ts_tracer *t, unsigned int *kdevs, int max,
		       bool *more)
{
	int fd = bpf_map__fd(t->skel->maps.untraced), n = 0;
	__u32 key = ~0U, next; /* no disk is ~0: its next key is the first */

	*more = t->skel->bss->untraced_lost > 0;
	while (!bpf_map_get_next_key(fd, &key, &next)) {
		if (n < max)
			kdevs[n++] = next;
		else
			*more = true;
		key = next;
	}
	return n;
}

static int on_slow_event(void *ctx, void *data, size_t len)
{
	struct ts_tracer *t = ctx;

	if (len < sizeof(struct ts_slow_event))
		return 0;
	return t->on_slow(t->on_slow_ctx, data);
}

static struct ts_who_ledger *who_ledger(struct ts_tracer *t)
{
	if (!t->who)
		t->who = calloc(1, sizeof(*t->who));
	return t->who;
}

void ts_tracer_who_keep(struct ts_tracer *t,
			bool (*keep)(const void *ctx, const struct ts_who_key *k),
			const void *ctx)
{
	if (!who_ledger(t))
		return;
	t->who->keep = keep;
	t->who->keep_ctx = ctx;
}

/*
 * Deletes @e from the table, its counts as they were then in @e: 0, or -1
 * on failure, or 1 where the kernel cannot take an entry in one step
 * (lookup-and-delete on a hash came with 5.14). Two steps would lose a
 * request counted between them, unseen by who_fold_races (the entry is
 * still there when the program looks again): there the table is not
 * folded, and past its 1024 entries requests count in who_table_full.
 */
static int take_who(int fd, struct ts_who_entry *e)
{
	if (!bpf_map_lookup_and_delete_elem(fd, &e->key, &e->s))
		return 0;
	if (errno == EINVAL || errno == 524 /* ENOTSUPP */ ||
	    errno == EOPNOTSUPP)
		return 1;
	return -1;
}

void ts_tracer_read_who(struct ts_tracer *t, struct ts_who_table *out)
{
	int fd = bpf_map__fd(t->skel->maps.by_who);
	/* no device has queue id ~0: its next key is the first */
	struct ts_who_key key = { .qid = 0xffff }, next;
	static int pick[TS_WHO_ENTRIES];
	int i, n, taken, rc;

	out->n = 0;
	while (out->n < TS_WHO_ENTRIES &&
	       !bpf_map_get_next_key(fd, &key, &next)) {
		out->e[out->n].key = next;
		out->e[out->n].folded = 0;
		if (!bpf_map_lookup_elem(fd, &next, &out->e[out->n].s))
			out->n++;
		key = next;
	}
	if (!who_ledger(t))
		return;
	n = t->who->cannot_fold ? 0 : ts_who_pick(t->who, out, pick);
	for (i = 0, taken = 0; i < n; i++) {
		rc = take_who(fd, &out->e[pick[i]]);
		if (rc > 0) {
			t->who->cannot_fold = true;
			break;
		}
		if (rc)
			continue;
		ts_who_fold(t->who, &out->e[pick[i]]);
		pick[taken++] = pick[i];
	}
	ts_who_add_folded(t->who, pick, taken, out);
}

void ts_tracer_read_flags(struct ts_tracer *t, struct ts_flags_table *out)
{
	int fd = bpf_map__fd(t->skel->maps.flag_stats);
	/* no device has queue id ~0: its next key is the first */
	struct ts_flags_key key = { .qid = ~0U }, next;

	/* entries are never deleted: the walk sees each once */
	out->n = 0;
	while (out->n < TS_FLAGS_ENTRIES &&
	       !bpf_map_get_next_key(fd, &key, &next)) {
		out->e[out->n].key = next;
		if (!bpf_map_lookup_elem(fd, &next, &out->e[out->n].s))
			out->n++;
		key = next;
	}
}

void ts_tracer_read_parts(struct ts_tracer *t, struct ts_part_table *out)
{
	int fd = bpf_map__fd(t->skel->maps.part_stats);
	struct ts_part_key key, next;
	void *prev = NULL; /* NULL: the first key */

	out->n = 0;
	while (out->n < TS_PART_MAX && !bpf_map_get_next_key(fd, prev, &next)) {
		out->e[out->n].key = next;
		if (!bpf_map_lookup_elem(fd, &next, &out->e[out->n].s))
			out->n++;
		key = next;
		prev = &key;
	}
}

void ts_tracer_fold_who(struct ts_tracer *t)
{
	static struct ts_who_table scratch;

	ts_tracer_read_who(t, &scratch);
}

/* Stops the reader thread, if it runs. */
static void stop_slow_reader(struct ts_tracer *t)
{
	if (!t->slow_reading)
		return;
	atomic_store(&t->slow_stop, true);
	pthread_join(t->slow_reader, NULL);
	t->slow_reading = false;
	if (verbose && t->slow_read)
		fprintf(stderr, "truestat: --slow reader: %llu records, %.0f ns "
			"of its CPU each\n", (unsigned long long)t->slow_read,
			(double)t->slow_cpu_ns / t->slow_read);
}

void ts_tracer_read_slow(struct ts_tracer *t)
{
	if (!t->slow)
		return;
	stop_slow_reader(t);
	consume_slow(t);
}

void ts_tracer_close(struct ts_tracer *t)
{
	if (!t)
		return;
	if (verbose && t->skel && t->skel->data)
		fprintf(stderr, "truestat: request table: records up to %u slots "
			"from their hash\n", t->skel->data->rq_reach);
	if (verbose && t->sweeps)
		fprintf(stderr, "truestat: sweep of %u slots: %llu, %.1f us "
			"each in BPF, the longest part %.1f us; %.1f us each "
			"in all\n", t->rq_slots, (unsigned long long)t->sweeps,
			t->sweep_ns / 1e3 / t->sweeps,
			t->sweep_part_max_ns / 1e3,
			t->sweep_wall_ns / 1e3 / t->sweeps);
	stop_slow_reader(t);
	ring_buffer__free(t->slow);
	bpf_link__destroy(t->remap);
	while (t->nlinks > 0)
		bpf_link__destroy(t->links[--t->nlinks]);
	if (t->state)
		munmap((void *)t->state, t->state_len);
	if (t->hists)
		munmap((void *)t->hists, t->hists_len);
	if (t->depth_hists)
		munmap((void *)t->depth_hists, t->depth_hists_len);
	if (t->size_hists)
		munmap((void *)t->size_hists, t->size_hists_len);
	if (t->repairs)
		munmap((void *)t->repairs, t->repairs_len);
	if (t->rq_table)
		munmap((void *)t->rq_table, t->rq_table_len);
	truestat_bpf__destroy(t->skel);
	ts_bounds_free(&t->bounds);
	free(t->percpu);
	free(t->claims);
	free(t->last);
	free(t->gone);
	free(t->who);
	free(t);
}
