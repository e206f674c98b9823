//go:build cgo

package ggml

// The //export functions of training (C half: csrc/train_trampolines.c): the optimizer callback
// and user gradients of custom ops. They live in their own file because a file with //export
// functions may only declare in its preamble.

/*
#include <stdbool.h>
#include <stdint.h>
#include "ggml.h"
#include "trampolines.h"
#include "goexports.h"
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

//export goCustomGrad
func goCustomGrad(cctx *C.struct_ggml_context, node, grad *C.struct_ggml_tensor, srcGrads **C.struct_ggml_tensor, h C.uintptr_t) {
	n := tensorFromC(node)
	defer recoverToC("custom gradient of " + n.Name())
	fn := cgo.Handle(h).Value().(CustomGrad)
	ctx := contextByC(cctx)
	if ctx == nil {
		setCError("custom gradient of " + n.Name() + ": the backward graph is built in a context Go does not know")
		return
	}
	out := unsafe.Slice(srcGrads, MaxSrc)
	for i, g := range fn(ctx, n, tensorFromC(grad)) {
		if i >= MaxSrc {
			break
		}
		if g != nil {
			out[i] = g.cptr("CustomGrad")
		}
	}
}
