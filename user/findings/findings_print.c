// SPDX-License-Identifier: GPL-2.0
/* The findings in the table and in JSON. */
#include <string.h>

#include "findings.h"

const char *ts_severity_name(enum ts_severity s)
{
	static const char *const names[] = {
		[TS_SEV_NOTE] = "cannot_tell",
		[TS_SEV_LOW] = "low",
		[TS_SEV_MEDIUM] = "medium",
		[TS_SEV_HIGH] = "high",
	};

	return names[s];
}

/* The bit of @id's rule in ts_notes_said. */
static unsigned int rule_bit(const char *id)
{
	int k;

	for (k = 0; k < ts_nrules; k++)
		if (!strcmp(ts_rules[k].id, id))
			return 1U << k;
	return 0;
}

/* Whether note @x is said now: not said before for its device, or @totals. */
static bool say_note(const struct ts_finding *x, struct ts_notes_said *said,
		     bool totals)
{
	unsigned int bit = rule_bit(x->id);
	int i;

	if (!said)
		return true;
	for (i = 0; i < said->n; i++)
		if (!strcmp(said->dev[i].device, x->device))
			break;
	if (i == said->n) {
		if (said->n == TS_MAX_DEVS)
			return true;
		snprintf(said->dev[i].device, sizeof(said->dev[i].device),
			 "%s", x->device);
		said->dev[i].rules = 0;
		said->n++;
	}
	if (said->dev[i].rules & bit)
		return totals;
	said->dev[i].rules |= bit;
	return true;
}

void ts_findings_print(FILE *f, const struct ts_findings *fs,
		       struct ts_notes_said *said, bool totals)
{
	const struct ts_finding *x;
	bool head = false;
	int i;

	for (i = 0; i < fs->n; i++) {
		x = &fs->f[i];
		if (x->severity == TS_SEV_NOTE && !say_note(x, said, totals))
			continue;
		if (!head)
			fprintf(f, "\nfindings, most important first:\n");
		head = true;
		if (x->severity == TS_SEV_NOTE)
			fprintf(f, "  cannot tell (%s): %s\n", x->id,
				x->sentence);
		else
			fprintf(f, "  %d. %s [%s]: %s\n", x->rank, x->id,
				ts_severity_name(x->severity), x->sentence);
	}
	if (fs->not_kept && !head)
		fprintf(f, "\nfindings, most important first:\n");
	if (fs->not_kept)
		fprintf(f, "  (%d less important findings not shown: %d at most a report)\n",
			fs->not_kept, TS_FINDINGS_MAX);
}

static void json_finding(struct tj *j, const struct ts_finding *x)
{
	int k;

	tj_obj(j, NULL);
	tj_str(j, "id", x->id);
	tj_str(j, "device", x->device);
	tj_str(j, "op", x->op);
	tj_u64(j, "rank", x->rank);
	tj_str(j, "severity", ts_severity_name(x->severity));
	tj_bool(j, "exact", x->exact);
	tj_str(j, "sentence", x->sentence);
	tj_arr(j, "figures");
	for (k = 0; k < x->nfigures; k++) {
		tj_obj(j, NULL);
		tj_str(j, "name", x->figure[k].name);
		tj_num(j, "value", x->figure[k].value, 6);
		tj_str(j, "unit", x->figure[k].unit);
		tj_end_obj(j);
	}
	tj_end_arr(j);
	tj_end_obj(j);
}

void ts_findings_json(struct tj *j, const struct ts_findings *fs)
{
	int i;

	tj_arr(j, "findings");
	for (i = 0; i < fs->n; i++)
		json_finding(j, &fs->f[i]);
	tj_end_arr(j);
	tj_arr(j, "findings_skipped");
	for (i = 0; i < fs->nskipped; i++) {
		tj_obj(j, NULL);
		tj_str(j, "device", fs->skipped[i].device);
		tj_str(j, "reason", fs->skipped[i].reason);
		tj_end_obj(j);
	}
	tj_end_arr(j);
}
