#!/bin/sh
# run-tests-parallel.sh - runs test programs JOBS at a time, each under a command prefix (make
# test-valgrind: valgrind runs all of a program's threads on one core, so two programs at once
# use two). Each program's output is captured and printed whole, in the order given, after
# "== LABEL PROGRAM", as soon as it and every program before it have finished; the output reads
# as that of a serial run.
#
# usage: scripts/run-tests-parallel.sh JOBS LABEL FAILED_FILE "PREFIX" PROGRAM...
#
# The programs that failed (non-zero exit) are appended to FAILED_FILE, one per line, in the
# order given; the exit status is 1 when any failed, 2 on a usage error.
set -u

usage="usage: run-tests-parallel.sh JOBS LABEL FAILED_FILE PREFIX PROGRAM..."
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
jobs=$1 label=$2 failed_file=$3
RUN_TESTS_PREFIX=$4
export RUN_TESTS_PREFIX
shift 4
[ $# -gt 0 ] || exit 0

tmp=$(mktemp -d -t run-tests.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
RUN_TESTS_DIR=$tmp
export RUN_TESTS_DIR

# each line "N PROGRAM"; a program's exit status appears (renamed into place) only after its
# log is complete
i=0
for t in "$@"; do
    i=$((i + 1))
    echo "$i $t"
done | xargs -P "$jobs" -n 2 sh -c '
    $RUN_TESTS_PREFIX ./"$2" >"$RUN_TESTS_DIR/$1.log" 2>&1
    echo $? >"$RUN_TESTS_DIR/$1.tmp" && mv "$RUN_TESTS_DIR/$1.tmp" "$RUN_TESTS_DIR/$1.rc"' sh &
runner=$!

status=0
i=0
for t in "$@"; do
    i=$((i + 1))
    while [ ! -f "$tmp/$i.rc" ]; do
        if ! kill -0 "$runner" 2>/dev/null && [ ! -f "$tmp/$i.rc" ]; then
            echo "run-tests-parallel: $t did not run" >&2
            echo "$t" >>"$failed_file"
            status=1
            continue 2
        fi
        sleep 0.2
    done
    echo "== $label $t"
    cat "$tmp/$i.log"
    if [ "$(cat "$tmp/$i.rc")" != 0 ]; then
        echo "$t" >>"$failed_file"
        status=1
    fi
done
wait "$runner"
exit $status
