#!/bin/sh
# benchsummary.sh - a short table of medians from `go test -bench` output (several -count runs
# of the same benchmarks): one row per benchmark, in first-seen order, with the number of
# samples, the median time per op and its spread (largest distance of a sample from the
# median, in %), and the median of every other metric (GFLOP/s, GB/s, ms/token, us/node, ...).
# For statistics proper, feed the same file to benchstat.
#
# Usage: scripts/benchsummary.sh [FILE]      (default: standard input)
set -eu

awk '
function fmt(v) {
    if (v >= 1000) return sprintf("%.0f", v)
    if (v >= 100) return sprintf("%.1f", v)
    if (v >= 10) return sprintf("%.2f", v)
    return sprintf("%.3g", v)
}
function fmttime(ns) {
    if (ns >= 1e9) return sprintf("%.3g s", ns / 1e9)
    if (ns >= 1e6) return sprintf("%.3g ms", ns / 1e6)
    if (ns >= 1e3) return sprintf("%.3g us", ns / 1e3)
    return sprintf("%.3g ns", ns)
}
# median of the samples s[key, 1..n] (insertion sort into tmp)
function median(key, n,    i, j, x, tmp) {
    for (i = 1; i <= n; i++) {
        x = s[key, i]
        for (j = i - 1; j >= 1 && tmp[j] > x; j--) tmp[j + 1] = tmp[j]
        tmp[j + 1] = x
    }
    if (n % 2) return tmp[(n + 1) / 2]
    return (tmp[n / 2] + tmp[n / 2 + 1]) / 2
}
/^pkg: / { pkg = $2 }
/^cpu: / { sub(/^cpu: /, ""); cpu = $0 }
/^Benchmark/ && NF >= 4 && $2 ~ /^[0-9]+$/ {
    name = $1
    if (!(name in seen)) { seen[name] = 1; order[++nb] = name }
    if (pkg != "" && !(pkg in seenpkg)) { seenpkg[pkg] = 1; pkgs = pkgs (pkgs == "" ? "" : " ") pkg }
    for (f = 3; f + 1 <= NF; f += 2) {
        unit = $(f + 1)
        key = name SUBSEP unit
        if (!(key in cnt)) {
            cnt[key] = 0
            if (unit != "ns/op" && !((name, "u", unit) in hasunit)) {
                hasunit[name, "u", unit] = 1
                units[name] = units[name] (units[name] == "" ? "" : " ") unit
            }
        }
        s[key, ++cnt[key]] = $f + 0
    }
}
END {
    if (nb == 0) { print "benchsummary: no benchmark lines"; exit 1 }
    w = 10
    for (i = 1; i <= nb; i++) if (length(order[i]) > w) w = length(order[i])
    printf "Go benchmarks (%s%s): medians of the runs\n", pkgs, cpu == "" ? "" : ", " cpu
    printf "%-" w "s %3s %10s %7s  %s\n", "benchmark", "n", "time/op", "spread", "metrics (medians)"
    for (i = 1; i <= nb; i++) {
        name = order[i]
        key = name SUBSEP "ns/op"
        n = cnt[key]
        t = median(key, n)
        dev = 0
        for (j = 1; j <= n; j++) {
            d = s[key, j] - t
            if (d < 0) d = -d
            if (d > dev) dev = d
        }
        spread = t > 0 ? sprintf("±%.0f%%", 100 * dev / t) : "-"
        m = ""
        nu = split(units[name], us, " ")
        for (u = 1; u <= nu; u++) {
            k = name SUBSEP us[u]
            m = m sprintf("%10s %-8s", fmt(median(k, cnt[k])), us[u])
        }
        sub(/ +$/, "", m)
        printf "%-" w "s %3d %10s %7s  %s\n", name, n, fmttime(t), spread, m
    }
}
' "${1:--}"
