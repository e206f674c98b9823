# mk/metal.mk - Metal backend (metal/; Go build tag metal on darwin, `metal metalemu` with the Linux emulator)
#
#   make metal-check           clang type-checks every .metal file as C++17 through the MSL shim
#                              (metal/emu/include/metal_stdlib), the Objective-C host with
#                              -fsyntax-only against GNUstep and the stub Metal headers
#                              (metal/emu/include/Metal/Metal.h), and `go vet`s the Go package for
#                              GOOS=darwin -tags metal (file selection; no cgo there)
#   make test-metal-emu        the emulator's C tests (metal/tests/test-metal.c, with and without
#                              SIMD-group reductions) and the Go tests with -tags 'metal metalemu'
#   make conformance-metal-emu the public conformance suite computed on the emulated Metal backend
# Needs gobjc, libgnustep-base-dev and clang (scripts/ci-install.sh metal).

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
	@$(MAKE) --no-print-directory test-ops-metal-emu

conformance-metal-emu: metal-deps lib $(METAL_EMU_LIB) $(METAL_SOURCE_OBJ)
	sh scripts/conformance-device.sh Metal metal/tests/conform-shim.c $(METAL_EMU_LIB) "$(METAL_SOURCE_OBJ)" "$(METAL_EMU_LDLIBS)" $(CONFORMANCE)

# the areas kept in mk/
