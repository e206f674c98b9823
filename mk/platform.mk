# mk/platform.mk - GGML_MULTIPLATFORM and HBM builds (separate build directories; the ordinary rules with the
# compiler flags swapped)
#
#   make test-multiplatform  the library and every C test built with -DGGML_MULTIPLATFORM
#                            (GGML_CALL = __attribute__((__ms_abi__)) on x86-64) in
#                            build/multiplatform/, and run
#   make test-hbm            the library built with -DGGML_USE_CPU_HBM and linked with memkind
#                            in build/hbm/ (libmemkind-dev: scripts/ci-install.sh hbm),
#                           , then the HBM buffer type smoke test (test-backend-hbm)

MP_BUILD  := $(BUILD)/multiplatform
HBM_BUILD := $(BUILD)/hbm

.PHONY: test-multiplatform test-multiplatform-c memkind-dev test-hbm

test-multiplatform-c:
	@$(MAKE) --no-print-directory BUILD=$(MP_BUILD) CC="$(CC) -DGGML_MULTIPLATFORM" test-c

# the Go tests with GGML_MULTIPLATFORM: the trampolines of csrc/ are ms_abi functions that the
# C library calls through its vtables (and the API checker parses the headers that way)
.PHONY: test-multiplatform-go
test-multiplatform-go:
	@$(CGO_PKGS_SH) set -x; GGML_TEST_MULTIPLATFORM=1 CGO_CFLAGS="-O2 -g -DGGML_MULTIPLATFORM" $(GO) test $$pkgs
	$(GO) run ./tools/apicheck -multiplatform

test-multiplatform: test-multiplatform-c test-multiplatform-go

memkind-dev:
	@echo '#include <hbwmalloc.h>' | $(CC) -E - >/dev/null 2>&1 || \
		{ echo "missing hbwmalloc.h: run scripts/ci-install.sh hbm (or apt-get install libmemkind-dev)" >&2; exit 1; }

test-hbm: memkind-dev
	@$(MAKE) --no-print-directory BUILD=$(HBM_BUILD) CC="$(CC) -DGGML_USE_CPU_HBM" LDLIBS="$(LDLIBS) -lmemkind" \
		$(HBM_BUILD)/bin/test-backend-hbm
	./$(HBM_BUILD)/bin/test-backend-hbm
