# emu.mk - the host (CPU) CUDA emulator (cuda/emu): builds the CUDA backend from cuda/*.cu as
# plain C++ against the emulator, so the CUDA tests run without a GPU. Included from the top
# Makefile (uses BUILD, CXX; LIB_HDRS when defined).
#
#   $(CUDA_EMU_LIB)              build/cuda-emu/libggml-cuda.a: cuda/*.cu (-DGGML_CUDA_EMU) + emulator
#   $(CUDA_EMU_BUILD)/bin/test-emu   the emulator's self-tests (cuda/emu/tests/test-emu.cpp)
#   test-emu                     builds and runs them
#
# Link a C test against it like the nvcc library, without the CUDA libraries:
#   $(CC) $(CFLAGS) test.c $(CUDA_EMU_LIB) $(BUILD)/libggml.a $(CUDA_EMU_LDLIBS)

BUILD          ?= build
CXX            ?= g++
CUDA_EMU_BUILD ?= $(BUILD)/cuda-emu
CUDA_EMU_LIB   := $(CUDA_EMU_BUILD)/libggml-cuda.a

# -ffp-contract=off: __fadd_rn/__fmul_rn and the quantizers must not be fused into FMAs
CUDA_EMU_CXXFLAGS ?= -O2 -g
CUDA_EMU_CXXFLAGS += -std=c++17 -fPIC -pthread -Wall -Wextra -ffp-contract=off -DGGML_CUDA_EMU \
                     -Icuda/emu/include -Iggml/include -Iggml/src
CUDA_EMU_LDLIBS    = $(CUDA_EMU_SAN) -lstdc++ -lm -pthread
# extra instrumentation for the whole emulator build and its link (e.g. -fsanitize=alignment)
CUDA_EMU_SAN      ?=
CUDA_EMU_CXXFLAGS += $(CUDA_EMU_SAN)
# the cuda/*.cu sources see the macros nvcc predefines when it compiles device code for sm_90
# (CUDA 11.8): code that depends on them (ggml.h makes ggml_fp16_t the class `half` when
# __CUDACC__ and __ARM_NEON are defined) is compiled as nvcc compiles it
CUDA_EMU_NVCC_MACROS ?= -D__CUDACC__ -D__NVCC__ -D__CUDA_ARCH__=900 -D__CUDACC_VER_MAJOR__=11 \
                        -D__CUDACC_VER_MINOR__=8 -D__CUDACC_VER_BUILD__=89

CUDA_EMU_CU_SRCS  := $(wildcard cuda/*.cu)
CUDA_EMU_SRCS     := cuda/emu/runtime.cpp cuda/emu/launch.cpp cuda/emu/cublas.cpp
CUDA_EMU_HDRS     := $(wildcard cuda/emu/include/*.h) cuda/emu/emu_internal.h cuda/emu/fiber-switch.h
CUDA_EMU_CU_HDRS  := $(wildcard cuda/*.cuh) ggml/include/ggml-cuda.h $(LIB_HDRS) $(CUDA_EMU_HDRS)
CUDA_EMU_CU_OBJS  := $(patsubst cuda/%.cu,$(CUDA_EMU_BUILD)/obj/%.o,$(CUDA_EMU_CU_SRCS))
CUDA_EMU_OBJS     := $(patsubst cuda/emu/%.cpp,$(CUDA_EMU_BUILD)/obj/emu/%.o,$(CUDA_EMU_SRCS))

.PHONY: cuda-emu test-emu

cuda-emu: $(CUDA_EMU_LIB)

$(CUDA_EMU_LIB): $(CUDA_EMU_CU_OBJS) $(CUDA_EMU_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(CUDA_EMU_BUILD)/obj/%.o: cuda/%.cu $(CUDA_EMU_CU_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) $(CUDA_EMU_CXXFLAGS) $(CUDA_EMU_NVCC_MACROS) -x c++ -c $< -o $@

$(CUDA_EMU_BUILD)/obj/emu/%.o: cuda/emu/%.cpp $(CUDA_EMU_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) $(CUDA_EMU_CXXFLAGS) -c $< -o $@

$(CUDA_EMU_BUILD)/bin/test-emu: cuda/emu/tests/test-emu.cpp $(CUDA_EMU_OBJS) $(CUDA_EMU_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) $(CUDA_EMU_CXXFLAGS) $< $(CUDA_EMU_OBJS) $(CUDA_EMU_LDLIBS) -o $@

test-emu: $(CUDA_EMU_BUILD)/bin/test-emu
	./$(CUDA_EMU_BUILD)/bin/test-emu
