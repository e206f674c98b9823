#!/bin/sh
# conformance-levels.sh - the public conformance suite once per SIMD dispatch level
# (make conformance-levels).
#
# usage: scripts/conformance-levels.sh [CONFORMANCE_DIR] [filter]
#
# Runs CONFORMANCE_DIR/run (default ../shared/conformance) from the repository root with
# GGML_X_CPU_LEVEL=scalar, =avx2 and unset (the detected level), prints the count of each run
# and fails if any run reports failures or cannot run. The levels can be changed with
# LEVELS="scalar avx2 avx512 default" ("default" = variable unset). A level above what the CPU
# has is not raised: the run uses the detected level and says so.
set -u

conf=${1:-../shared/conformance}
filter=${2:-}
levels=${LEVELS:-scalar avx2 default}
runner="$conf/run"
[ -x "$runner" ] || { echo "conformance-levels: $runner not found or not executable" >&2; exit 2; }

summary=""
status=0
for lv in $levels; do
    log=$(mktemp -t conformance-level.XXXXXX)
    start=$(date +%s)
    if [ "$lv" = default ]; then
        echo "== conformance, dispatch level: default (detected)"
        env -u GGML_X_CPU_LEVEL "$runner" . ${filter:+"$filter"} >"$log" 2>&1
    else
        echo "== conformance, GGML_X_CPU_LEVEL=$lv"
        GGML_X_CPU_LEVEL=$lv "$runner" . ${filter:+"$filter"} >"$log" 2>&1
    fi
    rc=$?
    secs=$(( $(date +%s) - start ))
    line=$(grep '^conformance:' "$log" | tail -n 1)
    [ -n "$line" ] || line="conformance: no result"
    case "$line" in
        *" 0 failed"*) ;;
        *) [ $rc -ne 0 ] || rc=1 ;; # no count, or failures despite a zero exit
    esac
    if [ $rc -ne 0 ]; then
        status=1
        grep -v '^[A-Z_0-9]* *[0-9]* *0 *0 ' "$log" | tail -n 40
    fi
    echo "   $line (exit $rc, ${secs}s)"
    summary="$summary
  $lv: ${line#conformance: } (exit $rc, ${secs}s)"
    rm -f "$log"
done

echo "conformance per dispatch level:$summary"
if [ $status -ne 0 ]; then
    echo "conformance-levels: FAILED"
fi
exit $status
