# mk/cuda.mk - CUDA backend (cuda/; Go build tag cuda)
#
#   make cuda        build/cuda/libggml-cuda.a with nvcc ($(CUDA_HOME)/bin/nvcc, else nvcc on PATH)
#                    for CUDA_ARCHS (default 75 80 86 89 90, plus PTX of the last one); no -rdc
#   make cuda-check  for machines without a GPU, with Debian's CUDA 11.8 toolchain
#                    (scripts/ci-install.sh cuda: /opt/ggml-cuda-11.8), builds the library
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

# the toolkit is installed by scripts/ci-install.sh cuda (cuda/install-toolkit.sh)
cuda-toolkit:
	@[ -x "$(NVCC)" ] || command -v "$(NVCC)" >/dev/null 2>&1 || \
		{ echo "missing nvcc: run scripts/ci-install.sh cuda (CUDA 11.8 into $(CUDA_PREFIX), no driver)" >&2; exit 1; }

cuda-check: cuda-toolkit
	@$(MAKE) --no-print-directory lib
	@$(MAKE) --no-print-directory -j$(NPROC) --output-sync=target cuda $(CUDA_BUILD)/bin/test-cuda $(CUDA_BUILD)/bin/bench-cuda
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
CUDA_FP16_CHECK_SRCS := cuda/get-rows.cu cuda/cpy.cu cuda/mul-mat.cu cuda/mul-mat-id.cu

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
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH sh scripts/conformance-device.sh CUDA0 cuda/tests/conform-shim.c $(CUDA_BUILD)/libggml-cuda.a "" "$(CUDA_LDLIBS)" $(CONFORMANCE)

test-cuda: cuda $(CUDA_BUILD)/bin/test-cuda
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH ./$(CUDA_BUILD)/bin/test-cuda
	LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH CGO_LDFLAGS="$(CUDA_LIBDIRS)" $(GO) test -tags cuda -count=1 -run CUDA -v .
	@$(MAKE) --no-print-directory test-ops-cuda
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
	GGML_CUDA_EMU_QUIET=1 sh scripts/conformance-device.sh CUDA0 cuda/tests/conform-shim.c $(CUDA_EMU_LIB) "" "$(CUDA_EMU_LDLIBS)" $(CONFORMANCE)
	GGML_CUDA_EMU_QUIET=1 GGML_CUDA_EMU_SCHEDULE=reverse \
		sh scripts/conformance-device.sh CUDA0 cuda/tests/conform-shim.c $(CUDA_EMU_LIB) "" "$(CUDA_EMU_LDLIBS)" $(CONFORMANCE)

# the library's checksum goes into CGO_CFLAGS: Go's build cache does not look at linked archives
test-cuda-emu: lib $(CUDA_EMU_LIB) $(CUDA_EMU_BUILD)/bin/test-emu $(CUDA_EMU_BUILD)/bin/test-cuda
	./$(CUDA_EMU_BUILD)/bin/test-emu
	./$(CUDA_EMU_BUILD)/bin/test-cuda
	GGML_CUDA_EMU_DEVICES=2 GGML_CUDA_EMU_SCHEDULE=reverse ./$(CUDA_EMU_BUILD)/bin/test-cuda
	GGML_CUDA_EMU_QUIET=1 GGML_CUDA_EMU_DEVICES=2 GGML_CUDA_EMU_SCHEDULE=random GGML_CUDA_EMU_STREAMS=threads \
		./$(CUDA_EMU_BUILD)/bin/test-cuda
	stamp=$$(cksum < $(CUDA_EMU_LIB) | cut -d' ' -f1); \
	CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_CUDA_EMU_STAMP=$$stamp" $(GO) test -tags 'cuda cudaemu' -count=1 -run CUDA . && \
	$(MAKE) --no-print-directory test-ops-cuda-emu && \
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
	@$(call require,$(ARM64_CXX),g++-aarch64-linux-gnu)

test-cuda-emu-arm64: cuda-emu-arm64-tools lib-arm64
	@$(MAKE) --no-print-directory BUILD=$(ARM64_BUILD) CC=$(ARM64_CC) CXX=$(ARM64_CXX) \
		$(CUDA_EMU_ARM64_BUILD)/bin/test-emu $(CUDA_EMU_ARM64_BUILD)/bin/test-cuda
	$(ARM64_RUN) ./$(CUDA_EMU_ARM64_BUILD)/bin/test-emu
	GGML_CUDA_EMU_QUIET=1 GGML_CUDA_EMU_DEVICES=2 GGML_CUDA_EMU_SCHEDULE=random \
		$(ARM64_RUN) ./$(CUDA_EMU_ARM64_BUILD)/bin/test-cuda
