//go:build cgo

package csrc

/*
#cgo CFLAGS: -O2 -std=gnu11 -I${SRCDIR}/../ggml/include -I${SRCDIR}/../ggml/src
*/
import "C"
