#!/bin/sh
# cgo-packages.sh - the module's packages whose tests run C code: those with cgo files of their
# own, and those whose test binaries import one (the root package, the runner, the server, ...).
# The checks that change only how C is built test only these (make test-sanitize, test-clang,
# test-multiplatform): ASan and UBSan look at C code and at what Go hands it, and another compiler
# or ABI changes only C, so a pure-Go package (the tokenizer, the grammar) gains nothing there
# (under ASan it cost about two minutes). Usage: sh scripts/cgo-packages.sh [go]
GO=${1:-go}
cgo=$($GO list -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./...) || exit 1
# every package and test variant with its dependencies; "p [p.test]" and "p_test [p.test]" count for p
$GO list -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... | awk -v cgo="$cgo" '
	BEGIN { n = split(cgo, a, "\n"); for (i = 1; i <= n; i++) if (a[i] != "") c[a[i]] = 1 }
	$1 ~ /\.test$/ { next }
	{
		p = $1; sub(/_test$/, "", p)
		hit = (p in c)
		for (i = 2; i <= NF && !hit; i++) if ($i in c) hit = 1
		if (hit) print p
	}' | sort -u
