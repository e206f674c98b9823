# mk/bench.mk - benchmarks, included by the Makefile. Speed is reported as ratios to limits
# measured in the same run (read bandwidth, OpenBLAS), never as timed tests.
#
#   make bench         bench-c, bench-decode, bench-matvec and bench-layer (below), then the Go
#                      benchmarks -> build/bench/go.txt + medians
#   make bench-c       the shared C harness beside OpenBLAS (scripts/ci-install.sh bench installs it)
#   make bench-decode  scheduler and engine overheads per node (tools/bench/bench-decode.c)
#   make bench-matvec  mat-vec of every weight type as a share of the read bandwidth
#   make bench-layer   one LLaMA-style decode layer per weight type against its floor
#   make bench-cols    a TinyLlama-shaped layer at 1-16 columns (batched decode) against one column
#   make bench-rp-kernels  the CPU_REPACK kernels alone, in cycles (weights in L1, and streamed)
#   make bench-attn    the attention node of a decode step alone, against the read bandwidth

.PHONY: bench

# Go benchmarks: -count=BENCH_RUNS (5) runs of every Go benchmark (GO_BENCH=regexp filters,
# BENCH_TIME=-benchtime, BENCH_THREADS=2 -> GGML_BENCH_THREADS), benchstat-compatible output in
# build/bench/go.txt, then a table of medians (scripts/benchsummary.sh); bench-c runs first
bench:
	@mkdir -p $(BUILD)/bench
	@echo "bench: Go benchmarks, -count=$(or $(BENCH_RUNS),5), $(or $(GGML_BENCH_THREADS),$(BENCH_THREADS),2) threads (minutes)"
	@{ GGML_BENCH_THREADS=$(or $(GGML_BENCH_THREADS),$(BENCH_THREADS),2) $(GO) test -run='^$$' -bench='$(or $(GO_BENCH),.)' \
		-count=$(or $(BENCH_RUNS),5) $(if $(BENCH_TIME),-benchtime=$(BENCH_TIME)) -timeout=0 ./...; \
		echo $$? > $(BUILD)/bench/.go-rc; } | tee $(BUILD)/bench/go.txt
	@rc=$$(cat $(BUILD)/bench/.go-rc); rm -f $(BUILD)/bench/.go-rc; \
		if [ "$$rc" != 0 ]; then echo "bench: Go benchmarks FAILED (exit $$rc)"; exit 1; fi
	@echo; sh scripts/benchsummary.sh $(BUILD)/bench/go.txt
	@echo "benchstat-compatible Go results: $(BUILD)/bench/go.txt"


# C benchmarks (scripts/bench.sh): ../shared/bench/bench.c linked against build/libggml.a, OpenBLAS
# cblas_sgemm on the same shapes (libopenblas-dev: scripts/ci-install.sh bench) and the
# machine's read bandwidth, in one run; one table of GFLOP/s, GB/s and ratios (medians of
# BENCH_RUNS process runs) plus benchstat-compatible lines in build/bench/results.txt.
BENCH_DIR ?= ../shared/bench
.PHONY: bench-c
bench-c: lib
	sh scripts/bench.sh $(BENCH_DIR)

bench: bench-c

# decode overheads (tools/bench/bench-decode.c): scheduler cost per node count and graph size (one
# CPU backend) beside a direct backend compute, and the CPU engine's cost per node at 1 and 2
# threads. Prints figures only; BENCH_DECODE_ARGS passes e.g. "sched reps=15".
.PHONY: bench-decode
$(BUILD)/bin/bench-decode: tools/bench/bench-decode.c tools/bench/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-decode: $(BUILD)/bin/bench-decode
	./$(BUILD)/bin/bench-decode $(BENCH_DECODE_ARGS)

bench: bench-decode

# matrix-vector speed of every weight type (tools/bench/bench-matvec.c) as a share of the read bandwidth
# measured in the same run, at 1 and 2 threads with cold weights; BENCH_MATVEC_ARGS passes e.g.
# "threads=2 reps=9 types=q4_0,q5_K cols=4".
.PHONY: bench-matvec
$(BUILD)/bin/bench-matvec: tools/bench/bench-matvec.c tools/bench/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-matvec: $(BUILD)/bin/bench-matvec
	./$(BUILD)/bin/bench-matvec $(BENCH_MATVEC_ARGS)

bench: bench-matvec

# one LLaMA-style decode layer per weight type (tools/bench/bench-layer.c): ms per token against the
# floor (weight bytes / read bandwidth measured in the same process) at 1 and 2 threads.
# BENCH_LAYER_ARGS passes e.g. "types=q6_K threads=2 runs=3".
.PHONY: bench-layer
$(BUILD)/bin/bench-layer: tools/bench/bench-layer.c tools/bench/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-layer: $(BUILD)/bin/bench-layer
	./$(BUILD)/bin/bench-layer $(BENCH_LAYER_ARGS)

bench: bench-layer

# few-column mat-mul (batched decode): TinyLlama-shaped layer mat-muls (weights in CPU_REPACK) at
# 1, 2, 4, 8, 16 columns and 1 and 2 threads: us per layer, the ratio to one column and the share of
# the read bandwidth measured in the same run (tools/bench/bench-cols.c). BENCH_COLS_ARGS passes
# e.g. "types=q4_0 threads=2 cols=1,8,16 reps=9".
.PHONY: bench-cols
$(BUILD)/bin/bench-cols: tools/bench/bench-cols.c tools/bench/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-cols: $(BUILD)/bin/bench-cols
	nice -n 10 ./$(BUILD)/bin/bench-cols $(BENCH_COLS_ARGS)

# the CPU_REPACK kernels alone, in cycles per 16 rows x 256 elements: weights in L1 (the
# kernel's own speed) and streamed from memory (tools/bench/bench-rp-kernels.c; internal API).
# BENCH_RP_KERNELS_ARGS passes e.g. "types=q6_K cols=1,8 reps=9".
.PHONY: bench-rp-kernels
$(BUILD)/bin/bench-rp-kernels: tools/bench/bench-rp-kernels.c tools/bench/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-rp-kernels: $(BUILD)/bin/bench-rp-kernels
	nice -n 10 ./$(BUILD)/bin/bench-rp-kernels $(BENCH_RP_KERNELS_ARGS)

# the attention node of a decode step alone (ggml_x_attn_masked over an F16 KV cache as the runner
# lays it out, the cache cold): us per node and the cache read rate against the read bandwidth
# measured in the same run (tools/bench/bench-attn.c). BENCH_ATTN_ARGS passes e.g.
# "cells=1024 tokens=1,8 threads=1".
.PHONY: bench-attn
$(BUILD)/bin/bench-attn: tools/bench/bench-attn.c tools/bench/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-attn: $(BUILD)/bin/bench-attn
	nice -n 10 ./$(BUILD)/bin/bench-attn $(BENCH_ATTN_ARGS)
