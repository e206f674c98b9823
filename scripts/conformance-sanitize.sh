#!/bin/sh
# conformance-sanitize.sh - the public conformance suite against a library built with sanitizers
# (make test-sanitize).
#
# usage: scripts/conformance-sanitize.sh CONFORMANCE_DIR LIB "CC AND FLAGS"
#
# Copies conform.c, cases_public.inc and compare.go from CONFORMANCE_DIR into a temporary
# directory (CONFORMANCE_DIR is never written), compiles the harness against LIB with the given
# compiler command (which carries the sanitizer flags), then runs the suite twice:
#   1. with --isolate (one child process per case, as the reference runner does) and compares
#      the output with golden-public.bin;
#   2. in one process, so that LeakSanitizer checks the whole run at exit.
# Fails when a case fails or crashes, or when any sanitizer report appears in either run.
set -u

conf=${1:?usage: conformance-sanitize.sh CONFORMANCE_DIR LIB CC}
lib=${2:?usage: conformance-sanitize.sh CONFORMANCE_DIR LIB CC}
cc=${3:?usage: conformance-sanitize.sh CONFORMANCE_DIR LIB CC}
inc=$(dirname "$0")/../ggml/include

for f in conform.c cases_public.inc compare.go golden-public.bin golden-public.inputs; do
    [ -f "$conf/$f" ] || { echo "conformance-sanitize: $conf/$f not found" >&2; exit 2; }
done
[ -f "$lib" ] || { echo "conformance-sanitize: $lib not found" >&2; exit 2; }

tmp=$(mktemp -d -t conformance-sanitize.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
cp "$conf/conform.c" "$conf/cases_public.inc" "$conf/compare.go" "$tmp/" || exit 2

echo "== conformance (sanitized): compiling the harness"
# shellcheck disable=SC2086
if ! $cc -O1 -std=gnu11 -DCONFORM_NO_HIDDEN -I"$inc" "$tmp/conform.c" "$lib" -lm -pthread -o "$tmp/conform" \
        >"$tmp/cc.log" 2>&1; then
    tail -n 40 "$tmp/cc.log"
    echo "conformance-sanitize: compiling conform.c failed" >&2
    exit 2
fi
if ! (cd "$tmp" && GOTOOLCHAIN=local GOWORK=off GOFLAGS= GO111MODULE=on go build -o "$tmp/compare" compare.go) \
        >"$tmp/go.log" 2>&1; then
    tail -n 20 "$tmp/go.log"
    echo "conformance-sanitize: building compare.go failed" >&2
    exit 2
fi

status=0
# sanitizer reports in a log: print them and fail
check_log() {
    if grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer" "$1"; then
        echo "conformance-sanitize: sanitizer reports in $2:"
        grep -E -A30 "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$1" | head -n 120
        status=1
    fi
}

threads=${CONFORM_THREADS:-2}
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

echo "== conformance (sanitized): isolated run"
start=$(date +%s)
"$tmp/conform" run public "$tmp/out.bin" --isolate --inputs "$conf/golden-public.inputs" -t "$threads" \
    >"$tmp/run1.out" 2>"$tmp/run1.log"
rc=$?
cat "$tmp/run1.out"
grep -B1 -- "^  -> " "$tmp/run1.log" | grep -v "^--$" | head -n 40
[ $rc -eq 0 ] || { echo "conformance-sanitize: conform exited with status $rc"; status=1; }
check_log "$tmp/run1.log" "the isolated run"
"$tmp/compare" "$conf/golden-public.bin" "$tmp/out.bin" >"$tmp/compare.out" 2>&1
crc=$?
line=$(grep '^conformance:' "$tmp/compare.out" | tail -n 1)
if [ $crc -ne 0 ]; then
    grep -v '^[A-Z_0-9]* *[0-9]* *0 *0 ' "$tmp/compare.out" | tail -n 40
    status=1
fi
echo "   ${line:-conformance: no result} (isolated, $(( $(date +%s) - start ))s)"

echo "== conformance (sanitized): one process (leak check at exit)"
start=$(date +%s)
"$tmp/conform" run public "$tmp/out2.bin" --inputs "$conf/golden-public.inputs" -t "$threads" \
    >"$tmp/run2.out" 2>"$tmp/run2.log"
rc=$?
cat "$tmp/run2.out"
[ $rc -eq 0 ] || { echo "conformance-sanitize: conform exited with status $rc"; status=1; }
check_log "$tmp/run2.log" "the single-process run"
if ! cmp -s "$tmp/out.bin" "$tmp/out2.bin"; then
    "$tmp/compare" "$conf/golden-public.bin" "$tmp/out2.bin" >"$tmp/compare2.out" 2>&1 || {
        grep -v '^[A-Z_0-9]* *[0-9]* *0 *0 ' "$tmp/compare2.out" | tail -n 40
        status=1
    }
fi
echo "   single-process run: $(( $(date +%s) - start ))s"

if [ $status -ne 0 ]; then
    echo "conformance-sanitize: FAILED"
else
    echo "conformance-sanitize: all cases passed, no sanitizer reports"
fi
exit $status
