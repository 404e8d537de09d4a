// SPDX-License-Identifier: GPL-2.0
/* Disk names <-> device numbers, against a fake sysfs tree. */
#define _GNU_SOURCE
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/devices.h"

static char root[PATH_MAX];

/* mkdir -p ROOT/@rel */
static void mkdirs(const char *rel)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static void put_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* ROOT/@rel -> @target (relative, as sysfs does it) */
static void put_link(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

/* zram, md and device-mapper disks have no request queue. */
static bool bio_based(const char *disk)
{
	return !strncmp(disk, "zram", 4) || !strncmp(disk, "md", 2) ||
	       !strncmp(disk, "dm-", 3);
}

/* A disk, and a partition of it when @part is not NULL. */
static void add_disk(const char *disk, const char *dev, const char *part,
		     const char *partdev)
{
	char rel[PATH_MAX], target[PATH_MAX];

	snprintf(rel, sizeof(rel), "devices/virtual/block/%s", disk);
	mkdirs(rel);
	if (!bio_based(disk)) { /* request-based: a blk-mq queue */
		snprintf(rel, sizeof(rel), "devices/virtual/block/%s/mq", disk);
		mkdirs(rel);
	}
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/dev", disk);
	put_file(rel, dev);
	snprintf(target, sizeof(target), "../../devices/virtual/block/%s", disk);
	snprintf(rel, sizeof(rel), "class/block/%s", disk);
	put_link(target, rel);
	snprintf(rel, sizeof(rel), "dev/block/%.*s", (int)strlen(dev) - 1, dev);
	put_link(target, rel);
	snprintf(target, sizeof(target), "../devices/virtual/block/%s", disk);
	snprintf(rel, sizeof(rel), "block/%s", disk);
	put_link(target, rel);
	if (!part)
		return;

	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/%s", disk, part);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/%s/dev", disk, part);
	put_file(rel, partdev);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/%s/partition", disk,
		 part);
	put_file(rel, "1\n");
	snprintf(target, sizeof(target), "../../devices/virtual/block/%s/%s",
		 disk, part);
	snprintf(rel, sizeof(rel), "class/block/%s", part);
	put_link(target, rel);
	snprintf(rel, sizeof(rel), "dev/block/%.*s", (int)strlen(partdev) - 1,
		 partdev);
	put_link(target, rel);
}

/*
 * @upper is stacked on @lower (sysfs directory @lower_dir, under
 * devices/virtual/block): upper/slaves/lower and lower/holders/upper.
 */
static void stack_on(const char *upper, const char *lower, const char *lower_dir)
{
	char rel[PATH_MAX], target[PATH_MAX];

	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/slaves", upper);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/slaves/%s", upper,
		 lower);
	snprintf(target, sizeof(target), "%s/devices/virtual/block/%s", root,
		 lower_dir);
	put_link(target, rel);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/holders", lower_dir);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "devices/virtual/block/%s/holders/%s",
		 lower_dir, upper);
	snprintf(target, sizeof(target), "%s/devices/virtual/block/%s", root,
		 upper);
	put_link(target, rel);
}

static int setup(void **state)
{
	strcpy(root, "/tmp/truestat-sysfs-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	mkdirs("class/block");
	mkdirs("block");
	mkdirs("dev/block");
	/* created out of order: the list must come back sorted */
	add_disk("vda", "253:0\n", "vda1", "253:1\n");
	add_disk("loop0", "7:0\n", NULL, NULL);
	add_disk("nvme0n1", "259:0\n", "nvme0n1p2", "259:2\n");
	/* a disk whose dev file cannot be parsed */
	add_disk("broken", "garbage\n", NULL, NULL);
	/* bio-based: no mq directory */
	add_disk("zram0", "251:0\n", NULL, NULL);
	/* dm-0 (vg0-lv0) on md0 on vda1 and nvme0n1: a stack */
	add_disk("md0", "9:0\n", NULL, NULL);
	add_disk("dm-0", "252:0\n", NULL, NULL);
	mkdirs("devices/virtual/block/dm-0/dm");
	put_file("devices/virtual/block/dm-0/dm/name", "vg0-lv0\n");
	stack_on("md0", "vda1", "vda/vda1");
	stack_on("md0", "nvme0n1", "nvme0n1");
	stack_on("dm-0", "md0", "md0");
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	return nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_resolve_disk(void **state)
{
	struct ts_disk d;
	char err[256] = "";

	assert_int_equal(ts_disk_resolve(root, "vda", &d, err, sizeof(err)), 0);
	assert_string_equal(d.name, "vda");
	assert_int_equal(d.major, 253);
	assert_int_equal(d.minor, 0);
	assert_false(d.bio_based);
	assert_int_equal(ts_disk_resolve(root, "zram0", &d, err, sizeof(err)), 0);
	assert_true(d.bio_based);
	assert_false(d.was_partition);

	assert_int_equal(ts_disk_resolve(root, "loop0", &d, err, sizeof(err)),
			 0);
	assert_string_equal(d.name, "loop0");
	assert_int_equal(d.major, 7);
	assert_int_equal(d.minor, 0);
	assert_false(d.was_partition);
	assert_string_equal(err, "");
}

static void test_resolve_partition(void **state)
{
	struct ts_disk d;
	char err[256];

	assert_int_equal(ts_disk_resolve(root, "vda1", &d, err, sizeof(err)), 0);
	assert_string_equal(d.name, "vda");
	assert_int_equal(d.major, 253);
	assert_int_equal(d.minor, 0);
	assert_true(d.was_partition);

	assert_int_equal(ts_disk_resolve(root, "nvme0n1p2", &d, err,
					 sizeof(err)),
			 0);
	assert_string_equal(d.name, "nvme0n1");
	assert_int_equal(d.major, 259);
	assert_int_equal(d.minor, 0);
	assert_true(d.was_partition);
}

static void test_resolve_unknown(void **state)
{
	struct ts_disk d;
	char err[256];

	assert_int_equal(ts_disk_resolve(root, "sdz", &d, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown device 'sdz' "
				 "(disks: broken dm-0 loop0 md0 nvme0n1 vda zram0)");
	/* a path must not escape class/block */
	assert_int_equal(ts_disk_resolve(root, "../block/vda", &d, err,
					 sizeof(err)),
			 -1);
	assert_string_equal(err, "unknown device '../block/vda' "
				 "(disks: broken dm-0 loop0 md0 nvme0n1 vda zram0)");
}

static void test_resolve_unreadable(void **state)
{
	struct ts_disk d;
	char err[PATH_MAX + 100], want[PATH_MAX + 100];

	assert_int_equal(ts_disk_resolve(root, "broken", &d, err, sizeof(err)),
			 -1);
	snprintf(want, sizeof(want),
		 "cannot read the device number of 'broken' in %s", root);
	assert_string_equal(err, want);
}

/* A device-mapper name (dm/name, as under /dev/mapper) is its dm-N disk. */
static void test_resolve_dm_name(void **state)
{
	struct ts_disk d;
	char err[256];

	assert_int_equal(ts_disk_resolve(root, "vg0-lv0", &d, err, sizeof(err)),
			 0);
	assert_string_equal(d.name, "dm-0");
	assert_int_equal(d.major, 252);
	assert_int_equal(d.minor, 0);
	assert_true(d.bio_based);
	assert_false(d.was_partition);
	assert_int_equal(ts_disk_resolve(root, "dm-0", &d, err, sizeof(err)), 0);
	assert_string_equal(d.name, "dm-0");
	assert_int_equal(ts_disk_resolve(root, "vg0-nope", &d, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "unknown device 'vg0-nope' "
				 "(disks: broken dm-0 loop0 md0 nvme0n1 vda zram0)");
}

/*
 * Members (slaves/) sorted, a partition named as such but mapped to its
 * whole disk; holders (holders/); none for a plain disk or a name sysfs
 * does not know.
 */
static void test_stack(void **state)
{
	struct ts_stack st;

	memset(&st, 0x55, sizeof(st));
	ts_disk_stack(root, "md0", &st);
	assert_int_equal(st.nmembers, 2);
	assert_string_equal(st.member[0].name, "nvme0n1");
	assert_int_equal(st.member[0].major, 259);
	assert_int_equal(st.member[0].minor, 0);
	assert_string_equal(st.member[1].name, "vda1");
	assert_int_equal(st.member[1].major, 253); /* vda, its whole disk */
	assert_int_equal(st.member[1].minor, 0);
	assert_int_equal(st.nholders, 1);
	assert_string_equal(st.holder[0], "dm-0");

	ts_disk_stack(root, "dm-0", &st);
	assert_int_equal(st.nmembers, 1);
	assert_string_equal(st.member[0].name, "md0");
	assert_int_equal(st.member[0].major, 9);
	assert_int_equal(st.nholders, 0);

	ts_disk_stack(root, "vda", &st);
	assert_int_equal(st.nmembers, 0);
	assert_int_equal(st.nholders, 0);
	ts_disk_stack(root, "8:16", &st);
	assert_int_equal(st.nmembers, 0);
	assert_int_equal(st.nholders, 0);
}

/* -d dm-0: dm-0, then md0 under it, then md0's members as whole disks. */
static void test_add_stack(void **state)
{
	unsigned int kdevs[8] = { 0 };
	int n;

	n = ts_disk_add_stack(root, 252, 0, kdevs, 0, 8);
	assert_int_equal(n, 4);
	assert_int_equal(kdevs[0], ts_kdev(252, 0));
	assert_int_equal(kdevs[1], ts_kdev(9, 0));
	assert_int_equal(kdevs[2], ts_kdev(259, 0)); /* nvme0n1 */
	assert_int_equal(kdevs[3], ts_kdev(253, 0)); /* vda, for vda1 */
	/* each once: md0 again adds nothing, a plain disk only itself */
	assert_int_equal(ts_disk_add_stack(root, 9, 0, kdevs, n, 8), 4);
	assert_int_equal(ts_disk_add_stack(root, 7, 0, kdevs, n, 8), 5);
	assert_int_equal(kdevs[4], ts_kdev(7, 0));
	/* no room for the members */
	assert_int_equal(ts_disk_add_stack(root, 9, 0, kdevs, 0, 2), -1);
}

/* -N: dm-0 is vg0-lv0, itself and as md0's holder; others keep theirs. */
static void test_dm_rename(void **state)
{
	struct ts_stack st;
	char buf[64] = "dm-0", cut[4] = "dm-";

	ts_disk_dm_rename(root, buf, sizeof(buf));
	assert_string_equal(buf, "vg0-lv0");
	ts_disk_dm_rename(root, cut, sizeof(cut));
	assert_string_equal(cut, "dm-"); /* no disk of that name */
	strcpy(buf, "md0");
	ts_disk_dm_rename(root, buf, sizeof(buf));
	assert_string_equal(buf, "md0");
	memset(&st, 0, sizeof(st));
	ts_disk_stack(root, "md0", &st);
	ts_stack_dm_rename(root, &st);
	assert_string_equal(st.holder[0], "vg0-lv0");
	assert_string_equal(st.member[0].name, "nvme0n1");
}

/*
 * --exclude: globs against kernel and device-mapper names, sorted; a glob
 * that matches nothing is marked so; a disk with no readable number is
 * matched but cannot be left out.
 */
static void test_exclude(void **state)
{
	static struct ts_exclusion x;

	x.nglobs = 4;
	strcpy(x.globs[0], "vg0-*");
	strcpy(x.globs[1], "[lz]*");
	strcpy(x.globs[2], "sd?");
	strcpy(x.globs[3], "brok*");
	assert_int_equal(ts_disk_exclude(root, &x), 0);
	assert_int_equal(x.ndisks, 7);
	assert_int_equal(x.n, 3);
	assert_string_equal(x.names, "dm-0 loop0 zram0");
	assert_int_equal(x.kdevs[0], ts_kdev(252, 0));
	assert_int_equal(x.kdevs[1], ts_kdev(7, 0));
	assert_int_equal(x.kdevs[2], ts_kdev(251, 0));
	assert_true(x.matched[0] && x.matched[1] && x.matched[3]);
	assert_false(x.matched[2]);
	assert_int_equal(ts_disk_exclude("/nonexistent", &x), -1);
}

/* queue/max_discard_segments, by number; 0 where sysfs has none. */
static void test_discard_ranges(void **state)
{
	mkdirs("devices/virtual/block/nvme0n1/queue");
	put_file("devices/virtual/block/nvme0n1/queue/max_discard_segments",
		 "256\n");
	assert_int_equal(ts_disk_discard_ranges(root, 259, 0), 256);
	assert_int_equal(ts_disk_discard_ranges(root, 253, 0), 0);
	assert_int_equal(ts_disk_discard_ranges(root, 8, 16), 0);
}

static void test_name(void **state)
{
	char buf[64];

	ts_disk_name(root, 253, 0, buf, sizeof(buf));
	assert_string_equal(buf, "vda");
	ts_disk_name(root, 253, 1, buf, sizeof(buf));
	assert_string_equal(buf, "vda1");
	ts_disk_name(root, 259, 0, buf, sizeof(buf));
	assert_string_equal(buf, "nvme0n1");
	ts_disk_name(root, 8, 16, buf, sizeof(buf));
	assert_string_equal(buf, "8:16");
	ts_disk_name(root, 259, 2, buf, 4); /* cut, still terminated */
	assert_string_equal(buf, "nvm");
}

static void test_list(void **state)
{
	char buf[256], other[PATH_MAX], want[PATH_MAX + 32];

	ts_disk_list(root, false, buf, sizeof(buf));
	assert_string_equal(buf, "broken dm-0 loop0 md0 nvme0n1 vda zram0");
	ts_disk_list(root, true, buf, sizeof(buf));
	assert_string_equal(buf, "dm-0 md0 zram0");

	/* only whole names that fit */
	memset(buf, 'x', sizeof(buf));
	ts_disk_list(root, false, buf, 14);
	assert_string_equal(buf, "broken dm-0");
	assert_int_equal(buf[14], 'x'); /* nothing written past 14 */

	/* no block/ directory at all */
	snprintf(other, sizeof(other), "%s/devices", root);
	ts_disk_list(other, false, buf, sizeof(buf));
	snprintf(want, sizeof(want), "none found in %s/block", other);
	assert_string_equal(buf, want);

	/* an empty one */
	mkdirs("empty/block");
	snprintf(other, sizeof(other), "%s/empty", root);
	ts_disk_list(other, false, buf, sizeof(buf));
	assert_string_equal(buf, "none");
}

/* @n hardware queues of @tags tags each for request-based @disk */
static void add_queues(const char *disk, int n, const char *tags)
{
	char rel[PATH_MAX];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "devices/virtual/block/%s/mq/%d",
			 disk, i);
		mkdirs(rel);
		snprintf(rel, sizeof(rel),
			 "devices/virtual/block/%s/mq/%d/nr_tags", disk, i);
		put_file(rel, tags);
	}
}

static void test_tags(void **state)
{
	unsigned int kdevs[] = { ts_kdev(259, 0), ts_kdev(251, 0) };

	add_queues("vda", 2, "256\n");
	add_queues("nvme0n1", 4, "1023\n");
	add_queues("loop0", 1, "128\n");
	/* every disk; bio-based ones (zram0, md0, dm-0) have none */
	assert_int_equal(ts_disk_tags(root, NULL, 0), 512 + 4092 + 128);
	/* the traced ones only */
	assert_int_equal(ts_disk_tags(root, kdevs, 2), 4092);
	assert_int_equal(ts_disk_tags(root, kdevs + 1, 1), 0);
	assert_int_equal(ts_disk_tags("/nonexistent", NULL, 0), 0);
}

static void test_kdev(void **state)
{
	assert_int_equal(ts_kdev(0, 0), 0);
	assert_int_equal(ts_kdev(8, 0), 8 * 1048576);
	assert_int_equal(ts_kdev(259, 2), 259 * 1048576 + 2);
	/* minors use 20 bits, majors the 12 above */
	assert_int_equal(ts_kdev(1, 0xfffff), 0x1fffff);
	assert_int_equal(ts_kdev(4095, 0xfffff), 0xffffffffu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_disk),
		cmocka_unit_test(test_resolve_partition),
		cmocka_unit_test(test_resolve_unknown),
		cmocka_unit_test(test_resolve_unreadable),
		cmocka_unit_test(test_resolve_dm_name),
		cmocka_unit_test(test_stack),
		cmocka_unit_test(test_add_stack),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_dm_rename),
		cmocka_unit_test(test_discard_ranges),
		cmocka_unit_test(test_exclude),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_kdev),
		cmocka_unit_test(test_tags),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
