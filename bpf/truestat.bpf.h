/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything truestat's programs use, in the order the headers need one
 * another: bpf/truestat.bpf.c (the programs) and tests/tools/checks.bpf.c
 * (test programs over the same code, never shipped) include it first.
 */
#ifndef TS_TRUESTAT_BPF_H
#define TS_TRUESTAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "truestat.h"

/* struct bvec_iter is packed; the reads of its fields are of whole fields */
#pragma clang diagnostic ignored "-Waddress-of-packed-member"

#include "maps.bpf.h"
#include "atomics.bpf.h"
#include "compat.bpf.h"
#include "depth.bpf.h"
#include "devices.bpf.h"
#include "slow.bpf.h"
#include "records.bpf.h"
#include "pattern.bpf.h"
#include "account.bpf.h"
#include "layer.bpf.h"
#include "sweep.bpf.h"
#include "durable.bpf.h"

#endif
