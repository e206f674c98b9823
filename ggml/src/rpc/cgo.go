//go:build cgo

package rpc

// cgo compiles every .c file of this directory with these flags.

/*
#cgo CFLAGS: -O2 -std=gnu11 -I${SRCDIR}/../../include -I${SRCDIR}/..
#cgo LDFLAGS: -pthread
*/
import "C"
