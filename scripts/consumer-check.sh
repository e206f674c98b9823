#!/bin/sh
# consumer-check.sh - build this module the way its users do, from a throw-away consumer module
# in a temporary directory (scripts/consumer/main.go.txt: relu(W·x) on the CPU; every.go.txt and a
# generated blank import of every library package of the module):
#
#   1. module cache: the working tree is packed as a module zip (version v0.0.0-ci) into a local
#      GOPROXY directory and fetched into a fresh, read-only module cache (as `go get` does);
#      the program must build and print "consumer: [6 0]";
#   2. vendor: `go mod vendor`, then `go build -mod=vendor` with the module cache out of reach;
#      this checks that every C folder and header travels with the Go packages;
#   3. no cgo: CGO_ENABLED=0 go build must succeed and the program must report ErrNoCgo.
#
# The module's own dependencies come from this machine's module cache (no network needed).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
mod=github.com/ggml-go/ggml
ver=v0.0.0-ci

work=$(mktemp -d)
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

proxy=$work/proxy/$mod/@v
mkdir -p "$proxy" "$work/consumer"

# the module zip: tracked and new (not ignored) files, as `go mod download` would see them
cd "$root"
git ls-files -co --exclude-standard | grep -v '^vendor/' > "$work/files"
python3 - "$work/files" "$proxy/$ver.zip" "$mod@$ver" <<'PY'
import os, sys, zipfile
files, out, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for name in open(files).read().split("\n"):
        if name and os.path.isfile(name) and not os.path.islink(name):
            z.write(name, prefix + "/" + name)
PY
cp go.mod "$proxy/$ver.mod"
printf '{"Version":"%s","Time":"2026-01-01T00:00:00Z"}\n' "$ver" > "$proxy/$ver.info"
echo "$ver" > "$proxy/list"

# every module of the module graph into this machine's module cache, while the usual GOPROXY
# applies: the consumer's `go mod tidy` below reads the cache only, and it wants the zips of the
# dependencies' test-only dependencies too, which no build here downloads (a fresh module cache
# lacked go-cmp, goleak, klauspost/compress, godebug and yaml v2). Through copies of go.mod and
# go.sum: download adds to go.sum, which must stay as committed.
cp go.mod go.sum "$work/"
$go mod download -modfile="$work/go.mod" all ||
    echo "consumer-check: go mod download all failed; going on with the module cache as it is" >&2

cd "$work/consumer"
cp "$root/scripts/consumer/main.go.txt" main.go
cp "$root/scripts/consumer/every.go.txt" every.go
# a blank import of every library package (not commands, internal or build tools): each must
# compile for the consumer, with and without cgo
{
    echo "package main"
    echo
    echo "import ("
    (cd "$root" && $go list -f '{{if and (ne .Name "main") (or .GoFiles .CgoFiles)}}{{.ImportPath}}{{end}}' ./... | grep -v -e '/cmd/' -e '/internal/' -e '/ggml/ggml/' -e '/csrc$' -e '/tests$' -e '/cuda' -e '/metal') |
        sed 's/.*/\t_ "&"/'
    echo ")"
} > imports.go
cat > go.mod <<MOD
module example.com/consumer

go 1.26

require $mod $ver
MOD
export GOPROXY="file://$work/proxy,file://$($go env GOMODCACHE)/cache/download"
export GOSUMDB=off GONOSUMDB=$mod GOFLAGS=-mod=mod GOMODCACHE="$work/modcache" GOWORK=off
export GOTOOLCHAIN=local

echo "== consumer: build through a read-only module cache"
$go mod tidy
$go build -o "$work/consumer-modcache" .
case $(stat -c %A "$work/modcache/$mod@$ver/bindings.go") in
*w*) ro=no ;;
*) ro=yes ;;
esac
if [ "$ro" != yes ]; then
    echo "consumer-check: the module cache is writable (expected read-only)" >&2
    exit 1
fi
out=$("$work/consumer-modcache")
echo "$out"
[ "$out" = "consumer: [6 0]" ] || { echo "consumer-check: unexpected output" >&2; exit 1; }

echo "== consumer: build from go mod vendor"
$go mod vendor
for d in ggml/include ggml/src ggml/src/cpu ggml/src/ops csrc; do
    [ -d "vendor/$mod/$d" ] || { echo "consumer-check: vendor/$mod/$d missing" >&2; exit 1; }
done
GOFLAGS=-mod=vendor GOPROXY=off GOMODCACHE="$work/empty-modcache" $go build -o "$work/consumer-vendor" .
out=$("$work/consumer-vendor")
echo "$out"
[ "$out" = "consumer: [6 0]" ] || { echo "consumer-check: unexpected output" >&2; exit 1; }

echo "== consumer: CGO_ENABLED=0"
CGO_ENABLED=0 $go build -o "$work/consumer-nocgo" .
rc=0
out=$("$work/consumer-nocgo") || rc=$?
echo "$out"
if [ "$rc" != 3 ]; then
    echo "consumer-check: without cgo the consumer should report ErrNoCgo (exit 3), got exit $rc" >&2
    exit 1
fi
echo "consumer-check: module cache, vendor and CGO_ENABLED=0 builds passed"
