package main

import (
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// StubPackages are the module's packages (relative to its root) with cgo files and generated
// stubs for builds without cgo. A package with cgo files joins the list with a
// `//go:generate go run ../tools/genops -stubs-only .` line and a hand-written !cgo file
// defining noCgo; TestEveryCgoPackageHasStubs finds one that did not.
var StubPackages = []string{".", "llama", "train"}

// TestStubsUpToDate fails when a stubs_nocgo.go does not match its package's cgo files (an
// exported name was added, removed or changed without running `go generate ./...`).
func TestStubsUpToDate(t *testing.T) {
	for _, pkg := range StubPackages {
		dir := filepath.Join("..", "..", pkg)
		want, err := generateStubs(dir, "stubs_nocgo.go")
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(filepath.Join(dir, "stubs_nocgo.go"))
		if err != nil {
			t.Fatal(err)
		}
		if string(have) != string(want) {
			t.Errorf("%s/stubs_nocgo.go is out of date: run `go generate ./%s`", pkg, pkg)
		}
	}
}

// TestEveryCgoPackageHasStubs: every library package of the module (not cmd/, not internal
// test helpers) whose cgo files declare exported names is in StubPackages or declares each of
// them in a hand-written !cgo file, so that a consumer importing it
// compiles with CGO_ENABLED=0.
func TestEveryCgoPackageHasStubs(t *testing.T) {
	root := filepath.Join("..", "..")
	listed := map[string]bool{}
	for _, p := range StubPackages {
		listed[filepath.Clean(p)] = true
	}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		base := d.Name()
		if rel != "." && (strings.HasPrefix(base, ".") || base == "cmd" || base == "build" || base == "internal" ||
			base == "testdata" || base == "ggml" || base == "cuda" || base == "metal" || base == "node_modules") {
			return filepath.SkipDir
		}
		p, err := loadPackage(path, "stubs_nocgo.go")
		if err != nil {
			return nil // not a Go package the generator reads (e.g. other build constraints)
		}
		if listed[rel] {
			return nil
		}
		// a package may declare its no-cgo versions by hand instead: then every exported name
		// of its cgo files needs one
		hand := declared(append(append([]*ast.File(nil), p.nocgo...), p.shared...))
		var missing []string
		for name := range declared(p.cgo) {
			short := name[strings.LastIndex(name, ".")+1:]
			recv := strings.Split(name, ".")[0]
			if isExported(short) && (!strings.Contains(name, ".") || isExported(recv)) && !hand[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			t.Errorf("package %s: %s exist only with cgo: add the package to StubPackages (generated stubs) or declare them in a !cgo file",
				rel, strings.Join(missing, ", "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStubsCoverExports checks the generator's promise on the real package: every exported
// function and method of the cgo files has a stub or a hand-written !cgo declaration.
func TestStubsCoverExports(t *testing.T) {
	for _, pkg := range StubPackages {
		stubsCoverExports(t, filepath.Join("..", "..", pkg))
	}
}

func stubsCoverExports(t *testing.T, root string) {
	p, err := loadPackage(root, "stubs_nocgo.go")
	if err != nil {
		t.Fatal(err)
	}
	stubs, err := os.ReadFile(filepath.Join(root, "stubs_nocgo.go"))
	if err != nil {
		t.Fatal(err)
	}
	hand := declared(p.nocgo)
	shared := declared(p.shared)
	for name := range declared(p.cgo) {
		method := strings.Contains(name, ".")
		short := name[strings.LastIndex(name, ".")+1:]
		recv := strings.Split(name, ".")[0]
		if short == "" || !isExported(short) || (method && !isExported(recv)) || hand[name] || shared[name] {
			continue
		}
		if !strings.Contains(string(stubs), " "+short) && !strings.Contains(string(stubs), "\t"+short) {
			t.Errorf("%s has no stub without cgo", name)
		}
	}
}

func isExported(name string) bool {
	return name != "" && strings.ToUpper(name[:1]) == name[:1] && name[:1] != "_"
}
