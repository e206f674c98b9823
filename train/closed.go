//go:build cgo

package train

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// closedError reports the use of a closed Model or Trainer: it wraps ggml.ErrClosed, as the
// errors of ggml's closed objects do, so errors.Is(err, ggml.ErrClosed) holds for all.
func closedError(op, what string) error {
	return fmt.Errorf("train: %s: %s used after Close: %w", op, what, ggml.ErrClosed)
}

// checkOpen returns an error wrapping ggml.ErrClosed when m is nil or closed.
func (m *Model) checkOpen(op string) error {
	if m == nil || m.ctx == nil {
		return closedError(op, "model")
	}
	return nil
}

// checkOpen returns an error wrapping ggml.ErrClosed when t, or its model, is nil or closed.
func (t *Trainer) checkOpen(op string) error {
	if t == nil || t.ctx == nil || t.optim == nil {
		return closedError(op, "trainer")
	}
	if err := t.m.checkOpen(op); err != nil {
		return fmt.Errorf("train: %s: the trainer's model was closed before it (close the Trainer first): %w", op, err)
	}
	return nil
}
