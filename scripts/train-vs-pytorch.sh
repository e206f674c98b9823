#!/usr/bin/env bash
# train-vs-pytorch.sh - training throughput of ggml-train against PyTorch on the CPU, on the
# default model's shape (doc/default-model.md: n_embd 256, 4 blocks, 8 heads, vocabulary 2048,
# context 256, batch 8, AdamW), interleaved round by round so that both see the same load on a
# shared machine; prints every round, the medians and the ratio ours / PyTorch.
#
#   scripts/train-vs-pytorch.sh                  3 rounds of 10 steps each, 2 threads
#   ROUNDS=5 STEPS=12 THREADS=2 scripts/train-vs-pytorch.sh
#   PYTHON=...                                   the python with torch (default /usr/bin/python3: Debian's)
#
# Ours: `ggml-train -bench STEPS` (random tokens, median step after the first two). PyTorch:
# scripts/train-vs-pytorch.py (python3-torch: `scripts/ci-install.sh torch`). Make target:
# `make train-vs-pytorch`.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-10}
THREADS=${THREADS:-2}
SHAPE=(-vocab 2048 -embd 256 -layers 4 -heads 8 -ctx 256 -batch 8)

PYTHON=${PYTHON:-$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "missing python3-torch: run scripts/ci-install.sh torch" >&2; exit 1; }
bin=$(mktemp -d)/ggml-train
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/ggml-train

rate() { sed -n 's/^bench: median step .* \([0-9][0-9]*\) tokens\/s$/\1/p' | tail -1; }
ours=() theirs=()
for r in $(seq "$ROUNDS"); do
	o=$("$bin" -bench "$STEPS" "${SHAPE[@]}" -t "$THREADS" 2>&1 | rate)
	p=$("$PYTHON" scripts/train-vs-pytorch.py --steps "$STEPS" --threads "$THREADS" \
		--vocab 2048 --embd 256 --layers 4 --heads 8 --ctx 256 --batch 8 2>&1 | rate)
	echo "round $r: ggml-train $o tokens/s, pytorch $p tokens/s"
	ours+=("$o") theirs+=("$p")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mo=$(median "${ours[@]}") mp=$(median "${theirs[@]}")
echo "median of $ROUNDS rounds ($THREADS threads): ggml-train $mo tokens/s, pytorch $mp tokens/s, ratio $(awk -v a="$mo" -v b="$mp" 'BEGIN {printf "%.2f", a/b}')"
