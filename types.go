package ggml

// Type is a tensor element type (enum ggml_type); the values match the C library.
type Type int32

// Tensor element types.
const (
	TypeF32     Type = 0
	TypeF16     Type = 1
	TypeQ4_0    Type = 2
	TypeQ4_1    Type = 3
	TypeQ5_0    Type = 6
	TypeQ5_1    Type = 7
	TypeQ8_0    Type = 8
	TypeQ8_1    Type = 9
	TypeQ2_K    Type = 10
	TypeQ3_K    Type = 11
	TypeQ4_K    Type = 12
	TypeQ5_K    Type = 13
	TypeQ6_K    Type = 14
	TypeQ8_K    Type = 15
	TypeIQ2_XXS Type = 16
	TypeIQ2_XS  Type = 17
	TypeI8      Type = 18
	TypeI16     Type = 19
	TypeI32     Type = 20
	// TypeCount is the number of type values (not a type).
	TypeCount Type = 21
)

// Op is the operation that produces a tensor (enum ggml_op); the values match the C library.
type Op int32

// Operations, in the order of enum ggml_op.
const (
	OpNone Op = iota
	OpDup
	OpAdd
	OpAdd1
	OpAcc
	OpSub
	OpMul
	OpDiv
	OpSqr
	OpSqrt
	OpLog
	OpSum
	OpSumRows
	OpMean
	OpArgmax
	OpRepeat
	OpRepeatBack
	OpConcat
	OpSiluBack
	OpNorm
	OpRMSNorm
	OpRMSNormBack
	OpGroupNorm
	OpMulMat
	OpMulMatID
	OpOutProd
	OpScale
	OpSet
	OpCpy
	OpCont
	OpReshape
	OpView
	OpPermute
	OpTranspose
	OpGetRows
	OpGetRowsBack
	OpDiag
	OpDiagMaskInf
	OpDiagMaskZero
	OpSoftMax
	OpSoftMaxBack
	OpRope
	OpRopeBack
	OpAlibi
	OpClamp
	OpConvTranspose1D
	OpIm2Col
	OpConvTranspose2D
	OpPool1D
	OpPool2D
	OpUpscale
	OpPad
	OpArgsort
	OpLeakyRelu
	OpFlashAttn
	OpFlashFF
	OpFlashAttnBack
	OpWinPart
	OpWinUnpart
	OpGetRelPos
	OpAddRelPos
	OpUnary
	OpMapUnary
	OpMapBinary
	OpMapCustom1F32
	OpMapCustom2F32
	OpMapCustom3F32
	OpMapCustom1
	OpMapCustom2
	OpMapCustom3
	OpCrossEntropyLoss
	OpCrossEntropyLossBack
	// OpCount is the number of op values (not an op).
	OpCount
)

// UnaryOp is the function of an OpUnary node (enum ggml_unary_op).
type UnaryOp int32

// Unary operations, in the order of enum ggml_unary_op.
const (
	UnaryAbs UnaryOp = iota
	UnarySgn
	UnaryNeg
	UnaryStep
	UnaryTanh
	UnaryElu
	UnaryRelu
	UnaryGelu
	UnaryGeluQuick
	UnarySilu
	// UnaryCount is the number of unary op values (not an op).
	UnaryCount
)

// Prec is the accumulation precision requested for a matrix multiplication (enum ggml_prec).
type Prec int32

// Precisions.
const (
	PrecDefault Prec = 0
	PrecF32     Prec = 1
)

// SortOrder is the order of Argsort (enum ggml_sort_order).
type SortOrder int32

// Sort orders.
const (
	SortAsc  SortOrder = 0
	SortDesc SortOrder = 1
)

// PoolOp is the reduction of Pool1D and Pool2D (enum ggml_op_pool).
type PoolOp int32

// Pooling operations.
const (
	PoolMax PoolOp = 0
	PoolAvg PoolOp = 1
)

// String returns "max" or "avg".
func (p PoolOp) String() string {
	switch p {
	case PoolMax:
		return "max"
	case PoolAvg:
		return "avg"
	}
	return "PoolOp(" + itoa(int64(p)) + ")"
}

// String returns "asc" or "desc".
func (s SortOrder) String() string {
	switch s {
	case SortAsc:
		return "asc"
	case SortDesc:
		return "desc"
	}
	return "SortOrder(" + itoa(int64(s)) + ")"
}

// String returns "default" or "f32".
func (p Prec) String() string {
	switch p {
	case PrecDefault:
		return "default"
	case PrecF32:
		return "f32"
	}
	return "Prec(" + itoa(int64(p)) + ")"
}

// Rope modes (the mode argument of Rope and RopeCustom; bit flags).
const (
	RopeModeNormal = 0 // rotate adjacent pairs (x[2i], x[2i+1])
	RopeModeNeox   = 2 // rotate pairs (x[i], x[i+n_dims/2])
	RopeModeGLM    = 4 // ChatGLM variant (not supported by every kernel)
)

// BufferUsage tells the scheduler what a buffer holds (enum ggml_backend_buffer_usage).
type BufferUsage int32

// Buffer usages.
const (
	BufferUsageAny     BufferUsage = 0
	BufferUsageWeights BufferUsage = 1
)

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var b [24]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
