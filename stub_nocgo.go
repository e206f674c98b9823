//go:build !cgo

package ggml

import "fmt"

// Available reports whether the C library is usable: nil in cgo builds, ErrNoCgo otherwise.
func Available() error {
	return ErrNoCgo
}

// String returns the type's number: type names come from the C library, which needs cgo.
func (t Type) String() string {
	return fmt.Sprintf("Type(%d)", int32(t))
}

// SelfCheck fails with ErrNoCgo: the C library is not available without cgo.
func SelfCheck() error {
	return ErrNoCgo
}
