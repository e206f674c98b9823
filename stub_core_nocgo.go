//go:build !cgo

package ggml

// Without cgo the C library is absent: the types exist so that code mentioning them compiles,
// and every entry point returns ErrNoCgo (or a nil/zero value).

// Params configures NewContext.
type Params struct {
	MemSize uint64
	NoAlloc bool
}

// DefaultMemSize is the data part of the arena of a context created with Params.MemSize = 0.
const DefaultMemSize = 16 << 20

// Context is a tensor arena (needs cgo).
type Context struct{}

// Tensor is an n-dimensional array (needs cgo).
type Tensor struct{}

// Graph is a computation graph (needs cgo).
type Graph struct{}

// Backend computes graphs (needs cgo).
type Backend struct{}

// BufferType describes a kind of backend memory (needs cgo).
type BufferType struct{}

// Buffer is a block of backend memory (needs cgo).
type Buffer struct{}

// TensorAllocator places tensors in a buffer (needs cgo).
type TensorAllocator struct{}

// GraphPlan is a graph prepared for a backend (needs cgo).
type GraphPlan struct{}

// CPUOption configures NewCPU.
type CPUOption func(*cpuOptions)

type cpuOptions struct{ threads int }

// WithThreads sets the number of worker threads of a CPU backend.
func WithThreads(n int) CPUOption { return func(o *cpuOptions) { o.threads = n } }

// CPUFeatureSet lists CPU features (all false without cgo).
type CPUFeatureSet struct {
	AVX, AVXVNNI, AVX2, AVX512, AVX512VBMI, AVX512VNNI bool
	FMA, F16C, SSE3, SSSE3                             bool
	NEON, ARMFMA, FP16VA                               bool
	Metal, WasmSIMD, BLAS, CuBLAS, CLBlast, GPUBLAS    bool
	VSX                                                bool
}

// NewContext fails with ErrNoCgo.
func NewContext(Params) (*Context, error) { return nil, ErrNoCgo }

// Close does nothing.
func (*Context) Close() error { return nil }

// NewCPU fails with ErrNoCgo.
func NewCPU(...CPUOption) (*Backend, error) { return nil, ErrNoCgo }

// InitBackend fails with ErrNoCgo.
func InitBackend(string) (*Backend, error) { return nil, ErrNoCgo }

// Backends returns nil: no backend is available without cgo.
func Backends() []string { return nil }

// Close does nothing.
func (*Backend) Close() error { return nil }

// Close does nothing.
func (*Buffer) Close() error { return nil }

// Close does nothing.
func (*BufferType) Close() error { return nil }

// Close does nothing.
func (*TensorAllocator) Close() error { return nil }

// Close does nothing.
func (*GraphPlan) Close() error { return nil }

// CPUBufferType returns nil without cgo.
func CPUBufferType() *BufferType { return nil }

// AllocContextTensors fails with ErrNoCgo.
func AllocContextTensors(*Context, *Backend) (*Buffer, error) { return nil, ErrNoCgo }

// AllocContextTensorsFromBufferType fails with ErrNoCgo.
func AllocContextTensorsFromBufferType(*Context, *BufferType) (*Buffer, error) {
	return nil, ErrNoCgo
}

// Quantize fails with ErrNoCgo.
func Quantize(Type, []float32, int) ([]byte, error) { return nil, ErrNoCgo }

// Dequantize fails with ErrNoCgo.
func Dequantize(Type, []byte, int) ([]float32, error) { return nil, ErrNoCgo }

// CPUFeatures returns the zero CPUFeatureSet without cgo.
func CPUFeatures() CPUFeatureSet { return CPUFeatureSet{} }

// TensorOverhead returns 0 without cgo.
func TensorOverhead() uint64 { return 0 }

// GraphOverhead returns 0 without cgo.
func GraphOverhead() uint64 { return 0 }
