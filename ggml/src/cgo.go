//go:build cgo

package src

// cgo compiles every .c file of this directory with these flags. The SIMD kernels select their
// instruction sets per function (__attribute__((target))) and are called only after run-time
// detection, so no -m flag is needed or allowed here.

/*
#cgo CFLAGS: -O2 -std=gnu11 -I${SRCDIR}/../include -I${SRCDIR}
#cgo LDFLAGS: -lm -pthread
*/
import "C"
