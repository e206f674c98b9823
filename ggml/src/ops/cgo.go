//go:build cgo

package ops

// cgo compiles every .c file of this directory with these flags; the SIMD kernels select their
// instruction sets per function (__attribute__((target))), so no -m flag belongs here.

/*
#cgo CFLAGS: -O2 -std=gnu11 -I${SRCDIR}/../../include -I${SRCDIR}/..
*/
import "C"
