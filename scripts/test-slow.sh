#!/bin/sh
# test-slow.sh - run in full the tests that `make test` (go test -short) skips or shortens: every
# Test/Fuzz function that asks testing.Short(), as listed by tools/slowtests, package by package.
# Every package runs even when another fails; the script fails if any did.
set -u
GO=${GO:-go}
list=$($GO run ./tools/slowtests) || exit 1
failed=""
tab=$(printf '\t')
echo "$list" | {
	while IFS="$tab" read -r pkg re; do
		[ -n "$pkg" ] || continue
		echo "== go test -count=1 -run '$re' $pkg"
		$GO test -count=1 -timeout 20m -run "$re" "$pkg" || failed="$failed $pkg"
	done
	if [ -n "$failed" ]; then echo "slow tests FAILED:$failed"; exit 1; fi
	echo "slow tests: all passed"
}
