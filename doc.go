// Package ggml is a Go binding for ggml-go's own C implementation of the ggml tensor library
// (API-compatible with ggml commit b3bcd556).
//
// The C library lives in ggml/ and is compiled into this package through cgo: every C source
// file has a generated wrapper zggml_*.c in the package directory (see build/gen-cgo-units.sh,
// run by `go generate`). Building the package therefore needs cgo (CGO_ENABLED=1) and a C
// compiler; without cgo the package still compiles, but Available reports ErrNoCgo and every
// operation fails with it.
//
// The Go API is being built up issue by issue. For now the package offers:
//
//	if err := ggml.Available(); err != nil { ... } // cgo and the C library are present
//	fmt.Println(ggml.TypeQ4_0)                     // type names come from the C library
//	err := ggml.SelfCheck()                        // computes a tiny graph on the CPU backend
package ggml
