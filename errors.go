package ggml

import "errors"

// ErrNoCgo is returned by every operation of a build without cgo.
var ErrNoCgo = errors.New("ggml: this package requires cgo (CGO_ENABLED=1) and a C compiler")
