// SPDX-License-Identifier: GPL-2.0
/* The programs' own counts: runs, run time, recursion misses. */
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"

/* The kernel's information of @prog: false when it is not loaded. */
static bool prog_info(const struct bpf_program *prog,
		      struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_program__fd(prog) >= 0 &&
	       !bpf_obj_get_info_by_fd(bpf_program__fd(prog), info, &len);
}

__u64 tracer_lost_events(struct ts_tracer *t)
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
