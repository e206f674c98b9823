# ggml-go Makefile (initial: the C library). See README.md for the targets.

CC      ?= cc
CFLAGS  ?= -O2
CFLAGS  += -std=gnu11 -Wall -Wextra -fPIC -pthread -Iggml/include -Iggml/src
BUILD   := build

LIB_SRCS := $(wildcard ggml/src/*.c ggml/src/cpu/*.c ggml/src/ops/*.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard ggml/include/*.h ggml/src/*.h ggml/src/cpu/*.h ggml/src/ops/*.h)

.PHONY: lib clean
lib: $(BUILD)/libggml.a

$(BUILD)/libggml.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

clean:
	rm -rf $(BUILD)/obj $(BUILD)/libggml.a
