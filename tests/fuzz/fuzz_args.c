// SPDX-License-Identifier: GPL-2.0
/* libFuzzer target: the command line parser, argv split at NUL bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"

#define MAX_ARGS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *copy, *p, err[512];
	struct ts_opts *o;
	int argc = 1;

	copy = malloc(size + 1);
	o = malloc(sizeof(*o));
	if (!copy || !o)
		goto out;
	memcpy(copy, data, size);
	copy[size] = 0;
	argv[0] = "truestat";
	for (p = copy; argc <= MAX_ARGS && p <= copy + size; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	ts_parse_args(argc, argv, o, err, sizeof(err));
out:
	free(copy);
	free(o);
	return 0;
}
