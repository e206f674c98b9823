//go:build !cgo

package train

import "github.com/ggml-go/ggml"

// noCgo is the error of every operation of a build without cgo (stubs_nocgo.go).
func noCgo(name string) error {
	return &ggml.Error{Op: "train." + name, Err: ggml.ErrNoCgo}
}
