# SPDX-License-Identifier: GPL-2.0
# truestat: `make` builds ./truestat, `make run` traces every disk for a few
# seconds, `make demo` shows iostat and truestat side by side on a simulated
# disk, `make test` runs every test. Quiet by default, V=1 for commands.

OUTPUT ?= .output
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
DESTDIR ?=
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

# `truestat --version`: VERSION, plus the commit when built from a git tree.
VERSION := 0.1.0
GIT_HASH := $(if $(wildcard .git),$(shell git rev-parse --short HEAD 2>/dev/null))
TS_VERSION := $(VERSION)$(if $(GIT_HASH), ($(GIT_HASH)))

NPROC := $(shell nproc 2>/dev/null || echo 1)
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
LIBBPF_CFLAGS = $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
LIBBPF_LIBS = $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation
INCLUDES := -Iinclude -Iuser -I$(OUTPUT) $(LIBBPF_CFLAGS)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	-Wall -Wno-unused-function -Iinclude -I$(OUTPUT)

ifdef SANITIZE
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

# Userspace objects, split so that unit tests link what they test, by
# folder (doc/building.md): each uses only those above it in this list.
USER_DIRS := lib features core findings output exporter cli
LIB_OBJS := units json devices histogram depth bounds claim names \
	curve pattern flags slow who filter \
	kload report report_parts partitions \
	findings findings_print busy_not_full waiting_in_device waiting_in_os \
	flush_wait random_reads capped slow_not_busy one_submitter \
	output output_json prom prom_text prom_hold prom_pb heatmap heatmap_svg \
	webconfig webauth httpd \
	opts
USER_H := $(wildcard $(addprefix user/,$(addsuffix /*.h,$(USER_DIRS))))
vpath %.c $(addprefix user/,$(USER_DIRS))
LIB_O := $(addprefix $(OUTPUT)/,$(addsuffix .o,$(LIB_OBJS))) $(OUTPUT)/metrics.pb-c.o
LOADER_OBJS := tracer attach snapshot sweep slow_ring tables progstats
APP_O := $(addprefix $(OUTPUT)/,$(addsuffix .o,$(LOADER_OBJS))) \
	$(OUTPUT)/disks.o $(OUTPUT)/truestat.o
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(wildcard tests/unit/test_*.c))
# The docs' figures (costs, make test's time, table sizes...) stated alike
# everywhere (tests/docs): Python, run and counted with the unit tests.
DOC_TESTS := tests/docs/test_docs.py tests/docs/test_layers.py
# The simulated disk the integration tests measure truestat against.
SIMDISK := $(OUTPUT)/simdisk
# The exporter's --web.config.file: TLS (OpenSSL), its YAML (libyaml) and
# bcrypt (libcrypt); its protobuf exposition (libprotobuf-c).
WEB_LIBS = $(shell $(PKG_CONFIG) --libs openssl yaml-0.1 libcrypt libprotobuf-c 2>/dev/null || echo -lssl -lcrypto -lyaml -lcrypt -lprotobuf-c)
FUSE_CFLAGS = $(shell $(PKG_CONFIG) --cflags fuse3 2>/dev/null)
FUSE_LIBS = $(shell $(PKG_CONFIG) --libs fuse3 2>/dev/null || echo -lfuse3 -lpthread)

.PHONY: all deps deps-test deps-package demo run test unit-test integration-test test-investigations test-kernels soak install static deb clean FORCE
.DELETE_ON_ERROR:

all: truestat

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUTPUT)/truestat.bpf.o: bpf/truestat.bpf.c $(wildcard bpf/*.h include/*.h include/*.def) $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

# The same programs for kernels before 5.12, whose BPF has no atomic
# compare-and-exchange: each such operation under a lock (bpf/atomics.bpf.h).
$(OUTPUT)/truestat-locked.bpf.o: bpf/truestat.bpf.c $(wildcard bpf/*.h include/*.h include/*.def) $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DTS_LOCKED_ATOMICS -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/truestat.skel.h: $(OUTPUT)/truestat.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name truestat_bpf > $@

$(OUTPUT)/truestat-locked.skel.h: $(OUTPUT)/truestat-locked.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name truestat_locked_bpf > $@

$(addprefix $(OUTPUT)/,$(addsuffix .o,$(LOADER_OBJS))): $(OUTPUT)/truestat.skel.h $(OUTPUT)/truestat-locked.skel.h

# Prometheus' protobuf exposition (io.prometheus.client, proto/): C from
# protobuf-c's compiler, linked with libprotobuf-c.
$(OUTPUT)/metrics.pb-c.c $(OUTPUT)/metrics.pb-c.h &: proto/metrics.proto | $(OUTPUT)
	$(call msg,PROTOC,$@)
	$(Q)protoc-c --proto_path=proto --c_out=$(OUTPUT) $<

$(OUTPUT)/metrics.pb-c.o: $(OUTPUT)/metrics.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

$(OUTPUT)/prom_pb.o: $(OUTPUT)/metrics.pb-c.h

# The version is compiled into opts.o only; the stamp changes (and opts.o is
# rebuilt) only when the version or the commit does.
$(OUTPUT)/version.stamp: FORCE | $(OUTPUT)
	$(Q)[ "$$(cat $@ 2>/dev/null)" = '$(TS_VERSION)' ] || echo '$(TS_VERSION)' > $@

$(OUTPUT)/opts.o: $(OUTPUT)/version.stamp
$(OUTPUT)/opts.o: CFLAGS += -DTS_VERSION='"$(TS_VERSION)"' \
	-DTS_RELEASE='"$(VERSION)"' -DTS_COMMIT='"$(or $(GIT_HASH),unknown)"'

$(OUTPUT)/%.o: %.c $(USER_H) $(wildcard include/*.h include/*.def) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

truestat: $(LIB_O) $(APP_O)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDFLAGS) $(LIBBPF_LIBS) $(WEB_LIBS) -lm -pthread -o $@

# The same objects linked statically (libbpf.a, libelf.a, libz.a from the
# Debian -dev packages), the BPF object inside: one self-contained file to
# copy to a host (doc/building.md), as the VM tests copy it into a guest
# with nothing else in it.
static: truestat-static

truestat-static: $(LIB_O) $(APP_O)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) -static $^ $(LDFLAGS) \
		$(shell $(PKG_CONFIG) --static --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz) \
		$(shell $(PKG_CONFIG) --static --libs openssl yaml-0.1 libcrypt libprotobuf-c 2>/dev/null) -lm -pthread -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(LIB_O) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(LIB_O) $(LDFLAGS) -lcmocka $(WEB_LIBS) -lm -o $@

# Test tools: the BPF build of include/hist.h against the userspace one
# (hist-check); per-CPU counters on the block tracepoints of one disk beside
# its /proc/diskstats, with a BPF object of its own (witness); each span
# event of one disk with its time (spans).
TEST_TOOLS := $(OUTPUT)/hist-check $(OUTPUT)/witness $(OUTPUT)/spans

$(OUTPUT)/%.tool.bpf.o: tests/tools/%.bpf.c tests/tools/target.bpf.h $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.tool.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT)/witness $(OUTPUT)/spans: $(OUTPUT)/%: tests/tools/%.c $(OUTPUT)/%.skel.h
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(LDFLAGS) $(LIBBPF_LIBS) -o $@

# Test programs over truestat's own BPF code (tests/tools/checks.bpf.c),
# built as truestat.bpf.o is, with and without the locks of old kernels.
CHECKS_DEPS := tests/tools/checks.bpf.c $(wildcard bpf/*.h include/*.h include/*.def) $(OUTPUT)/vmlinux.h

$(OUTPUT)/checks.bpf.o: $(CHECKS_DEPS)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/checks-locked.bpf.o: $(CHECKS_DEPS)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -DTS_LOCKED_ATOMICS -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/checks.skel.h: $(OUTPUT)/checks.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name checks_bpf > $@

$(OUTPUT)/checks-locked.skel.h: $(OUTPUT)/checks-locked.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name checks_locked_bpf > $@

$(OUTPUT)/hist-check: tests/tools/hist-check.c $(OUTPUT)/checks.skel.h $(OUTPUT)/checks-locked.skel.h $(wildcard include/*.h include/*.def)
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(LDFLAGS) $(LIBBPF_LIBS) -o $@

# Test tool: a completion landing inside another's adds (op_add).
TEST_TOOLS += $(OUTPUT)/nest-check

$(OUTPUT)/nest-check: tests/tools/nest-check.c $(OUTPUT)/checks.skel.h $(wildcard include/*.h include/*.def)
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(LDFLAGS) $(LIBBPF_LIBS) -pthread -o $@

# Test tool: the depth updates run from every CPU at once (item 2 of the
# issue "Exact or flagged").
TEST_TOOLS += $(OUTPUT)/depth-race

$(OUTPUT)/depth-race: tests/tools/depth-race.c $(OUTPUT)/checks.skel.h $(OUTPUT)/checks-locked.skel.h $(OUTPUT)/depth.o $(wildcard include/*.h include/*.def)
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(OUTPUT)/depth.o $(LDFLAGS) $(LIBBPF_LIBS) -lm -pthread -o $@

$(SIMDISK): tests/simdisk/simdisk.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(FUSE_CFLAGS) $< $(LDFLAGS) $(FUSE_LIBS) -lm -pthread -o $@

# libFuzzer targets for the parsers that take outside input (tests/fuzz).
FUZZERS := $(OUTPUT)/fuzz_http $(OUTPUT)/fuzz_args
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Iuser

FUZZ_WEB := $(addprefix user/exporter/,httpd.c webauth.c webconfig.c)

$(OUTPUT)/fuzz_http: tests/fuzz/fuzz_http.c $(FUZZ_WEB) $(USER_H) | $(OUTPUT)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(filter %.c,$^) $(WEB_LIBS) -o $@

$(OUTPUT)/fuzz_args: tests/fuzz/fuzz_args.c user/cli/opts.c user/lib/units.c $(FUZZ_WEB) $(USER_H) | $(OUTPUT)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(filter %.c,$^) $(WEB_LIBS) -o $@

# Install what is missing from Debian's packages, quiet and idempotent
# (scripts/deps.sh): deps what building and running need, deps-test the
# test tools on top.
deps:
	$(Q)scripts/deps.sh

deps-test:
	$(Q)scripts/deps.sh --test

deps-package:
	$(Q)scripts/deps.sh dpkg-dev lintian

run: deps
	$(Q)$(MAKE) truestat
	./truestat 1 5

# Under a minute, as root: iostat's figures beside truestat's on the
# simulated disk (scripts/demo.sh installs and builds what it needs);
# DEMO_ARGS='--keep DIR' keeps its raw material.
demo:
	$(Q)SIMDISK=$(SIMDISK) scripts/demo.sh $(DEMO_ARGS)

unit-test: $(UNIT_TESTS)
	$(Q)tests/run-unit.sh $(UNIT_TESTS) $(DOC_TESTS)

integration-test: truestat $(TEST_TOOLS) $(SIMDISK) $(FUZZERS)
	$(Q)tests/run-integration.sh

# (built on every CPU: a fresh clone's build is part of make test's time)
test: deps deps-test
	$(Q)$(MAKE) -j$(NPROC) truestat $(UNIT_TESTS) $(TEST_TOOLS) $(SIMDISK) $(FUZZERS)
	$(Q)tests/run-all.sh $(UNIT_TESTS) $(DOC_TESTS)

# The investigations of doc/investigations.md on the software they were
# about, each judged against the disk's, the kernel's and the application's
# own records (tests/investigations, and 004's, which make test runs too);
# scripts/investigate.sh installs MariaDB and sysbench, its service not
# started.
test-investigations: deps deps-test
	$(Q)$(MAKE) truestat $(SIMDISK)
	$(Q)tests/run-integration.sh tests/integration/63-investigate-004.sh tests/investigations/*.sh

# Ten minutes at the highest IOPS here (SOAK_SECONDS): memory, tables,
# lost events and totals (tests/soak/soak.sh).
soak: truestat
	$(Q)tests/soak/soak.sh

# The same truestat on other kernels, in qemu (tests/vm/run.sh): Debian's
# 5.10 (bullseye: the object whose atomic operations take locks), 6.1, 6.12
# and 6.12-rt, Ubuntu 20.04's 5.13 and 22.04's 5.15; KERNELS names
# linux-image packages or meta-packages, PKG:CASE,CASE for only those cases
# there (PREEMPT_RT: the null_blk ones).
KERNELS ?= linux-image-5.10.0-32-amd64 linux-image-5.13.0-52-generic linux-image-5.15.0-204-generic linux-image-amd64 linux-image-6.12-amd64 linux-image-6.12-rt-amd64:base,nullq
test-kernels: deps-test
	$(Q)tests/vm/run.sh $(KERNELS)

# The binary, the man page, the bash completion, the JSON Schema, the
# exporter's systemd unit (ExecStart= naming this PREFIX's binary) and its
# Prometheus rules.
MAN8DIR := $(DESTDIR)$(PREFIX)/share/man/man8
COMPLETIONDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
DOCDIR := $(DESTDIR)$(PREFIX)/share/doc/truestat
UNITDIR := $(DESTDIR)$(PREFIX)/lib/systemd/system
DATADIR := $(DESTDIR)$(PREFIX)/share/truestat

install: truestat
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/sbin/truestat)
	$(Q)install -D -m 0755 truestat $(DESTDIR)$(PREFIX)/sbin/truestat
	$(call msg,INSTALL,$(MAN8DIR)/truestat.8)
	$(Q)install -D -m 0644 man/truestat.8 $(MAN8DIR)/truestat.8
	$(call msg,INSTALL,$(COMPLETIONDIR)/truestat)
	$(Q)install -D -m 0644 completion/truestat.bash $(COMPLETIONDIR)/truestat
	$(call msg,INSTALL,$(DOCDIR)/truestat.schema.json)
	$(Q)install -D -m 0644 schema/truestat.schema.json $(DOCDIR)/truestat.schema.json
	$(call msg,INSTALL,$(UNITDIR)/truestat-exporter.service)
	$(Q)sed 's|/usr/local/sbin/truestat|$(PREFIX)/sbin/truestat|' \
		contrib/systemd/truestat-exporter.service > $(OUTPUT)/truestat-exporter.service
	$(Q)install -D -m 0644 $(OUTPUT)/truestat-exporter.service $(UNITDIR)/truestat-exporter.service
	$(call msg,INSTALL,$(DATADIR)/truestat.rules.yml)
	$(Q)install -D -m 0644 prometheus/truestat.rules.yml $(DATADIR)/truestat.rules.yml

# The Debian package, from a staged install with Debian's tools
# (scripts/deb.sh), versioned VERSION+gCOMMIT: DEB_DIR/truestat_*.deb.
DEB_DIR ?= .
DEB_VERSION := $(VERSION)$(if $(GIT_HASH),+g$(GIT_HASH))
deb: truestat
	$(call msg,DEB,$(DEB_DIR)/truestat_$(DEB_VERSION)_*.deb)
	$(Q)scripts/deb.sh '$(DEB_VERSION)' '$(DEB_DIR)' >/dev/null

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) truestat truestat-static truestat_*.deb
