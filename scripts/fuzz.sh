#!/usr/bin/env bash
# scripts/fuzz.sh PKG TARGET FUZZTIME [go test flags...] - a duration-bounded fuzz run that
# tells a found input from the Go fuzz coordinator's shutdown race.
#
# Up to Go 1.26, `go test -fuzz -fuzztime 20s` can fail exactly at the deadline with a bare
# "context deadline exceeded" while no input failed (golang/go#75804, fixed in Go 1.27): a
# worker still busy when the time runs out is reported as a failure. A real finding always
# prints "Failing input written to" (or a panic / t.Fatal message). So: any failure with a
# written input, or without the deadline message, fails at once; a bare deadline failure is
# run again once, and fails if it happens twice.
#
# Likewise (golang/go#52569, open): the coordinator can lose a worker while minimizing a new
# coverage input ("fuzzing process hung or terminated unexpectedly while minimizing: EOF") and
# write that input as a failure although it passes. Such an input is run again at once: if it
# passes, it is removed and the fuzz run is repeated once (the same rule as above); if it fails,
# it is a finding.
set -u
pkg=$1 target=$2 fuzztime=$3
shift 3
go=${GO:-go}
# what a real finding prints besides the written input: a t.Fatal/t.Error line or a panic
finding='^\s+[a-z_]+_test\.go:[0-9]+:|panic:'
for attempt in 1 2; do
	log=$(mktemp)
	"$go" test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 0 ]; then
		rm -f "$log"
		exit 0
	fi
	if grep -q 'terminated unexpectedly while minimizing' "$log" && ! grep -qE "$finding" "$log"; then
		input=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | head -1)
		if [ -n "$input" ] && "$go" test "$pkg" -count=1 -run "^${target}\$/^$(basename "$input")\$" "$@"; then
			rm -f "$log" "${pkg%/}/$input"
			echo "fuzz.sh: $target: a worker lost while minimizing, and the input it wrote passes (golang/go#52569); attempt $attempt" >&2
			continue
		fi
	fi
	if grep -q 'Failing input written to' "$log" || ! grep -q 'context deadline exceeded' "$log" ||
		grep -qE "$finding" "$log"; then
		rm -f "$log"
		echo "fuzz.sh: $target failed (exit $rc)" >&2
		exit "$rc"
	fi
	rm -f "$log"
	echo "fuzz.sh: $target: bare 'context deadline exceeded' at the -fuzztime deadline, no failing input (golang/go#75804); attempt $attempt" >&2
done
echo "fuzz.sh: $target: a coordinator failure (deadline or minimization) happened twice" >&2
exit 1
