//go:build !cgo

// Package testbackend exposes the "Test" backend of ggml/tests/testbackend.c to Go tests; it
// needs cgo (this build has none, so the package is empty).
package testbackend
