package ggml

import (
	"errors"
	"strings"
)

// ErrNoCgo is returned by every operation of a build without cgo.
var ErrNoCgo = errors.New("ggml: this package requires cgo (CGO_ENABLED=1) and a C compiler")

// ErrClosed is wrapped by the errors (and panics) that report use of a closed object.
var ErrClosed = errors.New("ggml: object already closed")

// ErrBusy is wrapped by the errors (and panics) that report an object entered by two
// goroutines at once. Schedulers, backends, graph plans, graph allocators and contexts must be
// used by one goroutine at a time; instead of letting a second goroutine corrupt the C state,
// the entry points that mutate it detect the overlap (an atomic in-use flag) and refuse the
// second call. Use one object per goroutine, or serialise the calls with a sync.Mutex.
var ErrBusy = errors.New("ggml: object in use by another goroutine")

// Error is the error type of the package. Construction mistakes (bad shapes, types or
// parameters given to an op constructor, views out of range, use of a tensor whose context was
// closed) panic with a *Error; runtime and resource failures (allocation, compute, backend
// initialisation) are returned as a *Error.
type Error struct {
	Op     string // the Go method or C function that failed, e.g. "MulMat" or "ggml_mul_mat"
	Shapes string // the operands, e.g. "a=[64,32,1,1] f32, b=[32,8,1,1] f32" (may be empty)
	Msg    string // what went wrong (usually the C library's message)
	Err    error  // an underlying error, if any (e.g. ErrClosed)
}

// Error returns "ggml: Op(Shapes): Msg".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ggml: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		if e.Shapes != "" {
			b.WriteString("(")
			b.WriteString(e.Shapes)
			b.WriteString(")")
		}
		b.WriteString(": ")
	}
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg == "" {
		msg = "failed"
	}
	b.WriteString(msg)
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error {
	return e.Err
}

// newError builds a *Error.
func newError(op, shapes, msg string) *Error {
	return &Error{Op: op, Shapes: shapes, Msg: msg}
}
