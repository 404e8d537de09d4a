// SPDX-License-Identifier: GPL-2.0
/*
 * doc/building.md's sizes of the BPF maps, and doc/safety.md's sum of them,
 * from the structures and limits of include/truestat.h that make them
 * (value size x entries, the tables at their smallest): the docs say what
 * the code allocates. Run from the tree's root (make unit-test).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "truestat.h"

#define KIB 1024.0

static char doc[1 << 17], safety[1 << 15];

/* File @path into @buf with every run of blanks and line ends as a space. */
static int read_doc(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int c, blank = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF && n < len - 1) {
		if (isspace(c)) {
			blank = 1;
			continue;
		}
		if (blank && n)
			buf[n++] = ' ';
		blank = 0;
		buf[n++] = c;
	}
	buf[n] = 0;
	fclose(f);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	return read_doc("doc/building.md", doc, sizeof(doc)) ||
	       read_doc("doc/safety.md", safety, sizeof(safety));
}

static void says_in(const char *text, const char *name, const char *fmt, ...)
{
	char want[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	if (!strstr(text, want))
		fail_msg("%s does not say \"%s\"", name, want);
}

#define says(...) says_in(doc, "doc/building.md", __VA_ARGS__)

static void test_device_maps(void **state)
{
	(void)state;
	says("%.0f KiB for the device state (%zu B per slot",
	     TS_MAX_DEVS * sizeof(struct ts_dev_state) / KIB,
	     sizeof(struct ts_dev_state));
	says("%.0f KiB per CPU for the counters (%zu B per slot)",
	     TS_MAX_DEVS * sizeof(struct ts_dev_stats) / KIB,
	     sizeof(struct ts_dev_stats));
	says("%.0f KiB for what nested completions added (%zu B per slot)",
	     TS_MAX_DEVS * sizeof(struct ts_nested_stats) / KIB,
	     sizeof(struct ts_nested_stats));
}

static void test_tables(void **state)
{
	(void)state;
	says("%.0f KiB for requests (%zu B a slot, a cache line) and %.0f KiB "
	     "for their layer records (%zu B a slot) at the smallest table "
	     "size, %.0f KiB for bios",
	     TS_RQ_SLOTS * sizeof(struct ts_rq_slot) / KIB,
	     sizeof(struct ts_rq_slot),
	     TS_RQ_SLOTS * sizeof(struct ts_layer_rec) / KIB,
	     sizeof(struct ts_layer_rec),
	     TS_BIO_SLOTS * sizeof(struct ts_bio_slot) / KIB);
	assert_int_equal(sizeof(struct ts_rq_slot), 64);
	/* the tables' range: a request's slot with its layer record, a bio's */
	says("%u to %u slots of %zu bytes", TS_RQ_SLOTS, TS_RQ_SLOTS_MAX,
	     sizeof(struct ts_rq_slot) + sizeof(struct ts_layer_rec));
	says("%u to %u slots of %zu bytes", TS_BIO_SLOTS, TS_BIO_SLOTS_MAX,
	     sizeof(struct ts_bio_slot));
	says("%.0f KiB for the log of repairs (%d of them)",
	     TS_REPAIR_SLOTS * sizeof(struct ts_repair) / KIB, TS_REPAIR_SLOTS);
}

static void test_histograms(void **state)
{
	(void)state;
	says("%.1f MiB for the latency histograms (%.1f KiB per disk and set)",
	     TS_HIST_DEVS * TS_HIST_SETS * sizeof(struct ts_hist) / KIB / KIB,
	     sizeof(struct ts_hist) / KIB);
	says("%.0f KiB for the depth curve (%.1f KiB per disk), for %d disks",
	     TS_HIST_DEVS * sizeof(struct ts_depth_hist) / KIB,
	     sizeof(struct ts_depth_hist) / KIB, TS_HIST_DEVS);
}

/* Every map but the per-CPU counters, and the counters per CPU. */
static void test_sum(void **state)
{
	double shared = TS_MAX_DEVS * sizeof(struct ts_dev_state) +
			TS_MAX_DEVS * sizeof(struct ts_nested_stats) +
			TS_RQ_SLOTS * (sizeof(struct ts_rq_slot) +
				       sizeof(struct ts_layer_rec)) +
			TS_BIO_SLOTS * sizeof(struct ts_bio_slot) +
			TS_REPAIR_SLOTS * sizeof(struct ts_repair) +
			TS_HIST_DEVS * TS_HIST_SETS * sizeof(struct ts_hist) +
			TS_HIST_DEVS * sizeof(struct ts_depth_hist);

	(void)state;
	says_in(safety, "doc/safety.md",
		"about %.1f MiB in all, and %.0f KiB more per CPU",
		shared / KIB / KIB,
		TS_MAX_DEVS * sizeof(struct ts_dev_stats) / KIB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_maps),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_histograms),
		cmocka_unit_test(test_sum),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
