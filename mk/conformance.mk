# mk/conformance.mk - the op and gradient conformance suites (../shared/conformance) at every
# SIMD dispatch level, and the library and C tests on arm64 under qemu; included by the Makefile.
#
#   make test-arm64          cross-compile the library and every C test for arm64 (build/arm64/)
#                            and run them under qemu-user (gcc-aarch64-linux-gnu, qemu-user-static:
#                            scripts/ci-install.sh arm64)
#   make conformance-arm64   the public conformance suite against the arm64 library, under qemu
#                            (slow: minutes)
#   make conformance-levels  the public conformance suite with GGML_X_CPU_LEVEL=scalar, =avx2 and
#                            unset (scripts/conformance-levels.sh); fails if any run fails
#   make test-grad                finite-difference checks of every backward pass and the
#                                 optimizer tests (C: ggml/tests/test-grad.c, test-opt.c)
#   make conformance-grad         the gradient suite (../shared/conformance/run . --grad)
#   make conformance-grad-levels  the gradient suite at GGML_X_CPU_LEVEL=scalar, =avx2 and unset

ARM64_CC      ?= aarch64-linux-gnu-gcc
ARM64_QEMU    ?= qemu-aarch64-static
ARM64_SYSROOT ?= /usr/aarch64-linux-gnu
ARM64_BUILD   := $(BUILD)/arm64
ARM64_TESTS   := $(patsubst ggml/tests/%.c,$(ARM64_BUILD)/bin/%,$(TEST_SRCS))
ARM64_TIMEOUT ?= 600
ARM64_RUN     := timeout $(ARM64_TIMEOUT) $(ARM64_QEMU) -L $(ARM64_SYSROOT)

.PHONY: arm64-tools lib-arm64 test-arm64 conformance-arm64 conformance-levels

arm64-tools:
	@$(call require,$(ARM64_CC),gcc-aarch64-linux-gnu)
	@$(call require,$(ARM64_QEMU),qemu-user-static)

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
		sh scripts/conformance-arm64.sh $(CONFORMANCE) $(ARM64_BUILD)/libggml.a

conformance-levels:
	sh scripts/conformance-levels.sh $(CONFORMANCE)


.PHONY: test-grad conformance-grad conformance-grad-levels

test-grad: $(BUILD)/bin/test-grad $(BUILD)/bin/test-opt
	./$(BUILD)/bin/test-grad
	./$(BUILD)/bin/test-opt

conformance-grad: lib
	$(CONFORMANCE)/run . --grad

conformance-grad-levels:
	sh scripts/conformance-levels.sh $(CONFORMANCE) --grad

