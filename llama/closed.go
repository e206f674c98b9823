//go:build cgo

package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// closedError reports the use of a closed Model, Context or Engine: it wraps ggml.ErrClosed, as
// the errors of ggml's closed objects do, so errors.Is(err, ggml.ErrClosed) holds for all.
func closedError(op, what, hint string) error {
	return fmt.Errorf("llama: %s: %s used after Close (%s): %w", op, what, hint, ggml.ErrClosed)
}

// checkOpen returns an error wrapping ggml.ErrClosed when m is nil or closed.
func (m *Model) checkOpen(op string) error {
	if m == nil || m.cpu == nil {
		return closedError(op, "model", "load it again with Load")
	}
	return nil
}

// checkFiles returns an error wrapping ggml.ErrFileChanged when a file the model's weights are
// mapped from shrank since it was loaded (reading its pages would crash the process with
// SIGBUS): one fstat per mapped file, before each evaluation.
func (m *Model) checkFiles(op string) error {
	for _, w := range m.weights {
		if err := w.CheckFile(); err != nil {
			return fmt.Errorf("llama: %s: %s: %w", op, m.path, err)
		}
	}
	return nil
}

// checkOpen returns an error wrapping ggml.ErrClosed when c, or its model, is nil or closed.
func (c *Context) checkOpen(op string) error {
	if c == nil || c.sched == nil {
		return closedError(op, "context", "make a new one with Model.NewContext")
	}
	if err := c.m.checkOpen(op); err != nil {
		return fmt.Errorf("llama: %s: the context's model was closed before it (close a model's contexts first): %w", op, err)
	}
	return nil
}
