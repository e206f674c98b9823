#!/bin/sh
# models-check-rpc.sh - the public LLaMA models of shared/models with every layer on RPC
# servers: starts two cmd/ggml-rpc-server on 127.0.0.1 (free ports), runs
# `ggml-llama logits -rpc 127.0.0.1:P1,127.0.0.1:P2 -ngl 99` (the layers split between them) for
# every model x prompt and checks the outputs with shared/models/compare.py, as models-check.sh
# does for local runs. Stops the servers.
# Needs Python 3 with numpy (PYTHON).
# usage: scripts/models-check-rpc.sh [MODELS_DIR]   (default ../shared/models)
set -eu
MODELS=${1:-${GGML_MODELS_DIR:-../shared/models}}
PYTHON=${PYTHON:-python3}
GO=${GO:-go}
[ -f "$MODELS/compare.py" ] || { echo "models-check-rpc: $MODELS/compare.py not found" >&2; exit 1; }
OUT=$(mktemp -d)
server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill $server_pid 2>/dev/null || true
	rm -rf "$OUT"
}
trap cleanup EXIT
"$GO" build -o "$OUT/ggml-llama" ./cmd/ggml-llama
"$GO" build -o "$OUT/ggml-rpc-server" ./cmd/ggml-rpc-server
free_port() {
	"$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
endpoints=""
for i in 1 2; do
	port=$(free_port)
	"$OUT/ggml-rpc-server" -H 127.0.0.1 -p "$port" -t 2 >"$OUT/server$i.log" 2>&1 &
	server_pid="$server_pid $!"
	# wait (bounded) until the server accepts connections
	n=0
	until "$PYTHON" -c "import socket; socket.create_connection(('127.0.0.1', $port), 1).close()" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -gt 50 ]; then
			echo "models-check-rpc: server $i did not start:" >&2
			cat "$OUT/server$i.log" >&2
			exit 1
		fi
		sleep 0.2
	done
	endpoints="$endpoints${endpoints:+,}127.0.0.1:$port"
done
failed=""
n=0
for ref in "$MODELS"/public-*.ref.*.json; do
	base=$(basename "$ref" .json)
	model=${base%%.ref.*}
	prompt=$("$PYTHON" -c 'import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))["prompt"])' "$ref")
	ngen=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["n_gen"])' "$ref")
	timeout 600 "$OUT/ggml-llama" logits -rpc "$endpoints" -ngl 99 -m "$MODELS/$model.gguf" -p "$prompt" \
		-n "$ngen" -t 2 -o "$OUT/$base.json"
	n=$((n + 1))
	if "$PYTHON" "$MODELS/compare.py" "$ref" "$OUT/$base.json" >"$OUT/$base.report"; then
		echo "PASS (rpc) $base: $(grep -E '^(nmse_max|greedy_common_prefix):' "$OUT/$base.report" | tr '\n' ' ')"
	else
		cat "$OUT/$base.report"
		failed="$failed $base"
	fi
done
if [ -n "$failed" ]; then
	echo "models-check-rpc FAILED:$failed"
	exit 1
fi
echo "models-check-rpc: $n logits runs with the layers split between two ggml-rpc-server pass"
