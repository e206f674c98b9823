# ggml-go Makefile: the C library, the C unit tests and the Go checks.
#
#   make lib        build/libggml.a (the C library alone, usable from C)
#   make test       gofmt check, go vet, CGO_ENABLED=0 build, C unit tests, go test ./...
#   make test-c     build and run every ggml/tests/test-*.c against build/libggml.a
#   make bench      C benchmarks (bench-c, below) and Go benchmarks
#   make fmt        format the Go sources (make fmt-check only lists unformatted files)
#   make cgo-units  regenerate the zggml_*.c cgo wrappers after adding/removing a C source
#   make clean      remove build outputs

CC      ?= cc
CFLAGS  ?= -O2
CFLAGS  += -std=gnu11 -Wall -Wextra -fPIC -pthread -Iggml/include -Iggml/src
LDLIBS  := -lm -pthread
GO      ?= go
BUILD   := build

LIB_SRCS := $(wildcard ggml/src/*.c ggml/src/cpu/*.c ggml/src/ops/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard ggml/include/*.h ggml/src/*.h ggml/src/cpu/*.h ggml/src/ops/*.h)

TEST_SRCS := $(wildcard ggml/tests/test-*.c)
TEST_BINS := $(patsubst ggml/tests/%.c,$(BUILD)/bin/%,$(TEST_SRCS))

.PHONY: all lib test test-c test-go vet nocgo bench fmt fmt-check cgo-units clean
all: lib

lib: $(BUILD)/libggml.a

$(BUILD)/libggml.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# C unit tests: one program per ggml/tests/test-*.c; all run, the target fails if any fails
$(BUILD)/bin/test-%: ggml/tests/test-%.c ggml/tests/testing.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

# every test is built and run even when another one fails to build or fails
test-c: lib
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
nocgo:
	CGO_ENABLED=0 $(GO) build ./...

test-go:
	$(GO) test ./...

test: fmt-check vet nocgo test-c test-go

bench:
	$(GO) test -run='^$$' -bench=. ./...

cgo-units:
	sh build/gen-cgo-units.sh

clean:
	rm -rf $(BUILD)/obj $(BUILD)/bin $(BUILD)/libggml.a

# ---------------------------------------------------------------------------------------------
# arm64 and dispatch-level checks
#
#   make test-arm64          cross-compile the library and every C test for arm64 (build/arm64/)
#                            and run them under qemu-user; installs gcc-aarch64-linux-gnu and
#                            qemu-user-static with apt-get when they are missing
#   make conformance-arm64   the public conformance suite against the arm64 library, under qemu
#                            (slow: minutes)
#   make conformance-levels  the public conformance suite with GGML_X_CPU_LEVEL=scalar, =avx2 and
#                            unset (build/conformance-levels.sh); fails if any run fails

ARM64_CC      ?= aarch64-linux-gnu-gcc
ARM64_QEMU    ?= qemu-aarch64-static
ARM64_SYSROOT ?= /usr/aarch64-linux-gnu
ARM64_BUILD   := $(BUILD)/arm64
ARM64_TESTS   := $(patsubst ggml/tests/%.c,$(ARM64_BUILD)/bin/%,$(TEST_SRCS))
ARM64_RUN     := $(ARM64_QEMU) -L $(ARM64_SYSROOT)
CONFORMANCE   ?= ../shared/conformance

.PHONY: arm64-tools lib-arm64 test-arm64 conformance-arm64 conformance-levels

arm64-tools:
	@if ! command -v $(ARM64_CC) >/dev/null 2>&1 || ! command -v $(ARM64_QEMU) >/dev/null 2>&1; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "installing gcc-aarch64-linux-gnu and qemu-user-static"; \
		$$sudo apt-get update && $$sudo apt-get install -y gcc-aarch64-linux-gnu qemu-user-static; \
	fi

# the ordinary rules, with the build directory and compiler swapped
lib-arm64: arm64-tools
	@$(MAKE) --no-print-directory BUILD=$(ARM64_BUILD) CC=$(ARM64_CC) lib

# every test runs at the detected level (qemu's default CPU has dotprod); test-quants also runs
# on a CPU model without dotprod, and with the dispatch forced to plain NEON and to scalar
test-arm64: lib-arm64
	@failed=""; \
	for t in $(ARM64_TESTS); do \
		if ! $(MAKE) --no-print-directory BUILD=$(ARM64_BUILD) CC=$(ARM64_CC) $$t; then failed="$$failed $$t(build)"; continue; fi; \
		echo "== qemu-aarch64 $$t"; \
		if ! $(ARM64_RUN) ./$$t; then failed="$$failed $$t"; fi; \
	done; \
	q=$(ARM64_BUILD)/bin/test-quants; \
	if [ -x $$q ]; then \
		echo "== qemu-aarch64 -cpu cortex-a53 $$q"; \
		$(ARM64_RUN) -cpu cortex-a53 ./$$q || failed="$$failed $$q(cortex-a53)"; \
		for lv in neon scalar; do \
			echo "== GGML_X_CPU_LEVEL=$$lv qemu-aarch64 $$q"; \
			GGML_X_CPU_LEVEL=$$lv $(ARM64_RUN) ./$$q || failed="$$failed $$q($$lv)"; \
		done; \
	fi; \
	if [ -n "$$failed" ]; then echo "arm64 C tests FAILED:$$failed"; exit 1; fi; \
	echo "arm64 C tests: all passed"

conformance-arm64: lib-arm64
	ARM64_CC=$(ARM64_CC) ARM64_QEMU=$(ARM64_QEMU) ARM64_SYSROOT=$(ARM64_SYSROOT) \
		sh build/conformance-arm64.sh $(CONFORMANCE) $(ARM64_BUILD)/libggml.a

conformance-levels:
	sh build/conformance-levels.sh $(CONFORMANCE)

# C benchmarks (build/bench.sh): ../shared/bench/bench.c linked against build/libggml.a, OpenBLAS
# cblas_sgemm on the same shapes (libopenblas-dev, installed with apt-get when missing) and the
# machine's read bandwidth, in one run; one table of GFLOP/s, GB/s and ratios (medians of
# BENCH_RUNS process runs) plus benchstat-compatible lines in build/bench/results.txt.
BENCH_DIR ?= ../shared/bench
.PHONY: bench-c
bench-c: lib
	sh build/bench.sh $(BENCH_DIR)

bench: bench-c
