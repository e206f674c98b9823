package gguf

import (
	"errors"
	"fmt"
	"strings"
)

// wrapError adds context to an error of this package (or any other) without repeating the
// "gguf: " prefix of its message; errors.Is and errors.As see the wrapped error.
type wrapError struct {
	context string
	err     error
}

// Error returns "gguf: context: message", the message without its own "gguf: " prefix.
func (e *wrapError) Error() string {
	return "gguf: " + e.context + ": " + strings.TrimPrefix(e.err.Error(), "gguf: ")
}

// Unwrap returns the wrapped error.
func (e *wrapError) Unwrap() error {
	return e.err
}

// wrap returns err with the context fmt.Sprintf(format, args...) added.
func wrap(err error, format string, args ...any) error {
	return &wrapError{context: fmt.Sprintf(format, args...), err: err}
}

// FormatError reports a malformed or unsupported GGUF file. Offset is the byte offset in the
// file where the problem was found.
type FormatError struct {
	Offset int64  // byte offset of the offending field
	Reason string // what is wrong, in words
}

// Error implements the error interface.
func (e *FormatError) Error() string {
	return fmt.Sprintf("gguf: invalid file at offset %d: %s", e.Offset, e.Reason)
}

// ErrKeyNotFound is returned (wrapped, test with errors.Is) by the typed getters of File when
// the metadata has no such key.
var ErrKeyNotFound = errors.New("gguf: metadata key not found")

// ErrTensorNotFound is returned (wrapped, test with errors.Is) when a file has no tensor of
// the requested name.
var ErrTensorNotFound = errors.New("gguf: tensor not found")

// TypeError is returned by the typed getters of File when a key exists but holds a value of
// another type.
type TypeError struct {
	Key  string // the metadata key
	Want string // the requested type, e.g. "u32" or "arr[str]"
	Got  string // the stored type
}

// Error implements the error interface.
func (e *TypeError) Error() string {
	return fmt.Sprintf("gguf: metadata key %q holds %s, not %s", e.Key, e.Got, e.Want)
}
