#!/usr/bin/env bash
# device-check.sh - the one prepared script for a session that is lent a GPU machine. Run from
# the repository root, e.g. through the device tool:
#
#   run(command="bash cuda/device-check.sh", carry=["build/cuda/devtools"], timeout_s=540)
#
# It prints the environment (nvidia-smi -L, nvcc --version, where cudart/cuBLAS live), builds
# the library for sm_90 only (fast), runs `make test-cuda` (C device test + tagged Go tests), the
# public conformance suite on CUDA0 (build/conformance-cuda.sh) and `make bench-cuda`, and writes
# every log to $OUT (default build/cuda/out). Exit status: non-zero when a test failed.
#
# The device has nvcc but probably no Go toolchain. Prepare, on this (CPU) machine, an ignored
# folder build/cuda/devtools/ (ignored through /build/cuda/ in .gitignore) and name it in
# `carry` (64 MiB limit for everything carried):
#
#   mkdir -p build/cuda/devtools
#   # 1. a trimmed Go toolchain (about 24 MB as tar.xz): GOROOT without src/cmd sources, tests
#   #    and docs; the compiler, linker, cgo and the standard library sources stay
#   goroot=$(go env GOROOT)
#   tar -C "$(dirname "$goroot")" -cJf build/cuda/devtools/go.tar.xz \
#       --exclude='go/src/cmd' --exclude='go/test' --exclude='go/doc' --exclude='go/api' \
#       --exclude='go/misc' --exclude='go/lib/time' --exclude='go/pkg/tool/*/api' \
#       --exclude='*_test.go' --exclude='testdata' "$(basename "$goroot")"
#   # 2. the modules the root package's tests import (testify and its dependencies)
#   GOMODCACHE=$PWD/build/cuda/devtools/gomod GOFLAGS=-mod=mod go mod download \
#       github.com/stretchr/testify github.com/davecgh/go-spew github.com/pmezard/go-difflib \
#       go.yaml.in/yaml/v3
#   rm -rf build/cuda/devtools/gomod/cache/download/*/*/@v/*.zip   # keep the extracted trees
#   du -sh build/cuda/devtools                                     # must stay well under 64 MiB
#
# A statically linked cuBLAS test binary is far too large to carry (hundreds of MB): everything
# is built on the device. Without build/cuda/devtools the Go tests are skipped (reported) and
# the C tests and benchmarks still run.

set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/cuda/out}
mkdir -p "$OUT"
log="$OUT/device-check.log"
exec > >(tee "$log") 2>&1

section() { printf '\n== %s (%s)\n' "$1" "$(date +%H:%M:%S)"; }

section "environment"
nvidia-smi -L || echo "nvidia-smi not found"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>/dev/null || true
CUDA_HOME=${CUDA_HOME:-}
if [ -z "$CUDA_HOME" ]; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
        CUDA_HOME=/usr/local/cuda
    elif command -v nvcc >/dev/null 2>&1; then
        CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
    fi
fi
export CUDA_HOME
echo "CUDA_HOME=$CUDA_HOME"
"$CUDA_HOME/bin/nvcc" --version || { echo "no nvcc: cannot build"; exit 2; }
echo "cudart / cuBLAS / driver libraries:"
ls -l "$CUDA_HOME"/lib64/libcudart.so* "$CUDA_HOME"/lib64/libcublas.so* "$CUDA_HOME"/lib64/libcublasLt.so* 2>/dev/null
ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libcudart|libcublas' || true
gcc --version | head -1
nproc

section "Go toolchain"
have_go=0
if [ -f build/cuda/devtools/go.tar.xz ]; then
    mkdir -p /tmp/devgo && tar -C /tmp/devgo -xJf build/cuda/devtools/go.tar.xz
    export GOROOT=/tmp/devgo/go PATH=/tmp/devgo/go/bin:$PATH
fi
if command -v go >/dev/null 2>&1; then
    export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod GOCACHE=/tmp/devgo-cache
    [ -d build/cuda/devtools/gomod ] && export GOMODCACHE=$PWD/build/cuda/devtools/gomod
    go version && have_go=1
else
    echo "no Go toolchain (see the header of this script): Go tests skipped"
fi

section "build (sm_90)"
start=$(date +%s)
make -j"$(nproc)" lib >"$OUT/build-lib.log" 2>&1 || { echo "make lib failed"; tail -30 "$OUT/build-lib.log"; exit 1; }
make -j"$(nproc)" CUDA_ARCHS=90 cuda build/cuda/bin/test-cuda build/cuda/bin/bench-cuda >"$OUT/build-cuda.log" 2>&1 ||
    { echo "make cuda failed"; tail -40 "$OUT/build-cuda.log"; exit 1; }
echo "built in $(( $(date +%s) - start )) s"

# the steps of `make CUDA_ARCHS=90 test-cuda`, run one by one for separate logs
section "C device test"
export LD_LIBRARY_PATH=$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}
./build/cuda/bin/test-cuda >"$OUT/test-cuda.log" 2>&1
status=$?
grep -E '^(ok|FAIL)  |^ops:|SKIP|passed|check failed' "$OUT/test-cuda.log" | head -80
grep -c '^  ok' "$OUT/test-cuda.log" | sed 's/^/op cases ok: /'
grep '^  FAIL' "$OUT/test-cuda.log" | head -40
grep '^  skip' "$OUT/test-cuda.log" | head -40
echo "test-cuda exit status: $status"

if [ "$have_go" = 1 ]; then
    section "Go tests (-tags cuda)"
    export CGO_LDFLAGS="-L$CUDA_HOME/lib64 -L$CUDA_HOME/lib64/stubs"
    { go test -tags cuda -count=1 -run CUDA -v . && go test -tags cuda -count=1 -v ./cuda/ ./cmd/ggml-demo/; } >"$OUT/go-test.log" 2>&1
    gstatus=$?
    tail -30 "$OUT/go-test.log"
    echo "go test exit status: $gstatus"
    [ "$gstatus" = 0 ] || status=1
fi

section "conformance suite on CUDA0"
conf=""
for d in ../shared/conformance shared/conformance; do
    [ -x "$d/run" ] && { conf=$d; break; }
done
if [ -n "$conf" ] && [ "$have_go" = 1 ]; then
    sh build/conformance-cuda.sh build/cuda/libggml-cuda.a \
        "-L$CUDA_HOME/lib64 -L$CUDA_HOME/lib64/stubs -lcublas -lcudart -lcuda -lstdc++ -lm -ldl -lrt -pthread" \
        "$conf" >"$OUT/conformance-cuda.log" 2>&1
    cstatus=$?
    grep -v '^  ' "$OUT/conformance-cuda.log" | tail -20
    echo "conformance-cuda exit status: $cstatus"
    [ "$cstatus" = 0 ] || status=1
else
    echo "conformance suite not present or no Go toolchain: skipped"
fi

section "benchmarks"
BENCH_REPS=${BENCH_REPS:-20} ./build/cuda/bin/bench-cuda 2>&1 | tee "$OUT/bench-cuda.log"

section "done"
echo "exit status $status; logs in $OUT"
exit "$status"
