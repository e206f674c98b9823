#!/bin/sh
# resource-check.sh - the per-kernel resources ptxas assigned in a built CUDA library, checked
# against what the launches need (make cuda-check; no GPU needed).
#
# usage: cuda/resource-check.sh LIBRARY [CUOBJDUMP [PTXAS_LOG_DIR]]
#
# For every kernel and every sm_XX in LIBRARY (cuobjdump --dump-resource-usage and the
# EIATTR_MAX_THREADS attribute that __launch_bounds__ records, cuobjdump -elf):
#   * a launch bound must be declared: without one the block size a launch may use is unknown;
#   * registers x launch bound <= 65,536 (the register file of one SM, every architecture we
#     build for): otherwise a launch of that size fails with cudaErrorLaunchOutOfResources;
#   * no register spills (ptxas -v's "bytes spill stores/loads", from the *.ptxas files the
#     Makefile keeps next to the objects in PTXAS_LOG_DIR): spills go to local memory, at the
#     speed of global memory. A stack frame without spills (local arrays; sinf/cosf's slow path
#     for huge arguments) is reported, not failed;
#   * static shared memory <= 48 KiB.
# Prints one line per kernel and architecture; exit status 1 when any check fails.
set -u
lib=${1:?usage: resource-check.sh LIBRARY [CUOBJDUMP [PTXAS_LOG_DIR]]}
cuobjdump=${2:-cuobjdump}
ptxdir=${3:-}
[ -f "$lib" ] || { echo "resource-check: $lib not found" >&2; exit 2; }

tmp=$(mktemp -d -t resource-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$cuobjdump" --dump-resource-usage "$lib" >"$tmp/res" || { echo "resource-check: cuobjdump failed" >&2; exit 2; }
"$cuobjdump" -elf "$lib" >"$tmp/elf" || { echo "resource-check: cuobjdump -elf failed" >&2; exit 2; }

# arch name max_threads (from the .nv.info.<kernel> sections)
awk '
    function hex(s,    v, i, c) {
        v = 0
        s = tolower(substr(s, 3))
        for (i = 1; i <= length(s); i++) {
            c = index("0123456789abcdef", substr(s, i, 1)) - 1
            v = v * 16 + c
        }
        return v
    }
    /^arch = / { arch = $3 }
    /^\.nv\.info\./ { fn = substr($1, 10); next }
    /^\.nv\.info$/ || /^\.section/ { fn = "" }
    /Attribute:[ \t]*EIATTR_MAX_THREADS/ { want = fn; next }
    want != "" && /Value:/ {
        n = 1
        for (i = 2; i <= NF; i++) if ($i ~ /^0x/) n *= hex($i)
        print arch, want, n
        want = ""
    }
' "$tmp/elf" >"$tmp/bounds"

# arch name REG STACK SHARED LOCAL
awk '
    /^arch = / { arch = $3 }
    /^ Function / { fn = $2; sub(/:$/, "", fn); next }
    fn != "" && /REG:/ {
        reg = stack = shared = local = 0
        for (i = 1; i <= NF; i++) {
            split($i, kv, ":")
            if (kv[1] == "REG") reg = kv[2]
            if (kv[1] == "STACK") stack = kv[2]
            if (kv[1] == "SHARED") shared = kv[2]
            if (kv[1] == "LOCAL") local = kv[2]
        }
        print arch, fn, reg, stack, shared, local
        fn = ""
    }
' "$tmp/res" >"$tmp/usage"

[ -s "$tmp/usage" ] || { echo "resource-check: no kernels found in $lib" >&2; exit 2; }

# arch name spill_stores spill_loads (ptxas -v)
: >"$tmp/spills"
if [ -n "$ptxdir" ]; then
    set -- "$ptxdir"/*.ptxas
    [ -f "$1" ] || { echo "resource-check: no ptxas reports (*.ptxas) in $ptxdir: rebuild the library" >&2; exit 2; }
    cat "$@" | awk '
        /Compiling entry function/ {
            fn = $0; sub(/^.*entry function .\(?/, "", fn); sub(/. for .*$/, "", fn)
            arch = $0; sub(/^.* for ./, "", arch); sub(/.$/, "", arch)
            next
        }
        /bytes spill stores/ && fn != "" {
            for (i = 1; i < NF; i++) {
                if ($(i + 1) == "bytes" && $(i + 2) == "spill" && $(i + 3) ~ /^stores/) st = $i
                if ($(i + 1) == "bytes" && $(i + 2) == "spill" && $(i + 3) ~ /^loads/) ld = $i
            }
            print arch, fn, st, ld
            fn = ""
        }
    ' >"$tmp/spills"
fi

awk -v boundsfile="$tmp/bounds" -v spillfile="$tmp/spills" -v haveptx="$ptxdir" '
    BEGIN {
        while ((getline line < boundsfile) > 0) {
            split(line, f, " ")
            bound[f[1] " " f[2]] = f[3]
        }
        while ((getline line < spillfile) > 0) {
            split(line, f, " ")
            spill[f[1] " " f[2]] = f[3] + f[4]
        }
    }
    {
        arch = $1; fn = $2; reg = $3; stack = $4; shared = $5; local = $6
        key = arch " " fn
        b = (key in bound) ? bound[key] : 0
        why = ""
        if (b == 0) why = why " no __launch_bounds__;"
        else if (reg * b > 65536) why = why sprintf(" %d registers x %d threads = %d > 65536;", reg, b, reg * b)
        if (haveptx != "" && !(key in spill)) why = why " no ptxas report;"
        else if (spill[key] > 0) why = why sprintf(" %d bytes of register spills;", spill[key])
        if (shared > 49152) why = why sprintf(" %d bytes static shared memory > 48 KiB;", shared)
        note = (stack > 0 || local > 0) ? sprintf(" (stack frame %d, local %d: no spills)", stack, local) : ""
        printf "%-6s %-60s reg %3d x %4d threads  stack %4d  local %4d  smem %6d  %s\n", arch, fn, reg, b, stack, local,
               shared, why == "" ? "ok" note : "FAIL:" why
        n++
        if (why != "") bad++
    }
    END {
        printf "resource-check: %d kernel builds, %d failed\n", n, bad + 0
        exit bad > 0
    }
' "$tmp/usage"
