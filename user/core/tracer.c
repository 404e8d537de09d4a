// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "truestat.h"
#include "kfeatures.h"
#include "truestat.skel.h"
#include "truestat-locked.skel.h"
#include "kload.h"
#include "loader.h"

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
enum ts_tp tracer_hook_of(const struct bpf_program *prog)
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
				 tracer_hook_of(prog) < TS_TP_COUNT &&
				 plan.load[tracer_hook_of(prog)]));
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

int tracer_fail(char *err, size_t errlen, const char *fmt, ...)
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
		return tracer_fail(err, errlen, "%s", plan.why);
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
		return tracer_fail(err, errlen, "Linux %s: no kernel BTF at %s: "
			    "truestat needs Linux " TS_OLDEST_KERNEL " or "
			    "later built with CONFIG_DEBUG_INFO_BTF=y",
			    f.release, o->btf_path);
	}
	btf = btf__parse(o->btf_path, NULL);
	if (!btf)
		return tracer_fail(err, errlen, "cannot read kernel BTF at %s: %s",
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
		return tracer_fail(err, errlen, "cannot load the BPF programs: %s%s",
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
		return tracer_fail(err, errlen, "cannot map the device state: %s",
			    strerror(errno));
	t->ncpus = libbpf_num_possible_cpus();
	t->percpu = calloc(t->ncpus > 0 ? t->ncpus : 1, sizeof(*t->percpu));
	t->claims = calloc(TS_MAX_DEVS, sizeof(*t->claims));
	t->last = calloc(TS_MAX_DEVS, sizeof(*t->last));
	t->gone = calloc(1, sizeof(*t->gone));
	if (t->ncpus <= 0 || !t->percpu || !t->claims || !t->last || !t->gone)
		return tracer_fail(err, errlen, "cannot size the per-CPU maps");
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
	t->verbose = verbose;
	t->clock_offset = clock_offset;
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
		error = tracer_attach_in_order(t);
	if (error) {
		tracer_fail(err, errlen, "cannot attach to the block tracepoints: %s",
		     strerror(-error));
		goto fail;
	}
	tracer_follow_stacks(t);
	if (verbose && !t->remap && plan.load[TS_TP_REMAP])
		fprintf(stderr, "truestat: block_bio_remap not followed: "
			"no traced disk is stacked (md, dm)\n");
	if (map_state(t, err, errlen))
		goto fail;
	if (o->slow && tracer_open_slow(t, o, err, errlen))
		goto fail;
	return t;
fail:
	ts_tracer_close(t);
	return NULL;
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
	if (verbose && t->sweeps)
		fprintf(stderr, "truestat: counters and depths read again %llu "
			"times for a pause in their clock bracket; the widest "
			"kept %.1f us\n", (unsigned long long)t->reread,
			t->bracket_max_ns / 1e3);
	tracer_stop_slow_reader(t);
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
