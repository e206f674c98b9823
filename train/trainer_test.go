//go:build cgo

package train

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/tokenizer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyText is a small, repetitive Go-like corpus that a tiny model learns quickly.
func tinyText() []string {
	var docs []string
	for i := 0; i < 40; i++ {
		var b strings.Builder
		b.WriteString("package main\n\nimport \"fmt\"\n\n")
		for j := 0; j < 6; j++ {
			b.WriteString("func f")
			b.WriteString(string(rune('a' + (i+j)%26)))
			b.WriteString("(x int) int {\n\treturn x + 1\n}\n\n")
		}
		b.WriteString("func main() {\n\tfmt.Println(\"hello, world\")\n}\n")
		docs = append(docs, b.String())
	}
	return docs
}

// tinyConfig is a model shape that trains in well under a second per step.
var tinyConfig = Config{NEmbd: 32, NLayer: 2, NHead: 4, NFF: 64, NCtx: 16}

// tinySetup returns a tokenizer trained on tinyText and the token stream of the corpus.
func tinySetup(t *testing.T, vocabSize int) (tokenizer.Vocab, *tokenizer.Tokenizer, []int32) {
	t.Helper()
	texts := tinyText()
	v, err := TrainTokenizer(texts, TokenizerOptions{VocabSize: vocabSize, MinCharCount: 2})
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	docs := make([]Document, len(texts))
	for i, s := range texts {
		docs[i] = Document{Name: "doc", Text: s}
	}
	return v, tok, TokenizeDocuments(tok, docs, 2)
}

// checkLive fails the test if native objects outlive it.
func checkLive(t *testing.T) {
	start := ggml.LiveObjects()
	t.Cleanup(func() {
		assert.Equal(t, start, ggml.LiveObjects(), "live native objects: %v", ggml.LiveObjectsByKind())
	})
}

func newTiny(t *testing.T, opt Options, seed uint64) (*Trainer, []int32) {
	t.Helper()
	v, _, data := tinySetup(t, 320)
	m, err := NewModel(tinyConfig, v, seed)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	tr, err := NewTrainer(m, data, opt)
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	return tr, data
}

func TestLossDecreases(t *testing.T) {
	checkLive(t)
	tr, data := newTiny(t, Options{Steps: 60, Batch: 4, LearningRate: 3e-3, Seed: 1}, 1)
	before, err := tr.Evaluate(data, 4)
	require.NoError(t, err)
	assert.InDelta(t, math.Log(320), before, 1.5, "an untrained model is close to uniform")
	require.NoError(t, tr.Train(60))
	assert.Equal(t, 60, tr.Step())
	assert.Len(t, tr.Losses(), 60)
	after, err := tr.Evaluate(data, 4)
	require.NoError(t, err)
	t.Logf("loss %.3f -> %.3f (uniform %.3f)", before, after, math.Log(320))
	assert.Less(t, after, before*0.6)
}

func TestLogitsMatchRunner(t *testing.T) {
	checkLive(t)
	tr, data := newTiny(t, Options{Steps: 20, Batch: 2, LearningRate: 3e-3, Seed: 2}, 2)
	require.NoError(t, tr.Train(20))
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, tr.Model().Save(path, SaveOptions{}))

	n := tinyConfig.NCtx
	in := append(append([]int32(nil), data[5:5+n]...), data[100:100+n]...)
	want, err := tr.Logits(in)
	require.NoError(t, err)

	m, err := llama.Load(path, llama.Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	nv := m.HP.NVocab
	for b := 0; b < 2; b++ {
		c, err := m.NewContext(llama.ContextOptions{NCtx: 64, KVF32: true})
		require.NoError(t, err)
		got, err := c.Eval(in[b*n:(b+1)*n], true)
		require.NoError(t, err)
		c.Close()
		require.Len(t, got, n*nv)
		var maxDiff, sum, sum2 float64
		for _, x := range got {
			sum += float64(x)
			sum2 += float64(x) * float64(x)
		}
		std := math.Sqrt(sum2/float64(len(got)) - (sum/float64(len(got)))*(sum/float64(len(got))))
		require.Greater(t, std, 0.1, "the logits vary")
		for i := range got {
			maxDiff = math.Max(maxDiff, math.Abs(float64(got[i]-want[b*n*nv+i])))
		}
		t.Logf("sequence %d: max |logit difference| %.2e", b, maxDiff)
		assert.Less(t, maxDiff, 1e-3)
	}
}

func TestResumeIsExact(t *testing.T) {
	checkLive(t)
	const steps = 16
	opt := Options{Steps: steps, Batch: 2, LearningRate: 3e-3, Warmup: 4, Seed: 3}

	straight, _ := newTiny(t, opt, 3)
	require.NoError(t, straight.Train(steps))

	half, data := newTiny(t, opt, 3)
	require.NoError(t, half.Train(steps/2))
	dir := t.TempDir()
	require.NoError(t, half.SaveCheckpoint(dir))
	require.True(t, HasCheckpoint(dir))
	half.Close()

	resumed, err := Resume(dir, data, nil)
	require.NoError(t, err)
	defer resumed.Close()
	assert.Equal(t, steps/2, resumed.Step())
	require.NoError(t, resumed.Train(steps))
	assert.Equal(t, steps, resumed.Step())

	assert.Equal(t, straight.Losses(), resumed.Losses(), "identical loss history")
	a, b := straight.Model().Weights(), resumed.Model().Weights()
	require.Len(t, b, len(a))
	for i := range a {
		va, err := a[i].Float32()
		require.NoError(t, err)
		vb, err := b[i].Float32()
		require.NoError(t, err)
		require.Equal(t, va, vb, "weights of %s", a[i].Name())
	}
}

// gradients evaluates the gradient of every weight of tr's model on the batch of step 0.
func gradients(t *testing.T, tr *Trainer) [][]float32 {
	t.Helper()
	require.NoError(t, tr.setBatch(tr.data, tr.batchOffsets(0)))
	require.NoError(t, tr.ctx.ComputeGradients(tr.gf, tr.gb, tr.fw.loss, tr.opt.Threads))
	var g [][]float32
	for _, w := range tr.m.weights {
		v, err := w.Grad().Float32()
		require.NoError(t, err)
		g = append(g, v)
	}
	return g
}

// assertSameGradients checks that two evaluations of the weights' gradients agree to float
// rounding: per weight, the largest difference is at most tol times the largest |gradient|.
func assertSameGradients(t *testing.T, tr *Trainer, want, got [][]float32, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Len(t, got[i], len(want[i]))
		var scale, diff float64
		for j := range want[i] {
			scale = math.Max(scale, math.Abs(float64(want[i][j])))
			diff = math.Max(diff, math.Abs(float64(got[i][j]-want[i][j])))
		}
		require.Greater(t, scale, 0.0, "gradient of %s", tr.m.weights[i].Name())
		assert.LessOrEqual(t, diff, tol*scale, "gradient of %s: max difference %.3g, max |gradient| %.3g",
			tr.m.weights[i].Name(), diff, scale)
	}
}

// Gradient checkpointing recomputes the blocks' forward passes in the backward graph; the
// gradients, and so the training trajectory, are those of the plain backward pass, and those
// of the same graph with every tensor in its own memory (the graph allocator reuses memory
// only where no later node reads it).
func TestGradientCheckpointing(t *testing.T) {
	checkLive(t)
	opt := Options{Steps: 6, Batch: 2, LearningRate: 3e-3, Seed: 4}
	plain, _ := newTiny(t, opt, 4)
	opt.Checkpointing = true
	ckpt, _ := newTiny(t, opt, 4)
	allocEveryTensor = true
	own, _ := newTiny(t, opt, 4)
	allocEveryTensor = false
	assert.Greater(t, ckpt.gb.Len(), plain.gb.Len(), "the recomputation adds nodes")

	want := gradients(t, plain)
	assertSameGradients(t, ckpt, want, gradients(t, own), 1e-5)
	assertSameGradients(t, ckpt, want, gradients(t, ckpt), 1e-5)

	require.NoError(t, plain.Train(6))
	require.NoError(t, ckpt.Train(6))
	a, b := plain.Losses(), ckpt.Losses()
	require.Len(t, b, len(a))
	for i := range a {
		assert.InDelta(t, a[i], b[i], 1e-4, "step %d", i)
	}
}

// Gradient checkpointing lowers the training graph's memory: the recomputed values of one
// block live at a time instead of every block's forward values.
func TestGradientCheckpointingSavesMemory(t *testing.T) {
	checkLive(t)
	v, _, data := tinySetup(t, 320)
	cfg := Config{NEmbd: 64, NLayer: 6, NHead: 4, NFF: 128, NCtx: 64}
	mem := map[bool]uint64{}
	for _, ck := range []bool{false, true} {
		m, err := NewModel(cfg, v, 1)
		require.NoError(t, err)
		tr, err := NewTrainer(m, data, Options{Steps: 1, Batch: 4, Checkpointing: ck})
		require.NoError(t, err)
		mem[ck] = tr.GraphMemory()
		tr.Close()
		m.Close()
	}
	t.Logf("graph memory: %.2f MiB plain, %.2f MiB with checkpointing", float64(mem[false])/(1<<20), float64(mem[true])/(1<<20))
	assert.Less(t, mem[true], mem[false]/2)
}

func TestTrainerErrors(t *testing.T) {
	checkLive(t)
	v, _, data := tinySetup(t, 320)
	m, err := NewModel(tinyConfig, v, 1)
	require.NoError(t, err)
	defer m.Close()
	_, err = NewTrainer(m, data, Options{})
	assert.ErrorContains(t, err, "Steps")
	_, err = NewTrainer(m, data[:10], Options{Steps: 1})
	assert.ErrorContains(t, err, "tokens")
	bad := append([]int32{5000}, data...)
	_, err = NewTrainer(m, bad, Options{Steps: 1})
	assert.ErrorContains(t, err, "outside the vocabulary")
	tr, err := NewTrainer(m, data, Options{Steps: 1, Batch: 1})
	require.NoError(t, err)
	defer tr.Close()
	_, err = NewTrainer(m, data, Options{Steps: 1})
	assert.ErrorContains(t, err, "already belongs")
	_, err = tr.Evaluate(data[:5], 0)
	assert.Error(t, err)
	_, err = tr.Logits(data[:3])
	assert.Error(t, err)
	_, err = Resume(t.TempDir(), data, nil)
	assert.Error(t, err)

	_, err = NewModel(Config{NEmbd: 30, NHead: 4}, v, 1)
	assert.ErrorContains(t, err, "multiple")
}

// TestLoadModelRefusesOtherArchitectures: only dense llama files can be trained; another
// architecture is an error naming it.
func TestLoadModelRefusesOtherArchitectures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "qwen2.gguf")
	require.NoError(t, llama.WriteRandomModel(path, llama.RandomConfig{Arch: "qwen2", Seed: 1}))
	_, err := LoadModel(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "qwen2")
}
