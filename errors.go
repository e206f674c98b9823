package ggml

import (
	"errors"
	"fmt"
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

// PanicError reports a panic in Go code that C called: the function of a Go custom op
// (MapCustom1/2/3) during a compute, or the Alloc of a Go buffer type (NewBufferType). The call
// that failed returns a *Error wrapping it; get it with errors.As.
type PanicError struct {
	Op     string // the constructor of the custom op, e.g. "MapCustom1", or the callback, e.g. "BufferTypeImpl.Alloc"
	Node   string // the name of the graph node whose function panicked (custom ops)
	Thread int    // the worker thread's index (ith) that panicked; -1 outside a compute
	Value  any    // the value passed to panic
	Stack  []byte // the panicking goroutine's stack (runtime/debug.Stack)
}

// Error returns "ggml: Go custom op Op (node "Node") panicked on thread Thread: Value", or
// "ggml: Go callback Op panicked: Value" for a callback that is not a custom op (Thread -1,
// e.g. a Go buffer type's Alloc).
func (e *PanicError) Error() string {
	if e.Thread < 0 {
		return fmt.Sprintf("ggml: Go callback %s panicked: %v", e.Op, e.Value)
	}
	return fmt.Sprintf("ggml: Go custom op %s (node %q) panicked on thread %d: %v", e.Op, e.Node, e.Thread, e.Value)
}

// Unwrap returns the panic value when it is an error, so errors.Is/As see through the panic.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// newError builds a *Error.
func newError(op, shapes, msg string) *Error {
	return &Error{Op: op, Shapes: shapes, Msg: msg}
}

// errOnClosed is deferred by the methods that have an error result: the accessors of the
// package's objects (cptr) panic with a *Error wrapping ErrClosed when the object was closed,
// which such a method turns into its error instead, so that closing in the wrong order is a
// returned error rather than a crash. Every other panic (a nil object, a construction mistake)
// goes on.
func errOnClosed(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(*Error); ok && errors.Is(e, ErrClosed) {
		*err = e
		return
	}
	panic(r)
}
