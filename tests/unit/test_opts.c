// SPDX-License-Identifier: GPL-2.0
/* ts_parse_args: the command line of truestat. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cli/opts.h"

static struct ts_opts o;
static char err[256];

/* Parses "truestat ARGS..." into o and err; returns ts_parse_args' value. */
#define PARSE(...)                                                          \
	({                                                                  \
		char *argv_[] = { "truestat", __VA_ARGS__ };                \
		parse(sizeof(argv_) / sizeof(argv_[0]), argv_);             \
	})

static int parse(int argc, char **argv)
{
	memset(&o, 0x55, sizeof(o)); /* must all be overwritten */
	strcpy(err, "untouched");
	return ts_parse_args(argc, argv, &o, err, sizeof(err));
}

/* The call fails with exactly @msg. */
#define FAILS(msg, ...)                                                     \
	do {                                                                \
		assert_int_equal(PARSE(__VA_ARGS__), -1);                   \
		assert_string_equal(err, msg);                              \
	} while (0)

static void test_defaults(void **state)
{
	char *argv[] = { "truestat" };

	memset(&o, 0x55, sizeof(o));
	assert_int_equal(ts_parse_args(1, argv, &o, err, sizeof(err)), 0);
	assert_true(o.interval_s == 0);
	assert_int_equal(o.count, 0);
	assert_false(o.json);
	assert_false(o.verbose);
	assert_false(o.raw_tp);
	assert_false(o.light);
	assert_false(o.date);
	assert_false(o.dm_names);
	assert_false(o.help);
	assert_false(o.version);
	assert_int_equal(o.units, TS_UNIT_AUTO);
	assert_int_equal(o.ndevices, 0);
}

/* --units=us|ms fixes the tables' unit; the last one given counts. */
static void test_units(void **state)
{
	assert_int_equal(PARSE("--units=us", "1"), 0);
	assert_int_equal(o.units, TS_UNIT_US);
	assert_int_equal(PARSE("--units", "ms"), 0);
	assert_int_equal(o.units, TS_UNIT_MS);
	assert_int_equal(PARSE("--units=ms", "--units=us"), 0);
	assert_int_equal(o.units, TS_UNIT_US);
	FAILS("bad --units 'x': us or ms (default: per table)", "--units=x");
	FAILS("bad --units '': us or ms (default: per table)", "--units=");
	FAILS("bad --units 's': us or ms (default: per table)", "--units=s");
	FAILS("option '--units' needs a value", "--units");
}

static void test_interval_and_count(void **state)
{
	assert_int_equal(PARSE("2"), 0);
	assert_true(o.interval_s == 2.0);
	assert_int_equal(o.count, 0);

	assert_int_equal(PARSE("0.5", "10"), 0);
	assert_true(o.interval_s == 0.5);
	assert_int_equal(o.count, 10);

	/* the limits themselves are accepted */
	assert_int_equal(PARSE("0.001"), 0);
	assert_true(o.interval_s == 0.001);
	assert_int_equal(PARSE("86400", "1"), 0);
	assert_true(o.interval_s == 86400.0);
	assert_int_equal(o.count, 1);

	/* options may follow the positionals */
	assert_int_equal(PARSE("1", "3", "-j"), 0);
	assert_true(o.interval_s == 1.0);
	assert_int_equal(o.count, 3);
	assert_true(o.json);
}

static void test_devices(void **state)
{
	assert_int_equal(PARSE("-d", "sda", "--device=/dev/nvme0n1", "-dsda",
			       "--device", "vdb1", "-d", "/dev/sda",
			       "-d", "/dev/mapper/vg0-lv0", "-d", "vg0-lv0"),
			 0);
	assert_int_equal(o.ndevices, 4);
	assert_string_equal(o.devices[0], "sda");
	assert_string_equal(o.devices[1], "nvme0n1");
	assert_string_equal(o.devices[2], "vdb1");
	/* a device-mapper name, resolved later (user/lib/devices.c) */
	assert_string_equal(o.devices[3], "vg0-lv0");
}

/* --exclude: globs kept as given, /dev/ and mapper/ taken off. */
static void test_excludes(void **state)
{
	static const char *const want[] = { "loop*", "sd[a-c]", "vg0-*", "[]x]" };
	int i;

	assert_int_equal(PARSE("--exclude=loop*", "--exclude", "/dev/sd[a-c]",
			       "--exclude=/dev/mapper/vg0-*", "--exclude=[]x]"),
			 0);
	assert_int_equal(o.nexcludes, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(o.excludes[i], want[i]);
	assert_int_equal(PARSE("1"), 0);
	assert_int_equal(o.nexcludes, 0);
}

/* A glob fnmatch cannot read as meant: one line. */
static void test_bad_excludes(void **state)
{
	FAILS("bad --exclude '': empty (a shell pattern of disk names, e.g. --exclude='loop*')",
	      "--exclude=");
	FAILS("bad --exclude 'sd[ab': a '[' without its ']' (a shell pattern of disk names, e.g. --exclude='loop*')",
	      "--exclude=sd[ab");
	FAILS("bad --exclude '[]': a '[' without its ']' (a shell pattern of disk names, e.g. --exclude='loop*')",
	      "--exclude=[]");
	FAILS("bad --exclude 'sd\\': ends in a lone '\\' (a shell pattern of disk names, e.g. --exclude='loop*')",
	      "--exclude=sd\\");
	FAILS("bad --exclude 'a/b': disk names have no '/' (a shell pattern of disk names, e.g. --exclude='loop*')",
	      "--exclude=a/b");
	FAILS("bad --exclude 'a b': disk names have no spaces (a shell pattern of disk names, e.g. --exclude='loop*')",
	      "--exclude=a b");
	FAILS("option '--exclude' needs a value", "--exclude");
}

static void test_too_many_excludes(void **state)
{
	char *argv[2 + TS_MAX_EXCLUDES];
	int i;

	argv[0] = "truestat";
	for (i = 1; i <= TS_MAX_EXCLUDES + 1; i++)
		argv[i] = "--exclude=loop*";
	assert_int_equal(parse(1 + TS_MAX_EXCLUDES, argv), 0);
	assert_int_equal(parse(2 + TS_MAX_EXCLUDES, argv), -1);
	assert_string_equal(err, "too many --exclude (the limit is 16)");
}

static void test_flags(void **state)
{
	assert_int_equal(PARSE("-j", "-v", "--raw-tp"), 0);
	assert_true(o.json);
	assert_true(o.verbose);
	assert_true(o.raw_tp);
	assert_false(o.help);

	assert_int_equal(PARSE("--json", "--verbose"), 0);
	assert_true(o.json);
	assert_true(o.verbose);
	assert_false(o.raw_tp);

	assert_int_equal(PARSE("-jv"), 0);
	assert_true(o.json && o.verbose);
	assert_false(o.light);

	assert_int_equal(PARSE("-tN", "1"), 0);
	assert_true(o.date && o.dm_names);
	assert_int_equal(PARSE("--date", "--dm-names"), 0);
	assert_true(o.date && o.dm_names);

	assert_int_equal(PARSE("-L", "1"), 0);
	assert_true(o.light);
	assert_int_equal(PARSE("-jL", "--light"), 0);
	assert_true(o.light && o.json);

	assert_int_equal(PARSE("-h"), 0);
	assert_true(o.help);
	assert_int_equal(PARSE("--help"), 0);
	assert_true(o.help);
	/* help wins over whatever follows */
	assert_int_equal(PARSE("-h", "--bogus", "0"), 0);
	assert_true(o.help);
	/* printed with fputs, not printf: a "%%" would show as is */
	assert_null(strstr(ts_usage, "%%"));
	assert_non_null(strstr(ts_usage, "%util"));
}

/* -p: optional LIST, attached only; "-p 1" is -p and an interval */
static void test_partitions(void **state)
{
	(void)state;
	assert_int_equal(PARSE("-j", "1"), 0);
	assert_false(o.partitions);
	assert_null(o.part_list);
	assert_int_equal(PARSE("-p", "1"), 0);
	assert_true(o.partitions);
	assert_null(o.part_list);
	assert_true(o.interval_s == 1);
	assert_int_equal(PARSE("--partitions=sda1,sda2"), 0);
	assert_true(o.partitions);
	assert_string_equal(o.part_list, "sda1,sda2");
	assert_int_equal(PARSE("-p=sda1"), 0);
	assert_string_equal(o.part_list, "sda1");
	assert_int_equal(PARSE("-psda2", "-j"), 0);
	assert_string_equal(o.part_list, "sda2");
	assert_true(o.json);
	assert_int_equal(PARSE("--partitions"), 0);
	assert_true(o.partitions);
	assert_null(o.part_list);
}

static void test_bad_interval(void **state)
{
	FAILS("bad interval 'x': not a number", "x");
	FAILS("bad interval '1s': not a number", "1s");
	FAILS("bad interval '': not a number", "");
	FAILS("bad interval 'nan': not a number", "nan");
	FAILS("bad interval 'inf': not a number", "inf");
	FAILS("bad interval '0': must be 0.001 to 86400 seconds", "0");
	FAILS("bad interval '0.0009': must be 0.001 to 86400 seconds", "0.0009");
	FAILS("bad interval '86401': must be 0.001 to 86400 seconds", "86401");
	FAILS("bad interval '1e9': must be 0.001 to 86400 seconds", "1e9");
}

/* getopt sees "-1" as an option: the message must still name the number. */
static void test_negative(void **state)
{
	FAILS("bad interval or count '-1': must be positive", "-1");
	FAILS("bad interval or count '-0.5': must be positive", "-0.5");
	FAILS("bad interval or count '-0.5': must be positive", "1", "-0.5");
	FAILS("bad interval or count '-3': must be positive", "1", "-3");
}

static void test_bad_count(void **state)
{
	FAILS("bad count '0': must be a whole number >= 1", "1", "0");
	FAILS("bad count '1.5': must be a whole number >= 1", "1", "1.5");
	FAILS("bad count 'x': must be a whole number >= 1", "1", "x");
	FAILS("bad count '': must be a whole number >= 1", "1", "");
}

static void test_bad_usage(void **state)
{
	FAILS("too many arguments: '3'", "1", "2", "3");
	FAILS("unknown option '-x' (see truestat --help)", "-x");
	FAILS("unknown option '-jx' (see truestat --help)", "-jx");
	FAILS("unknown option '-xj' (see truestat --help)", "1", "-xj");
	FAILS("unknown option '--bogus' (see truestat --help)", "--bogus");
	FAILS("option '-d' needs a value", "-d");
	FAILS("option '-d' needs a value", "1", "-d");
	FAILS("option '--device' needs a value", "--device");
	FAILS("option '--depth' takes no value", "--depth=3");
	FAILS("option '--light' takes no value", "--light=yes");
	FAILS("option '--json' takes no value", "--json=", "1");
	FAILS("unknown option '--bogus=1' (see truestat --help)", "--bogus=1");
}

/* The options with values: malformed, empty, out of range, repeated. */
static void test_bad_option_values(void **state)
{
	FAILS("bad --hist 'coarse': only --hist=fine", "--hist=coarse");
	FAILS("bad --hist '': only --hist=fine", "--hist=");
	FAILS("bad --prometheus '0': port must be 1 to 65535", "--prometheus=0");
	FAILS("bad --prometheus '': port must be 1 to 65535", "--prometheus=");
	FAILS("bad --prometheus '65536': port must be 1 to 65535",
	      "--prometheus=65536");
	FAILS("bad --prometheus 'x': port must be 1 to 65535", "--prometheus=x");
	FAILS("bad --prometheus 'localhost:80': not a numeric IPv4 or IPv6 address",
	      "--prometheus=localhost:80");
	FAILS("option '--prometheus' needs a value", "--prometheus");
	FAILS("option '--prometheus' given twice (one address only; --prometheus and --web.listen-address are the same)",
	      "--prometheus=9101", "--prometheus=9102");
	FAILS("option '--web.listen-address' given twice (one address only; --prometheus and --web.listen-address are the same)",
	      "--prometheus=9101", "--web.listen-address=9102");
	FAILS("bad --web.listen-address 'x': port must be 1 to 65535",
	      "--web.listen-address=x");
	FAILS("bad --web.histogram-buckets 'all': short or full",
	      "--web.listen-address=9101", "--web.histogram-buckets=all");
	FAILS("--web.histogram-buckets is for the exporter: give --web.listen-address too",
	      "--web.histogram-buckets=full");
	FAILS("bad --heatmap '': needs a file name", "--heatmap=", "1");
	FAILS("option '--heatmap' given twice (one file only)", "--heatmap=a.svg",
	      "--heatmap=b.svg", "1");
	FAILS("--heatmap needs an interval: its columns are the interval "
	      "reports (e.g. truestat --heatmap=a.svg 1)",
	      "--heatmap=a.svg");
}

static void test_bad_device(void **state)
{
	char longname[TS_NAME_LEN + 1], msg[128];

	FAILS("bad device name 'a/b'", "-d", "a/b");
	FAILS("bad device name 'x/y'", "-d", "/dev/mapper/x/y");
	FAILS("bad device name ''", "-d", "/dev/mapper/");
	FAILS("bad device name ''", "-d", "");
	FAILS("bad device name ''", "-d", "/dev/");

	memset(longname, 'a', TS_NAME_LEN);
	longname[TS_NAME_LEN] = '\0';
	snprintf(msg, sizeof(msg), "bad device name '%s'", longname);
	FAILS(msg, "-d", longname);
	longname[TS_NAME_LEN - 1] = '\0'; /* 63 characters fit */
	assert_int_equal(PARSE("-d", longname), 0);
	assert_string_equal(o.devices[0], longname);
}

static void test_too_many_devices(void **state)
{
	char names[TS_MAX_DEVICE_ARGS + 1][16];
	char *argv[1 + 2 * (TS_MAX_DEVICE_ARGS + 1)];
	int i, argc = 1;

	argv[0] = "truestat";
	for (i = 0; i <= TS_MAX_DEVICE_ARGS; i++) {
		snprintf(names[i], sizeof(names[i]), "sd%d", i);
		argv[argc++] = "-d";
		argv[argc++] = names[i];
	}
	/* 64 distinct names fit, a repeated 65th is fine too */
	argv[argc - 1] = names[0];
	assert_int_equal(parse(argc, argv), 0);
	assert_int_equal(o.ndevices, TS_MAX_DEVICE_ARGS);
	assert_string_equal(o.devices[63], "sd63");

	/* 65 do not */
	argv[argc - 1] = names[TS_MAX_DEVICE_ARGS];
	assert_int_equal(parse(argc, argv), -1);
	assert_string_equal(err, "too many devices (the limit is 64)");
}

static void test_version(void **state)
{
	const char *v = ts_version, *end;

	assert_int_equal(PARSE("-V"), 0);
	assert_true(o.version);
	assert_false(o.help);
	assert_int_equal(PARSE("--version"), 0);
	assert_true(o.version);
	/* like --help, it wins over whatever follows */
	assert_int_equal(PARSE("--version", "--bogus", "0"), 0);
	assert_true(o.version);
	assert_int_equal(PARSE("-jV"), 0);
	assert_true(o.version && o.json);
	/* and is parsed wherever it stands */
	assert_int_equal(PARSE("1", "2", "-V"), 0);
	assert_true(o.version);
	FAILS("option '--version' takes no value", "--version=1");
	assert_int_equal(PARSE("-j"), 0);
	assert_false(o.version);
	assert_non_null(strstr(ts_usage, "  -V, --version "));

	/* the Makefile's: MAJOR.MINOR.PATCH, then " (hexhash)" from git */
	for (int dots = 0; dots < 3; dots++) {
		assert_true(isdigit((unsigned char)*v));
		while (isdigit((unsigned char)*v))
			v++;
		if (dots < 2)
			assert_int_equal(*v++, '.');
	}
	if (*v) {
		assert_string_equal(v + strlen(v) - 1, ")");
		assert_memory_equal(v, " (", 2);
		for (end = v + 2; isxdigit((unsigned char)*end); end++)
			;
		assert_true(end - (v + 2) >= 4);
		assert_ptr_equal(end, v + strlen(v) - 1);
	}
}

/* The message is cut to the buffer, never overflows it. */
static void test_short_err_buffer(void **state)
{
	char *argv[] = { "truestat", "--bogus" };
	char small[8];

	memset(small, 'z', sizeof(small));
	assert_int_equal(ts_parse_args(2, argv, &o, small, sizeof(small)), -1);
	assert_string_equal(small, "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_interval_and_count),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_excludes),
		cmocka_unit_test(test_bad_excludes),
		cmocka_unit_test(test_too_many_excludes),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_bad_interval),
		cmocka_unit_test(test_negative),
		cmocka_unit_test(test_bad_count),
		cmocka_unit_test(test_bad_usage),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_bad_device),
		cmocka_unit_test(test_bad_option_values),
		cmocka_unit_test(test_too_many_devices),
		cmocka_unit_test(test_short_err_buffer),
		cmocka_unit_test(test_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
