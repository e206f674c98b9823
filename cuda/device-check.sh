#!/usr/bin/env bash
# device-check.sh - the prepared script for a session that is lent a GPU machine (one H200, a
# 15-minute device budget that machine start-up also comes out of, at most 10 minutes a call).
# Run from anywhere; it works in the repository root. Every step has its own time limit, the
# whole call has a budget, and every step writes its log to $OUT while it runs, so a hang or a
# crash costs one step, never the session.
#
#   bash cuda/device-check.sh prepare   on THIS (CPU) machine: build/cuda/devtools/ (a trimmed
#                                       Go toolchain, the module cache the tests need, the public
#                                       conformance suite); exits 0 when everything is in place
#   bash cuda/device-check.sh build     device call (a), <= 5 min: environment, library for sm_90
#                                       only, C device test (cuda/tests/test-cuda.c)
#   bash cuda/device-check.sh go        device call (b): Go toolchain, (re)build when the machine
#                                       is fresh, the Go tests in one `go test -vet=off`, the
#                                       conformance suite on CUDA0, benchmarks (bench-cuda)
#   bash cuda/device-check.sh all       build then go (dry runs; too long for one device call)
#
# Through the device tool (carry the prepared folder; the timeouts leave a margin):
#
#   run(command="bash cuda/device-check.sh build", carry=["build/cuda/devtools"], timeout_s=330)
#   run(command="bash cuda/device-check.sh go",    carry=["build/cuda/devtools"], timeout_s=570)
#
# Dry run (CI, `make device-check-dry`): DEVICE_CHECK_EMU=1 runs every step of `prepare`, `build`
# and `go` on this machine against the host emulator (cuda/emu) instead of nvcc and a GPU: the
# same toolchain extraction, offline module cache, single `go test`, conformance and benchmark
# steps, with the emulator library, tags 'cuda cudaemu' and small benchmark sizes.
#
# Environment: OUT (logs; default build/cuda/out, build/cuda/out-emu for dry runs), CUDA_HOME,
# DEVICE_CHECK_BUDGET (seconds for the call: default 300 for build, 550 for go), BENCH_REPS.
# Exit status: 0 when every step passed; 1 when a step failed or ran out of time; 2 on usage
# errors or a missing compiler. $OUT/summary-MODE.txt has one line per step.

set -u
self=$(readlink -f "$0")
cd "$(dirname "$self")/.."
root=$(pwd)

EMU=${DEVICE_CHECK_EMU:-0}
mode=${1:-}
devtools=build/cuda/devtools

# ---------------------------------------------------------------------------------------------
# the body of one step, run under `timeout` in a child process (`device-check.sh --step NAME`)

devgo=${DEVICE_CHECK_GODIR:-/tmp/devgo} # where the carried toolchain is unpacked

# prints the go binary: the unpacked carried toolchain (unless the argument is `host`: prepare
# packages this machine's own), PATH, GOROOT, common places
find_go() {
    local g carried="$devgo"/*/bin/go
    [ "${1:-}" != host ] || carried=""
    for g in $carried "$(command -v go 2>/dev/null)" "${GOROOT:+$GOROOT/bin/go}" /usr/local/go/bin/go \
        /usr/lib/go/bin/go /usr/lib/go-*/bin/go "$HOME"/sdk/go*/bin/go "$HOME"/go/bin/go; do
        if [ -n "$g" ] && [ -x "$g" ] && "$g" version >/dev/null 2>&1; then
            echo "$g"
            return 0
        fi
    done
    return 1
}

run_step() {
    case $1 in
    environment)
        date -u
        uname -a
        nproc
        free -g 2>/dev/null | head -2
        if [ "$EMU" = 1 ]; then
            echo "dry run: the CUDA host emulator (cuda/emu) stands in for nvcc and the GPU"
            return 0
        fi
        nvidia-smi -L || echo "nvidia-smi not found"
        nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.memory \
            --format=csv 2>/dev/null || true
        echo "CUDA_HOME=$CUDA_HOME"
        "$CUDA_HOME/bin/nvcc" --version || { echo "no nvcc in $CUDA_HOME/bin: cannot build"; return 2; }
        ls -l "$CUDA_HOME"/lib64/libcudart.so* "$CUDA_HOME"/lib64/libcublas.so* 2>/dev/null
        ldconfig -p 2>/dev/null | grep -E 'libcuda\.so|libcudart|libcublas' || true
        gcc --version | head -1
        ;;
    build-lib)
        make -j"$(nproc)" lib
        ;;
    build-cuda)
        if [ "$EMU" = 1 ]; then
            make -j"$(nproc)" cuda-emu build/cuda-emu/bin/test-cuda build/cuda-emu/bin/bench-cuda
        else
            make -j"$(nproc)" CUDA_ARCHS=90 cuda build/cuda/bin/test-cuda build/cuda/bin/bench-cuda
        fi
        ;;
    test-cuda)
        "$bin/test-cuda"
        ;;
    go-toolchain)
        # the carried toolchain, unpacked afresh (its top folder is `go`, but any name is found)
        if [ -f "$devtools/go.tar.xz" ]; then
            rm -rf "$devgo" && mkdir -p "$devgo" && tar -C "$devgo" -xJf "$devtools/go.tar.xz" || return 1
        fi
        local g
        g=$(find_go) || { echo "no Go toolchain found (run 'bash cuda/device-check.sh prepare' and carry $devtools)"; return 1; }
        echo "$g"
        "$g" version
        GOROOT=$(dirname "$(dirname "$g")") "$g" env GOROOT GOARCH
        ;;
    go-test)
        local tests
        # the tests of ./cuda and ./cmd/ggml-demo, and the root package's CUDA tests (the op table
        # on every backend, ./tests, is not carried: its llama/tokenizer imports would bring
        # golang.org/x/text's 30 MB past the carry limit; the emulator runs it in CI)
        tests=$(grep -ho '^func \(Test\|Example\)[A-Za-z0-9_]*' cuda/*_test.go cmd/ggml-demo/*_test.go |
            sed 's/^func //' | sort -u | paste -sd'|')
        "$GO" test -tags "$gotags" -vet=off -count=1 -v -run "CUDA|^($tests)\$" . ./cuda/ ./cmd/ggml-demo/
        ;;
    conformance)
        [ -n "$conf" ] || { echo "no conformance suite (../shared/conformance or $devtools/conformance)"; return 1; }
        sh scripts/conformance-device.sh CUDA0 cuda/tests/conform-shim.c "$cudalib" "" "$cudaldlibs" "$conf"
        ;;
    bench)
        if [ "$EMU" = 1 ]; then
            BENCH_REPS=1 "$bin/bench-cuda" 256 64
        else
            BENCH_REPS=${BENCH_REPS:-20} "$bin/bench-cuda"
        fi
        ;;
    *)
        echo "device-check: unknown step $1"
        return 2
        ;;
    esac
}

# ---------------------------------------------------------------------------------------------
# prepare (CPU machine): the folder carried to the device

prepare() {
    set -e
    local go goroot base size
    go=$(find_go host) || { echo "prepare: no Go toolchain on this machine"; return 1; }
    goroot=$("$go" env GOROOT)
    base=$(basename "$goroot")
    rm -rf "$devtools"
    mkdir -p "$devtools"
    # 1. a trimmed toolchain, top folder renamed `go` whatever GOROOT is called here: compiler,
    #    linker, cgo and the standard library sources stay; cmd sources, tests, docs go
    echo "prepare: Go toolchain from $goroot ($("$go" version))"
    tar -C "$(dirname "$goroot")" -c --transform "s,^$base,go," \
        --exclude="$base/src/cmd" --exclude="$base/test" --exclude="$base/doc" --exclude="$base/api" \
        --exclude="$base/misc" --exclude="$base/lib/time" --exclude="$base/pkg/tool/*/api" \
        --exclude="$base/pkg/tool/*/doc" --exclude="$base/pkg/tool/*/fix" --exclude="$base/pkg/tool/*/trace" \
        --exclude="$base/pkg/tool/*/pprof" --exclude="$base/pkg/tool/*/covdata" \
        --exclude="*_test.go" --exclude="testdata" "$base" | xz -T2 -6 >"$devtools/go.tar.xz"
    # 2. every module of go.mod's build list (testify and its dependencies among them), offline
    #    use through GOMODCACHE and GOPROXY=off; the zip archives are dropped (the extracted trees,
    #    .mod, .info and .ziphash files are what the go command reads)
    GOMODCACHE=$root/$devtools/gomod GOFLAGS=-modcacherw "$go" mod download
    rm -f "$devtools"/gomod/cache/download/*/*/@v/*.zip "$devtools"/gomod/cache/download/*/*/*/@v/*.zip
    rm -rf "$devtools"/gomod/cache/download/sumdb
    #    only the modules whose packages the device's `go test` builds keep their sources (the
    #    others, e.g. the server's and the chat templates' dependencies, keep their .mod files,
    #    which loading the module graph needs)
    local keep
    keep=$(GOMODCACHE=$root/$devtools/gomod GOPROXY=off GOFLAGS=-mod=readonly "$go" list -deps -test \
        -tags 'cuda cudaemu' -f '{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}}{{end}}{{end}}' \
        . ./cuda/ ./cmd/ggml-demo/ | sed 's/[A-Z]/!\L&/g' | sort -u) # the cache's case encoding
    local dir rel
    while IFS= read -r dir; do
        rel=${dir#"$devtools"/gomod/}
        if ! grep -qxF "$rel" <<<"$keep"; then
            chmod -R u+w "$dir" && rm -rf "$dir"
        fi
    done < <(find "$devtools/gomod" -path "$devtools/gomod/cache" -prune -o -type d -name '*@*' -print -prune)
    # 3. the public conformance suite (the device gets no ../shared)
    if [ -x ../shared/conformance/run ]; then
        mkdir -p "$devtools/conformance"
        cp ../shared/conformance/run ../shared/conformance/conform.c ../shared/conformance/cases_public.inc \
            ../shared/conformance/compare.go ../shared/conformance/golden-public.bin \
            ../shared/conformance/golden-public.inputs "$devtools/conformance/"
        chmod -R u+w "$devtools/conformance"
        # a module of its own, so that `go test ./...` in the repository never sees this copy
        printf 'module conformance\n\ngo 1.21\n' > "$devtools/conformance/go.mod"
        # the golden data compress well; the device unpacks them
        xz -T2 -6 "$devtools/conformance/golden-public.bin" "$devtools/conformance/golden-public.inputs"
    else
        echo "prepare: ../shared/conformance not found: the device run will skip the conformance step"
    fi
    set +e
    size=$(du -sm "$devtools" | cut -f1)
    du -sh "$devtools"/* "$devtools"
    if [ "$size" -ge 60 ]; then
        echo "prepare: $devtools is ${size} MiB: over the device tool's 64 MiB carry limit (with margin)"
        return 1
    fi
    echo "prepare: done ($devtools, ${size} MiB); carry it: carry=[\"$devtools\"]"
    return 0
}

# ---------------------------------------------------------------------------------------------
# the calls

if [ "$mode" = --step ]; then
    run_step "$2"
    exit $?
fi

case $mode in
prepare)
    prepare
    exit $?
    ;;
build | go | all) ;;
*)
    echo "usage: bash cuda/device-check.sh prepare|build|go|all   (DEVICE_CHECK_EMU=1: dry run on the emulator)" >&2
    exit 2
    ;;
esac

if [ "$EMU" = 1 ]; then
    OUT=${OUT:-build/cuda/out-emu}
else
    OUT=${OUT:-build/cuda/out}
fi
mkdir -p "$OUT"
summary="$OUT/summary-$mode.txt"
: >"$summary"
exec > >(tee "$OUT/device-check-$mode.log") 2>&1

case $mode in
build) budget=${DEVICE_CHECK_BUDGET:-300} ;;
go) budget=${DEVICE_CHECK_BUDGET:-550} ;;
*) budget=${DEVICE_CHECK_BUDGET:-1500} ;;
esac
t_start=$(date +%s)
status=0

# step NAME LIMIT: run_step NAME in a child under `timeout` (LIMIT seconds, cut to what is left of
# the call's budget; skipped when under 10 s are left), its output in $OUT/NAME.log
step() {
    local name=$1 limit=$2 left rc t0 dt verdict
    left=$((budget - ($(date +%s) - t_start)))
    [ "$limit" -le "$left" ] || limit=$left
    if [ "$limit" -lt 10 ]; then
        printf '%-14s %-34s\n' "$name" "SKIPPED (call budget ${budget}s spent)" | tee -a "$summary"
        status=1
        return 1
    fi
    printf '\n== %s (limit %ss, %s UTC)\n' "$name" "$limit" "$(date -u +%H:%M:%S)"
    t0=$(date +%s)
    timeout -k 5 "$limit" bash "$self" --step "$name" >"$OUT/$name.log" 2>&1
    rc=$?
    dt=$(($(date +%s) - t0))
    case $rc in
    0) verdict=ok ;;
    124 | 137) verdict="TIMED OUT (${limit}s)" ;;
    *) verdict="FAILED (exit $rc)" ;;
    esac
    printf '%-14s %-34s %5ss\n' "$name" "$verdict" "$dt" | tee -a "$summary"
    if [ $rc != 0 ]; then
        status=1
        tail -n 30 "$OUT/$name.log"
    fi
    return $rc
}

# the environment every step sees
export EMU OUT devgo
if [ "$EMU" = 1 ]; then
    export bin=build/cuda-emu/bin cudalib=build/cuda-emu/libggml-cuda.a gotags="cuda cudaemu"
    export cudaldlibs="-lstdc++ -lm -pthread" GGML_CUDA_EMU_QUIET=1 GGML_CUDA_EMU_DEVICES=2
else
    if [ -z "${CUDA_HOME:-}" ]; then
        if [ -x /usr/local/cuda/bin/nvcc ]; then
            CUDA_HOME=/usr/local/cuda
        elif command -v nvcc >/dev/null 2>&1; then
            CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
        else
            CUDA_HOME=/usr/local/cuda
        fi
    fi
    export CUDA_HOME bin=build/cuda/bin cudalib=build/cuda/libggml-cuda.a gotags=cuda
    export cudaldlibs="-L$CUDA_HOME/lib64 -L$CUDA_HOME/lib64/stubs -lcublas -lcudart -lcuda -lstdc++ -lm -ldl -lrt -pthread"
    export LD_LIBRARY_PATH=$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}
fi

call_build() {
    if ! step environment 30 && [ "$EMU" != 1 ] && [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
        echo "no nvcc: nothing can be built (set CUDA_HOME)"
        exit 2
    fi
    step build-lib 90 || return 1
    step build-cuda 180 || return 1
    step test-cuda 120
    echo "op cases ok: $(grep -c '^  ok' "$OUT/test-cuda.log")"
    grep -E '^ops:|^(ok|FAIL) |passed, ' "$OUT/test-cuda.log"
    grep -E '^  (FAIL|skip)' "$OUT/test-cuda.log" | head -40
}

call_go() {
    # a fresh machine has lost call (a)'s build: make redoes what is missing (nothing when warm)
    if [ ! -f "$bin/test-cuda" ] || [ ! -f "$bin/bench-cuda" ] || [ ! -f build/libggml.a ]; then
        step build-lib 90 || return 1
        step build-cuda 180 || return 1
    fi
    if step go-toolchain 60; then
        GO=$(find_go)
        export GO PATH=$(dirname "$GO"):$PATH GOROOT=$(dirname "$(dirname "$GO")")
        export GOTOOLCHAIN=local GOFLAGS=-modcacherw
        if [ -d "$devtools/gomod" ]; then
            # offline: only the prepared module cache (go.sum checks it; no proxy, no checksum db)
            export GOMODCACHE=$root/$devtools/gomod GOPROXY=off GOSUMDB=off
        fi
        [ "$EMU" = 1 ] || export GOCACHE=/tmp/devgo-cache
        # the library's checksum in CGO_CFLAGS: Go's build cache does not look at linked archives
        # (the names `make test-cuda-emu` / `make cuda-check-12` use, so that caches are shared)
        stamp=$(cksum <"$cudalib" | cut -d' ' -f1)
        if [ "$EMU" = 1 ]; then
            export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DGGML_CUDA_EMU_STAMP=$stamp"
        else
            export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -DGGML_CUDA_STAMP=$stamp"
        fi
        [ "$EMU" = 1 ] || export CGO_LDFLAGS="-L$CUDA_HOME/lib64 -L$CUDA_HOME/lib64/stubs"
        step go-test 240
        grep -E '^(ok|FAIL|---|panic)' "$OUT/go-test.log" | grep -v '^--- PASS' | head -40
        # the conformance suite: the carried copy when present (so that dry runs test it), else
        # ../shared
        conf=""
        if [ ! -x "$devtools/conformance/run" ] && [ -x ../shared/conformance/run ]; then
            conf=../shared/conformance
        elif [ -x "$devtools/conformance/run" ]; then
            conf=/tmp/devconf
            rm -rf "$conf" && mkdir -p "$conf" && cp "$devtools"/conformance/* "$conf"/ && chmod u+w "$conf"/* &&
                xz -df "$conf"/*.xz 2>/dev/null
        fi
        export conf
        step conformance 120
        grep -v '^  ' "$OUT/conformance.log" | tail -12
    else
        echo "no Go toolchain: the Go tests and the conformance suite (compare.go) cannot run"
    fi
    step bench 90
    cat "$OUT/bench.log"
}

case $mode in
build) call_build ;;
go) call_go ;;
all) call_build && call_go ;;
esac

printf '\n== summary (%s, %ss of %ss)\n' "$mode" "$(($(date +%s) - t_start))" "$budget"
cat "$summary"
echo "exit status $status; logs in $OUT"
exit "$status"
