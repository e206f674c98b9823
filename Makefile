# ggml-go Makefile: the C library, the C unit tests and the Go checks.
#
#   make lib        build/libggml.a (the C library alone, usable from C)
#   make test       gofmt check, go vet, CGO_ENABLED=0 build, C unit tests, go test ./...
#   make test-c     build and run every ggml/tests/test-*.c against build/libggml.a
#   make bench      Go benchmarks
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
