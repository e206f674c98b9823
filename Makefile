# ggml-go Makefile: the C library, the C unit tests and the Go checks. Each area's targets live
# in mk/<area>.mk, included at the end; scripts/ holds the scripts they run, tools/ the Go tools
# and benchmark sources, build/ only outputs.
#
#   make lib        build/libggml.a (the C library alone, usable from C)
#   make test       what a user runs, needing only Go and a C compiler (no root, no system
#                   packages): gofmt check, go vet, API check, C unit tests, go test -short ./...
#                   (under about 3 minutes on a fresh 2-core machine; .ci/run adds make nocgo,
#                   the CGO_ENABLED=0 build of every package, and the consumer checks)  (.ci/run adds make test-slow and the checks that
#                   need more, after scripts/ci-install.sh has installed their system packages)
#   make test-slow  the tests that -short skips (long model, training and server runs)
#   make test-c     build and run every ggml/tests/test-*.c against build/libggml.a
#   make fmt        format the Go sources (make fmt-check only lists unformatted files)
#   make clean      remove build outputs
#
# mk/bench.mk       benchmarks (make bench, bench-c, bench-matvec, bench-layer, bench-decode)
# mk/conformance.mk the op and gradient conformance suites at every SIMD level, arm64 under qemu
# mk/platform.mk    GGML_MULTIPLATFORM and HBM builds
# mk/reliability.mk sanitizers, valgrind, clang, the consumer module, the stress test
# mk/cuda.mk        the CUDA backend (nvcc) and its host emulator
# mk/metal.mk       the Metal backend's checks and emulator
# mk/models.mk      the runner against llama.cpp's outputs (shared/models), also over RPC
# mk/gram.mk, mk/rpc.mk, mk/server.mk  grammars, the RPC protocol, the OpenAI-compatible server
# mk/ops-backends.mk the op table on the emulated CUDA and Metal devices (and a GPU)
# mk/train.mk      training throughput against PyTorch (not in CI)

CC      ?= cc
CFLAGS  ?= -O2
CFLAGS  += -std=gnu11 -Wall -Wextra -fPIC -pthread -Iggml/include -Iggml/src
LDLIBS  := -lm -pthread
GO      ?= go
# a recipe's shell prefix: $$pkgs = the packages whose tests run C code (scripts/cgo-packages.sh),
# for the checks that change only how C is built (sanitizers, another compiler, ms_abi)
CGO_PKGS_SH = pkgs=$$(sh scripts/cgo-packages.sh $(GO)) && [ -n "$$pkgs" ] || \
	{ echo "cannot list the packages whose tests run C code (scripts/cgo-packages.sh)" >&2; exit 1; };
BUILD   := build

LIB_SRCS := $(wildcard ggml/src/*.c ggml/src/cpu/*.c ggml/src/ops/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard ggml/include/*.h ggml/src/*.h ggml/src/cpu/*.h ggml/src/ops/*.h)

# Go rebuilds a cgo package when a file of its directory changes, and (through the embedded
# headers of ggml/include, ggml/src and csrc, see doc/design.md "Build layout") when a header
# of the library changes. The one C source outside a Go package directory is the test backend
# of ggml/tests, which internal/testbackend #includes: its checksum in CGO_CFLAGS rebuilds that
# package when it is edited. (Module users are unaffected: module files never change.)
GGML_SRC_STAMP := $(shell cat $(wildcard ggml/tests/testbackend.[ch]) 2>/dev/null | cksum | cut -d' ' -f1)
CGO_CFLAGS ?= -O2 -g
export CGO_CFLAGS += -DGGML_SRC_STAMP=$(GGML_SRC_STAMP)

TEST_SRCS := $(wildcard ggml/tests/test-*.c)
TEST_BINS := $(patsubst ggml/tests/%.c,$(BUILD)/bin/%,$(TEST_SRCS))

.PHONY: all lib test test-slow test-c test-go vet nocgo fmt fmt-check clean
all: lib

# the library's objects compile in parallel (one job per core) even from a plain `make test`
NPROC ?= $(shell nproc 2>/dev/null || echo 2)
lib:
	@$(MAKE) --no-print-directory -j$(NPROC) $(BUILD)/libggml.a

$(BUILD)/libggml.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# C unit tests: one program per ggml/tests/test-*.c; all run, the target fails if any fails
# (every test also links the "Test" backend of ggml/tests/testbackend.c, test code only)
.PRECIOUS: $(BUILD)/obj/ggml/tests/testbackend.o
$(BUILD)/bin/test-%: ggml/tests/test-%.c ggml/tests/testing.h ggml/tests/test-util.h ggml/tests/testbackend.h $(BUILD)/obj/ggml/tests/testbackend.o $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/obj/ggml/tests/testbackend.o $(BUILD)/libggml.a $(LDLIBS) -o $@

# every test is built and run even when another one fails to build or fails. The programs are
# built side by side first (-k: a failed build is reported again, and counted, in the loop);
# under a parent make's -j the jobs come from its jobserver
TEST_C_JOBS = $(if $(filter -j% --jobserver%,$(MAKEFLAGS)),,-j$(NPROC))
test-c: lib
	@$(MAKE) --no-print-directory $(TEST_C_JOBS) -k --output-sync=target $(TEST_BINS) || true
	@failed=""; \
	for t in $(TEST_BINS); do \
		if ! $(MAKE) --no-print-directory $$t; then failed="$$failed $$t(build)"; continue; fi; \
		echo "== $$t"; \
		if ! ./$$t; then failed="$$failed $$t"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "C tests FAILED:$$failed"; exit 1; fi; \
	echo "C tests: all passed"

GO_FILES = $$(git ls-files -co --exclude-standard '*.go' 2>/dev/null || find . -name '*.go' -not -path './build/*')

fmt-check:
	@files="$(GO_FILES)"; [ -z "$$files" ] && exit 0; \
	out=$$(gofmt -l $$files); \
	if [ -n "$$out" ]; then echo "gofmt: unformatted files:"; echo "$$out"; exit 1; fi

fmt:
	@files="$(GO_FILES)"; [ -z "$$files" ] || gofmt -w $$files

vet:
	$(GO) vet ./...

# the package must still compile (and explain itself) without cgo
# every package, and every test, compiles without cgo
nocgo:
	CGO_ENABLED=0 $(GO) build ./...
	CGO_ENABLED=0 $(GO) vet ./...

# -short: a slow test (one that asks testing.Short()) skips or shortens itself here; make
# test-slow runs those tests in full (tools/slowtests lists them), and .ci/run runs both
test-go:
	$(GO) test -short ./...

test-slow:
	GO=$(GO) sh scripts/test-slow.sh

# every public C function is wrapped by the Go package or allowlisted with a reason, and every
# buffer(-type) vtable entry has a GGML_CALL trampoline in csrc/ (tools/apicheck)
.PHONY: apicheck
apicheck:
	$(GO) run ./tools/apicheck

# the Go static checks and the C tests run side by side (the cgo build of the CPU kernels, one
# package, compiles its files one after another; make builds the same files for the C tests on
# the other core meanwhile), each one's output kept together; then the Go tests
.PHONY: check-go
check-go: vet apicheck

test: fmt-check
	@$(MAKE) --no-print-directory -j2 --output-sync=target check-go test-c
	@$(MAKE) --no-print-directory test-go

clean:
	rm -rf $(BUILD)/obj $(BUILD)/bin $(BUILD)/libggml.a


CONFORMANCE ?= ../shared/conformance

# $(call require,COMMAND,DEBIAN-PACKAGES): stop with what to install when COMMAND is missing
# (installs happen only in scripts/ci-install.sh)
require = command -v $(1) >/dev/null 2>&1 || { echo "missing $(1): run scripts/ci-install.sh (or apt-get install $(2))" >&2; exit 1; }

include mk/bench.mk
include mk/conformance.mk
include mk/platform.mk
include mk/reliability.mk
include mk/cuda.mk
include mk/metal.mk
include mk/models.mk
include mk/gram.mk
include mk/rpc.mk
include mk/server.mk
include mk/ops-backends.mk
include mk/train.mk
