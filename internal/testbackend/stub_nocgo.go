//go:build !cgo

// Package testbackend exposes the "Test" backend of ggml/tests/testbackend.c to Go tests; it
// needs cgo: in a build without cgo, New returns ggml.ErrNoCgo and the rest does nothing.
package testbackend

import "github.com/ggml-go/ggml"

// New returns ggml.ErrNoCgo: the Test backend is C.
func New(threads int) (*ggml.Backend, error) { return nil, ggml.ErrNoCgo }

// Is reports false: without cgo there are no Test backends.
func Is(b *ggml.Backend) bool { return false }

// BufferType returns nil: without cgo there is no Test buffer type.
func BufferType() *ggml.BufferType { return nil }

// Reject does nothing without cgo.
func Reject(b *ggml.Backend, op ggml.Op, reject bool) {}

// Register does nothing without cgo.
func Register() {}

// GetStats returns zero counters without cgo.
func GetStats() Stats { return Stats{} }

// ResetStats does nothing without cgo.
func ResetStats() {}
