package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStubsUpToDate fails when stubs_nocgo.go does not match the package's cgo files (an
// exported name was added, removed or changed without running `go generate .`).
func TestStubsUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := generateStubs(root, "stubs_nocgo.go")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join(root, "stubs_nocgo.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != string(want) {
		t.Fatal("stubs_nocgo.go is out of date: run `go generate .` (go run ./build/genops)")
	}
}

// TestStubsCoverExports checks the generator's promise on the real package: every exported
// function and method of the cgo files has a stub or a hand-written !cgo declaration.
func TestStubsCoverExports(t *testing.T) {
	root := filepath.Join("..", "..")
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
		if !strings.Contains(string(stubs), " "+short) {
			t.Errorf("%s has no stub without cgo", name)
		}
	}
}

func isExported(name string) bool {
	return name != "" && strings.ToUpper(name[:1]) == name[:1] && name[:1] != "_"
}
