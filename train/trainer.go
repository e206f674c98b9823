//go:build cgo

package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ggml-go/ggml"
)

// Options configures a Trainer. Zero fields take the defaults.
type Options struct {
	Steps        int     // total optimizer steps of the run (required): the schedule's length
	Batch        int     // sequences of n_ctx tokens per step (default 8)
	Threads      int     // compute threads (default 2)
	LearningRate float32 // peak Adam learning rate (default 1e-3)
	Warmup       int     // linear warm-up steps (default Steps/20, at most 200)
	MinLRFactor  float64 // the cosine decays to LearningRate·MinLRFactor (default 0.1)
	WeightDecay  float32 // AdamW decay of the matrices (default 0.1; negative: none)
	GradClip     float32 // clip the gradient to this norm (default 1; negative: none)
	Seed         uint64  // the batches of step k are drawn from a generator seeded by (Seed, k)
	// Checkpointing builds the backward pass with gradient checkpointing at the block inputs:
	// the blocks' forward values are recomputed in the backward graph, a block at a time,
	// instead of being kept, so the graph needs less memory (Trainer.GraphMemory) for some
	// more compute; the gradients are the same. For 4 layers, n_ctx 256 and batch 8 it takes
	// 286 MiB down to 122 MiB at about 20 % fewer tokens/s; for 8 layers and n_ctx 512, 1,356
	// MiB down to 384 MiB.
	Checkpointing bool
	// Progress, when set, is called after every step.
	Progress func(Progress) `json:"-"`
}

func (o *Options) defaults() error {
	if o.Steps <= 0 {
		return errors.New("train: Options.Steps must be positive")
	}
	if o.Batch <= 0 {
		o.Batch = 8
	}
	if o.Threads <= 0 {
		o.Threads = 2
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 1e-3
	}
	if o.Warmup == 0 {
		o.Warmup = min(o.Steps/20, 200)
	}
	if o.MinLRFactor == 0 {
		o.MinLRFactor = 0.1
	}
	if o.WeightDecay == 0 {
		o.WeightDecay = 0.1
	}
	o.WeightDecay = max(o.WeightDecay, 0)
	if o.GradClip == 0 {
		o.GradClip = 1
	}
	o.GradClip = max(o.GradClip, 0)
	return nil
}

// Progress describes the state of training after a step.
type Progress struct {
	Step, Steps  int           // steps done, of the run's total
	Loss         float32       // the training loss of the step's batch (before its update)
	LR           float32       // the learning rate of the step's update
	TokensPerSec float64       // training throughput of this process, since it started
	RecentTokens float64       // training throughput over the last steps (at most recentSteps): the current rate
	Elapsed, ETA time.Duration // wall time of this process, estimated time to the end (at the current rate)
}

// recentSteps is the window of Progress.RecentTokens.
const recentSteps = 16

// String formats the progress line: iteration, loss, learning rate, the current tokens/s and
// the ETA.
func (p Progress) String() string {
	return fmt.Sprintf("iter %d/%d  loss %.4f  lr %.2e  %.0f tok/s  elapsed %s  eta %s", p.Step, p.Steps, p.Loss, p.LR,
		p.RecentTokens, p.Elapsed.Round(time.Second), p.ETA.Round(time.Second))
}

// Trainer trains a Model on a token stream with Adam (AdamW), a warm-up + cosine learning-rate
// schedule, gradient clipping and optionally gradient checkpointing. Batches are random
// windows of the stream, a function of the seed and the step alone, so that a run resumed
// from a checkpoint computes exactly what an uninterrupted run does. Close it when done (the
// Model stays open).
type Trainer struct {
	m     *Model
	opt   Options
	data  []int32
	sched Schedule

	ctx    *ggml.Context
	buf    *ggml.Buffer // the data of the graphs' tensors
	fw     *forward
	gf, gb *ggml.Graph
	optim  *ggml.Optimizer

	step     int         // optimizer steps done
	losses   []float32   // training loss of every step
	evals    []EvalPoint // held-out losses
	ownModel bool        // Close closes m (Resume)
	onehot   []float32   // targets buffer
	ids      []int32     // inputs buffer
	cbErr    error
	inBuf    *ggml.Buffer // the graph's inputs (tokens, positions, mask, targets)
	started  time.Time
	runTok   int64 // tokens processed by this process
	// the end times of the last steps (at most recentSteps+1), for the current rate
	stepTimes []time.Time
}

// NewTrainer prepares to train m on data (a token stream, e.g. from TokenizeDocuments). A
// Model can be trained by one Trainer in its life: the Trainer marks its weights as params.
func NewTrainer(m *Model, data []int32, opt Options) (*Trainer, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if err := m.checkOpen("NewTrainer"); err != nil {
		return nil, err
	}
	if m.tokEmbd.IsParam() {
		return nil, errors.New("train: the model already belongs to a Trainer")
	}
	c := m.cfg
	if len(data) < c.NCtx+2 {
		return nil, fmt.Errorf("train: %d tokens of training data; at least n_ctx+2 = %d are needed", len(data), c.NCtx+2)
	}
	for i, id := range data {
		if id < 0 || int(id) >= c.NVocab {
			return nil, fmt.Errorf("train: token %d of the data is %d, outside the vocabulary (%d tokens)", i, id, c.NVocab)
		}
	}
	t := &Trainer{m: m, opt: opt, data: data, sched: Schedule{Warmup: opt.Warmup, Total: opt.Steps, MinFactor: opt.MinLRFactor}}
	if err := t.build(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// graphSize returns the node capacity the graphs need.
func (t *Trainer) graphSize() int { return 256 + 512*t.m.cfg.NLayer }

// build creates the forward and backward graphs, allocates them and the optimizer.
func (t *Trainer) build() error {
	size := t.graphSize()
	meta := 4*ggml.GraphOverheadCustom(size, true) + uint64(8*size)*ggml.TensorOverhead()
	ctx, err := ggml.NewContext(ggml.Params{MemSize: meta, NoAlloc: true})
	if err != nil {
		return err
	}
	t.ctx = ctx
	var buildErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				buildErr = fmt.Errorf("train: building the training graph: %v", r)
			}
		}()
		for _, w := range t.m.weights {
			ctx.SetParam(w)
		}
		t.fw = buildForward(ctx, t.m, t.opt.Batch)
		t.gf = ctx.NewGraphCustom(size, true)
		t.gf.BuildForwardExpand(t.fw.loss)
		if t.opt.Checkpointing {
			t.gb = ctx.NewGraphCustom(size, true)
			tmp := ctx.NewGraphCustom(size, true)
			ctx.BuildBackwardCheckpointing(t.gf, t.gb, tmp, t.fw.layerIn...)
		} else {
			t.gb = ctx.BuildBackward(t.gf, true)
		}
	}()
	if buildErr != nil {
		return buildErr
	}
	if err := t.allocate(); err != nil {
		return fmt.Errorf("train: allocating the training graph: %w", err)
	}
	pos := make([]int32, t.m.cfg.NCtx)
	for i := range pos {
		pos[i] = int32(i)
	}
	if err := t.fw.pos.SetInt32(pos); err != nil {
		return err
	}
	mask := make([]float32, t.m.cfg.NCtx*t.m.cfg.NCtx)
	for q := 0; q < t.m.cfg.NCtx; q++ {
		for k := q + 1; k < t.m.cfg.NCtx; k++ {
			mask[q*t.m.cfg.NCtx+k] = float32(math.Inf(-1))
		}
	}
	if err := t.fw.mask.SetFloat32(mask); err != nil {
		return err
	}
	p := ggml.DefaultOptimizerParams(ggml.Adam)
	p.GraphSize = size
	p.Threads = t.opt.Threads
	p.MaxNoImprovement = 0
	p.Adam.Iterations = 1
	p.Adam.Alpha = t.opt.LearningRate
	p.Adam.Decay = t.opt.WeightDecay
	p.Adam.GradClip = t.opt.GradClip
	p.Adam.EpsF = 0
	p.Adam.Beta2 = 0.99
	if t.optim, err = ggml.NewOptimizer(p); err != nil {
		return err
	}
	t.optim.SetCallback(t.callback)
	return nil
}

// allocate gives the nodes of the backward graph (which holds the forward one) memory from
// one buffer through a graph allocator, which reuses the memory of intermediate results once
// their last consumer has run: the buffer holds what is alive at once, not every node, so
// gradient checkpointing (whose forward results between checkpoints die early and are
// recomputed a block at a time) lowers it. The size is measured first. The loss's gradient,
// which the optimizer sets to 1 before every compute, is an input no node computes: the
// allocator places such inputs before any node, so no forward result overwrites it.
func (t *Trainer) allocate() error {
	// the inputs first, in their own buffer: they are set once (positions, mask) or before
	// every step, so their memory is never handed to another node
	inputs := []*ggml.Tensor{t.fw.tokens, t.fw.pos, t.fw.mask, t.fw.targets}
	bt := ggml.CPUBufferType()
	var inSize uint64
	for _, in := range inputs {
		inSize += bt.AllocSize(in) + bt.Alignment()
	}
	var err error
	if t.inBuf, err = bt.AllocBuffer(inSize); err != nil {
		return err
	}
	inAlloc, err := ggml.NewTensorAllocator(t.inBuf)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		if err := inAlloc.Alloc(in); err != nil {
			inAlloc.Close()
			return err
		}
	}
	inAlloc.Close()
	if allocEveryTensor {
		t.buf, err = ggml.AllocContextTensorsFromBufferType(t.ctx, bt)
		if err != nil {
			return err
		}
		return t.initViews()
	}
	measure, err := ggml.NewMeasureAllocatorFromBufferType(ggml.CPUBufferType())
	if err != nil {
		return err
	}
	ga, err := ggml.NewGraphAllocator()
	if err != nil {
		measure.Close()
		return err
	}
	size, err := ga.AllocGraph(measure, t.gb)
	measure.Close()
	ga.Close()
	if err != nil {
		return err
	}
	if t.buf, err = ggml.CPUBufferType().AllocBuffer(size); err != nil {
		return err
	}
	ta, err := ggml.NewTensorAllocator(t.buf)
	if err != nil {
		return err
	}
	defer ta.Close()
	if ga, err = ggml.NewGraphAllocator(); err != nil {
		return err
	}
	defer ga.Close()
	if _, err := ga.AllocGraph(ta, t.gb); err != nil {
		return err
	}
	return t.initViews()
}

// allocEveryTensor, set by tests, gives every tensor of the graphs its own memory (no reuse):
// the reference the graph allocator's placement is checked against.
var allocEveryTensor = false

// initViews gives a view whose source was placed after it its data pointer.
func (t *Trainer) initViews() error {
	for _, v := range t.ctx.Tensors() {
		if !v.HasData() && v.ViewSrc() != nil && v.ViewSrc().HasData() {
			if err := t.buf.InitView(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// GraphMemory returns the size in bytes of the buffer that holds the training graph's
// intermediate results and gradients (not the inputs, which have a buffer of their own: tokens,
// positions, mask and one-hot targets; nor the weights or the optimizer state).
func (t *Trainer) GraphMemory() uint64 {
	if t.buf == nil {
		return 0
	}
	return t.buf.Size()
}

// SetSteps changes the total number of steps of the run (and so the length of the cosine
// schedule), for example to fit a time budget once the speed is known. It must not be below
// the steps already done; a checkpoint saved afterwards records the new total.
func (t *Trainer) SetSteps(n int) error {
	if err := t.checkOpen("Trainer.SetSteps"); err != nil {
		return err
	}
	if n < t.step || n <= 0 {
		return fmt.Errorf("train: cannot set the run to %d steps: %d are done", n, t.step)
	}
	t.opt.Steps = n
	t.sched.Total = n
	return nil
}

// Step returns the number of optimizer steps done.
func (t *Trainer) Step() int { return t.step }

// Options returns the trainer's options (with the defaults filled in).
func (t *Trainer) Options() Options { return t.opt }

// Model returns the model being trained.
func (t *Trainer) Model() *Model { return t.m }

// Losses returns the training loss of every step done (including those before a resume).
func (t *Trainer) Losses() []float32 { return append([]float32(nil), t.losses...) }

// TokensPerStep returns the number of tokens one step trains on (batch · n_ctx).
func (t *Trainer) TokensPerStep() int { return t.opt.Batch * t.m.cfg.NCtx }

// setBatch loads the inputs and one-hot targets of windows starting at offs in data.
func (t *Trainer) setBatch(data []int32, offs []int) error {
	n := t.m.cfg.NCtx
	nv := t.m.cfg.NVocab
	if t.onehot == nil {
		t.onehot = make([]float32, nv*n*t.opt.Batch)
		t.ids = make([]int32, n*t.opt.Batch)
	}
	clear(t.onehot)
	for b, off := range offs {
		for i := 0; i < n; i++ {
			row := b*n + i
			t.ids[row] = data[off+i]
			t.onehot[row*nv+int(data[off+i+1])] = 1
		}
	}
	if err := t.fw.tokens.SetInt32(t.ids); err != nil {
		return err
	}
	return t.fw.targets.SetFloat32(t.onehot)
}

// batchOffsets returns the window starts of step k.
func (t *Trainer) batchOffsets(k int) []int {
	rng := rand.New(rand.NewPCG(t.opt.Seed, uint64(k)))
	span := len(t.data) - t.m.cfg.NCtx - 1
	offs := make([]int, t.opt.Batch)
	for i := range offs {
		offs[i] = rng.IntN(span)
	}
	return offs
}

// callback runs before every gradient evaluation: it records the previous step's loss,
// reports progress and loads the batch and learning-rate multiplier of step st.Iter.
func (t *Trainer) callback(st ggml.OptimizerState) (float32, bool) {
	k := st.Iter
	if k > t.step {
		// the evaluation of step k-1 is done and its update applied
		t.step = k
		t.losses = append(t.losses, st.LossAfter)
		t.runTok += int64(t.TokensPerStep())
		t.stepTimes = append(t.stepTimes, time.Now())
		if len(t.stepTimes) > recentSteps+1 {
			t.stepTimes = t.stepTimes[1:]
		}
		if t.opt.Progress != nil {
			t.opt.Progress(t.progress())
		}
	}
	if err := t.setBatch(t.data, t.batchOffsets(k)); err != nil {
		t.cbErr = err
		return st.Sched, true
	}
	return t.sched.At(k), false
}

// progress returns the progress after the current step.
func (t *Trainer) progress() Progress {
	el := time.Since(t.started)
	p := Progress{Step: t.step, Steps: t.opt.Steps, Elapsed: el, LR: t.opt.LearningRate * t.sched.At(t.step-1)}
	if len(t.losses) > 0 {
		p.Loss = t.losses[len(t.losses)-1]
	}
	if s := el.Seconds(); s > 0 {
		p.TokensPerSec = float64(t.runTok) / s
	}
	p.RecentTokens = p.TokensPerSec
	if n := len(t.stepTimes); n >= 2 {
		if s := t.stepTimes[n-1].Sub(t.stepTimes[0]).Seconds(); s > 0 {
			p.RecentTokens = float64((n-1)*t.TokensPerStep()) / s
		}
	}
	if p.RecentTokens > 0 {
		left := float64((t.opt.Steps - t.step) * t.TokensPerStep())
		p.ETA = time.Duration(left / p.RecentTokens * float64(time.Second))
	}
	return p
}

// Train runs n more steps (at most up to Options.Steps). It returns the first error.
func (t *Trainer) Train(n int) error {
	if err := t.checkOpen("Trainer.Train"); err != nil {
		return err
	}
	n = min(n, t.opt.Steps-t.step)
	if n <= 0 {
		return nil
	}
	if t.started.IsZero() {
		t.started = time.Now()
	}
	if err := t.setIterations(n); err != nil {
		return err
	}
	target := t.step + n
	_, err := t.optim.MinimizeGraphs(t.fw.loss, t.gf, t.gb)
	if t.cbErr != nil {
		return t.cbErr
	}
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if t.step != target {
		return fmt.Errorf("train: internal error: step %d after a run to %d", t.step, target)
	}
	return nil
}

// setIterations makes the optimizer run n iterations per Minimize call (one call evaluates
// n+1 batches: the closing evaluation is the first of the next call), keeping its state.
func (t *Trainer) setIterations(n int) error {
	p := t.optim.Params()
	if p.Adam.Iterations == n {
		return nil
	}
	state, err := t.optim.MarshalBinary()
	if err != nil {
		state = nil // no state yet
	}
	p.Adam.Iterations = n
	o, err := ggml.NewOptimizer(p)
	if err != nil {
		return err
	}
	if state != nil {
		if err := o.UnmarshalBinary(state); err != nil {
			o.Close()
			return err
		}
	}
	t.optim.Close()
	t.optim = o
	o.SetCallback(t.callback)
	return nil
}

// Evaluate returns the mean cross-entropy (nats per token) of the model over tokens, cut into
// windows of n_ctx+1 tokens (consecutive windows share one token) evaluated batch at a time;
// at most maxBatches batches (0: all) and at least one full batch of windows is needed.
func (t *Trainer) Evaluate(tokens []int32, maxBatches int) (float64, error) {
	if err := t.checkOpen("Trainer.Evaluate"); err != nil {
		return 0, err
	}
	n := t.m.cfg.NCtx
	var offs []int
	for o := 0; o+n+1 <= len(tokens); o += n {
		offs = append(offs, o)
	}
	nb := len(offs) / t.opt.Batch
	if maxBatches > 0 {
		nb = min(nb, maxBatches)
	}
	if nb == 0 {
		return 0, fmt.Errorf("train: %d evaluation tokens; at least %d are needed for one batch", len(tokens), t.opt.Batch*n+1)
	}
	var sum float64
	for b := 0; b < nb; b++ {
		if err := t.setBatch(tokens, offs[b*t.opt.Batch:(b+1)*t.opt.Batch]); err != nil {
			return 0, err
		}
		if err := t.ctx.Compute(t.gf, t.opt.Threads); err != nil {
			return 0, err
		}
		v, err := t.fw.loss.Float32()
		if err != nil {
			return 0, err
		}
		sum += float64(v[0])
	}
	return sum / float64(nb), nil
}

// Logits runs the training graph's forward pass on Batch sequences of n_ctx tokens (tokens
// holds them one after another) and returns the logits, n_vocab per token.
func (t *Trainer) Logits(tokens []int32) ([]float32, error) {
	if err := t.checkOpen("Trainer.Logits"); err != nil {
		return nil, err
	}
	n := t.m.cfg.NCtx
	if len(tokens) != n*t.opt.Batch {
		return nil, fmt.Errorf("train: Logits needs Batch·n_ctx = %d tokens, not %d", n*t.opt.Batch, len(tokens))
	}
	// one window per sequence, each followed by a dummy target token
	offs := make([]int, t.opt.Batch)
	data := make([]int32, 0, len(tokens)+t.opt.Batch)
	for b := range offs {
		offs[b] = len(data)
		data = append(data, tokens[b*n:(b+1)*n]...)
		data = append(data, 0)
	}
	if err := t.setBatch(data, offs); err != nil {
		return nil, err
	}
	if err := t.ctx.Compute(t.gf, t.opt.Threads); err != nil {
		return nil, err
	}
	return t.fw.logits.Float32()
}

// Perplexity converts a mean cross-entropy in nats to perplexity.
func Perplexity(loss float64) float64 { return math.Exp(loss) }

// Close frees the graphs and the optimizer; idempotent, returns nil.
func (t *Trainer) Close() error {
	if t == nil {
		return nil
	}
	if t.optim != nil {
		t.optim.Close()
		t.optim = nil
	}
	if t.ctx != nil {
		t.ctx.Close()
		t.ctx = nil
	}
	if t.buf != nil {
		t.buf.Close()
		t.buf = nil
	}
	if t.inBuf != nil {
		t.inBuf.Close()
		t.inBuf = nil
	}
	if t.ownModel {
		t.m.Close()
	}
	return nil
}
