# ggml-go Makefile: the C library, the C unit tests and the Go checks.
#
#   make lib        build/libggml.a (the C library alone, usable from C)
#   make test       what a user runs, needing only Go and a C compiler (no root, no system
#                   packages): gofmt check, go vet, CGO_ENABLED=0 build, API check, C unit
#                   tests, go test ./...  (.ci/run adds the checks that need more: HBM/memkind,
#                   valgrind, clang, qemu, CUDA, the consumer-module checks)
#   make test-c     build and run every ggml/tests/test-*.c against build/libggml.a
#   make bench      bench-c, bench-decode and bench-matvec (below), then the Go benchmarks (tests/bench_test.go)
#                   -> build/bench/go.txt + medians
#   make fmt        format the Go sources (make fmt-check only lists unformatted files)
#   make test-consumer  a throw-away consumer module built through a read-only module cache,
#                   through `go mod vendor`, and with CGO_ENABLED=0 (build/consumer-check.sh)
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

.PHONY: all lib test test-c test-go vet nocgo bench fmt fmt-check clean
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
# (every test also links the "Test" backend of ggml/tests/testbackend.c, test code only)
.PRECIOUS: $(BUILD)/obj/ggml/tests/testbackend.o
$(BUILD)/bin/test-%: ggml/tests/test-%.c ggml/tests/testing.h ggml/tests/test-util.h ggml/tests/testbackend.h $(BUILD)/obj/ggml/tests/testbackend.o $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/obj/ggml/tests/testbackend.o $(BUILD)/libggml.a $(LDLIBS) -o $@

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

# every public C function is wrapped by the Go package or allowlisted with a reason, and every
# buffer(-type) vtable entry has a GGML_CALL trampoline in csrc/ (build/apicheck)
.PHONY: apicheck
apicheck:
	$(GO) run ./build/apicheck

test: fmt-check vet nocgo apicheck test-c test-go

# Go benchmarks: -count=BENCH_RUNS (5) runs of every Go benchmark (GO_BENCH=regexp filters,
# BENCH_TIME=-benchtime, BENCH_THREADS=2 -> GGML_BENCH_THREADS), benchstat-compatible output in
# build/bench/go.txt, then a table of medians (build/benchsummary.sh); bench-c runs first
bench:
	@mkdir -p $(BUILD)/bench
	@echo "bench: Go benchmarks, -count=$(or $(BENCH_RUNS),5), $(or $(GGML_BENCH_THREADS),$(BENCH_THREADS),2) threads (minutes)"
	@{ GGML_BENCH_THREADS=$(or $(GGML_BENCH_THREADS),$(BENCH_THREADS),2) $(GO) test -run='^$$' -bench='$(or $(GO_BENCH),.)' \
		-count=$(or $(BENCH_RUNS),5) $(if $(BENCH_TIME),-benchtime=$(BENCH_TIME)) -timeout=0 ./...; \
		echo $$? > $(BUILD)/bench/.go-rc; } | tee $(BUILD)/bench/go.txt
	@rc=$$(cat $(BUILD)/bench/.go-rc); rm -f $(BUILD)/bench/.go-rc; \
		if [ "$$rc" != 0 ]; then echo "bench: Go benchmarks FAILED (exit $$rc)"; exit 1; fi
	@echo; sh build/benchsummary.sh $(BUILD)/bench/go.txt
	@echo "benchstat-compatible Go results: $(BUILD)/bench/go.txt"

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
ARM64_TIMEOUT ?= 600
ARM64_RUN     := timeout $(ARM64_TIMEOUT) $(ARM64_QEMU) -L $(ARM64_SYSROOT)
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

# decode overheads (build/bench-decode.c): scheduler cost per node count and graph size (one
# CPU backend) beside a direct backend compute, and the CPU engine's cost per node at 1 and 2
# threads. Prints figures only; BENCH_DECODE_ARGS passes e.g. "sched reps=15".
.PHONY: bench-decode
$(BUILD)/bin/bench-decode: build/bench-decode.c build/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-decode: $(BUILD)/bin/bench-decode
	./$(BUILD)/bin/bench-decode $(BENCH_DECODE_ARGS)

bench: bench-decode

# matrix-vector speed of every weight type (build/bench-matvec.c) as a share of the read bandwidth
# measured in the same run, at 1 and 2 threads with cold weights; BENCH_MATVEC_ARGS passes e.g.
# "threads=2 reps=9 types=q4_0,q5_K cols=4".
.PHONY: bench-matvec
$(BUILD)/bin/bench-matvec: build/bench-matvec.c build/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-matvec: $(BUILD)/bin/bench-matvec
	./$(BUILD)/bin/bench-matvec $(BENCH_MATVEC_ARGS)

bench: bench-matvec

# one LLaMA-style decode layer per weight type (build/bench-layer.c): ms per token against the
# floor (weight bytes / read bandwidth measured in the same process) at 1 and 2 threads.
# BENCH_LAYER_ARGS passes e.g. "types=q6_K threads=2 runs=3".
.PHONY: bench-layer
$(BUILD)/bin/bench-layer: build/bench-layer.c build/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-layer: $(BUILD)/bin/bench-layer
	./$(BUILD)/bin/bench-layer $(BENCH_LAYER_ARGS)

bench: bench-layer

# ---------------------------------------------------------------------------------------------
# GGML_MULTIPLATFORM and HBM builds (separate build directories; the ordinary rules with the
# compiler flags swapped)
#
#   make test-multiplatform  the library and every C test built with -DGGML_MULTIPLATFORM
#                            (GGML_CALL = __attribute__((__ms_abi__)) on x86-64) in
#                            build/multiplatform/, and run
#   make test-hbm            the library built with -DGGML_USE_CPU_HBM and linked with memkind
#                            in build/hbm/ (installs libmemkind-dev with apt-get when the header
#                            is missing), then the HBM buffer type smoke test (test-backend-hbm)

MP_BUILD  := $(BUILD)/multiplatform
HBM_BUILD := $(BUILD)/hbm

.PHONY: test-multiplatform test-multiplatform-c memkind-dev test-hbm

test-multiplatform-c:
	@$(MAKE) --no-print-directory BUILD=$(MP_BUILD) CC="$(CC) -DGGML_MULTIPLATFORM" test-c

# the Go tests with GGML_MULTIPLATFORM: the trampolines of csrc/ are ms_abi functions that the
# C library calls through its vtables (and the API checker parses the headers that way)
.PHONY: test-multiplatform-go
test-multiplatform-go:
	GGML_TEST_MULTIPLATFORM=1 CGO_CFLAGS="-O2 -g -DGGML_MULTIPLATFORM" $(GO) test ./...
	$(GO) run ./build/apicheck -multiplatform

test-multiplatform: test-multiplatform-c test-multiplatform-go

memkind-dev:
	@if ! echo '#include <hbwmalloc.h>' | $(CC) -E - >/dev/null 2>&1; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "installing libmemkind-dev"; \
		$$sudo apt-get update && $$sudo apt-get install -y libmemkind-dev; \
	fi

test-hbm: memkind-dev
	@$(MAKE) --no-print-directory BUILD=$(HBM_BUILD) CC="$(CC) -DGGML_USE_CPU_HBM" LDLIBS="$(LDLIBS) -lmemkind" \
		$(HBM_BUILD)/bin/test-backend-hbm
	./$(HBM_BUILD)/bin/test-backend-hbm

# ---------------------------------------------------------------------------------------------
# CUDA backend (cuda/; Go build tag cuda)
#
#   make cuda        build/cuda/libggml-cuda.a with nvcc ($(CUDA_HOME)/bin/nvcc, else nvcc on PATH)
#                    for CUDA_ARCHS (default 75 80 86 89 90, plus PTX of the last one); no -rdc
#   make cuda-check  for machines without a GPU: installs Debian's CUDA 11.8 toolchain when no nvcc
#                    is found (cuda/install-toolkit.sh into /opt/ggml-cuda-11.8), builds the library
#                    and the C device test, checks every kernel's registers x launch bound, spills
#                    and shared memory (cuda/resource-check.sh, report in build/cuda/resource-check.txt)
#                    and links (does not run) `go test -tags cuda -c` for the
#                    root package and ./cuda/
#   make test-cuda   on a machine with a GPU: the C device test (cuda/tests/test-cuda.c) and the
#                    tagged Go tests; without a device every test skips with a message
#   make bench-cuda  mul_mat throughput on CUDA0 (cuda/tests/bench-cuda.c)
#   cuda/device-check.sh  the device run: `prepare` here, then two calls on a GPU machine (`build`:
#                    sm_90 build + C device test; `go`: Go tests, conformance, benchmarks), every
#                    step time-limited; `make device-check-dry` runs it all against the emulator

CUDA_PREFIX ?= /opt/ggml-cuda-11.8
CUDA_HOME   ?= $(or $(patsubst %/bin/nvcc,%,$(firstword $(wildcard /usr/local/cuda/bin/nvcc $(CUDA_PREFIX)/bin/nvcc))),$(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)))
NVCC        ?= $(if $(CUDA_HOME),$(CUDA_HOME)/bin/nvcc,nvcc)
CUDA_ARCHS  ?= 75 80 86 89 90
CUDA_BUILD  := $(BUILD)/cuda
# nvcc 11.x accepts g++ up to 11 (Debian bookworm's default is 12)
CUDA_CCBIN  ?= $(if $(filter 11,$(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p')),$(shell command -v g++-11 2>/dev/null))
NVCCFLAGS   ?= -O2
NVCCFLAGS   += -std=c++17 $(if $(CUDA_CCBIN),-ccbin $(CUDA_CCBIN)) \
               $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
               -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS)) \
               -Iggml/include -Iggml/src -Xcompiler -fPIC,-Wall,-Wextra
CUDA_LIBDIRS = -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs
CUDA_LDLIBS  = $(CUDA_LIBDIRS) -lcublas -lcudart -lcuda -lstdc++ -lm -ldl -lrt -pthread

CUDA_SRCS := $(wildcard cuda/*.cu)
CUDA_OBJS := $(patsubst cuda/%.cu,$(CUDA_BUILD)/obj/%.o,$(CUDA_SRCS))
CUDA_HDRS := $(wildcard cuda/*.cuh) ggml/include/ggml-cuda.h $(LIB_HDRS)

.PHONY: cuda cuda-toolkit cuda-check test-cuda bench-cuda

cuda: $(CUDA_BUILD)/libggml-cuda.a

$(CUDA_BUILD)/libggml-cuda.a: $(CUDA_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# ptxas's per-kernel report (registers, stack frame, spills) is kept next to each object for
# cuda/resource-check.sh; everything else nvcc prints still goes to stderr
$(CUDA_BUILD)/obj/%.o: cuda/%.cu $(CUDA_HDRS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -Xptxas -v -c $< -o $@ 2> $@.ptxas; rc=$$?; \
	grep -v -e '^ptxas info' -e '^    [0-9]* bytes stack frame' $@.ptxas >&2; exit $$rc

$(CUDA_BUILD)/bin/test-cuda: cuda/tests/test-cuda.c ggml/tests/testing.h $(CUDA_BUILD)/libggml-cuda.a $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(CUDA_BUILD)/libggml-cuda.a $(BUILD)/libggml.a $(CUDA_LDLIBS) -o $@

$(CUDA_BUILD)/bin/bench-cuda: cuda/tests/bench-cuda.c $(CUDA_BUILD)/libggml-cuda.a $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(CUDA_BUILD)/libggml-cuda.a $(BUILD)/libggml.a $(CUDA_LDLIBS) -o $@

# mul_mat throughput on CUDA0 (F32, F16, Q4_0, Q4_K at 4096 x 4096, batch 1 and 512)
bench-cuda: cuda $(CUDA_BUILD)/bin/bench-cuda
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH ./$(CUDA_BUILD)/bin/bench-cuda

# install the toolchain only when no nvcc is found
cuda-toolkit:
	@if [ ! -x "$(NVCC)" ] && ! command -v "$(NVCC)" >/dev/null 2>&1; then \
		sh cuda/install-toolkit.sh $(CUDA_PREFIX); \
	fi

# the variables are re-evaluated in the sub-make, after a fresh toolkit install
cuda-check: cuda-toolkit
	@$(MAKE) --no-print-directory lib
	@$(MAKE) --no-print-directory cuda $(CUDA_BUILD)/bin/test-cuda $(CUDA_BUILD)/bin/bench-cuda
	@$(MAKE) --no-print-directory cuda-check-arm-fp16
	@home=$$($(MAKE) --no-print-directory -s cuda-home); \
	sh cuda/resource-check.sh $(CUDA_BUILD)/libggml-cuda.a $$home/bin/cuobjdump $(CUDA_BUILD)/obj > $(CUDA_BUILD)/resource-check.txt; \
	rc=$$?; grep -v ' ok$$' $(CUDA_BUILD)/resource-check.txt; [ $$rc = 0 ] || exit 1; \
	mkdir -p $(CUDA_BUILD)/gotest && \
	CGO_LDFLAGS="-L$(abspath $(CUDA_BUILD)) -L$$home/lib64 -L$$home/lib64/stubs" $(GO) test -tags cuda -c -o $(CUDA_BUILD)/gotest/ggml.test . && \
	CGO_LDFLAGS="-L$(abspath $(CUDA_BUILD)) -L$$home/lib64 -L$$home/lib64/stubs" $(GO) test -tags cuda -c -o $(CUDA_BUILD)/gotest/cuda.test ./cuda/ && \
	CGO_LDFLAGS="-L$(abspath $(CUDA_BUILD)) -L$$home/lib64 -L$$home/lib64/stubs" $(GO) build -tags cuda -o $(CUDA_BUILD)/gotest/ggml-demo ./cmd/ggml-demo && \
	echo "cuda-check: library, C device test and tagged Go test binaries built and linked ($$home)"

# ggml.h makes ggml_fp16_t the class `half` when nvcc compiles for an ARM host (Grace, Jetson).
# The sources that read or write block scales, compiled to PTX that way here (-D__ARM_NEON on
# x86), must contain no integer <-> half value conversion (cvt.rzi.*.f16 / cvt.rn.f16.[su]*):
# scales are moved as bits. Part of cuda-check.
CUDA_FP16_CHECK_SRCS := cuda/getrows.cu cuda/cpy.cu cuda/mulmat.cu cuda/mulmatid.cu

.PHONY: cuda-check-arm-fp16
cuda-check-arm-fp16:
	@mkdir -p $(CUDA_BUILD)/arm-fp16; bad=""; \
	for f in $(CUDA_FP16_CHECK_SRCS); do \
		p=$(CUDA_BUILD)/arm-fp16/$$(basename $$f .cu).ptx; \
		$(NVCC) -O2 -std=c++17 $(if $(CUDA_CCBIN),-ccbin $(CUDA_CCBIN)) -arch=sm_90 -D__ARM_NEON \
			-Iggml/include -Iggml/src -ptx $$f -o $$p || exit 1; \
		if grep -q -E 'cvt\.rzi\.[su][0-9]+\.f16|cvt\.rn\.f16\.[su][0-9]+' $$p; then bad="$$bad $$f"; fi; \
	done; \
	if [ -n "$$bad" ]; then echo "cuda-check-arm-fp16: fp16 scales converted as integers (ggml_fp16_t = half):$$bad"; exit 1; fi; \
	echo "cuda-check-arm-fp16: no integer <-> half conversions with ggml_fp16_t = half ($(words $(CUDA_FP16_CHECK_SRCS)) sources)"

# cuda-check-12: cuda-check with CUDA 12.x (Debian sid's 12.4, installed by
# `cuda/install-toolkit.sh /opt/ggml-cuda-12 sid` without touching the system's apt sources; about
# 1 GB of packages), in a build folder of its own so that build/cuda (11.8) is left alone. Not in
# CI (the download and a second full nvcc build); run it when touching the CUDA code. The Go link
# puts -L$(CUDA12_BUILD) before the -L.../build/cuda of cuda/link_nvidia.go; the library's
# checksum goes into CGO_CFLAGS because Go's build cache does not look at linked archives.
CUDA12_PREFIX ?= /opt/ggml-cuda-12
CUDA12_SUITE  ?= sid
CUDA12_BUILD  ?= $(BUILD)/cuda-12

.PHONY: cuda-check-12
cuda-check-12:
	@[ -x "$(CUDA12_PREFIX)/bin/nvcc" ] || sh cuda/install-toolkit.sh "$(CUDA12_PREFIX)" "$(CUDA12_SUITE)"
	@$(MAKE) --no-print-directory lib
	@$(MAKE) --no-print-directory CUDA_HOME=$(CUDA12_PREFIX) CUDA_BUILD=$(CUDA12_BUILD) \
		cuda $(CUDA12_BUILD)/bin/test-cuda $(CUDA12_BUILD)/bin/bench-cuda
	@b=$(abspath $(CUDA12_BUILD)); mkdir -p $$b/gotest && \
	stamp=$$(cksum < $$b/libggml-cuda.a | cut -d' ' -f1) && \
	export CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_CUDA_STAMP=$$stamp" && \
	export CGO_LDFLAGS="-L$$b -L$(CUDA12_PREFIX)/lib64 -L$(CUDA12_PREFIX)/lib64/stubs" && \
	$(GO) test -tags cuda -c -o $$b/gotest/ggml.test . && \
	$(GO) test -tags cuda -c -o $$b/gotest/cuda.test ./cuda/ && \
	echo "cuda-check-12: library, C device test and tagged Go test binaries built and linked ($(CUDA12_PREFIX), $$($(CUDA12_PREFIX)/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\),.*/CUDA \1/p'))"

.PHONY: cuda-home
cuda-home:
	@echo $(CUDA_HOME)

# the public conformance suite computed on CUDA0 (a GPU) against the reference outputs
.PHONY: conformance-cuda
conformance-cuda: lib cuda
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH sh build/conformance-cuda.sh $(CUDA_BUILD)/libggml-cuda.a "$(CUDA_LDLIBS)" $(CONFORMANCE)

test-cuda: cuda $(CUDA_BUILD)/bin/test-cuda
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH ./$(CUDA_BUILD)/bin/test-cuda
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH CGO_LDFLAGS="$(CUDA_LIBDIRS)" $(GO) test -tags cuda -count=1 -run CUDA -v .
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH CGO_LDFLAGS="$(CUDA_LIBDIRS)" $(GO) test -tags cuda -count=1 -v ./cuda/ ./cmd/ggml-demo/

# CUDA host emulator (cuda/emu): the same cuda/*.cu compiled as C++ (-DGGML_CUDA_EMU) and run on
# the CPU by an emulator of the CUDA runtime, kernels (coroutine threads, barriers, warp
# shuffles) and cuBLAS that is strict where a GPU is (launch limits, device memory not readable
# by host code, guard pages after allocations, queued streams that only run at a synchronisation).
#
#   make cuda-emu       build/cuda-emu/libggml-cuda.a (no CUDA toolkit needed)
#   make test-cuda-emu  the emulator's self-tests, the C device test (1 device; 2 devices with
#                       threads and blocks run in reverse order; 2 devices with random block order
#                       and thread interleaving and a host thread per stream) and the tagged Go
#                       tests (-tags 'cuda cudaemu'; ./cuda/ also on 2 devices, random, threaded)
#   make test-cuda-emu-align   the C device test with -fsanitize=alignment (build/cuda-emu-align)
#   make test-cuda-emu-arm64   the emulator tests cross-compiled for arm64, under qemu
#   make device-check-dry      cuda/device-check.sh prepare + both device calls on the emulator
#   make test-cuda-emu-strict  the last three
#
# The .cu sources are compiled for the emulator with nvcc's predefined macros (__CUDACC__,
# __CUDA_ARCH__=900, ...: CUDA_EMU_NVCC_MACROS in cuda/emu/emu.mk).

include cuda/emu/emu.mk

.PHONY: test-cuda-emu

$(CUDA_EMU_BUILD)/bin/test-cuda: cuda/tests/test-cuda.c ggml/tests/testing.h $(CUDA_EMU_LIB) $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(CUDA_EMU_LIB) $(BUILD)/libggml.a $(CUDA_EMU_LDLIBS) -o $@

$(CUDA_EMU_BUILD)/bin/bench-cuda: cuda/tests/bench-cuda.c $(CUDA_EMU_LIB) $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(CUDA_EMU_LIB) $(BUILD)/libggml.a $(CUDA_EMU_LDLIBS) -o $@

# the public conformance suite computed on (emulated) CUDA0 against the reference outputs
.PHONY: conformance-cuda-emu
# (twice: threads and blocks in order, then in reverse order)
conformance-cuda-emu: lib $(CUDA_EMU_LIB)
	GGML_CUDA_EMU_QUIET=1 sh build/conformance-cuda.sh $(CUDA_EMU_LIB) "$(CUDA_EMU_LDLIBS)" $(CONFORMANCE)
	GGML_CUDA_EMU_QUIET=1 GGML_CUDA_EMU_SCHEDULE=reverse \
		sh build/conformance-cuda.sh $(CUDA_EMU_LIB) "$(CUDA_EMU_LDLIBS)" $(CONFORMANCE)

# the library's checksum goes into CGO_CFLAGS: Go's build cache does not look at linked archives
test-cuda-emu: lib $(CUDA_EMU_LIB) $(CUDA_EMU_BUILD)/bin/test-emu $(CUDA_EMU_BUILD)/bin/test-cuda
	./$(CUDA_EMU_BUILD)/bin/test-emu
	./$(CUDA_EMU_BUILD)/bin/test-cuda
	GGML_CUDA_EMU_DEVICES=2 GGML_CUDA_EMU_SCHEDULE=reverse ./$(CUDA_EMU_BUILD)/bin/test-cuda
	GGML_CUDA_EMU_QUIET=1 GGML_CUDA_EMU_DEVICES=2 GGML_CUDA_EMU_SCHEDULE=random GGML_CUDA_EMU_STREAMS=threads \
		./$(CUDA_EMU_BUILD)/bin/test-cuda
	stamp=$$(cksum < $(CUDA_EMU_LIB) | cut -d' ' -f1); \
	CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_CUDA_EMU_STAMP=$$stamp" $(GO) test -tags 'cuda cudaemu' -count=1 -run CUDA . && \
	CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_CUDA_EMU_STAMP=$$stamp" $(GO) test -tags 'cuda cudaemu' -count=1 ./cuda/ ./cmd/ggml-demo/ && \
	GGML_CUDA_EMU_DEVICES=2 GGML_CUDA_EMU_SCHEDULE=random GGML_CUDA_EMU_STREAMS=threads \
		CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_CUDA_EMU_STAMP=$$stamp" $(GO) test -tags 'cuda cudaemu' -count=1 ./cuda/

# the emulator and the C device test built with -fsanitize=alignment (build/cuda-emu-align): a
# misaligned access in a kernel (a GPU faults with cudaErrorMisalignedAddress) ends the test
CUDA_EMU_ALIGN_BUILD := $(BUILD)/cuda-emu-align
CUDA_EMU_ALIGN_SAN   := -fsanitize=alignment -fno-sanitize-recover=alignment

.PHONY: test-cuda-emu-align
test-cuda-emu-align: lib
	@$(MAKE) --no-print-directory CUDA_EMU_BUILD=$(CUDA_EMU_ALIGN_BUILD) CUDA_EMU_SAN="$(CUDA_EMU_ALIGN_SAN)" \
		$(CUDA_EMU_ALIGN_BUILD)/bin/test-cuda
	GGML_CUDA_EMU_QUIET=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./$(CUDA_EMU_ALIGN_BUILD)/bin/test-cuda

# the device script's dry run (cuda/device-check.sh): `prepare` (the folder carried to a GPU
# machine: trimmed Go toolchain, offline module cache, conformance suite; must fit the carry
# limit), then the two device calls with every step run against the host emulator, each step
# under its time limit. Logs in build/cuda/out-emu.
.PHONY: test-cuda-emu-strict
test-cuda-emu-strict: test-cuda-emu-align test-cuda-emu-arm64 device-check-dry

.PHONY: device-check-dry
device-check-dry:
	bash cuda/device-check.sh prepare
	DEVICE_CHECK_EMU=1 bash cuda/device-check.sh build
	DEVICE_CHECK_EMU=1 bash cuda/device-check.sh go

# the emulator's self-tests and the C device test cross-compiled for arm64 and run under qemu
# (build/arm64/cuda-emu): there ggml.h makes ggml_fp16_t __fp16, or the class half with the nvcc
# macros the .cu files see, so code that treats fp16 scales as integers fails here as it would
# on Grace or Jetson. Reuses lib-arm64 (make test-arm64); installs g++-aarch64-linux-gnu when
# missing. One run: 2 devices, random block order and thread interleaving.
ARM64_CXX            ?= aarch64-linux-gnu-g++
CUDA_EMU_ARM64_BUILD := $(ARM64_BUILD)/cuda-emu

.PHONY: cuda-emu-arm64-tools test-cuda-emu-arm64
cuda-emu-arm64-tools: arm64-tools
	@if ! command -v $(ARM64_CXX) >/dev/null 2>&1; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "installing g++-aarch64-linux-gnu"; \
		$$sudo apt-get update && $$sudo apt-get install -y g++-aarch64-linux-gnu; \
	fi

test-cuda-emu-arm64: cuda-emu-arm64-tools lib-arm64
	@$(MAKE) --no-print-directory BUILD=$(ARM64_BUILD) CC=$(ARM64_CC) CXX=$(ARM64_CXX) \
		$(CUDA_EMU_ARM64_BUILD)/bin/test-emu $(CUDA_EMU_ARM64_BUILD)/bin/test-cuda
	$(ARM64_RUN) ./$(CUDA_EMU_ARM64_BUILD)/bin/test-emu
	GGML_CUDA_EMU_QUIET=1 GGML_CUDA_EMU_DEVICES=2 GGML_CUDA_EMU_SCHEDULE=random \
		$(ARM64_RUN) ./$(CUDA_EMU_ARM64_BUILD)/bin/test-cuda

# ---------------------------------------------------------------------------------------------
# Reliability gates: sanitizers, valgrind, a second compiler
#
#   make test-sanitize   the library, every C test and the public conformance suite built with
#                        ASan + UBSan (gcc, -fno-sanitize-recover=all: any report fails) in
#                        build/asan/ (build/conformance-sanitize.sh; leaks are checked at exit),
#                        then the Go tests with go test -asan (and UBSan in the cgo code)
#   make test-valgrind   every C test (the ordinary build) under valgrind --leak-check=full;
#                        definite or indirect leaks and memory errors fail. GGML_TEST_QUICK=1
#                        shortens the slow tests. Installs valgrind with apt-get when missing
#   make test-clang      the library and every C test built with clang -Wall -Wextra -Werror in
#                        build/clang/ and run, then CC=clang go test ./... (installs clang with
#                        apt-get when missing)
#   make test-stress     the Go stress test (goroutines computing graphs concurrently for
#                        GGML_STRESS_SECONDS, default 3) and the bad-input inventory under -race

SAN_CC    ?= gcc
SAN_FLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -g
SAN_BUILD := $(BUILD)/asan
SAN_ENV   := ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CLANG     ?= clang
CLANG_BUILD := $(BUILD)/clang
VALGRIND  ?= valgrind
VALGRIND_FLAGS ?= -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect

.PHONY: test-sanitize test-sanitize-c test-sanitize-conformance test-sanitize-go \
        valgrind-tool test-valgrind clang-tool test-clang test-clang-c test-clang-go

test-sanitize-c:
	@$(SAN_ENV) $(MAKE) --no-print-directory BUILD=$(SAN_BUILD) CC="$(SAN_CC) $(SAN_FLAGS)" test-c

test-sanitize-conformance:
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) CC="$(SAN_CC) $(SAN_FLAGS)" lib
	@if [ -f $(CONFORMANCE)/conform.c ]; then \
		$(SAN_ENV) sh build/conformance-sanitize.sh $(CONFORMANCE) $(SAN_BUILD)/libggml.a "$(SAN_CC) $(SAN_FLAGS)"; \
	else echo "conformance: $(CONFORMANCE)/conform.c not found, sanitized run skipped"; fi

test-sanitize-go:
	$(SAN_ENV) CC=$(SAN_CC) CGO_CFLAGS="-O2 -g -fsanitize=undefined -fno-sanitize-recover=all -DGGML_SRC_STAMP=$(GGML_SRC_STAMP)" \
		CGO_LDFLAGS="-fsanitize=undefined" $(GO) test -asan ./...

test-sanitize: test-sanitize-c test-sanitize-conformance test-sanitize-go

valgrind-tool:
	@if ! command -v $(VALGRIND) >/dev/null 2>&1; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "installing valgrind"; \
		$$sudo apt-get update && $$sudo apt-get install -y valgrind; \
	fi

test-valgrind: valgrind-tool lib
	@failed=""; \
	for t in $(TEST_BINS); do \
		if ! $(MAKE) --no-print-directory $$t; then failed="$$failed $$t(build)"; continue; fi; \
		echo "== valgrind $$t"; \
		if ! GGML_TEST_QUICK=1 $(VALGRIND) $(VALGRIND_FLAGS) ./$$t; then failed="$$failed $$t"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "valgrind C tests FAILED:$$failed"; exit 1; fi; \
	echo "valgrind C tests: all passed"

clang-tool:
	@if ! command -v $(CLANG) >/dev/null 2>&1; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "installing clang"; \
		$$sudo apt-get update && $$sudo apt-get install -y clang; \
	fi

test-clang-c: clang-tool
	@$(MAKE) --no-print-directory BUILD=$(CLANG_BUILD) CC="$(CLANG) -Werror" test-c

test-clang-go: clang-tool
	CC=$(CLANG) CGO_CFLAGS="-O2 -g -DGGML_SRC_STAMP=$(GGML_SRC_STAMP)" $(GO) test ./...

test-clang: test-clang-c test-clang-go

# a consumer module (a temporary directory outside the repository) that requires this module
# and uses tensor ops: built and run through a read-only module cache filled from a local
# GOPROXY (the `go get` path), built and run from `go mod vendor`, and built with CGO_ENABLED=0
# (it must compile and report ErrNoCgo when run)
.PHONY: test-consumer
test-consumer:
	sh build/consumer-check.sh

.PHONY: test-stress
GGML_STRESS_SECONDS ?= 3
test-stress:
	GGML_STRESS_SECONDS=$(GGML_STRESS_SECONDS) CGO_CFLAGS="-O2 -g -DGGML_SRC_STAMP=$(GGML_SRC_STAMP)" \
		$(GO) test -race -count=1 -run 'TestStress|TestBadInput' -v ./tests/

# ---------------------------------------------------------------------------------------------
# LLaMA runner (llama/, cmd/ggml-llama): reference agreement with llama.cpp b1882 on the models
# of shared/models, checked by its compare.py (needs Python 3 with numpy: Debian python3-numpy;
# CI-only, not part of `make test`). The Go test TestReferenceLogits applies the same rules.
MODELS_DIR ?= ../shared/models
MODELS_PYTHON ?= python3
.PHONY: models-check
models-check:
	GO=$(GO) PYTHON=$(MODELS_PYTHON) sh build/models-check.sh $(MODELS_DIR)

# the public models with every layer on ggml-rpc-server (127.0.0.1), checked like models-check
.PHONY: models-check-rpc
models-check-rpc:
	GO=$(GO) PYTHON=$(MODELS_PYTHON) sh build/models-check-rpc.sh $(MODELS_DIR)

# training: autodiff and optimizers
#
#   make test-grad                finite-difference checks of every backward pass and the
#                                 optimizer tests (C: ggml/tests/test-grad.c, test-opt.c)
#   make conformance-grad         the gradient suite (../shared/conformance/run . --grad)
#   make conformance-grad-levels  the gradient suite at GGML_X_CPU_LEVEL=scalar, =avx2 and unset

.PHONY: test-grad conformance-grad conformance-grad-levels

test-grad: $(BUILD)/bin/test-grad $(BUILD)/bin/test-opt
	./$(BUILD)/bin/test-grad
	./$(BUILD)/bin/test-opt

conformance-grad: lib
	$(CONFORMANCE)/run . --grad

conformance-grad-levels:
	sh build/conformance-levels.sh $(CONFORMANCE) --grad

# ---------------------------------------------------------------------------------------------
# Metal backend (metal/; Go build tag metal on darwin, `metal metalemu` with the Linux emulator)
#
#   make metal-check           clang type-checks every .metal file as C++17 through the MSL shim
#                              (metal/emu/include/metal_stdlib), the Objective-C host with
#                              -fsyntax-only against GNUstep and the stub Metal headers
#                              (metal/emu/include/Metal/Metal.h), and `go vet`s the Go package for
#                              GOOS=darwin -tags metal (file selection; no cgo there)
#   make test-metal-emu        the emulator's C tests (metal/tests/test-metal.c, with and without
#                              SIMD-group reductions) and the Go tests with -tags 'metal metalemu'
#   make conformance-metal-emu the public conformance suite computed on the emulated Metal backend
# Installs gobjc, libgnustep-base-dev and clang with apt when missing (metal-deps).

include metal/emu/emu.mk

CLANG_METAL ?= clang

.PHONY: metal-check test-metal-emu conformance-metal-emu

metal-check: metal-deps
	@set -e; for f in "" $(METAL_FAMILIES); do \
		printf '#include "metal/common.metal"\n#include "metal/ggml-metal-kargs.h"\n%s\n' "$${f:+#include \"$$f\"}" | \
		$(CLANG_METAL) -x c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -Wno-unknown-attributes \
			-Wno-unused-parameter -Imetal/emu/include -I. - || { echo "metal-check: $${f:-metal/common.metal}"; exit 1; }; done
	@echo "metal-check: common.metal and $(words $(METAL_FAMILIES)) kernel families type-check as C++17"
	@set -e; for f in $(METAL_HOST_SRCS) metal/emu/device.m; do \
		$(CLANG_METAL) -fsyntax-only -Werror -Wall -Wextra -x objective-c -fobjc-runtime=gcc \
			-I"$$(gcc -print-file-name=include)" $(METAL_OBJCFLAGS) $$f; done
	@echo "metal-check: the Objective-C host and the fake device type-check with clang against GNUstep"
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet -tags metal ./metal/
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=1 $(GO) list -tags metal -f '{{.GoFiles}} {{.CgoFiles}} {{.MFiles}} {{.HFiles}} {{.EmbedFiles}}' ./metal/
	@GOOS=darwin GOARCH=arm64 CGO_ENABLED=1 $(GO) list -tags metal -f '{{.MFiles}}' ./metal/ | grep -q 'ggml-metal.m' || \
		{ echo "metal-check: cgo on darwin would not compile the Objective-C host"; exit 1; }
	@GOOS=linux CGO_ENABLED=1 $(GO) list -tags 'metal metalemu' -f '{{.MFiles}}' ./metal/ | grep -q '^\[\]$$' || \
		{ echo "metal-check: the emulator build must not compile metal/*.m through cgo"; exit 1; }
	@echo "metal-check: ok"

$(METAL_EMU_BUILD)/bin/test-metal: metal/tests/test-metal.c ggml/tests/testing.h $(METAL_EMU_LIB) $(METAL_SOURCE_OBJ) $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iggml/tests $< $(METAL_SOURCE_OBJ) $(METAL_EMU_LIB) $(BUILD)/libggml.a $(METAL_EMU_LDLIBS) -o $@

# the library's checksum goes into CGO_CFLAGS: Go's build cache does not look at linked archives
test-metal-emu: metal-deps lib $(METAL_EMU_LIB) $(METAL_EMU_BUILD)/bin/test-metal
	./$(METAL_EMU_BUILD)/bin/test-metal
	GGML_METAL_EMU_NO_SIMDGROUP=1 ./$(METAL_EMU_BUILD)/bin/test-metal
	stamp=$$(cksum < $(METAL_EMU_LIB) | cut -d' ' -f1); \
	CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_METAL_EMU_STAMP=$$stamp" $(GO) test -tags 'metal metalemu' -count=1 ./metal/ ./cmd/ggml-demo/

conformance-metal-emu: metal-deps lib $(METAL_EMU_LIB) $(METAL_SOURCE_OBJ)
	sh build/conformance-metal.sh $(METAL_EMU_LIB) "$(METAL_SOURCE_OBJ)" "$(METAL_EMU_LDLIBS)" $(CONFORMANCE)

# the areas kept in mk/
include mk/gram.mk
include mk/rpc.mk
include mk/server.mk
include mk/cols.mk
