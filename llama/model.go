//go:build cgo

package llama

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/tokenizer"
)

// Options configures Load. The zero value runs every layer on the CPU with DefaultThreads
// threads, with the weights copied out of the file into memory (see NoRepack).
type Options struct {
	// Threads is the number of CPU threads (<= 0: DefaultThreads()).
	Threads int
	// Offload is a second backend (a GPU, or any backend) that computes the last GPULayers
	// layers, through a Scheduler; the model does not own it (close it after the model). nil:
	// everything runs on the CPU.
	Offload *ggml.Backend
	// Offloads are more such backends (e.g. several RPC servers): the offloaded layers are
	// split between Offload and Offloads, in this order, in runs of consecutive layers as even
	// as possible (the first backend takes the earliest of them; the output goes to the last).
	// The model does not own them.
	Offloads []*ggml.Backend
	// GPULayers is the number of layers, counted from the last one, whose weights and KV cache
	// live on the offload backends (llama.cpp's -ngl). More than the number of layers also
	// offloads the output norm and matrix. Ignored without an offload backend.
	GPULayers int
	// Progress, when set, is called while the weights are placed with the bytes done and the
	// total.
	Progress func(done, total int64)
	// NoRepack keeps every CPU weight mapped from the file. By default the CPU's weights are
	// copied out of the mapping into memory with huge pages: the matrix weights (attention and
	// FFN matrices, the output matrix) of types Q4_0, Q8_0, Q4_K and Q6_K into
	// ggml.CPURepackBufferType (where the CPU has its SIMD kernels: ggml.CPURepackHasKernel),
	// whose interleaved layout the CPU's matrix-vector kernels stream faster (a layer's query,
	// key and value matrices, and its gate and up matrices, are joined there into one matrix
	// each), all the others into a CPU buffer; the file is then not mapped at all. The
	// environment variable GGML_GO_NO_REPACK=1 does the same as NoRepack; GGML_GO_NO_JOIN=1
	// only keeps the matrices apart.
	NoRepack bool
	// NoMmap reads the CPU weights into memory instead of mapping the file (llama.cpp's
	// --no-mmap): loading takes longer and the weights take memory, but the model no longer
	// depends on the file, which may then be rewritten or deleted. Without NoMmap, a model
	// loaded with NoRepack maps the file, which must then not be truncated or rewritten in
	// place while the model is open (see Load).
	NoMmap bool
}

// repackable reports whether a CPU weight goes to the repack buffer type: a matrix weight
// (matrixWeight) of a type the repacked layout has (Q4_0, Q8_0, Q4_K, Q6_K) with at least 8 rows,
// where the CPU has SIMD kernels for it (elsewhere the plain layout's dot products are faster).
// Q4_K joined when its repacked kernels passed the plain ones: TinyLlama-shaped random Q4_K file,
// interleaved runs, tokens/s plain -> repacked: 1 thread np1 32.3-32.5 -> 39.7-42.1; 2 threads
// np1 48.8-49.6 -> 47.6-55.5, np2 72.7-77.6 -> 88.7-102.6, np8 124.7-138.3 -> 220.3-226.0.
// Q6_K likewise (TinyLlama-shaped random Q6_K file, 2 threads, 4 interleaved rounds, mean
// tokens/s): np1 46.8 -> 47.3, np2 70.7 -> 84.4, np8 133.6 -> 150.4.
func repackable(ti gguf.TensorInfo) bool {
	ti.Type = loadedType(ti)
	switch ti.Type {
	case gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K:
	default:
		return false
	}
	// (matrixWeight first: it checks the shape is 2-D)
	return matrixWeight(ti) && ti.Shape[1] >= 8 && ggml.CPURepackHasKernel(ggml.Type(ti.Type))
}

// matrixWeight reports whether a weight is a matrix read only by MUL_MAT: the attention and FFN
// matrices and the output matrix (not token_embd, which GET_ROWS reads, nor the norms), 2-D.
func matrixWeight(ti gguf.TensorInfo) bool {
	if len(ti.Shape) < 2 {
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
	for _, suffix := range []string{".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_qkv.weight",
		".attn_output.weight", ".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight",
		".ffn_gate_shexp.weight", ".ffn_up_shexp.weight", ".ffn_down_shexp.weight"} {
		if strings.HasPrefix(ti.Name, "blk.") && strings.HasSuffix(ti.Name, suffix) {
			return true
		}
	}
	return false
}

// joinPlans returns the matrices Load joins (ggml.GGUFConcat) among the weights that toRepack
// sends to the repack buffer: per layer, attn_q, attn_k and attn_v into attn_qkv (when the file
// has no attn_qkv), and ffn_gate and ffn_up into one matrix of gate rows then up rows (when
// there is no ffn_up bias). One MUL_MAT then reads its input once, prepares the activations
// once and ends in one barrier for all of them, and the small key and value matrices ride on the
// query's weight stream. Parts must share type and row length and have whole groups of 8 rows,
// so that every row is computed by the same kernel as alone: the results are unchanged, bit for
// bit. GGML_GO_NO_JOIN=1 turns it off (for measurements).
func joinPlans(f *gguf.File, nLayer int, toRepack func(gguf.TensorInfo) bool) []ggml.GGUFConcat {
	if os.Getenv("GGML_GO_NO_JOIN") == "1" {
		return nil
	}
	var plans []ggml.GGUFConcat
	joinable := func(names ...string) bool {
		var first gguf.TensorInfo
		for i, name := range names {
			ti, ok := f.Tensor(name)
			if !ok || !toRepack(ti) || ti.Shape[1]%8 != 0 { // (toRepack: a 2-D matrix)
				return false
			}
			if i == 0 {
				first = ti
			} else if ti.Type != first.Type || ti.Shape[0] != first.Shape[0] {
				return false
			}
		}
		return true
	}
	has := func(name string) bool { _, ok := f.Tensor(name); return ok }
	for i := 0; i < nLayer; i++ {
		q, k, v := blk(i, "attn_q.weight"), blk(i, "attn_k.weight"), blk(i, "attn_v.weight")
		if !has(blk(i, "attn_qkv.weight")) && joinable(q, k, v) {
			plans = append(plans, ggml.GGUFConcat{Name: blk(i, "attn_qkv.weight"), Parts: []string{q, k, v}})
		}
		g, u := blk(i, "ffn_gate.weight"), blk(i, "ffn_up.weight")
		if !has(blk(i, "ffn_up.bias")) && joinable(g, u) {
			plans = append(plans, ggml.GGUFConcat{Name: blk(i, joinedGateUp), Parts: []string{g, u}})
		}
	}
	return plans
}

// joinedGateUp is the name suffix of a layer's joined ffn_gate and ffn_up (not a GGUF name)
const joinedGateUp = "ffn_gate_up.joined"

// DefaultThreads returns the default number of CPU threads: the number of CPUs, at most 8.
func DefaultThreads() int { return min(runtime.NumCPU(), 8) }

// layer holds the weights of one transformer block: the union of what the architectures use
// (nil where a model has no such tensor). The field comments give the GGUF name suffix.
type layer struct {
	attnNorm, attnNormB           *ggml.Tensor // attn_norm.weight / .bias
	wq, wk, wv, wqkv, wo          *ggml.Tensor // attn_q, attn_k, attn_v, attn_qkv, attn_output (.weight)
	bq, bk, bv, bqkv, bo          *ggml.Tensor // the same, .bias
	attnPostNorm                  *ggml.Tensor // post_attention_norm.weight (gemma2)
	attnOutNorm, attnOutNormB     *ggml.Tensor // attn_output_norm.weight / .bias (bert)
	ffnNorm, ffnNormB             *ggml.Tensor // ffn_norm.weight / .bias
	gate, up, down                *ggml.Tensor // ffn_gate, ffn_up, ffn_down (.weight)
	gateUp                        *ggml.Tensor // ffn_gate and ffn_up joined at load (joinPlans), gate rows first
	upB, downB                    *ggml.Tensor // ffn_up.bias, ffn_down.bias
	ffnPostNorm                   *ggml.Tensor // post_ffw_norm.weight (gemma2)
	layerOutNorm, layerOutNormB   *ggml.Tensor // layer_output_norm.weight / .bias (bert)
	gateInp                       *ggml.Tensor // ffn_gate_inp.weight: the expert router
	gateExps, upExps, downExps    *ggml.Tensor // ffn_{gate,up,down}_exps.weight [.., .., n_expert]
	gateShexp, upShexp, downShexp *ggml.Tensor // ffn_{gate,up,down}_shexp.weight: the shared expert
	gateInpShexp                  *ggml.Tensor // ffn_gate_inp_shexp.weight: the shared expert's gate
	dev                           int          // the offload backend (index of Model.offloads) holding the layer, -1: the CPU
}

// offloaded reports whether the layer lives on an offload backend.
func (l *layer) offloaded() bool { return l.dev >= 0 }

// fields returns the layer's weight fields by GGUF name suffix.
func (l *layer) fields() map[string]**ggml.Tensor {
	return map[string]**ggml.Tensor{
		"attn_norm.weight": &l.attnNorm, "attn_norm.bias": &l.attnNormB,
		"attn_q.weight": &l.wq, "attn_k.weight": &l.wk, "attn_v.weight": &l.wv, "attn_qkv.weight": &l.wqkv,
		"attn_output.weight": &l.wo,
		"attn_q.bias":        &l.bq, "attn_k.bias": &l.bk, "attn_v.bias": &l.bv, "attn_qkv.bias": &l.bqkv,
		"attn_output.bias":           &l.bo,
		"post_attention_norm.weight": &l.attnPostNorm,
		"attn_output_norm.weight":    &l.attnOutNorm, "attn_output_norm.bias": &l.attnOutNormB,
		"ffn_norm.weight": &l.ffnNorm, "ffn_norm.bias": &l.ffnNormB,
		"ffn_gate.weight": &l.gate, "ffn_up.weight": &l.up, "ffn_down.weight": &l.down,
		"ffn_up.bias": &l.upB, "ffn_down.bias": &l.downB,
		"post_ffw_norm.weight":     &l.ffnPostNorm,
		"layer_output_norm.weight": &l.layerOutNorm, "layer_output_norm.bias": &l.layerOutNormB,
		"ffn_gate_inp.weight":  &l.gateInp,
		"ffn_gate_exps.weight": &l.gateExps, "ffn_up_exps.weight": &l.upExps, "ffn_down_exps.weight": &l.downExps,
		"ffn_gate_shexp.weight": &l.gateShexp, "ffn_up_shexp.weight": &l.upShexp, "ffn_down_shexp.weight": &l.downShexp,
		"ffn_gate_inp_shexp.weight": &l.gateInpShexp,
	}
}

// Model is a loaded model of one of the supported architectures (Architectures): its hyper-parameters, its GGUF metadata (for the
// tokenizer) and its weights in backend memory. It is safe to create several Contexts on one
// Model, but a Model and its Contexts must be used by one goroutine at a time; to serve many
// goroutines, give the Model to an Engine. Close it after its Contexts and Engines.
type Model struct {
	HP HParams // the hyper-parameters

	arch     *architecture
	path     string
	file     *gguf.File
	cpu      *ggml.Backend
	offloads []*ggml.Backend // the offload backends, in order (Options.Offload, Options.Offloads...)
	nOffload int             // layers on them
	threads  int             // CPU threads
	outOff   bool
	weights  []*ggml.GGUFTensors
	tokEmbd  *ggml.Tensor
	outNorm  *ggml.Tensor
	output   *ggml.Tensor // nil when tied to tokEmbd
	layers   []layer
	global   map[string]*ggml.Tensor // the tensors outside blocks, by name
	tokOnce  sync.Once
	tok      *tokenizer.Tokenizer
	tokErr   error
	gvOnce   sync.Once
	gv       *grammar.Vocab
	gvErr    error
}

// tensor returns a tensor outside the blocks by name (nil when the model has none).
func (m *Model) tensor(name string) *ggml.Tensor { return m.global[name] }

// GGUF returns the model's parsed GGUF file (metadata and tensor descriptions; the tokenizer
// reads its vocabulary from it). Its data reader is closed: use it for metadata only.
func (m *Model) GGUF() *gguf.File { return m.file }

// Path returns the file the model was loaded from.
func (m *Model) Path() string { return m.path }

// CPU returns the model's CPU backend (owned by the model).
func (m *Model) CPU() *ggml.Backend { return m.cpu }

// SetThreads changes the number of CPU threads used by the model's contexts.
func (m *Model) SetThreads(n int) error {
	if err := m.checkOpen("Model.SetThreads"); err != nil {
		return err
	}
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
	25: "IQ4_NL - 4.5 bpw", 30: "IQ4_XS - 4.25 bpw", 32: "BF16",
}

// Description returns llama.cpp's description of the model ("llama 7B Q4_0", "qwen2 ?B F16").
func (m *Model) Description() string {
	size, ok := m.arch.sizes[m.HP.NLayer]
	if !ok {
		size = "?B"
	}
	ft, ok := fileTypeNames[m.HP.FileType]
	if !ok {
		ft = "unknown file type"
		if m.HP.FileType < 0 {
			// as llama.cpp: named after the type of most matrices
			ft = strings.ToUpper(m.tokEmbd.Type().String()) + " (guessed)"
		}
	}
	return m.HP.Arch + " " + size + " " + ft
}

// WeightBytes returns the total size of the weights in bytes.
func (m *Model) WeightBytes() int64 {
	var n int64
	for _, ti := range m.file.Tensors() {
		n += ti.Size
	}
	return n
}

// StepWeightBytes returns the bytes of weights that one decode step reads, for any number of
// sequences: every tensor but the embedding tables that GET_ROWS reads a row of (token_embd,
// unless the output matrix is tied to it, position_embd, token_types). Divided by a step's time
// it is the read bandwidth that decoding reaches (ggml-llama bench --bw). For a model with
// experts it counts every expert: an upper bound.
func (m *Model) StepWeightBytes() int64 {
	var all, tokEmbd, rowTables int64
	tied := true // no output.weight: the output matrix is token_embd
	for _, ti := range m.file.Tensors() {
		all += ti.Size
		switch ti.Name {
		case "output.weight":
			tied = false
		case "token_embd.weight":
			tokEmbd = ti.Size
		case "position_embd.weight", "token_types.weight":
			rowTables += ti.Size
		}
	}
	if tied {
		tokEmbd = 0
	}
	return all - tokEmbd - rowTables
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

// loadedType returns the type that a tensor of the file has once loaded: its own, or the type
// that ggml.LoadGGUFTensors converts it to (bf16 -> f32; iq4_nl, iq4_xs, tq1_0, tq2_0 -> q8_0).
func loadedType(ti gguf.TensorInfo) gguf.TensorType {
	if t, ok := ggml.GGUFLoadType(ti.Type); ok {
		if tt, ok := ggml.GGUFType(t); ok {
			return tt
		}
	}
	return ti.Type
}

// weightTypes are the tensor types the matrices may have once loaded (loadedType).
var weightTypes = []gguf.TensorType{
	gguf.TypeF32, gguf.TypeF16, gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1,
	gguf.TypeQ8_0, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
}

// trimShape drops trailing dimensions of size 1.
func trimShape(s []int64) []int64 {
	for len(s) > 1 && s[len(s)-1] == 1 {
		s = s[:len(s)-1]
	}
	return s
}

// checkTensors validates the tensor descriptions of f against h.
func checkTensors(f *gguf.File, a *architecture, h HParams) error {
	specs := a.tensors(h)
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
			if !slices.Contains(weightTypes, loadedType(ti)) {
				return fmt.Errorf("llama: tensor %q has type %s, which the runner does not support for weights (supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K to q6_K, iq4_nl, iq4_xs, tq1_0, tq2_0)", sp.name, ti.Type)
			}
		} else if loadedType(ti) != gguf.TypeF32 {
			return fmt.Errorf("llama: tensor %q has type %s; norm weights and biases must be f32 (or bf16)", sp.name, ti.Type)
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
// (errors name the key or tensor) and places its weights: on the CPU they are copied out of
// the file into memory with huge pages, the matrices of the types that have one in the
// repacked layout (opt.NoRepack maps the file and uses it in place instead; opt.NoMmap reads
// it); with opt.Offload the last opt.GPULayers layers are copied into that backend's memory.
// Close the model when done.
//
// A mapped file (opt.NoRepack) must not be truncated or rewritten in place while the model is
// open: reading a page past its new end kills the process with SIGBUS, a signal that Go cannot
// turn into an error. Each evaluation (Context.Decode, Eval, Embed, ...) first checks the
// file's size and returns an error wrapping ggml.ErrFileChanged when it shrank, but a file
// truncated during an evaluation still crashes the process. Replacing the file by renaming a
// new one over it is safe. Load with opt.NoMmap when other programs may write the file.
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
	a := archs[h.Arch]
	if err := checkTensors(f, a, h); err != nil {
		return nil, err
	}
	m := &Model{HP: h, arch: a, path: path, file: f, global: map[string]*ggml.Tensor{}}
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
	if opt.GPULayers > 0 {
		if opt.Offload != nil {
			m.offloads = append(m.offloads, opt.Offload)
		}
		for _, b := range opt.Offloads {
			if b != nil {
				m.offloads = append(m.offloads, b)
			}
		}
		if len(m.offloads) > 0 {
			m.nOffload = min(opt.GPULayers, h.NLayer)
			m.outOff = opt.GPULayers > h.NLayer
		}
	}
	// devOf returns the offload backend of a tensor, -1 for the CPU
	devOf := func(name string) int {
		if len(m.offloads) == 0 {
			return -1
		}
		if l := layerOf(name); l >= 0 {
			first := h.NLayer - m.nOffload
			if l < first {
				return -1
			}
			return (l - first) * len(m.offloads) / m.nOffload
		}
		if m.outOff && (name == "output.weight" || name == "output_norm.weight" || name == "output_norm.bias") {
			return len(m.offloads) - 1
		}
		return -1
	}
	onOffload := func(name string) bool { return devOf(name) >= 0 }
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
	// Every other CPU weight (the matrices of other types, token_embd, the norms, the biases)
	// is copied into a CPU buffer: CPU buffers of 2 MiB or more get transparent huge pages,
	// which the mapped file's pages are not, and a page of the mapping costs a lot the first
	// time it is touched and on every TLB miss after that (on this VM kind: about 20-35 us per
	// first touch, and each norm weight's two pages cost a table walk per step once the step's
	// weight stream has evicted the page tables from the caches). Measured, TinyLlama-shaped
	// Q4_0 file, 1 thread, per step: the Q6_K output matrix 1432-1463 -> 1007-1063 us (2
	// threads); the 67 MUL nodes (45 of them by norm weights) 265 -> 93 us; GET_ROWS of
	// token_embd 57 -> 7.5 us. Nothing of the CPU's then reads the mapping, so the model no
	// longer depends on the file.
	toCopy := func(ti gguf.TensorInfo) bool {
		return repack && !opt.NoMmap && !onOffload(ti.Name) && !repackable(ti)
	}
	joins := joinPlans(f, h.NLayer, toRepack)
	joined := map[string]bool{} // the parts of joins: loaded only within them
	for _, j := range joins {
		for _, p := range j.Parts {
			joined[p] = true
		}
	}
	// place loads the file's tensors that sel picks into one GGUFTensors placed as o says (the
	// parts of joined matrices, which sel picks too, are loaded only within them: o.Concat)
	place := func(sel func(gguf.TensorInfo) bool, o ggml.GGUFLoadOptions) error {
		if !slices.ContainsFunc(f.Tensors(), sel) {
			return nil
		}
		o.Select = func(ti gguf.TensorInfo) bool { return sel(ti) && !joined[ti.Name] }
		o.Progress = progress(done)
		w, err := ggml.LoadGGUFTensors(path, f, o)
		if err != nil {
			return err
		}
		m.weights = append(m.weights, w)
		for _, ti := range f.Tensors() {
			if sel(ti) {
				done += ti.Size
			}
		}
		return nil
	}
	// the rest of the CPU's tensors (all of them with opt.NoRepack or opt.NoMmap): mapped from the
	// file, or read (opt.NoMmap)
	rest := func(ti gguf.TensorInfo) bool { return !onOffload(ti.Name) && !toRepack(ti) && !toCopy(ti) }
	if err := place(rest, ggml.GGUFLoadOptions{NoMmap: opt.NoMmap}); err != nil {
		return nil, err
	}
	if err := place(toCopy, ggml.GGUFLoadOptions{BufferType: ggml.CPUBufferType()}); err != nil {
		return nil, err
	}
	if err := place(toRepack, ggml.GGUFLoadOptions{BufferType: ggml.CPURepackBufferType(), Concat: joins}); err != nil {
		return nil, err
	}
	for dev, b := range m.offloads {
		if err := place(func(ti gguf.TensorInfo) bool { return devOf(ti.Name) == dev },
			ggml.GGUFLoadOptions{BufferType: b.DefaultBufferType()}); err != nil {
			return nil, err
		}
	}
	get := func(name string) *ggml.Tensor {
		for _, w := range m.weights {
			if t := w.Tensor(name); t != nil {
				return t
			}
		}
		return nil
	}
	m.layers = make([]layer, h.NLayer)
	fields := make([]map[string]**ggml.Tensor, h.NLayer)
	for i := range m.layers {
		m.layers[i].dev = devOf(blk(i, ""))
		fields[i] = m.layers[i].fields()
	}
	for _, ti := range f.Tensors() {
		if joined[ti.Name] {
			continue
		}
		t := get(ti.Name)
		if t == nil {
			return nil, fmt.Errorf("llama: internal error: tensor %q was not loaded", ti.Name)
		}
		il := layerOf(ti.Name)
		if il < 0 {
			m.global[ti.Name] = t
			continue
		}
		suffix := strings.TrimPrefix(ti.Name, blk(il, ""))
		p, known := fields[il][suffix]
		if !known {
			return nil, fmt.Errorf("llama: internal error: the %s tensor list names %q, which no layer field holds", h.Arch, ti.Name)
		}
		*p = t
	}
	for _, j := range joins {
		il := layerOf(j.Name)
		t := get(j.Name)
		if il < 0 || t == nil {
			return nil, fmt.Errorf("llama: internal error: the joined matrix %q was not loaded", j.Name)
		}
		if strings.HasSuffix(j.Name, joinedGateUp) {
			m.layers[il].gateUp = t
		} else {
			m.layers[il].wqkv = t
		}
	}
	m.tokEmbd = m.global["token_embd.weight"]
	m.outNorm = m.global["output_norm.weight"]
	m.output = m.global["output.weight"]
	if m.tokEmbd == nil {
		return nil, errors.New("llama: internal error: token_embd.weight was not loaded")
	}
	if m.output == nil && repack && !a.encoder && !onOffload("output.weight") {
		// tied output: the token embeddings are read by GET_ROWS, which the repacked layout
		// does not serve, and by the output MUL_MAT, the largest mat-vec of a step; a second,
		// repacked copy keeps that product on the fast kernels (the cost: the matrix's size)
		if ti, _ := f.Tensor("token_embd.weight"); repackable(gguf.TensorInfo{Name: "output.weight", Type: ti.Type, Shape: ti.Shape}) {
			w, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{
				BufferType: ggml.CPURepackBufferType(),
				Select:     func(t gguf.TensorInfo) bool { return t.Name == "token_embd.weight" },
			})
			if err != nil {
				return nil, err
			}
			m.weights = append(m.weights, w)
			m.output = w.Tensor("token_embd.weight")
		}
	}
	ok = true
	return m, nil
}
