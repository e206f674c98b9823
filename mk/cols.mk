# mk/cols.mk - few-column mat-mul (batched decode) benchmark, included at the end of the Makefile.
#
#   make bench-cols   TinyLlama-shaped layer mat-muls (weights in CPU_REPACK) at 1, 2, 4, 8, 16
#                     columns and 1 and 2 threads: us per layer, the ratio to one column and the
#                     share of the read bandwidth measured in the same run (tools/bench/bench-cols.c).
#                     BENCH_COLS_ARGS passes e.g. "types=q4_0 threads=2 cols=1,8,16 reps=9".

.PHONY: bench-cols
$(BUILD)/bin/bench-cols: tools/bench/bench-cols.c build/benchutil.h $(BUILD)/libggml.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libggml.a $(LDLIBS) -o $@

bench-cols: $(BUILD)/bin/bench-cols
	nice -n 10 ./$(BUILD)/bin/bench-cols $(BENCH_COLS_ARGS)
