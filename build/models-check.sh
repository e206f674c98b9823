#!/bin/sh
# models-check.sh - runs cmd/ggml-llama on every public model of shared/models and checks the
# outputs with shared/models/compare.py (llama.cpp b1882 reference, thresholds of its README):
# `logits` for every model x prompt, `tokenize` for the reference strings.
# Needs Python 3 with numpy (Debian: python3-numpy; set PYTHON to that interpreter).
# usage: build/models-check.sh [MODELS_DIR]   (default ../shared/models)
set -eu
MODELS=${1:-${GGML_MODELS_DIR:-../shared/models}}
PYTHON=${PYTHON:-python3}
GO=${GO:-go}
if [ ! -f "$MODELS/compare.py" ]; then
	echo "models-check: $MODELS/compare.py not found (give the shared/models directory)" >&2
	exit 1
fi
if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
	echo "models-check: $PYTHON has no numpy (Debian: apt-get install python3-numpy, then PYTHON=/usr/bin/python3)" >&2
	exit 1
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$GO" build -o "$OUT/ggml-llama" ./cmd/ggml-llama
failed=""
n=0
for ref in "$MODELS"/public-*.ref.*.json; do
	base=$(basename "$ref" .json)       # public-f16.ref.hello
	model=${base%%.ref.*}               # public-f16
	prompt=$("$PYTHON" -c 'import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))["prompt"])' "$ref")
	ngen=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["n_gen"])' "$ref")
	"$OUT/ggml-llama" logits -m "$MODELS/$model.gguf" -p "$prompt" -n "$ngen" -t 2 -o "$OUT/$base.json"
	n=$((n + 1))
	if "$PYTHON" "$MODELS/compare.py" "$ref" "$OUT/$base.json" > "$OUT/$base.report"; then
		echo "PASS $base: $(grep -E '^(nmse_max|nmse_mean|nmse_top20_max|greedy_common_prefix):' "$OUT/$base.report" | tr '\n' ' ')"
	else
		cat "$OUT/$base.report"
		failed="$failed $base"
	fi
done
"$OUT/ggml-llama" tokenize -m "$MODELS/public-f16.gguf" -i "$MODELS/public-tokenize.ref.json" -o "$OUT/tok.json"
if "$PYTHON" "$MODELS/compare.py" --tok "$MODELS/public-tokenize.ref.json" "$OUT/tok.json" > "$OUT/tok.report"; then
	echo "PASS tokenize: $(grep -E '^(checks|exact):' "$OUT/tok.report" | tr '\n' ' ')"
else
	cat "$OUT/tok.report"
	failed="$failed tokenize"
fi
if [ -n "$failed" ]; then
	echo "models-check FAILED:$failed"
	exit 1
fi
echo "models-check: $n logits runs and the tokenization pass"
