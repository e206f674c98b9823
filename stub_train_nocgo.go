//go:build !cgo

package ggml

// Without cgo the optimizer exists so that code mentioning it compiles; NewOptimizer returns
// ErrNoCgo.

// Optimizer minimizes a scalar function of params with Adam or L-BFGS (needs cgo).
type Optimizer struct{}

// NewOptimizer fails with ErrNoCgo.
func NewOptimizer(OptimizerParams) (*Optimizer, error) { return nil, ErrNoCgo }

// Close does nothing without cgo.
func (*Optimizer) Close() error { return nil }
