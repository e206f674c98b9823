#!/bin/sh
# bench.sh - the C side of `make bench`: the shared harness (../shared/bench/bench.c) linked
# against build/libggml.a, OpenBLAS cblas_sgemm on the same shapes, and the machine's read
# bandwidth, all in one run; prints one table with GFLOP/s, GB/s and ratios against OpenBLAS and
# against the reference ggml figures of ../shared/bench/README.md.
#
# Usage: scripts/bench.sh [BENCH_DIR]      (default ../shared/bench)
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
if $cc -O2 "$src/sgemm.c" -lopenblas -o "$bin/sgemm" 2>/dev/null; then
    have_blas=1
else
    echo "bench: OpenBLAS not available: no sgemm comparator (scripts/ci-install.sh bench installs it)" >&2
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

# run "$@" once, print field $1 of its RESULT line
one() {
    key=$1
    shift
    "$@" 2>/dev/null | grep '^RESULT' | field "$key" | head -1
}

# samples: one value per run in $tmp/<name>, runs of different figures interleaved so that ratios
# compare figures measured at the same time on a shared machine
tmp=$bin/.samples
rm -rf "$tmp"
mkdir -p "$tmp"
sample() { # name key command...
    name=$1
    shift
    v=$(one "$@")
    echo "${v:-nan}" >> "$tmp/$name"
}
med() { median < "$tmp/$1"; }
# median over runs of a / b (same run index)
med_ratio() {
    paste "$tmp/$1" "$tmp/$2" | awk '$1 == $1 + 0 && $2 + 0 > 0 { print $1 / $2 }' | median |
        awk '{ if ($1 == "nan") print "-"; else printf "%.2f", $1 }'
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

# ---------------------------------------------------------------- measurements (interleaved)
blas_env="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=$nth"
i=0
while [ $i -lt "$runs" ]; do
    [ $have_limits = 1 ] && sample bw med "$bin/limits" read "$nth" 1000000000 5
    for t in $types; do
        sample "mv_$t" A_GBps_med "$bin/bench" matmul "$t" 4096 1 4096 "$nth" 40 warmup=8 copies=8
    done
    for shape in 1024x1024x1024 4096x64x4096; do
        dims=$(echo "$shape" | tr x ' ')
        [ $have_blas = 1 ] && sample "blas_$shape" gflops_med $blas_env "$bin/sgemm" $dims 7
        for t in $types; do
            sample "mm_${t}_$shape" gflops_med "$bin/bench" matmul "$t" $dims "$nth" 7 warmup=2
        done
    done
    i=$((i + 1))
done

if [ $have_limits = 1 ]; then
    bw=$(med bw)
    emit "Limits/read" "$bw" "GB/s"
    row "read bandwidth" "$bw" "GB/s" "49" "$(ratio "$bw" 49)" "-" "-"
else
    bw=""
fi
for shape in 1024x1024x1024 4096x64x4096; do
    tag=$([ "$shape" = 1024x1024x1024 ] && echo mm1024 || echo mm4096x64)
    blas=""
    if [ $have_blas = 1 ]; then
        blas=$(med "blas_$shape")
        emit "Sgemm/openblas/$shape" "$blas" "GFLOP/s"
        row "openblas sgemm $shape" "$blas" "GFLOP/s" "-" "-" "$blas" "1.00"
    fi
    for t in $types; do
        g=$(med "mm_${t}_$shape")
        emit "Matmul/$t/$shape" "$g" "GFLOP/s"
        r=$(ref "$tag:$t")
        b="-" br="-"
        if [ $have_blas = 1 ] && { [ "$t" = f32 ] || [ "$t" = f16 ]; }; then
            b=$blas
            br=$(med_ratio "mm_${t}_$shape" "blas_$shape")
        fi
        row "matmul $t $shape" "$g" "GFLOP/s" "$r" "$(ratio "$g" "$r")" "$b" "$br"
    done
    f16r=$(med_ratio "mm_f16_$shape" "mm_f32_$shape")
    row "  f16 / f32 $shape (per-run ratio)" "$f16r" "x" "-" "-" "-" "-"
done

# matrix-vector with cold weights (8 copies of A cycled: far beyond the last-level cache)
for t in $types; do
    gb=$(med "mv_$t")
    emit "Matvec/$t/4096x4096/cold" "$gb" "GB/s"
    r=$(ref "mv4096:$t")
    share="-"
    [ -n "$bw" ] && share=$(med_ratio "mv_$t" bw)
    row "matvec $t 4096x4096 cold (share of read bw $share)" "$gb" "GB/s" "$r" "$(ratio "$gb" "$r")" "-" "-"
done

# ---------------------------------------------------------------- transformer block
if [ "$do_block" = 1 ]; then
    i=0
    while [ $i -lt "$runs" ]; do
        for t in $types; do
            if [ "$t" != f32 ]; then
                sample "blk1_${t}_1" ms_per_tok_med "$bin/bench" block "$t" 1 1 10 warmup=2
                sample "blk1_${t}_$nth" ms_per_tok_med "$bin/bench" block "$t" 1 "$nth" 10 warmup=2
            fi
            sample "blk64_${t}_$nth" ms_per_tok_med "$bin/bench" block "$t" 64 "$nth" 3 warmup=1
        done
        i=$((i + 1))
    done
    for t in $types; do
        [ "$t" = f32 ] && continue
        m1=$(med "blk1_${t}_1")
        mn=$(med "blk1_${t}_$nth")
        emit "Block/$t/tokens=1/threads=1" "$m1" "ms/token"
        emit "Block/$t/tokens=1/threads=$nth" "$mn" "ms/token"
        r=$(ref "blk1:$t")
        row "block $t 1 tok 1 thr" "$m1" "ms/token" "-" "-" "-" "-"
        row "block $t 1 tok $nth thr (x$(med_ratio "blk1_${t}_1" "blk1_${t}_$nth") vs 1 thr)" "$mn" "ms/token" "$r" "$(ratio "$r" "$mn")" "-" "-"
    done
    for t in $types; do
        m=$(med "blk64_${t}_$nth")
        emit "Block/$t/tokens=64/threads=$nth" "$m" "ms/token"
        r=$(ref "blk64:$t")
        row "block $t 64 tok $nth thr" "$m" "ms/token" "$r" "$(ratio "$r" "$m")" "-" "-"
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
echo "x ref: ours / reference ggml figures of $src/README.md (ms/token: reference / ours; > 1 is better)."
echo "x BLAS, f16 / f32, share of read bw, 2 thr vs 1 thr: medians of per-run ratios (figures measured together)."
echo "benchstat-compatible results: $out"
rm -f "$rows"
rm -rf "$tmp"
