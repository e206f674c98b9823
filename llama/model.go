//go:build cgo

package llama

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// Options configures Load. The zero value runs every layer on the CPU with DefaultThreads
// threads, with the weights mapped from the file.
type Options struct {
	// Threads is the number of CPU threads (<= 0: DefaultThreads()).
	Threads int
	// Offload is a second backend (a GPU, or any backend) that computes the last GPULayers
	// layers, through a Scheduler; the model does not own it (close it after the model). nil:
	// everything runs on the CPU.
	Offload *ggml.Backend
	// GPULayers is the number of layers, counted from the last one, whose weights and KV cache
	// live on Offload (llama.cpp's -ngl). More than the number of layers also offloads the
	// output norm and matrix. Ignored without Offload.
	GPULayers int
	// Progress, when set, is called while the weights are placed with the bytes done and the
	// total.
	Progress func(done, total int64)
	// NoRepack keeps every CPU weight mapped from the file. By default the Q4_0 and Q8_0 matrix
	// weights computed on the CPU (attention and FFN matrices, the output matrix) are copied
	// into ggml.CPURepackBufferType, whose interleaved layout the CPU's matrix-vector kernels
	// stream faster. The environment variable GGML_GO_NO_REPACK=1 does the same.
	NoRepack bool
}

// repackable reports whether a CPU weight goes to the repack buffer type: a matrix read only by
// MUL_MAT (not token_embd, which GET_ROWS reads, nor the norms) of a type the repacked layout
// has and that gains from it (Q4_0, Q8_0), 2-D with at least 8 rows. Q4_K also has a repacked
// layout, but in interleaved runs its plain mat-vec was as fast or faster (1 thread: 13-17 GB/s
// repacked against 16-21 plain), so Q4_K weights stay mapped until its kernel gains.
func repackable(ti gguf.TensorInfo) bool {
	if ti.Type != gguf.TypeQ4_0 && ti.Type != gguf.TypeQ8_0 {
		return false
	}
	if len(ti.Shape) < 2 || ti.Shape[1] < 8 {
		return false
	}
	for _, d := range ti.Shape[2:] {
		if d != 1 {
			return false
		}
	}
	if ti.Name == "output.weight" {
		return true
	}
	for _, suffix := range []string{".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_output.weight",
		".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight"} {
		if strings.HasPrefix(ti.Name, "blk.") && strings.HasSuffix(ti.Name, suffix) {
			return true
		}
	}
	return false
}

// DefaultThreads returns the default number of CPU threads: the number of CPUs, at most 8.
func DefaultThreads() int { return min(runtime.NumCPU(), 8) }

// layer holds the weights of one transformer block.
type layer struct {
	attnNorm, wq, wk, wv, wo *ggml.Tensor
	bq, bk, bv, bo           *ggml.Tensor // optional biases (nil when absent)
	ffnNorm, gate, up, down  *ggml.Tensor
	offloaded                bool
}

// Model is a loaded LLaMA-architecture model: its hyper-parameters, its GGUF metadata (for the
// tokenizer) and its weights in backend memory. It is safe to create several Contexts on one
// Model, but a Model and its Contexts must be used by one goroutine at a time. Close it after
// its Contexts.
type Model struct {
	HP HParams // the hyper-parameters

	path     string
	file     *gguf.File
	cpu      *ggml.Backend
	offload  *ggml.Backend
	nOffload int // layers on offload
	threads  int // CPU threads
	outOff   bool
	weights  []*ggml.GGUFTensors
	tokEmbd  *ggml.Tensor
	outNorm  *ggml.Tensor
	output   *ggml.Tensor
	layers   []layer
}

// GGUF returns the model's parsed GGUF file (metadata and tensor descriptions; the tokenizer
// reads its vocabulary from it). Its data reader is closed: use it for metadata only.
func (m *Model) GGUF() *gguf.File { return m.file }

// Path returns the file the model was loaded from.
func (m *Model) Path() string { return m.path }

// CPU returns the model's CPU backend (owned by the model).
func (m *Model) CPU() *ggml.Backend { return m.cpu }

// SetThreads changes the number of CPU threads used by the model's contexts.
func (m *Model) SetThreads(n int) error {
	if n <= 0 {
		n = DefaultThreads()
	}
	if err := m.cpu.SetThreads(n); err != nil {
		return err
	}
	m.threads = n
	return nil
}

// fileTypeNames are llama.cpp's names of general.file_type values.
var fileTypeNames = map[int]string{
	0: "all F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
	11: "Q3_K - Small", 12: "Q3_K - Medium", 13: "Q3_K - Large", 14: "Q4_K - Small",
	15: "Q4_K - Medium", 16: "Q5_K - Small", 17: "Q5_K - Medium", 18: "Q6_K",
}

// modelSizes are llama.cpp's size labels by layer count.
var modelSizes = map[int]string{22: "1B", 26: "3B", 32: "7B", 40: "13B", 48: "34B", 60: "30B", 80: "65B"}

// Description returns llama.cpp's description of the model ("llama 7B Q4_0", "llama ?B F16").
func (m *Model) Description() string {
	size, ok := modelSizes[m.HP.NLayer]
	if !ok {
		size = "?B"
	}
	ft, ok := fileTypeNames[m.HP.FileType]
	if !ok {
		ft = "unknown file type"
		if m.HP.FileType < 0 {
			// as llama.cpp: named after the type of most matrices
			ft = strings.ToUpper(m.layers[0].wq.Type().String()) + " (guessed)"
		}
	}
	return "llama " + size + " " + ft
}

// WeightBytes returns the total size of the weights in bytes.
func (m *Model) WeightBytes() int64 {
	var n int64
	for _, ti := range m.file.Tensors() {
		n += ti.Size
	}
	return n
}

// Close releases the weights and the CPU backend; idempotent, returns nil. Close the model's
// Contexts first.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	for _, w := range m.weights {
		w.Close()
	}
	m.weights = nil
	if m.cpu != nil {
		m.cpu.Close()
		m.cpu = nil
	}
	return nil
}

// weightTypes are the tensor types the matrices may have.
var weightTypes = []gguf.TensorType{
	gguf.TypeF32, gguf.TypeF16, gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1,
	gguf.TypeQ8_0, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
}

// spec is one expected tensor.
type spec struct {
	name     string
	shape    []int64
	matrix   bool // any weight type; else F32 only
	optional bool
}

// tensorSpecs lists the tensors of a llama model with hyper-parameters h (MODELS.md §2).
func tensorSpecs(h HParams) []spec {
	e, gqa, ff, v := int64(h.NEmbd), int64(h.NEmbdGQA()), int64(h.NFF), int64(h.NVocab)
	s := []spec{
		{name: "token_embd.weight", shape: []int64{e, v}, matrix: true},
		{name: "output_norm.weight", shape: []int64{e}},
		{name: "output.weight", shape: []int64{e, v}, matrix: true},
	}
	for i := 0; i < h.NLayer; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		s = append(s,
			spec{name: p + "attn_norm.weight", shape: []int64{e}},
			spec{name: p + "attn_q.weight", shape: []int64{e, e}, matrix: true},
			spec{name: p + "attn_k.weight", shape: []int64{e, gqa}, matrix: true},
			spec{name: p + "attn_v.weight", shape: []int64{e, gqa}, matrix: true},
			spec{name: p + "attn_output.weight", shape: []int64{e, e}, matrix: true},
			spec{name: p + "attn_q.bias", shape: []int64{e}, optional: true},
			spec{name: p + "attn_k.bias", shape: []int64{gqa}, optional: true},
			spec{name: p + "attn_v.bias", shape: []int64{gqa}, optional: true},
			spec{name: p + "attn_output.bias", shape: []int64{e}, optional: true},
			spec{name: p + "ffn_norm.weight", shape: []int64{e}},
			spec{name: p + "ffn_gate.weight", shape: []int64{e, ff}, matrix: true},
			spec{name: p + "ffn_up.weight", shape: []int64{e, ff}, matrix: true},
			spec{name: p + "ffn_down.weight", shape: []int64{ff, e}, matrix: true},
		)
	}
	return s
}

// trimShape drops trailing dimensions of size 1.
func trimShape(s []int64) []int64 {
	for len(s) > 1 && s[len(s)-1] == 1 {
		s = s[:len(s)-1]
	}
	return s
}

// checkTensors validates the tensor descriptions of f against h.
func checkTensors(f *gguf.File, h HParams) error {
	specs := tensorSpecs(h)
	found := 0
	for _, sp := range specs {
		ti, ok := f.Tensor(sp.name)
		if !ok {
			if sp.optional {
				continue
			}
			return fmt.Errorf("llama: tensor %q is missing from the model", sp.name)
		}
		found++
		if !slices.Equal(trimShape(ti.Shape), trimShape(sp.shape)) {
			return fmt.Errorf("llama: tensor %q has shape %v; the hyper-parameters need %v", sp.name, ti.Shape, sp.shape)
		}
		if sp.matrix {
			if !slices.Contains(weightTypes, ti.Type) {
				return fmt.Errorf("llama: tensor %q has type %s, which the runner does not support for weights (supported: f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K to q6_K)", sp.name, ti.Type)
			}
		} else if ti.Type != gguf.TypeF32 {
			return fmt.Errorf("llama: tensor %q has type %s; norm weights and biases must be f32", sp.name, ti.Type)
		}
	}
	if found != f.NumTensors() {
		var extra []string
		for _, ti := range f.Tensors() {
			if !slices.ContainsFunc(specs, func(s spec) bool { return s.name == ti.Name }) {
				extra = append(extra, ti.Name)
			}
		}
		return fmt.Errorf("llama: wrong number of tensors: the model has %d, expected %d; unexpected: %q", f.NumTensors(), found, extra)
	}
	return nil
}

// layerOf returns the block number of a tensor name, or -1.
func layerOf(name string) int {
	var n int
	if _, err := fmt.Sscanf(name, "blk.%d.", &n); err != nil {
		return -1
	}
	return n
}

// Load reads the GGUF model at path, checks its keys, types and shapes by llama.cpp's rules
// (errors name the key or tensor) and places its weights: on the CPU the file is mapped and
// used in place; with opt.Offload the last opt.GPULayers layers are copied into that backend's
// memory. Close the model when done.
func Load(path string, opt Options) (*Model, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("llama: cannot open the model: %w", err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("llama: not a readable GGUF file (truncated, or not a model?): %w", err)
	}
	// the metadata stays in memory; the tensor data are read through the mapping
	defer f.Close()
	h, err := ReadHParams(f)
	if err != nil {
		return nil, err
	}
	if err := checkTensors(f, h); err != nil {
		return nil, err
	}
	m := &Model{HP: h, path: path, file: f}
	ok := false
	defer func() {
		if !ok {
			m.Close()
		}
	}()
	threads := opt.Threads
	if threads <= 0 {
		threads = DefaultThreads()
	}
	if m.cpu, err = ggml.NewCPU(ggml.WithThreads(threads)); err != nil {
		return nil, err
	}
	m.threads = threads
	if opt.Offload != nil && opt.GPULayers > 0 {
		m.offload = opt.Offload
		m.nOffload = min(opt.GPULayers, h.NLayer)
		m.outOff = opt.GPULayers > h.NLayer
	}
	onOffload := func(name string) bool {
		if m.offload == nil {
			return false
		}
		if l := layerOf(name); l >= 0 {
			return l >= h.NLayer-m.nOffload
		}
		return m.outOff && (name == "output.weight" || name == "output_norm.weight")
	}
	var total, done int64
	for _, ti := range f.Tensors() {
		total += ti.Size
	}
	progress := func(base int64) func(d, n int64) {
		if opt.Progress == nil {
			return nil
		}
		return func(d, _ int64) { opt.Progress(base+d, total) }
	}
	repack := !opt.NoRepack && os.Getenv("GGML_GO_NO_REPACK") != "1"
	toRepack := func(ti gguf.TensorInfo) bool { return repack && !onOffload(ti.Name) && repackable(ti) }
	cpuW, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{
		Select:   func(ti gguf.TensorInfo) bool { return !onOffload(ti.Name) && !toRepack(ti) },
		Progress: progress(0),
	})
	if err != nil {
		return nil, err
	}
	m.weights = append(m.weights, cpuW)
	for _, ti := range f.Tensors() {
		if !onOffload(ti.Name) && !toRepack(ti) {
			done += ti.Size
		}
	}
	nRepack := 0
	for _, ti := range f.Tensors() {
		if toRepack(ti) {
			nRepack++
		}
	}
	if nRepack > 0 {
		rpW, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{
			BufferType: ggml.CPURepackBufferType(),
			Select:     toRepack,
			Progress:   progress(done),
		})
		if err != nil {
			return nil, err
		}
		m.weights = append(m.weights, rpW)
		for _, ti := range f.Tensors() {
			if toRepack(ti) {
				done += ti.Size
			}
		}
	}
	if m.offload != nil {
		offW, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{
			BufferType: m.offload.DefaultBufferType(),
			Select:     func(ti gguf.TensorInfo) bool { return onOffload(ti.Name) },
			Progress:   progress(done),
		})
		if err != nil {
			return nil, err
		}
		m.weights = append(m.weights, offW)
	}
	get := func(name string) *ggml.Tensor {
		for _, w := range m.weights {
			if t := w.Tensor(name); t != nil {
				return t
			}
		}
		return nil
	}
	m.tokEmbd = get("token_embd.weight")
	m.outNorm = get("output_norm.weight")
	m.output = get("output.weight")
	m.layers = make([]layer, h.NLayer)
	for i := range m.layers {
		p := fmt.Sprintf("blk.%d.", i)
		m.layers[i] = layer{
			attnNorm: get(p + "attn_norm.weight"), wq: get(p + "attn_q.weight"), wk: get(p + "attn_k.weight"),
			wv: get(p + "attn_v.weight"), wo: get(p + "attn_output.weight"),
			bq: get(p + "attn_q.bias"), bk: get(p + "attn_k.bias"), bv: get(p + "attn_v.bias"), bo: get(p + "attn_output.bias"),
			ffnNorm: get(p + "ffn_norm.weight"), gate: get(p + "ffn_gate.weight"), up: get(p + "ffn_up.weight"),
			down: get(p + "ffn_down.weight"), offloaded: onOffload(p),
		}
	}
	if m.tokEmbd == nil || m.output == nil || m.outNorm == nil {
		return nil, errors.New("llama: internal error: a checked tensor was not loaded")
	}
	ok = true
	return m, nil
}
