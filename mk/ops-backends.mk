# The op table on every backend (tests/ops_backends_test.go, TestOpsEveryBackend): every case of
# the Go op table (tests/ops_test.go) computed on each registered backend and on an in-process
# RPC device, compared with the 1-thread CPU; the ran/skipped counts of each backend are printed.
# The plain `go test ./tests/` runs it on CPU (2 threads), CPU_REPACK, Test and RPC; these
# targets add the emulated devices (and a real GPU), whose packages the tagged test files import.
#
#   make test-ops-cuda-emu    with CUDA0 of the CUDA emulator (-tags 'cuda cudaemu')
#   make test-ops-metal-emu   with Metal of the Metal emulator (-tags 'metal metalemu'; GNUstep)
#   make test-ops-cuda        with CUDA0 on a GPU (-tags cuda)

OPS_BACKENDS_RUN := -count=1 -v -run 'TestOpsEveryBackend$$' ./tests/
# prints the summary lines of the -v log, keeps the test's status
OPS_BACKENDS_SUMMARY = status=$$?; grep -E '^ +[A-Za-z0-9_:=]+ +ran +[0-9]+|not available|^(--- FAIL|FAIL|ok)' $(1); exit $$status

.PHONY: test-ops-cuda-emu test-ops-metal-emu test-ops-cuda

test-ops-cuda-emu: lib $(CUDA_EMU_LIB)
	@mkdir -p $(BUILD)
	@stamp=$$(cksum < $(CUDA_EMU_LIB) | cut -d' ' -f1); \
	GGML_CUDA_EMU_QUIET=1 CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_CUDA_EMU_STAMP=$$stamp" \
		$(GO) test -tags 'cuda cudaemu' $(OPS_BACKENDS_RUN) > $(BUILD)/ops-backends-cuda-emu.log 2>&1; \
	$(call OPS_BACKENDS_SUMMARY,$(BUILD)/ops-backends-cuda-emu.log)

test-ops-metal-emu: metal-deps lib $(METAL_EMU_LIB)
	@mkdir -p $(BUILD)
	@stamp=$$(cksum < $(METAL_EMU_LIB) | cut -d' ' -f1); \
	CGO_CFLAGS="$(CGO_CFLAGS) -DGGML_METAL_EMU_STAMP=$$stamp" \
		$(GO) test -tags 'metal metalemu' $(OPS_BACKENDS_RUN) > $(BUILD)/ops-backends-metal-emu.log 2>&1; \
	$(call OPS_BACKENDS_SUMMARY,$(BUILD)/ops-backends-metal-emu.log)

test-ops-cuda: cuda
	@mkdir -p $(BUILD)
	@LD_LIBRARY_PATH=$(CUDA_HOME)/lib64:$$LD_LIBRARY_PATH CGO_LDFLAGS="$(CUDA_LIBDIRS)" \
		$(GO) test -tags cuda $(OPS_BACKENDS_RUN) > $(BUILD)/ops-backends-cuda.log 2>&1; \
	$(call OPS_BACKENDS_SUMMARY,$(BUILD)/ops-backends-cuda.log)
