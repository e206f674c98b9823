//go:build cgo

package ggml

// The //export function of the optimizer callback (C half: csrc/opt_trampolines.c). It lives
// in its own file because a file with //export functions may only declare in its preamble.

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"
)

//export goOptCallback
func goOptCallback(h C.uintptr_t, accumStep C.int, sched *C.float, cancel *C.bool) {
	run := cgo.Handle(h).Value().(*optRun)
	defer func() {
		if r := recover(); r != nil {
			run.panicked = fmt.Errorf("optimizer callback panicked: %v", r)
			*cancel = C.bool(true)
		}
	}()
	st := run.opt.state()
	st.AccumStep = int(accumStep)
	st.Sched = float32(*sched)
	newSched, stop := run.cb(st)
	*(*float32)(unsafe.Pointer(sched)) = newSched
	if stop {
		*cancel = C.bool(true)
	}
}
