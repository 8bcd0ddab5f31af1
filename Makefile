# perf-agent: one entry point.  `make` builds, `make check` tests, `make demo` shows.
# Every output goes under $(O); nothing generated lands in the source tree.

# SAN=1: user space (libcommon, the commands, unit tests) with ASan and UBSan, in its
# own build directory; BPF objects and workloads are built as always.
ifeq ($(SAN),1)
O          ?= build-san
SAN_CFLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
export ASAN_OPTIONS  ?= detect_leaks=1:abort_on_error=0:print_summary=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
endif
O        ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PROTOC_C ?= protoc-c
PREFIX   ?= /usr/local
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
# Compiled into pa-record ($(O)/gen/build_conf.h), never read from the environment:
# it may run with file capabilities.  The administrator's allow list (docs/privileges.md)
# and the capabilities make setcap grants (caps.c names them in its advice).
PA_CONF_FILE ?= /etc/perf-agent.conf
SETCAP_CAPS  := cap_bpf,cap_perfmon,cap_sys_ptrace,cap_syslog,cap_checkpoint_restore+ep

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += $(WARN) -std=gnu11 -D_GNU_SOURCE -Ilibcommon -Ibpf -I$(O) -I$(O)/gen
CFLAGS   += $(SAN_CFLAGS)
LDLIBS   := -lbpf -lelf -lz -lzstd -lprotobuf-c -ldw -llzma -liberty -lm
# usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> is in the multiarch dir.
BPFCFLAGS := -O2 -g $(WARN) -target bpf -D__TARGET_ARCH_$(ARCH) -I$(O) -Ibpf \
	     -idirafter /usr/include/$(shell uname -m)-linux-gnu

# libcommon/ is layered by folder (base < perfdata < symbolize < unwind < profile;
# scripts/lint-layers checks it); one object per source, headers tracked by -MMD.
LIB_DIRS  := base perfdata symbolize unwind profile
LIB_SRCS  := $(sort $(wildcard $(addprefix libcommon/,$(addsuffix /*.c,$(LIB_DIRS)))))
LIB_HDRS  := $(sort $(wildcard $(addprefix libcommon/,$(addsuffix /*.h,$(LIB_DIRS)))))
LIB_OBJS  := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS)) $(O)/gen/profile.pb-c.o
BPF_SRCS  := $(sort $(wildcard bpf/*.bpf.c))
SKELS     := $(patsubst bpf/%.bpf.c,$(O)/%.skel.h,$(BPF_SRCS))
CMDS      := record report convert gpu-attach
BINS      := $(addprefix $(O)/pa-,$(CMDS))
CMD_OBJS  := $(patsubst %.c,$(O)/%.o,$(wildcard $(addprefix cmd/,$(addsuffix /*.c,$(CMDS)))))
# perf-agent, the front (cmd/agent/): runs the pa-* commands, one-shot profiles and
# continuous profiling pushed over HTTP (libcurl).
AGENT     := $(O)/perf-agent
AGENT_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard cmd/agent/*.c))

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRCS))
# The CUDA driver's workloads need the toolkit's cuda.h (and stub libcuda).
WL_CUDA   := tests/workloads/cuda_driver.c tests/workloads/fake_libcuda.c
WL_SRCS   := $(sort $(filter-out $(WL_CUDA),$(wildcard tests/workloads/*.c)))
WL_BINS   := $(patsubst tests/workloads/%.c,$(O)/tests/workloads/%,$(WL_SRCS))

.PHONY: all deps check demo bench lint format install setcap clean tests FORCE
.DELETE_ON_ERROR:
# Keep BPF objects and skeletons: they are intermediates of a chain, not throwaways.
.SECONDARY:

# Tools the tests and benchmarks run (tests/tools/NAME.c), linked with libcommon.
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(patsubst tests/tools/%.c,$(O)/tests/tools/%,$(TOOL_SRCS))

# The CUDA adapter (pa-gpu-attach injects it) is built where the toolkit's CUPTI
# headers are; the rest builds without them.  It is loaded into CUDA programs, so it
# is built without the sanitizers, whose runtime they lack.
CUDA_HOME ?= /usr/local/cuda
ADAPTER_SRCS := $(sort $(wildcard cmd/gpu-attach/adapter/*.c))
ifneq ($(wildcard $(CUDA_HOME)/include/cupti.h),)
ADAPTER := $(O)/libpa-gpu-adapter.so
endif
ifneq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
WL_BINS += $(O)/tests/workloads/cuda_driver $(O)/tests/workloads/fake/libcuda.so.1
endif

# Before building: the tools the build runs (and, in a new build directory, the
# headers it includes), or one line naming the fix.  Goals that build nothing, or that
# run make deps first, are not held up.
NOBUILD_GOALS := deps clean format sid-python sid-go check demo fuzz setcap
BUILD_TOOLS   := $(CC) $(CLANG) $(BPFTOOL) $(PROTOC_C)
BUILD_HDRS    := bpf/libbpf.h gelf.h zlib.h zstd.h lzma.h protobuf-c/protobuf-c.h \
		 elfutils/libdw.h elfutils/debuginfod.h libiberty/demangle.h
ifneq ($(filter-out $(NOBUILD_GOALS),$(or $(MAKECMDGOALS),all)),)
MISSING := $(shell for t in $(BUILD_TOOLS); do command -v $$t >/dev/null || { echo $$t; exit; }; done)
ifeq ($(MISSING)$(wildcard $(O)/libcommon.a),)
HASH    := \#
MISSING := $(shell for h in $(BUILD_HDRS); do printf '$(HASH)include <%s>\n' $$h | \
	     $(CC) -E -x c - >/dev/null 2>&1 || { echo $$h; exit; }; done)
endif
ifneq ($(MISSING),)
$(error $(MISSING) not found; run 'make deps' (installs the Debian packages, needs root))
endif
endif

all: $(BINS) $(AGENT) $(ADAPTER)
ifeq ($(ADAPTER),)
	@echo "note: no $(CUDA_HOME)/include/cupti.h: the CUDA adapter is not built (set CUDA_HOME)"
endif

deps:
	@scripts/install-deps

# Debian sid's CPython 3.14 and 3.15, fetched and unpacked (not installed) for the python
# tests, which also make it on first use (tests/lib/sid_python.bash).
.PHONY: sid-python
sid-python:
	@scripts/sid-python build/sid-python

# Debian sid's Go toolchain, fetched and unpacked (not installed) for the Go tests,
# which also make it on first use (tests/lib/sid_go.bash).
.PHONY: sid-go
sid-go:
	@scripts/sid-go build/sid-go

$(O)/vmlinux.h:
	@mkdir -p $(@D)
	@test -r $(VMLINUX_BTF) || { echo "error: $(VMLINUX_BTF) missing: the kernel has no BTF (build it with CONFIG_DEBUG_INFO_BTF=y) or set VMLINUX_BTF=FILE" >&2; exit 1; }
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/vmlinux.h $(wildcard bpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(BPFCFLAGS) -c $< -o $@

$(O)/%.skel.h: $(O)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

$(O)/gen/profile.pb-c.c $(O)/gen/profile.pb-c.h &: libcommon/profile/profile.proto
	@mkdir -p $(O)/gen
	$(PROTOC_C) --proto_path=libcommon/profile --c_out=$(O)/gen profile.proto

$(O)/gen/profile.pb-c.o: $(O)/gen/profile.pb-c.c
	$(CC) -O2 -g -Wall $(SAN_CFLAGS) -I$(O)/gen -c $< -o $@

# -MMD -MP: each object lists the headers it included, so a header change rebuilds
# exactly its users.  The generated headers come first (order-only).
$(O)/libcommon/%.o: libcommon/%.c | $(O)/gen/profile.pb-c.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(O)/libcommon.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(O)/cmd/%.o: cmd/%.c | $(SKELS) $(O)/gen/profile.pb-c.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# Rewritten only when a setting changes, so that exactly its users are rebuilt.
define BUILD_CONF
#define PA_CONF_FILE "$(PA_CONF_FILE)"
#define PA_SETCAP_CAPS "$(SETCAP_CAPS)"
endef
$(O)/gen/build_conf.h: FORCE
	$(if $(subst x$(BUILD_CONF)x,,x$(file <$@)x),$(shell mkdir -p $(@D))$(file >$@,$(BUILD_CONF)))

$(O)/cmd/record/caps.o $(O)/cmd/record/priv.o: $(O)/gen/build_conf.h

$(O)/libpa-gpu-adapter.so: $(ADAPTER_SRCS) $(wildcard cmd/gpu-attach/adapter/*.h) bpf/gpu.h
	$(CC) $(filter-out $(SAN_CFLAGS),$(CFLAGS)) -fPIC -shared -fvisibility=hidden \
		-I$(CUDA_HOME)/include -Icmd/gpu-attach/adapter $(ADAPTER_SRCS) -pthread -o $@

# The adapter's probe layer, tested on its own (no CUPTI).
$(O)/tests/test_gpu_probes: tests/unit/test_gpu_probes.c cmd/gpu-attach/adapter/probes.c \
		cmd/gpu-attach/adapter/totals.c $(wildcard cmd/gpu-attach/adapter/*.h) bpf/gpu.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit -Icmd/gpu-attach/adapter $< cmd/gpu-attach/adapter/probes.c \
		cmd/gpu-attach/adapter/totals.c -pthread -o $@

# A CUDA program as the adapter shows it, GPU-less: it links the probe layer.
$(O)/tests/workloads/gpu_producer: tests/workloads/gpu_producer.c cmd/gpu-attach/adapter/probes.c \
		$(wildcard cmd/gpu-attach/adapter/*.h) bpf/gpu.h
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -Ibpf -Icmd/gpu-attach/adapter \
		$< cmd/gpu-attach/adapter/probes.c -o $@

# Launches through the CUDA driver API, linked against the toolkit's stub libcuda; and
# a driver for it that gives out kernel handles (tests/gpu.bats), built -O0 so that its
# functions start with push %rbp, which a uprobe emulates: an instruction it has to
# single-step costs a second trap per launch.
$(O)/tests/workloads/cuda_driver: tests/workloads/cuda_driver.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer -fno-inline -I$(CUDA_HOME)/include $< \
		-L$(CUDA_HOME)/lib64/stubs -lcuda -o $@

$(O)/tests/workloads/fake/libcuda.so.1: tests/workloads/fake_libcuda.c
	@mkdir -p $(@D)
	$(CC) -O0 -g -fPIC -shared -Wl,-soname,libcuda.so.1 $< -o $@

# pa-convert carries its flame-graph page (cmd/convert/flamegraph.html) built in.
$(O)/gen/flamegraph_html.c: cmd/convert/flamegraph.html scripts/embed
	@mkdir -p $(@D)
	scripts/embed flamegraph_html $< > $@

$(O)/gen/flamegraph_html.o: $(O)/gen/flamegraph_html.c
	$(CC) -c $< -o $@

$(O)/pa-convert: $(O)/gen/flamegraph_html.o

# Each command is every .c under cmd/NAME/, linked against libcommon.a.
cmd_objs = $(patsubst %.c,$(O)/%.o,$(wildcard cmd/$(1)/*.c))
.SECONDEXPANSION:
$(O)/pa-%: $$(call cmd_objs,$$*) $(O)/libcommon.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(AGENT): $(AGENT_OBJS) $(O)/libcommon.a
	$(CC) $(CFLAGS) $^ $(LDLIBS) -lcurl -pthread -o $@

$(O)/tests/test_%: tests/unit/test_%.c $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -MF $(@D)/.$(@F).d -Itests/unit $< $(O)/libcommon.a $(LDLIBS) -o $@

# pa-convert's folded writer, tested on its own.
$(O)/tests/test_folded: tests/unit/test_folded.c $(O)/cmd/convert/folded.o $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -MF $(@D)/.$(@F).d -Itests/unit -Icmd/convert $< \
		$(O)/cmd/convert/folded.o $(O)/libcommon.a $(LDLIBS) -o $@

# pa-convert's flame-graph tree and text escaping, tested on their own.
$(O)/tests/test_flame: tests/unit/test_flame.c $(O)/cmd/convert/flametree.o $(O)/cmd/convert/emit.o \
		$(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -MF $(@D)/.$(@F).d -Itests/unit -Icmd/convert $< \
		$(O)/cmd/convert/flametree.o $(O)/cmd/convert/emit.o $(O)/libcommon.a $(LDLIBS) -o $@

# perf-agent's spool and pusher, tested on their own (test_push against
# tests/lib/ingest_receiver.py).
$(O)/tests/test_spool: tests/unit/test_spool.c cmd/agent/spool.c cmd/agent/spool.h $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit -Icmd/agent $< cmd/agent/spool.c $(O)/libcommon.a $(LDLIBS) \
		-pthread -o $@

$(O)/tests/test_push: tests/unit/test_push.c cmd/agent/push.c cmd/agent/spool.c cmd/agent/push.h \
		cmd/agent/spool.h $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit -Icmd/agent $< cmd/agent/push.c cmd/agent/spool.c \
		$(O)/libcommon.a $(LDLIBS) -lcurl -pthread -o $@

# Workloads keep frame pointers: the FP unwinder is what issue #2 ships.
$(O)/tests/workloads/%: tests/workloads/%.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread $< -o $@

# tests/golden.bats: the fixture binaries its capture samples, built the same in every
# build directory (no sanitizers, source paths relative to the repo: the expected
# outputs name their files and lines, and pprof their addresses), the capture
# generator and the pprof decoder.
GOLDEN_CFLAGS := -O2 -g -fno-omit-frame-pointer -ffile-prefix-map=$(CURDIR)=.
GOLDEN_BINS   := $(O)/tests/golden/golden_main $(O)/tests/golden/libgolden.so \
		 $(O)/tests/gen-golden $(O)/tests/pprof-dump

$(O)/tests/golden/libgolden.so: tests/golden/fixture/golden_lib.cc tests/golden/fixture/golden_lib.h
	@mkdir -p $(@D)
	$(CXX) $(GOLDEN_CFLAGS) -fPIC -shared $< -o $@

$(O)/tests/golden/golden_main: tests/golden/fixture/golden_main.c tests/golden/fixture/golden_lib.h \
			       $(O)/tests/golden/libgolden.so
	$(CC) $(GOLDEN_CFLAGS) $< -L$(O)/tests/golden -lgolden -o $@

$(O)/tests/gen-golden: tests/golden/gen-golden.c $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(O)/libcommon.a $(LDLIBS) -o $@

$(O)/tests/pprof-dump: tests/golden/pprof-dump.c $(O)/gen/profile.pb-c.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(O)/gen/profile.pb-c.o -lprotobuf-c -lz -o $@

# The fuzz targets' seed corpora (tests/fuzz/make-corpus): tiny ELF files, perf.data
# from our writer and from Linux perf, perf maps and /proc maps text.  Replayed by
# test_fuzz_regress in make check; the starting corpus of make fuzz.
CORPUS := $(O)/tests/fuzz/corpus

$(O)/tests/fuzz/gen-perfdata: tests/fuzz/gen-perfdata.c $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(O)/libcommon.a $(LDLIBS) -o $@

$(CORPUS)/.made: tests/fuzz/make-corpus $(O)/tests/fuzz/gen-perfdata
	@O=$(O) GEN=$(O)/tests/fuzz/gen-perfdata CORPUS=$(CORPUS) tests/fuzz/make-corpus
	@touch $@

$(O)/tests/tools/%: tests/tools/%.c $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(O)/libcommon.a $(LDLIBS) -o $@

tests: all $(UNIT_BINS) $(WL_BINS) $(GOLDEN_BINS) $(TOOL_BINS) $(CORPUS)/.made

# Under SAN=1 (CI's second pass, which has to fit in its time budget) these suites are
# left out.  completions (shell only) and go (its parser runs sanitized in
# test_gopclntab and fuzz_gopclntab; the rest is Go builds and DWARF comparisons) run
# no C of ours differently.  The others spend their time waiting on workloads,
# browsers or timers: offcpu, python, perf-agent, pmu (scheduling latency bounds,
# which sanitizers slow), gpu, gpu-attach, flamegraph, speedscope, and of pa-record's
# own suites all but record-smoke, errors, drops, containers and unwind (its stack
# slices are walked in user space).  What only they reach (pa-record's off-CPU,
# Python, GPU, cgroup, event-list and privilege paths, perf-agent's loop) is not run
# sanitized in CI; `make check SAN=1 SAN_LEAVE_OUT=` runs every suite.
SAN_LEAVE_OUT := tests/completions.bats tests/go.bats tests/offcpu.bats tests/python.bats \
	tests/perf-agent.bats tests/pmu.bats tests/gpu.bats tests/gpu-attach.bats \
	tests/flamegraph.bats tests/speedscope.bats tests/record.bats tests/events.bats \
	tests/privilege.bats tests/cgroups.bats

check: deps
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory tests
	@O=$(O) PA_LEAVE_OUT="$(if $(filter 1,$(SAN)),$(SAN_LEAVE_OUT))" tests/run-all

demo: deps
	@$(MAKE) --no-print-directory all $(WL_BINS)
	@O=$(O) scripts/demo

# What the check on a GPU machine runs (tests/gpu/check.sh), in one folder to carry
# there: the commands, their shared libraries, the adapter, the nvcc workload.
.PHONY: gpu-check-bundle
gpu-check-bundle: all
	@tests/gpu/bundle.sh $(O) $(O)/gpu-check

# Each prints ratios against Linux perf (or the workload alone) on the same run.
BENCHES := overhead offcpu unwind cfi-compile report compress shortproc python gpu flamegraph labels continuous gosym startup

bench: tests
	@for b in $(BENCHES); do echo "== bench/$$b"; O=$(O) bench/$$b || exit 1; done

bench-%: tests
	@O=$(O) bench/$*

# make fuzz: each tests/fuzz/fuzz_NAME.c as a libFuzzer binary (clang, ASan and UBSan,
# libcommon rebuilt the same way under $(FUZZ_O)), run FUZZ_S seconds in turn on a
# scratch copy of $(O)/tests/fuzz/corpus/NAME; fails if any target crashes.
FUZZ_S     ?= 60
FUZZ_O     ?= build-fuzz
FUZZ_CC    ?= $(CLANG)
FUZZ_FLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))

.PHONY: fuzz fuzz-build
fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build $(CORPUS)/.made
	@FUZZ_O=$(FUZZ_O) FUZZ_S=$(FUZZ_S) FUZZ_CORPUS=$(CORPUS) tests/fuzz/run $(FUZZ_NAMES)

fuzz-build:
	@$(MAKE) --no-print-directory O=$(FUZZ_O) CC=$(FUZZ_CC) SAN= \
		SAN_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_FLAGS)" \
		$(addprefix $(FUZZ_O)/fuzz/fuzz_,$(FUZZ_NAMES))

$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(O)/libcommon.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -MF $(@D)/.$(@F).d -fsanitize=fuzzer -Itests/fuzz $< $(O)/libcommon.a $(LDLIBS) -o $@

# The replay test includes every fuzz target's source.
$(O)/tests/test_fuzz_regress: $(wildcard tests/fuzz/*.c tests/fuzz/*.h)

# scripts/lint-options runs each command's --help (every option it lists must be in its
# man page and both completions), so lint builds the commands: on a fresh clone, make
# check lints before it builds the tests.
lint: $(BINS) $(AGENT)
	scripts/lint-bats
	scripts/lint-layers
	clang-format --dry-run -Werror $(LIB_SRCS) $(LIB_HDRS) $(wildcard cmd/*/*.c cmd/*/*.h cmd/*/*/*.c cmd/*/*/*.h bpf/*.c bpf/*.h tests/unit/*.c tests/unit/*.h tests/workloads/*.c tests/fuzz/*.c tests/golden/*.c tests/tools/*.c)
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --inline-suppr -Ilibcommon -Ibpf $(LIB_SRCS) cmd/record cmd/report cmd/convert cmd/agent cmd/gpu-attach/main.c cmd/gpu-attach/adapter/probes.c cmd/gpu-attach/adapter/totals.c
	O=$(O) scripts/lint-options

format:
	clang-format -i $(LIB_SRCS) $(LIB_HDRS) $(wildcard cmd/*/*.c cmd/*/*.h cmd/*/*/*.c cmd/*/*/*.h bpf/*.c bpf/*.h tests/unit/*.c tests/unit/*.h tests/workloads/*.c tests/fuzz/*.c tests/golden/*.c tests/tools/*.c)

# make install [PREFIX=/usr/local] [DESTDIR=]: the commands, the CUDA adapter where it
# is built (pa-gpu-attach finds it in ../lib/perf-agent/ from itself), man pages, bash
# completion (one file; bash-completion loads it by the command's name) and zsh's.
BASHCOMP_DIR := $(PREFIX)/share/bash-completion/completions
ZSHCOMP_DIR  := $(PREFIX)/share/zsh/site-functions

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(BASHCOMP_DIR)
	install -m 0755 $(BINS) $(AGENT) $(DESTDIR)$(PREFIX)/bin
	install -m 0644 $(wildcard man/*.1) $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 completions/pa.bash $(DESTDIR)$(BASHCOMP_DIR)/pa-record
	for c in pa-report pa-convert pa-gpu-attach perf-agent; do \
		ln -sf pa-record $(DESTDIR)$(BASHCOMP_DIR)/$$c || exit; done
ifneq ($(wildcard completions/_pa),)
	install -d $(DESTDIR)$(ZSHCOMP_DIR)
	install -m 0644 completions/_pa $(DESTDIR)$(ZSHCOMP_DIR)/_pa
endif
ifneq ($(ADAPTER),)
	install -d $(DESTDIR)$(PREFIX)/lib/perf-agent
	install -m 0755 $(ADAPTER) $(DESTDIR)$(PREFIX)/lib/perf-agent
endif

# make setcap [PREFIX=] [DESTDIR=], after make install (which writes a new file, without
# them): users record without sudo, each only their own processes unless the
# administrator allows more (README.md, "Running without root").
setcap:
	@command -v setcap >/dev/null || { echo "error: setcap not found; install libcap2-bin" >&2; exit 1; }
	@test -x $(DESTDIR)$(PREFIX)/bin/pa-record || \
		{ echo "error: no $(DESTDIR)$(PREFIX)/bin/pa-record; run make install first (same PREFIX and DESTDIR)" >&2; exit 1; }
	setcap $(SETCAP_CAPS) $(DESTDIR)$(PREFIX)/bin/pa-record
	@! findmnt -no OPTIONS -T $(DESTDIR)$(PREFIX)/bin 2>/dev/null | grep -qw nosuid || \
		echo "warning: $(DESTDIR)$(PREFIX)/bin is on a nosuid mount: the kernel ignores file capabilities there" >&2

clean:
	rm -rf $(O)

-include $(wildcard $(O)/libcommon/*/*.d $(O)/cmd/*/*.d $(O)/tests/.*.d $(O)/fuzz/.*.d)
