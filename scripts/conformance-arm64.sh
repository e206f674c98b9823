#!/bin/sh
# conformance-arm64.sh - the public conformance suite against the arm64 library, run under
# qemu-user on an x86-64 machine (make conformance-arm64).
#
# usage: scripts/conformance-arm64.sh CONFORMANCE_DIR LIBGGML_A [filter]
#
# The harness (conform.c) is cross-compiled against the arm64 static library in a temporary
# directory (nothing is written to CONFORMANCE_DIR), run under qemu with every case isolated, and
# its output is scored by compare.go built for this machine. Environment: ARM64_CC, ARM64_QEMU,
# ARM64_SYSROOT (as in the Makefile), CONFORM_THREADS (default 2), CONFORM_TIMEOUT (per case,
# default 600: qemu is slow), GGML_X_CPU_LEVEL (passed to the library: neon, dotprod, scalar).
# Exit status: 0 all passed, 1 some case failed, 2 could not run.
set -u

conf=${1:?usage: conformance-arm64.sh CONFORMANCE_DIR LIBGGML_A [filter]}
lib=${2:?usage: conformance-arm64.sh CONFORMANCE_DIR LIBGGML_A [filter]}
filter=${3:-}
cc=${ARM64_CC:-aarch64-linux-gnu-gcc}
qemu=${ARM64_QEMU:-qemu-aarch64-static}
sysroot=${ARM64_SYSROOT:-/usr/aarch64-linux-gnu}

die() { echo "conformance-arm64: $*" >&2; exit 2; }

[ -f "$conf/conform.c" ] || die "no $conf/conform.c"
[ -f "$lib" ] || die "no $lib (make lib-arm64)"
command -v "$cc" >/dev/null 2>&1 || die "$cc not found (make arm64-tools)"
command -v "$qemu" >/dev/null 2>&1 || die "$qemu not found (make arm64-tools)"
command -v go >/dev/null 2>&1 || die "go not found (needed for compare.go)"

tmp=$(mktemp -d -t conformance-arm64.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
cp "$conf/conform.c" "$conf/cases_public.inc" "$conf/compare.go" "$tmp/" || die "cannot copy the harness"

"$cc" -O2 -std=gnu11 -DCONFORM_NO_HIDDEN -Iggml/include "$tmp/conform.c" "$lib" -lm -pthread \
    -o "$tmp/conform" >"$tmp/cc.log" 2>&1 || { tail -n 30 "$tmp/cc.log" >&2; die "cross-compiling conform.c failed"; }
(cd "$tmp" && GOTOOLCHAIN=local GOWORK=off GOFLAGS= GO111MODULE=on go build -o "$tmp/compare" compare.go) \
    >"$tmp/go.log" 2>&1 || { tail -n 20 "$tmp/go.log" >&2; die "building compare.go failed"; }

set -- run public "$tmp/out.bin"
[ -n "$filter" ] && set -- "$@" "$filter"
set -- "$@" --isolate --inputs "$conf/golden-public.inputs" -t "${CONFORM_THREADS:-2}" --timeout "${CONFORM_TIMEOUT:-600}"
echo "running under $qemu: conform $*" >&2
start=$(date +%s)
"$qemu" -L "$sysroot" "$tmp/conform" "$@" >"$tmp/conform.out" 2>"$tmp/conform.log"
rc=$?
echo "conform under qemu: $(( $(date +%s) - start )) s" >&2
cat "$tmp/conform.out" >&2
grep -B1 -- "^  -> " "$tmp/conform.log" | grep -v "^--$" | head -n 60 >&2
if [ $rc -ne 0 ] || [ ! -s "$tmp/out.bin" ]; then
    tail -n 20 "$tmp/conform.log" >&2
    die "conform exited with status $rc"
fi

if [ -n "$filter" ]; then
    "$tmp/compare" --filter "$filter" "$conf/golden-public.bin" "$tmp/out.bin"
else
    "$tmp/compare" "$conf/golden-public.bin" "$tmp/out.bin"
fi
