#!/bin/sh
# conformance-rpc.sh - the public op-conformance suite computed on an RPC device: our RPC client
# talking to our RPC server (serving the CPU backend) through a socket pair, in one process
# (ggml/src/rpc/tests/conform-shim.c; make conformance-rpc).
#
# usage: scripts/conformance-rpc.sh [CONFORMANCE_DIR] [filter]
#
# Every case the RPC backend supports must match the reference outputs; cases it does not
# support (ops with no peer in the server's ggml: supports_op says no, the harness records
# "unsupported", which the compare report counts as failed) are listed and allowed. Fails on
# any other failure, crash, or when the harness cannot run.
set -u

conf=${1:-../shared/conformance}
filter=${2:-}
runner="$conf/run"
[ -x "$runner" ] || { echo "conformance-rpc: $runner not found or not executable" >&2; exit 2; }

tmp=$(mktemp -d -t conformance-rpc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -Wall -Wextra -Iggml/include -c ggml/src/rpc/tests/conform-shim.c -o "$tmp/shim.o" || exit 2

log="$tmp/log"
CONFORM_LDFLAGS="$tmp/shim.o $(pwd)/build/libggml.a -Wl,--wrap=ggml_backend_cpu_init -Wl,--wrap=ggml_backend_cpu_set_n_threads -pthread" \
    "$runner" . ${filter:+"$filter"} >"$log" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$log"; echo "conformance-rpc: the harness could not run (exit $rc)" >&2; exit 2; }

summary=$(grep '^suite ' "$log" | tail -n 1)
fails=$(grep '^FAIL ' "$log" | grep -v ': unsupported$')
unsupported=$(grep '^FAIL ' "$log" | grep ': unsupported$' | sed 's/^FAIL //; s/: unsupported$//')
echo "$summary"
echo "conformance on RPC: $(grep '^conformance:' "$log" | tail -n 1 | sed 's/^conformance: //') (compare report; unsupported cases count as failed there)"
if [ -n "$unsupported" ]; then
    echo "not supported over RPC, cases per op (no peer in the server's ggml, or parameters it cannot express; a scheduler runs these on the CPU):"
    echo "$unsupported" | sed 's/(.*//' | sort | uniq -c | sort -rn | sed 's/^/  /'
fi
if [ -n "$fails" ] || ! echo "$summary" | grep -q ' 0 failed'; then
    echo "$fails"
    grep 'rpc-conform-shim' "$log" | sort | uniq -c | head -20
    echo "conformance-rpc: cases supported over RPC failed" >&2
    exit 1
fi
echo "conformance-rpc: every case the RPC backend supports matches the reference"
