#!/bin/sh
# models-check.sh - runs cmd/ggml-llama on every reference model and checks the outputs with the
# references' compare.py:
#   shared/models (LLaMA, llama.cpp b1882): `logits` for every model x prompt, `tokenize` for the
#     reference strings;
#   shared/models/arch (nine architectures, llama.cpp c392e5094): `logits` for every llama-ref-v1
#     reference, `embed` for every llama-emb-v1 reference, `tokenize` for every <arch>-tokenize and
#     vocab/*.tokenize reference (with the GGUF named by its `model` key; vocab-only files included).
# Failures whose cause is the tokenizer (a tokenization check, or prompt tokens that differ from the
# reference's) are listed separately as TOKENIZER failures; with TOKENIZER_FAIL_OK=1 they do not fail
# the run (for a tree whose tokenizer does not yet have a vocabulary's pre-tokenizer or WPM).
# Needs Python 3 with numpy (Debian: python3-numpy; set PYTHON to that interpreter).
# usage: scripts/models-check.sh [MODELS_DIR]   (default ../shared/models; ARCH_ONLY=1 skips shared/models)
set -eu
MODELS=${1:-${GGML_MODELS_DIR:-../shared/models}}
ARCH="$MODELS/arch"
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
tokfailed=""
n=0
key() { "$PYTHON" -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); sys.stdout.write(str(v) if v is not None else "")' "$1" "$2"; }

# check REF CANDIDATE LABEL [--tok]: compares with $CMP and reports; tokenizer-caused failures go to tokfailed
check() {
	ref=$1 cand=$2 label=$3
	shift 3
	if "$PYTHON" "$CMP" "$@" "$ref" "$cand" > "$OUT/$label.report" 2>&1; then
		echo "PASS $label: $(grep -E '^(nmse_max|nmse_mean|nmse_top20_max|greedy_common_prefix|cos_min|tok_nmse_max|checks|exact):' "$OUT/$label.report" | tr '\n' ' ')"
	elif [ "${1:-}" = "--tok" ] || grep -qiE '^tokens_match: False|tokens differ|token mismatch' "$OUT/$label.report"; then
		echo "TOKENIZER-FAIL $label: $(grep -E '^(exact|checks|tokens_match|fail[a-z_]*):' "$OUT/$label.report" | head -3 | tr '\n' ' ')"
		tokfailed="$tokfailed $label"
	else
		cat "$OUT/$label.report"
		failed="$failed $label"
	fi
}

# logits REF MODEL LABEL: one llama-ref-v1 run
logits() {
	prompt=$(key "$1" prompt)
	ngen=$(key "$1" n_gen)
	if "$OUT/ggml-llama" logits -m "$2" -p "$prompt" -n "$ngen" -t 2 -o "$OUT/$3.json" 2> "$OUT/$3.err"; then
		check "$1" "$OUT/$3.json" "$3"
	else
		cat "$OUT/$3.err"
		failed="$failed $3"
	fi
	n=$((n + 1))
}

if [ "${ARCH_ONLY:-0}" != 1 ]; then
	CMP="$MODELS/compare.py"
	for ref in "$MODELS"/public-*.ref.*.json; do
		base=$(basename "$ref" .json) # public-f16.ref.hello
		logits "$ref" "$MODELS/${base%%.ref.*}.gguf" "$base"
	done
	"$OUT/ggml-llama" tokenize -m "$MODELS/public-f16.gguf" -i "$MODELS/public-tokenize.ref.json" -o "$OUT/tok.json"
	check "$MODELS/public-tokenize.ref.json" "$OUT/tok.json" public-tokenize --tok
fi

if [ -d "$ARCH" ]; then
	CMP="$ARCH/compare.py"
	for ref in "$ARCH"/*.ref.*.json; do
		base=$(basename "$ref" .json) # qwen2-f16.ref.hello
		model="$ARCH/$(key "$ref" model)"
		case $(key "$ref" format) in
		llama-ref-v1) logits "$ref" "$model" "$base" ;;
		llama-emb-v1)
			if "$OUT/ggml-llama" embed -m "$model" -p "$(key "$ref" prompt)" -t 2 -o "$OUT/$base.json" 2> "$OUT/$base.err"; then
				check "$ref" "$OUT/$base.json" "$base"
			elif grep -q 'tokenizer' "$OUT/$base.err"; then
				echo "TOKENIZER-FAIL $base: $(cat "$OUT/$base.err")"
				tokfailed="$tokfailed $base"
			else
				cat "$OUT/$base.err"
				failed="$failed $base"
			fi
			n=$((n + 1))
			;;
		esac
	done
	for ref in "$ARCH"/*-tokenize.ref.json "$ARCH"/vocab/*.tokenize.ref.json; do
		[ -f "$ref" ] || continue
		base=$(basename "$ref" .json)
		model="$(dirname "$ref")/$(key "$ref" model)"
		if "$OUT/ggml-llama" tokenize -m "$model" -i "$ref" -o "$OUT/$base.out.json" 2> "$OUT/$base.err"; then
			check "$ref" "$OUT/$base.out.json" "$base" --tok
		else
			echo "TOKENIZER-FAIL $base: $(cat "$OUT/$base.err")"
			tokfailed="$tokfailed $base"
		fi
	done
fi

status=0
if [ -n "$tokfailed" ]; then
	echo "models-check: TOKENIZER failures (pre-tokenizers / WPM of the tokenizer package):$tokfailed"
	[ "${TOKENIZER_FAIL_OK:-0}" = 1 ] || status=1
fi
if [ -n "$failed" ]; then
	echo "models-check FAILED:$failed"
	exit 1
fi
if [ $status = 0 ] && [ -n "$tokfailed" ]; then
	echo "models-check: $n logits/embed runs; every failure is a tokenizer one (tolerated: TOKENIZER_FAIL_OK=1)"
elif [ $status = 0 ]; then
	echo "models-check: $n logits/embed runs and the tokenizations pass"
fi
exit $status
