#!/bin/sh
# conformance-device.sh - the public op-conformance suite computed on a device backend instead
# of the CPU: CUDA0 (make conformance-cuda-emu with the host emulator of cuda/emu; make
# conformance-cuda with the real library) or Metal (make conformance-metal-emu, the emulator of
# metal/emu on Linux).
#
# usage: scripts/conformance-device.sh NAME SHIM.c LIB "EXTRA_OBJS" "LDLIBS" [CONFORMANCE_DIR] [filter]
#
# The harness creates its backend with ggml_backend_cpu_init(); SHIM.c (cuda/tests/conform-shim.c,
# metal/tests/conform-shim.c), linked with --wrap, hands it the device backend instead. Every case
# the device supports must match the reference outputs; cases it does not support (supports_op
# says no: the harness records "unsupported", which the compare report counts as failed; in a
# program the scheduler runs them on the CPU) are counted per op family and allowed. Fails on any
# other failure, crash, or when the harness cannot run. The harness log is kept in
# build/conformance-NAME.log.
set -u

usage="usage: conformance-device.sh NAME SHIM.c LIB EXTRA_OBJS LDLIBS [CONFORMANCE_DIR] [filter]"
name=${1:?$usage}
shim=${2:?$usage}
lib=${3:?$usage}
objs=${4:-}
ldlibs=${5:-}
conf=${6:-../shared/conformance}
filter=${7:-}
me="conformance on $name"
runner="$conf/run"
[ -x "$runner" ] || { echo "$me: $runner not found or not executable" >&2; exit 2; }
[ -f "$lib" ] || { echo "$me: $lib not found" >&2; exit 2; }
[ -f "$shim" ] || { echo "$me: $shim not found" >&2; exit 2; }

root=$(pwd)
tmp=$(mktemp -d -t conformance-device.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -Wall -Wextra -Iggml/include -c "$shim" -o "$tmp/shim.o" || exit 2
absobjs=""
for o in $objs; do absobjs="$absobjs $root/$o"; done

log="$tmp/log"
CONFORM_LDFLAGS="$tmp/shim.o $absobjs $root/$lib $root/build/libggml.a -Wl,--wrap=ggml_backend_cpu_init \
-Wl,--wrap=ggml_backend_cpu_set_n_threads $ldlibs" "$runner" . ${filter:+"$filter"} >"$log" 2>&1
rc=$?
[ $rc -le 1 ] || { cat "$log"; echo "$me: the harness could not run (exit $rc)" >&2; exit 2; }

mkdir -p build && cp "$log" "build/conformance-$name.log"
summary=$(grep '^suite ' "$log" | tail -n 1)
fails=$(grep '^FAIL ' "$log" | grep -v ': unsupported$')
unsupported=$(grep '^FAIL ' "$log" | grep ': unsupported$' | sed 's/^FAIL //; s/: unsupported$//')
echo "$summary"
echo "$me: $(grep '^conformance:' "$log" | tail -n 1 | sed 's/^conformance: //') (compare report; unsupported cases count as failed there)"
if grep -q '^family ' "$log"; then
    echo "per op family (failed = not supported by $name, supports_op says no: the scheduler runs those on the CPU):"
    sed -n '/^family /,/^conformance:/p' "$log" | grep -v '^conformance:' | sed 's/^/  /'
fi
if [ -n "$unsupported" ]; then
    echo "not supported by $name (listed by the compare report):"
    echo "$unsupported" | sed 's/^/  /'
fi
if [ -n "$fails" ] || ! echo "$summary" | grep -q ' 0 failed'; then
    echo "$fails"
    echo "$me: cases supported by $name failed" >&2
    exit 1
fi
echo "$me: every case $name supports matches the reference"
