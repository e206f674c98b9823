#!/bin/sh
# rpc-decode-bench.sh - decode speed with every layer on ggml-rpc-server (127.0.0.1) against a
# local run, measured in interleaved rounds (the machine may be shared), on a TinyLlama-shaped
# random model; then the requests one decode step sends (through the recordings' proxy), which
# shows what is re-sent per token.
#
# usage: scripts/rpc-decode-bench.sh [MODEL.gguf] [ROUNDS] [TOKENS]
#   MODEL defaults to /tmp/tl.gguf, made with `ggml-llama random -tinyllama -type q4_0` if absent.
set -eu
MODEL=${1:-/tmp/tl.gguf}
ROUNDS=${2:-3}
N=${3:-32}
GO=${GO:-go}
PYTHON=${PYTHON:-python3}
PORT=${RPC_PORT:-50391}
TOOLS=${RPC_GOLDEN:-../shared/rpc}/tools
OUT=$(mktemp -d)
srv=""
cleanup() {
	[ -n "$srv" ] && kill $srv 2>/dev/null || true
	rm -rf "$OUT"
}
trap cleanup EXIT
"$GO" build -o "$OUT/ggml-llama" ./cmd/ggml-llama
"$GO" build -o "$OUT/ggml-rpc-server" ./cmd/ggml-rpc-server
[ -f "$MODEL" ] || "$OUT/ggml-llama" random -tinyllama -type q4_0 -o "$MODEL"
"$OUT/ggml-rpc-server" -q -t 1 -p "$PORT" &
srv=$!
sleep 1
tl=0
tr=0
i=0
while [ $i -lt "$ROUNDS" ]; do
	i=$((i + 1))
	l=$("$OUT/ggml-llama" bench -m "$MODEL" -p 0 -n "$N" -t 1 -r 2 | awk '/tg/ {print $3}')
	r=$("$OUT/ggml-llama" bench -m "$MODEL" -p 0 -n "$N" -t 1 -r 2 --rpc "127.0.0.1:$PORT" --ngl 99 | awk '/tg/ {print $3}')
	echo "round $i: local $l tok/s, rpc $r tok/s"
	tl=$(echo "$tl + $l" | bc -l)
	tr=$(echo "$tr + $r" | bc -l)
done
echo "mean: local $(echo "$tl / $ROUNDS" | bc -l | cut -c1-6) tok/s, rpc $(echo "$tr / $ROUNDS" | bc -l | cut -c1-6) tok/s, rpc/local $(echo "$tr / $tl" | bc -l | cut -c1-5)"

# what one decode step sends: two runs through the proxy, 8 and 24 tokens; the difference / 32
# (bench decodes every token twice: warm-up and measured run) is one step
if [ -f "$TOOLS/rpc_proxy.py" ]; then
	for n in 8 24; do
		"$PYTHON" "$TOOLS/rpc_proxy.py" --listen "127.0.0.1:$((PORT + 1))" --target "127.0.0.1:$PORT" --out "$OUT/px$n" >/dev/null 2>&1 &
		px=$!
		sleep 2
		"$OUT/ggml-llama" bench -m "$MODEL" -p 0 -n $n -t 1 -r 1 --rpc "127.0.0.1:$((PORT + 1))" --ngl 99 >/dev/null
		sleep 1
		kill $px
		wait $px 2>/dev/null || true
	done
	"$PYTHON" - "$OUT/px8" "$OUT/px24" <<'PY'
import collections, glob, os, struct, sys
names = ["ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE", "FREE_BUFFER", "BUFFER_CLEAR",
         "SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR", "GRAPH_COMPUTE", "GET_DEVICE_MEMORY",
         "INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO", "DEVICE_COUNT", "GRAPH_RECOMPUTE", "MEMSET_TENSOR"]
def count(d):
    n, b = collections.Counter(), collections.Counter()
    for fn in glob.glob(os.path.join(d, "*.c2s")):
        with open(fn, "rb") as f:
            while True:
                h = f.read(9)
                if len(h) < 9:
                    break
                size = struct.unpack("<Q", h[1:])[0]
                f.seek(size, 1)
                k = names[h[0]] if h[0] < len(names) else str(h[0])
                n[k] += 1
                b[k] += 9 + size
    return n, b
n1, b1 = count(sys.argv[1])
n2, b2 = count(sys.argv[2])
print("per decode step (client -> server):")
for k in sorted(set(n1) | set(n2)):
    dn, db = (n2[k] - n1[k]) / 32, (b2[k] - b1[k]) / 32
    if dn:
        print("  %-16s %5.2f requests %10.0f bytes" % (k, dn, db))
PY
fi
