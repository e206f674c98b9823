// Package ggml is a Go binding for ggml-go's own C implementation of the ggml tensor library
// (API-compatible with ggml commit b3bcd556).
//
// The whole flow in ten lines:
//
//	cpu, _ := ggml.NewCPU(ggml.WithThreads(4))             // a backend
//	ctx, _ := ggml.NewContext(ggml.Params{NoAlloc: true})  // tensor metadata
//	w := ctx.NewTensor2D(ggml.TypeF32, 64, 32)              // 32 rows of 64
//	x := ctx.NewTensor1D(ggml.TypeF32, 64)
//	y := ctx.SoftMax(ctx.MulMat(w, x))                      // record ops; nothing runs yet
//	g := ctx.NewGraph().BuildForwardExpand(y)
//	buf, _ := ggml.AllocContextTensors(ctx, cpu)            // memory for w, x, y
//	w.SetFloat32(weights); x.SetFloat32(input)
//	err := cpu.Compute(g)                                   // run the graph
//	out, _ := y.Float32()                                   // read the result
//
// Close buf, ctx and cpu when done (Close is idempotent; a runtime cleanup frees what is
// forgotten, and LiveObjects counts the native objects still alive).
//
// # Concepts
//
// A Context is an arena of tensor metadata (and, unless NoAlloc, of tensor data). Every graph
// operation is a Context method with a Go name (ctx.MulMat, ctx.SoftMaxExt, ctx.Rope,
// ctx.AddInplace, ctx.View2D, ctx.Permute, ...); they are generated from ggml/include/ggml.h
// (ops_gen.go, see tools/genops). A Graph orders the nodes to compute. A Backend computes graphs
// (NewCPU, InitBackend("CPU:threads=2"), Backends lists the registry); its memory comes in
// Buffers of a BufferType; AllocContextTensors, TensorAllocator and GraphAllocator place
// tensors in buffers. Data moves with the typed accessors (SetFloat32/Float32, Float16, Int32,
// Int16, Int8, SetBytes/Bytes), which work for arena tensors and for any backend buffer.
//
// # Errors
//
// The C library runs in recoverable mode: no call made through this package aborts the
// process. Construction mistakes (bad shapes, types or parameters given to a constructor,
// views out of range, a tensor used after its context was closed) panic with a *Error naming
// the op and the operands; runtime and resource failures (allocation, compute, backend
// initialisation) are returned as errors (a *Error).
//
// # Concurrency
//
// A Context (with its tensors and graphs), a Backend or a Scheduler is used by one goroutine at
// a time; distinct objects are independent and may be used in parallel. A call that overlaps
// another one on the same object fails with an error wrapping ErrBusy (or panics with it, for
// methods without an error result) instead of corrupting memory.
//
// # Building
//
// The C library lives in ggml/ and is compiled through cgo by one small Go package per C source
// folder (ggml/src, ggml/src/cpu, ggml/src/ops, csrc), which this package imports (see
// doc/design.md, "Build layout"). Building therefore needs cgo (CGO_ENABLED=1) and a C
// compiler, and nothing else: `go get` and `go mod vendor` carry the C sources. Without cgo
// every exported name still exists (stubs_nocgo.go), so programs compile; Available reports
// ErrNoCgo, constructors return errors wrapping it and other entry points panic with it.
package ggml
