// Package tests holds the integration tests of package ggml (files *_test.go): every op
// wrapper against a pure-Go float64 reference, errors, ownership, the scheduler, Go buffer
// types and custom ops. It has no non-test code.
package tests
