# emu.mk - the Metal emulator (metal/emu): builds the Metal backend's host code (metal/*.m,
# GCC Objective-C on GNUstep Foundation) against the emulator's fake Metal objects, with every
# kernel of metal/*.metal compiled as C++ through the MSL shim, so the backend runs on Linux.
# Included from the top Makefile (uses BUILD, CC, CXX, LIB_HDRS).
#
#   $(METAL_EMU_LIB)          build/metal-emu/libggml-metal.a: metal/*.m + metal/emu (device, launcher, kernels)
#   $(METAL_SOURCE_OBJ)       build/metal-emu/metal-source.o: the embedded kernel source for C programs
#                             (a constructor hands it to ggml_x_metal_set_source)
#   metal-deps                installs gobjc, GNUstep Foundation and clang with apt when missing
#
# Link a C program:  $(CC) ... $(METAL_SOURCE_OBJ) $(METAL_EMU_LIB) $(BUILD)/libggml.a $(METAL_EMU_LDLIBS)

BUILD           ?= build
CXX             ?= g++
METAL_EMU_BUILD := $(BUILD)/metal-emu
METAL_EMU_LIB   := $(METAL_EMU_BUILD)/libggml-metal.a
METAL_SOURCE_OBJ := $(METAL_EMU_BUILD)/metal-source.o

# the embedded source: common.metal, the argument block, then every family file in name order
METAL_FAMILIES  := $(sort $(filter-out metal/common.metal,$(wildcard metal/*.metal)))
METAL_SOURCES   := metal/common.metal metal/ggml-metal-kargs.h $(METAL_FAMILIES)

GNUSTEP_INC      = /usr/include/GNUstep
METAL_OBJCFLAGS  = -std=gnu11 -O2 -g -Wall -Wextra -fPIC -pthread -isystem $(GNUSTEP_INC) \
                   $(shell gnustep-config --objc-flags 2>/dev/null | sed 's/-MMD//; s/-MP//') \
                   -Imetal/emu/include -Imetal -Iggml/include -Iggml/src
METAL_EMU_CXXFLAGS = -std=c++17 -O2 -g -Wall -Wextra -fPIC -pthread -Wno-attributes -Wno-unused-parameter \
                   -ffp-contract=off -Imetal/emu/include -Imetal/emu -I. -I$(METAL_EMU_BUILD)
METAL_EMU_LDLIBS = $(shell gnustep-config --base-libs 2>/dev/null || echo -lgnustep-base -lobjc) -lstdc++ -lm -pthread

METAL_HOST_SRCS := metal/ggml-metal.m metal/ggml-metal-ops.m
METAL_HDRS      := metal/ggml-metal-impl.h metal/ggml-metal-kargs.h ggml/include/ggml-metal.h \
                   metal/emu/include/Metal/Metal.h metal/emu/include/metal_stdlib metal/emu/emu.h \
                   metal/emu/emu_internal.h cuda/emu/fiber-switch.h $(LIB_HDRS)
METAL_EMU_OBJS  := $(patsubst metal/%.m,$(METAL_EMU_BUILD)/obj/%.o,$(METAL_HOST_SRCS)) \
                   $(METAL_EMU_BUILD)/obj/emu/device.o $(METAL_EMU_BUILD)/obj/emu/launch.o \
                   $(METAL_EMU_BUILD)/obj/emu/kernels.o

.PHONY: metal-emu metal-deps

metal-deps:
	@$(call require,gnustep-config,libgnustep-base-dev)
	@$(call require,clang,clang)
	@[ -x "$$(gcc -print-prog-name=cc1obj)" ] || \
		{ echo "missing the Objective-C compiler: run scripts/ci-install.sh metal (or apt-get install gobjc)" >&2; exit 1; }

metal-emu: $(METAL_EMU_LIB) $(METAL_SOURCE_OBJ)

$(METAL_EMU_LIB): $(METAL_EMU_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(METAL_EMU_BUILD)/obj/%.o: metal/%.m $(METAL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(METAL_OBJCFLAGS) -c $< -o $@

$(METAL_EMU_BUILD)/obj/emu/device.o: metal/emu/device.m $(METAL_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(METAL_OBJCFLAGS) -c $< -o $@

$(METAL_EMU_BUILD)/obj/emu/launch.o: metal/emu/launch.cpp $(METAL_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) $(METAL_EMU_CXXFLAGS) -c $< -o $@

# kernel-list.inc: X(name) for every `kernel void name(`; metal-families.inc: the family files
$(METAL_EMU_BUILD)/kernel-list.inc: $(METAL_SOURCES)
	@mkdir -p $(dir $@)
	sed -n 's/^kernel void \([A-Za-z0-9_]*\)(.*/X(\1)/p' $(METAL_FAMILIES) > $@

$(METAL_EMU_BUILD)/metal-families.inc: $(METAL_SOURCES)
	@mkdir -p $(dir $@)
	for f in $(METAL_FAMILIES); do echo "#include \"$$f\""; done > $@

$(METAL_EMU_BUILD)/obj/emu/kernels.o: metal/emu/kernels.cpp $(METAL_SOURCES) $(METAL_HDRS) \
		$(METAL_EMU_BUILD)/kernel-list.inc $(METAL_EMU_BUILD)/metal-families.inc
	@mkdir -p $(dir $@)
	$(CXX) $(METAL_EMU_CXXFLAGS) -c $< -o $@

# the kernel source as a C array, handed to the library by a constructor
$(METAL_EMU_BUILD)/metal-source.c: $(METAL_SOURCES)
	@mkdir -p $(dir $@)
	{ echo '// generated from metal/*.metal by metal/emu/emu.mk: the embedded kernel source'; \
	  echo '#include <stddef.h>'; \
	  echo 'void ggml_x_metal_set_source(const char * source, size_t len);'; \
	  echo 'static const char metal_source[] = {'; \
	  cat $(METAL_SOURCES) | od -An -v -tx1 | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0};'; \
	  echo '__attribute__((constructor)) static void metal_source_init(void) {'; \
	  echo '    ggml_x_metal_set_source(metal_source, sizeof(metal_source) - 1);'; \
	  echo '}'; } > $@

$(METAL_SOURCE_OBJ): $(METAL_EMU_BUILD)/metal-source.c
	$(CC) -O0 -Wall -Wextra -c $< -o $@
