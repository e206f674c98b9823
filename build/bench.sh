#!/bin/sh
# bench.sh - the C side of `make bench`: the shared harness (../shared/bench/bench.c) linked
# against build/libggml.a, OpenBLAS cblas_sgemm on the same shapes, and the machine's read
# bandwidth, all in one run; prints one table with GFLOP/s, GB/s and ratios against OpenBLAS and
# against the reference ggml figures of ../shared/bench/README.md.
#
# Usage: build/bench.sh [BENCH_DIR]      (default ../shared/bench)
# Environment:
#   BENCH_RUNS=5       process runs per figure (the figure is the median of their medians)
#   BENCH_THREADS=2    threads
#   BENCH_BLOCK=1      also run the transformer block (1 and 64 tokens); 0 skips it
#   BENCH_OUT=build/bench/results.txt   benchstat-compatible lines ("Benchmark... N value unit")
#
# Timings are medians; nothing here is a test (no timing assertion anywhere).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
src=${1:-../shared/bench}
runs=${BENCH_RUNS:-5}
nth=${BENCH_THREADS:-2}
do_block=${BENCH_BLOCK:-1}
out=${BENCH_OUT:-build/bench/results.txt}
bin=build/bench
mkdir -p "$bin"

cc=${CC:-cc}
[ "$cc" = "cc" ] || true

# ---------------------------------------------------------------- build
if [ ! -f build/libggml.a ]; then
    echo "bench: build/libggml.a missing (run make lib)" >&2
    exit 1
fi
$cc -O2 -std=gnu11 -Iggml/include "$src/bench.c" build/libggml.a -lm -pthread -o "$bin/bench"

have_blas=0
if ! printf '#include <cblas.h>\nint main(void){return 0;}\n' | $cc -x c - -lopenblas -o "$bin/.blascheck" 2>/dev/null; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "bench: installing libopenblas-dev (OpenBLAS comparator)" >&2
        apt-get install -y libopenblas-dev >/dev/null 2>&1 ||
            { apt-get update >/dev/null 2>&1 && apt-get install -y libopenblas-dev >/dev/null 2>&1; } || true
    fi
fi
if $cc -O2 "$src/sgemm.c" -lopenblas -o "$bin/sgemm" 2>/dev/null; then
    have_blas=1
else
    echo "bench: OpenBLAS not available: no sgemm comparator" >&2
fi
rm -f "$bin/.blascheck"

# the limits probe is the harness's own program, built as its README says
have_limits=0
if $cc -O2 -march=native -fopenmp "$src/limits.c" -o "$bin/limits" 2>/dev/null; then
    have_limits=1
fi

# ---------------------------------------------------------------- helpers
# median of the numbers on stdin
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit } if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# value of key=... in a RESULT line
field() {
    tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2; exit }'
}

# run "$@" $runs times, print the median of field $1 of their RESULT lines
med_of() {
    key=$1
    shift
    i=0
    while [ $i -lt "$runs" ]; do
        "$@" | grep '^RESULT' | field "$key"
        i=$((i + 1))
    done | median
}

: > "$out"
# benchstat line: name, value, unit
emit() {
    printf 'Benchmark%s-%s\t1\t%s %s\n' "$1" "$nth" "$2" "$3" >> "$out"
}

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a == a + 0) printf "%.2f", a / b; else printf "-" }'
}

# reference ggml figures (../shared/bench/README.md, 2 threads)
ref() {
    case "$1" in
        mm1024:f32) echo 85 ;;  mm1024:f16) echo 78 ;;  mm1024:q8_0) echo 110 ;; mm1024:q4_0) echo 95 ;; mm1024:q4_k) echo 96 ;;
        mm4096x64:f32) echo 65 ;; mm4096x64:f16) echo 88 ;; mm4096x64:q8_0) echo 86 ;; mm4096x64:q4_0) echo 94 ;; mm4096x64:q4_k) echo 153 ;;
        mv4096:f32) echo 39 ;; mv4096:f16) echo 46 ;; mv4096:q8_0) echo 37 ;; mv4096:q4_0) echo 22 ;; mv4096:q4_k) echo 30 ;;
        blk1:f16) echo 9.7 ;; blk1:q8_0) echo 5.4 ;; blk1:q4_0) echo 4.7 ;; blk1:q4_k) echo 3.4 ;;
        blk64:f32) echo 12.4 ;; blk64:f16) echo 10.0 ;; blk64:q8_0) echo 8.7 ;; blk64:q4_0) echo 9.1 ;; blk64:q4_k) echo 6.6 ;;
        *) echo - ;;
    esac
}

rows=$bin/.rows
: > "$rows"
row() { # name value unit ref ref_ratio blas blas_ratio
    printf '%s|%s|%s|%s|%s|%s|%s\n' "$@" >> "$rows"
}

types="f32 f16 q8_0 q4_0 q4_k"
echo "bench: $runs process runs per figure, $nth threads (medians); this takes a few minutes" >&2

# ---------------------------------------------------------------- machine limits
bw=""
if [ $have_limits = 1 ]; then
    bw=$(med_of med "$bin/limits" read "$nth" 1000000000 5 2>/dev/null | head -1)
    [ -n "$bw" ] && emit "Limits/read" "$bw" "GB/s" && row "read bandwidth" "$bw" "GB/s" "49" "$(ratio "$bw" 49)" "-" "-"
fi

# ---------------------------------------------------------------- products
for shape in "1024 1024 1024" "4096 64 4096"; do
    set -- $shape
    m=$1 n=$2 k=$3
    tag=$([ "$n" = 1024 ] && echo mm1024 || echo mm4096x64)
    blas=""
    if [ $have_blas = 1 ]; then
        blas=$(med_of gflops_med env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS="$nth" \
               "$bin/sgemm" "$m" "$n" "$k" 7)
        emit "Sgemm/openblas/${m}x${n}x${k}" "$blas" "GFLOP/s"
        row "openblas sgemm ${m}x${n}x${k}" "$blas" "GFLOP/s" "-" "-" "$blas" "1.00"
    fi
    for t in $types; do
        reps=5
        [ "$n" = 1024 ] && [ "$t" = f32 ] && reps=9
        g=$(med_of gflops_med "$bin/bench" matmul "$t" "$m" "$n" "$k" "$nth" "$reps" warmup=2)
        emit "Matmul/$t/${m}x${n}x${k}" "$g" "GFLOP/s"
        r=$(ref "$tag:$t")
        b="-" br="-"
        if [ "$t" = f32 ] || [ "$t" = f16 ]; then
            b=${blas:--}
            br=$(ratio "$g" "$blas")
        fi
        row "matmul $t ${m}x${n}x${k}" "$g" "GFLOP/s" "$r" "$(ratio "$g" "$r")" "$b" "$br"
    done
done

# matrix-vector with cold weights (8 copies of A cycled: far beyond the last-level cache)
for t in $types; do
    gb=$(med_of A_GBps_med "$bin/bench" matmul "$t" 4096 1 4096 "$nth" 40 warmup=8 copies=8)
    emit "Matvec/$t/4096x4096/cold" "$gb" "GB/s"
    r=$(ref "mv4096:$t")
    share="-"
    [ -n "$bw" ] && share=$(ratio "$gb" "$bw")
    row "matvec $t 4096x4096 cold (share of read bw: $share)" "$gb" "GB/s" "$r" "$(ratio "$gb" "$r")" "-" "-"
done

# ---------------------------------------------------------------- transformer block
if [ "$do_block" = 1 ]; then
    for tok in 1 64; do
        for t in $types; do
            [ "$tok" = 1 ] && [ "$t" = f32 ] && continue
            reps=10
            [ "$tok" = 64 ] && reps=3
            for th in 1 "$nth"; do
                [ "$tok" = 64 ] && [ "$th" = 1 ] && continue
                ms=$(med_of ms_per_tok_med "$bin/bench" block "$t" "$tok" "$th" "$reps" warmup=1)
                emit "Block/$t/tokens=$tok/threads=$th" "$ms" "ms/token"
                r="-"
                [ "$th" = "$nth" ] && r=$(ref "blk$tok:$t")
                # speed-up over the reference: its time / ours
                row "block $t ${tok} tok ${th} thr" "$ms" "ms/token" "$r" "$(ratio "$r" "$ms")" "-" "-"
            done
        done
    done
fi

# ---------------------------------------------------------------- table
echo
printf '%-52s %10s %-9s %8s %8s %9s %8s\n' "benchmark ($nth threads, median of $runs runs)" "ours" "unit" "ref" "x ref" "OpenBLAS" "x BLAS"
printf '%-52s %10s %-9s %8s %8s %9s %8s\n' "----------------------------------------------------" "----------" "---------" "--------" "--------" "---------" "--------"
while IFS='|' read -r name v unit r rr b br; do
    printf '%-52s %10s %-9s %8s %8s %9s %8s\n' "$name" "$v" "$unit" "$r" "$rr" "$b" "$br"
done < "$rows"
echo
echo "x ref: ours / reference ggml (for ms/token: reference / ours, so > 1 is faster)."
echo "benchstat-compatible results: $out"
rm -f "$rows"
