#!/bin/sh
# conformance-metal.sh - the public op-conformance suite computed on the Metal backend instead
# of the CPU (make conformance-metal-emu: the Metal emulator of metal/emu on Linux).
#
# usage: scripts/conformance-metal.sh METAL_LIB "EXTRA_OBJS" "LDLIBS" [CONFORMANCE_DIR] [filter]
#
# The harness creates its backend with ggml_backend_cpu_init(); metal/tests/conform-shim.c,
# linked with --wrap, hands it ggml_backend_metal_init() instead. Every case the Metal backend
# supports must match the reference outputs; cases it does not support (supports_op says no:
# the harness records "unsupported", which the compare report counts as failed; in a program
# they run on the CPU through the scheduler) are counted per op family and allowed. Fails on any
# other failure, crash, or when the harness cannot run.
set -u

lib=${1:?usage: conformance-metal.sh METAL_LIB EXTRA_OBJS LDLIBS [CONFORMANCE_DIR] [filter]}
objs=${2:-}
ldlibs=${3:-}
conf=${4:-../shared/conformance}
filter=${5:-}
runner="$conf/run"
[ -x "$runner" ] || { echo "conformance-metal: $runner not found or not executable" >&2; exit 2; }
[ -f "$lib" ] || { echo "conformance-metal: $lib not found" >&2; exit 2; }

root=$(pwd)
tmp=$(mktemp -d -t conformance-metal.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -Wall -Wextra -Iggml/include -c metal/tests/conform-shim.c -o "$tmp/shim.o" || exit 2
absobjs=""
for o in $objs; do absobjs="$absobjs $root/$o"; done

log="$tmp/log"
CONFORM_LDFLAGS="$tmp/shim.o $absobjs $root/$lib $root/build/libggml.a -Wl,--wrap=ggml_backend_cpu_init \
-Wl,--wrap=ggml_backend_cpu_set_n_threads $ldlibs" "$runner" . ${filter:+"$filter"} >"$log" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$log"; echo "conformance-metal: the harness could not run (exit $rc)" >&2; exit 2; }

mkdir -p build/metal-emu && cp "$log" build/metal-emu/conformance.log
summary=$(grep '^suite ' "$log" | tail -n 1)
fails=$(grep '^FAIL ' "$log" | grep -v ': unsupported$')
unsupported=$(grep '^FAIL ' "$log" | grep ': unsupported$' | sed 's/^FAIL //; s/: unsupported$//')
echo "$summary"
echo "conformance on Metal: $(grep '^conformance:' "$log" | tail -n 1 | sed 's/^conformance: //') (compare report; unsupported cases count as failed there)"
echo "per op family (failed = not supported by Metal, supports_op says no: the scheduler runs those on the CPU):"
sed -n '/^family /,/^conformance:/p' "$log" | grep -v '^conformance:' | sed 's/^/  /'
if [ -n "$unsupported" ]; then
    echo "unsupported cases listed by the compare report:"
    echo "$unsupported" | sed 's/^/  /'
fi
if [ -n "$fails" ] || ! echo "$summary" | grep -q ' 0 failed'; then
    echo "$fails"
    echo "conformance-metal: cases supported by Metal failed" >&2
    exit 1
fi
echo "conformance-metal: every case Metal supports matches the reference"
