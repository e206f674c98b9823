# mk/rpc.mk - ggml's RPC protocol (ggml/src/rpc, ggml/include/ggml-rpc.h, cmd/ggml-rpc-server),
# included at the end of the Makefile.
#
#   make test-rpc          the Go RPC tests: replay of the 32 recorded sessions against our server,
#                          our client's requests against the recordings, op table and scheduler
#                          over RPC, faults, TLS/token, the fuzz seeds (127.0.0.1 only, < 1 min)
#   make fuzz-rpc          fuzz the server's parser for RPC_FUZZTIME (default 60s)
#   make replay-rpc        informational: the recordings' own replayer (tools/rpc_replay.py,
#                          python3) against cmd/ggml-rpc-server. It compares read-back float data
#                          bit for bit with upstream's CPU kernels, which ours do not always match
#                          (9 graph sessions differ in the last bits; doc/rpc.md), so it never
#                          fails; test-rpc replays every session with a float tolerance instead
#   make conformance-rpc   the op-conformance suite on an RPC device (client and server in one
#                          process, scripts/conformance-rpc.sh)
#   make rpc-tables        regenerate ggml/src/rpc/rpc-tables.h from both enumerations
#   make bench-rpc-decode  informational, a few minutes: TinyLlama-shaped Q4_0 decode with every layer
#                          on ggml-rpc-server (127.0.0.1) vs local, interleaved rounds, and the
#                          requests one decode step sends (scripts/rpc-decode-bench.sh)
#   make bench-rpc-graph   informational: localhost overhead of one small graph (Go benchmark)

RPC_SRCS := $(wildcard ggml/src/rpc/*.c)
RPC_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(RPC_SRCS))
RPC_GOLDEN ?= ../shared/rpc
RPC_FUZZTIME ?= 60s
RPC_PORT ?= 50152

# the RPC core is part of the C library (the archive rule takes all its prerequisites)
$(BUILD)/libggml.a: $(RPC_OBJS)
$(RPC_OBJS): $(wildcard ggml/src/rpc/*.h)

.PHONY: test-rpc fuzz-rpc replay-rpc conformance-rpc rpc-tables bench-rpc-decode bench-rpc-graph
test-rpc:
	$(GO) test -count=1 -timeout 300s -run 'RPC' .

fuzz-rpc:
	GO=$(GO) bash scripts/fuzz.sh . FuzzRPCServer $(RPC_FUZZTIME) -parallel 1

replay-rpc:
	$(GO) build -o $(BUILD)/bin/ggml-rpc-server ./cmd/ggml-rpc-server
	@tmp=$$(mktemp -d); \
	$(BUILD)/bin/ggml-rpc-server -q -t 1 -align 32 -p $(RPC_PORT) & p1=$$!; \
	$(BUILD)/bin/ggml-rpc-server -q -t 1 -align 32 -p $$(($(RPC_PORT)+1)) -c $$tmp & p2=$$!; \
	sleep 1; rc=0; \
	timeout 300 python3 $(RPC_GOLDEN)/tools/rpc_replay.py 127.0.0.1:$(RPC_PORT) --allow-crash \
		$$(ls -d $(RPC_GOLDEN)/sessions/*/ | grep -v set_tensor_hash_cache) || rc=1; \
	timeout 300 python3 $(RPC_GOLDEN)/tools/rpc_replay.py 127.0.0.1:$$(($(RPC_PORT)+1)) \
		$(RPC_GOLDEN)/sessions/set_tensor_hash_cache/ || rc=1; \
	kill $$p1 $$p2; rm -rf $$tmp; \
	[ $$rc = 0 ] || echo "replay-rpc: differences above (float data in the last bits is expected, doc/rpc.md)"

conformance-rpc: lib
	sh scripts/conformance-rpc.sh $(CONFORMANCE)

rpc-tables:
	cd ggml/src/rpc && python3 gen_tables.py ../../include/ggml.h ../../../$(RPC_GOLDEN)/ops.json \
		../../../$(RPC_GOLDEN)/types.json > rpc-tables.h

bench-rpc-decode:
	GO=$(GO) RPC_GOLDEN=$(RPC_GOLDEN) sh scripts/rpc-decode-bench.sh

bench-rpc-graph:
	$(GO) test -run '^$$' -bench RPCGraph -benchtime 2000x .
