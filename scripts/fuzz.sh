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
set -u
pkg=$1 target=$2 fuzztime=$3
shift 3
go=${GO:-go}
for attempt in 1 2; do
	log=$(mktemp)
	"$go" test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 0 ]; then
		rm -f "$log"
		exit 0
	fi
	if grep -q 'Failing input written to' "$log" || ! grep -q 'context deadline exceeded' "$log" ||
		grep -qE '^\s+[a-z_]+_test\.go:[0-9]+:|panic:' "$log"; then
		rm -f "$log"
		echo "fuzz.sh: $target failed (exit $rc)" >&2
		exit "$rc"
	fi
	rm -f "$log"
	echo "fuzz.sh: $target: bare 'context deadline exceeded' at the -fuzztime deadline, no failing input (golang/go#75804); attempt $attempt" >&2
done
echo "fuzz.sh: $target: the deadline failure happened twice" >&2
exit 1
