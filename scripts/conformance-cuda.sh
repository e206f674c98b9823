#!/bin/sh
# conformance-cuda.sh - the public op-conformance suite computed on CUDA0 instead of the CPU
# (make conformance-cuda-emu: CUDA0 is the host emulator of cuda/emu; with a GPU, make
# conformance-cuda links the real library).
#
# usage: scripts/conformance-cuda.sh CUDA_LIB "LDLIBS" [CONFORMANCE_DIR] [filter]
#
# The harness creates its backend with ggml_backend_cpu_init(); cuda/tests/conform-shim.c,
# linked with --wrap, hands it ggml_backend_cuda_init(0) instead. Every case the CUDA backend
# supports must match the reference outputs; cases it does not support (supports_op says no, the
# harness records "unsupported", which the compare report counts as failed) are listed and
# allowed. Fails on any other failure, crash, or when the harness cannot run.
set -u

lib=${1:?usage: conformance-cuda.sh CUDA_LIB LDLIBS [CONFORMANCE_DIR] [filter]}
ldlibs=${2:-}
conf=${3:-../shared/conformance}
filter=${4:-}
runner="$conf/run"
[ -x "$runner" ] || { echo "conformance-cuda: $runner not found or not executable" >&2; exit 2; }
[ -f "$lib" ] || { echo "conformance-cuda: $lib not found" >&2; exit 2; }

root=$(pwd)
tmp=$(mktemp -d -t conformance-cuda.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -Wall -Wextra -Iggml/include -c cuda/tests/conform-shim.c -o "$tmp/shim.o" || exit 2

log="$tmp/log"
CONFORM_LDFLAGS="$tmp/shim.o $root/$lib $root/build/libggml.a -Wl,--wrap=ggml_backend_cpu_init \
-Wl,--wrap=ggml_backend_cpu_set_n_threads $ldlibs" "$runner" . ${filter:+"$filter"} >"$log" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$log"; echo "conformance-cuda: the harness could not run (exit $rc)" >&2; exit 2; }

summary=$(grep '^suite ' "$log" | tail -n 1)
fails=$(grep '^FAIL ' "$log" | grep -v ': unsupported$')
unsupported=$(grep '^FAIL ' "$log" | grep ': unsupported$' | sed 's/^FAIL //; s/: unsupported$//')
echo "$summary"
echo "conformance on CUDA0: $(grep '^conformance:' "$log" | tail -n 1 | sed 's/^conformance: //') (compare report; unsupported cases count as failed there)"
if [ -n "$unsupported" ]; then
    echo "not supported by CUDA (supports_op says no; the scheduler runs these on the CPU):"
    echo "$unsupported" | sed 's/^/  /'
fi
if [ -n "$fails" ] || ! echo "$summary" | grep -q ' 0 failed'; then
    echo "$fails"
    echo "conformance-cuda: cases supported by CUDA failed" >&2
    exit 1
fi
echo "conformance-cuda: every case CUDA supports matches the reference"
