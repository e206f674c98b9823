# mk/reliability.mk - Reliability gates: sanitizers, valgrind, a second compiler
#
#   make test-sanitize   the library, every C test and the public conformance suite built with
#                        ASan + UBSan (gcc, -fno-sanitize-recover=all: any report fails) in
#                        build/asan/ (scripts/conformance-sanitize.sh; leaks are checked at exit),
#                        then the Go tests of the packages that run C code with go test -asan
#                        (and UBSan in the cgo code)
#   make test-valgrind   every C test (the ordinary build) under valgrind --leak-check=full;
#                        definite or indirect leaks and memory errors fail. GGML_TEST_QUICK=1
#                        shortens the slow tests (valgrind: scripts/ci-install.sh valgrind)
#   make test-clang      the library and every C test built with clang -Wall -Wextra -Werror in
#                        build/clang/ and run, then CC=clang go test of the packages that run C code (clang:
#                        scripts/ci-install.sh clang)
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
		$(SAN_ENV) sh scripts/conformance-sanitize.sh $(CONFORMANCE) $(SAN_BUILD)/libggml.a "$(SAN_CC) $(SAN_FLAGS)"; \
	else echo "conformance: $(CONFORMANCE)/conform.c not found, sanitized run skipped"; fi

# (only the packages whose tests run C code: scripts/cgo-packages.sh)
test-sanitize-go:
	@$(CGO_PKGS_SH) echo "go test -asan: $$(echo $$pkgs | wc -w) packages whose tests run C code"; \
	$(SAN_ENV) CC=$(SAN_CC) CGO_CFLAGS="-O2 -g -fsanitize=undefined -fno-sanitize-recover=all -DGGML_SRC_STAMP=$(GGML_SRC_STAMP)" \
		CGO_LDFLAGS="-fsanitize=undefined" $(GO) test -asan $$pkgs

# the C side (library, tests, then the conformance suite: one build folder, one after another)
# and the Go side run side by side: go test -asan compiles the library again through cgo, one
# file after another, which leaves the other core free. Each side's output is kept together.
test-sanitize:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-sanitize-cside test-sanitize-go

.PHONY: test-sanitize-cside
test-sanitize-cside:
	@$(MAKE) --no-print-directory test-sanitize-c
	@$(MAKE) --no-print-directory test-sanitize-conformance

valgrind-tool:
	@$(call require,$(VALGRIND),valgrind)

# valgrind runs a program's threads one at a time: the tests run VALGRIND_JOBS at a time, their
# outputs printed whole in TEST_BINS order (scripts/run-tests-parallel.sh)
VALGRIND_JOBS ?= $(NPROC)
test-valgrind: valgrind-tool lib
	@failed=""; run=""; \
	for t in $(TEST_BINS); do \
		if ! $(MAKE) --no-print-directory $$t; then failed="$$failed $$t(build)"; continue; fi; \
		run="$$run $$t"; \
	done; \
	list=$$(mktemp); \
	GGML_TEST_QUICK=1 sh scripts/run-tests-parallel.sh $(VALGRIND_JOBS) valgrind $$list "$(VALGRIND) $(VALGRIND_FLAGS)" $$run || \
		[ $$? = 1 ] || failed="$$failed scripts/run-tests-parallel.sh"; \
	failed="$$failed $$(cat $$list)"; rm -f $$list; failed=$$(echo $$failed); \
	if [ -n "$$failed" ]; then echo "valgrind C tests FAILED: $$failed"; exit 1; fi; \
	echo "valgrind C tests: all passed"

clang-tool:
	@$(call require,$(CLANG),clang)

test-clang-c: clang-tool
	@$(MAKE) --no-print-directory BUILD=$(CLANG_BUILD) CC="$(CLANG) -Werror" test-c

test-clang-go: clang-tool
	@$(CGO_PKGS_SH) set -x; CC=$(CLANG) CGO_CFLAGS="-O2 -g -DGGML_SRC_STAMP=$(GGML_SRC_STAMP)" $(GO) test $$pkgs

test-clang: test-clang-c test-clang-go

# a consumer module (a temporary directory outside the repository) that requires this module
# and uses tensor ops: built and run through a read-only module cache filled from a local
# GOPROXY (the `go get` path), built and run from `go mod vendor`, and built with CGO_ENABLED=0
# (it must compile and report ErrNoCgo when run)
.PHONY: test-consumer
test-consumer:
	sh scripts/consumer-check.sh

.PHONY: test-stress
GGML_STRESS_SECONDS ?= 3
test-stress:
	GGML_STRESS_SECONDS=$(GGML_STRESS_SECONDS) CGO_CFLAGS="-O2 -g -DGGML_SRC_STAMP=$(GGML_SRC_STAMP)" \
		$(GO) test -race -count=1 -run 'TestStress|TestBadInput' -v ./tests/
