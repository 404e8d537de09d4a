/* SPDX-License-Identifier: GPL-2.0 */
/* A small streaming JSON writer: keys in order, no allocation. */
#ifndef TS_JSON_H
#define TS_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define TJ_MAX_DEPTH 16

struct tj {
	FILE *f;
	int depth;
	bool comma[TJ_MAX_DEPTH]; /* an element was written at this depth */
};

/* @key is NULL inside arrays and for the outermost value. */
void tj_open(struct tj *j, FILE *f);
void tj_obj(struct tj *j, const char *key);
void tj_arr(struct tj *j, const char *key);
void tj_end_obj(struct tj *j);
void tj_end_arr(struct tj *j);
void tj_str(struct tj *j, const char *key, const char *val);
void tj_u64(struct tj *j, const char *key, unsigned long long val);
void tj_s64(struct tj *j, const char *key, long long val);
/* Finite numbers with up to @decimals decimals; NaN and inf as null. */
void tj_num(struct tj *j, const char *key, double val, int decimals);
void tj_bool(struct tj *j, const char *key, bool val);
void tj_null(struct tj *j, const char *key);
/* Ends the line: one JSON document per line. */
void tj_close(struct tj *j);

#endif
