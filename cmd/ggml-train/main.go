//go:build cgo

// Command ggml-train trains a LLaMA-architecture model from scratch and writes it as a llama
// GGUF file that ggml-llama (and llama.cpp) run.
//
// Usage:
//
//	ggml-train [-corpus DIR] [-out DIR] [-steps N] [-batch 8] [-vocab 2048]
//	           [-embd 256] [-layers 6] [-heads 8] [-ff 0] [-ctx 256] [-lr 1e-3] [-t 2]
//	           [-save-every 200] [-eval-every 200] [-max-time 0] [-type q8_0] [-resume]
//
// The default corpus is the Go standard library ($(go env GOROOT)/src); the packages named by
// -holdout are kept for evaluation. The tokenizer (byte-pair encoding, -vocab tokens) is
// trained on the corpus first. Training prints a progress line every -log-every steps and,
// every -save-every steps, writes a checkpoint (model, optimizer state, loss history) and the
// loss curve loss.svg into -out; -resume continues from the checkpoint there exactly. At the
// end it writes -out/model.gguf (F32) and, with -type, -out/model-TYPE.gguf, and prints the
// held-out perplexity next to the uniform baseline.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/tokenizer"
	"github.com/ggml-go/ggml/train"
)

func main() {
	err := run(os.Args[1:], os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, cli.ErrHelp):
	case errors.Is(err, cli.ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "ggml-train:", err)
		os.Exit(1)
	}
}

// config holds the command line.
type config struct {
	corpus, out, holdout, typ string
	maxBytes, evalBytes       int64
	tokBytes                  int64
	vocab                     int
	model                     train.Config
	opt                       train.Options
	saveEvery, evalEvery      int
	logEvery, evalBatches     int
	maxTime, budget           time.Duration
	resume                    bool
	bench                     int
	seed                      uint64
}

// newFlags defines the command line into c (names as llama.cpp's training tools where they
// have one: -t/--threads, -c/--ctx-size, -b/--batch-size, -s/--seed, --adam-alpha, ...).
func newFlags(c *config) *cli.FlagSet {
	fs := cli.New("ggml-train", "[-corpus DIR] [-out DIR] [-time 30m | -steps N] [flags]")
	fs.String(&c.corpus, "corpus,train-data", "DIR", "", "directory of .go files to train on (default: $(go env GOROOT)/src)")
	fs.String(&c.holdout, "holdout", "LIST", strings.Join(train.DefaultHoldOut, ","), "comma-separated package directories held out for evaluation")
	fs.Int64(&c.maxBytes, "max-bytes", "N", 32<<20, "most bytes of training text")
	fs.Int64(&c.evalBytes, "eval-bytes", "N", 1<<20, "most bytes of held-out text")
	fs.Int64(&c.tokBytes, "tok-bytes", "N", 8<<20, "bytes of training text the tokenizer learns from")
	fs.String(&c.out, "out,o", "DIR", "ggml-train-out", "directory for checkpoints, the loss curve and the model")
	fs.Int(&c.vocab, "vocab", "N", 2048, "vocabulary size (1024-4096 suits a small model)")
	fs.Int(&c.model.NEmbd, "embd", "N", 256, "embedding width")
	fs.Int(&c.model.NLayer, "layers,layer", "N", 6, "transformer blocks")
	fs.Int(&c.model.NHead, "heads,head", "N", 8, "attention heads")
	fs.Int(&c.model.NFF, "ff", "N", 0, "feed-forward width (0: about 8/3 of --embd)")
	fs.Int(&c.model.NCtx, "ctx,c,ctx-size", "N", 256, "context (training sequence) length")
	fs.Int(&c.opt.Steps, "steps,adam-iter", "N", 1000, "optimizer steps")
	fs.Int(&c.opt.Batch, "batch,b,batch-size", "N", 8, "sequences per step")
	fs.Int(&c.opt.Threads, "t,threads", "N", 2, "threads")
	fs.Float32(&c.opt.LearningRate, "lr,adam-alpha", "X", 1e-3, "peak learning rate (Adam)")
	fs.Int(&c.opt.Warmup, "warmup", "N", 0, "warm-up steps (0: steps/20, at most 200)")
	fs.Bool(&c.opt.Checkpointing, "checkpointing,use-checkpointing", false, "gradient checkpointing at the block inputs: less graph memory, more compute")
	fs.Uint64(&c.seed, "seed,s", "N", 1, "seed of the weights and the batches")
	fs.Int(&c.saveEvery, "save-every", "N", 200, "steps between checkpoints")
	fs.Int(&c.evalEvery, "eval-every", "N", 200, "steps between held-out evaluations (0: only at the end)")
	fs.Int(&c.evalBatches, "eval-batches", "N", 8, "batches of held-out text per evaluation during training")
	fs.Int(&c.logEvery, "log-every", "N", 10, "steps between progress lines")
	fs.Duration(&c.maxTime, "max-time", "D", 0, "stop (with a checkpoint and the model) after this much training time (0: none)")
	fs.Duration(&c.budget, "time", "D", 0, "fit the run into this much training time: after 20 steps the number of steps (at most --steps) is set from the measured speed (0: --steps as given)")
	fs.String(&c.typ, "type", "TYPE", "q8_0", "also write the model with matrices of this type (f16, q8_0, q4_0, ...; empty: only F32)")
	fs.Bool(&c.resume, "resume", false, "continue from the checkpoint in --out")
	fs.Int(&c.bench, "bench", "N", 0, "only measure: train N steps on random tokens (no corpus, no files) and print the steady tokens/s")
	fs.SetExtra("example: ggml-train -out run1 -embd 256 -layers 4 -ctx 256 -time 30m")
	return fs
}

// parseFlags parses the command line; help goes to stdout, mistakes and the usage to log.
func parseFlags(args []string, stdout, log io.Writer) (*config, error) {
	c := &config{}
	fs := newFlags(c)
	fs.SetOutput(stdout, log)
	if err := fs.Parse(args, false); err != nil {
		return nil, err
	}
	c.opt.Seed = c.seed
	if c.saveEvery <= 0 {
		c.saveEvery = c.opt.Steps
	}
	return c, nil
}

// run trains as the command line says, logging to log.
func run(args []string, log io.Writer) error {
	c, err := parseFlags(args, os.Stdout, log)
	if err != nil {
		return err
	}
	defer ggml.WriteProfile(log) // GGML_X_PROFILE=1: the time per op of the graph computes
	if c.bench > 0 {
		return runBench(c, log)
	}
	var typ gguf.TensorType
	if c.typ != "" {
		var ok bool
		if typ, ok = parseType(c.typ); !ok {
			return fmt.Errorf("unknown -type %q (f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1)", c.typ)
		}
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	progress := func(p train.Progress) {
		if p.Step%max(c.logEvery, 1) == 0 || p.Step == p.Steps {
			fmt.Fprintln(log, p)
		}
	}
	var t *train.Trainer
	var evalData []int32
	if c.resume && train.HasCheckpoint(c.out) {
		data, ev, err := loadTokens(c.out)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		evalData = ev
		if t, err = train.Resume(c.out, data, progress); err != nil {
			return err
		}
		fmt.Fprintf(log, "resumed from %s at step %d of %d\n", c.out, t.Step(), t.Options().Steps)
	} else {
		var data []int32
		var vocab tokenizer.Vocab
		if data, evalData, vocab, err = prepare(c, log); err != nil {
			return err
		}
		m, err := train.NewModel(c.model, vocab, c.seed)
		if err != nil {
			return err
		}
		defer m.Close()
		c.opt.Progress = progress
		if t, err = train.NewTrainer(m, data, c.opt); err != nil {
			return err
		}
		cfg := m.Config()
		fmt.Fprintf(log, "model: n_vocab %d, n_embd %d, n_layer %d, n_head %d, n_ff %d, n_ctx %d: %.2fM parameters\n",
			cfg.NVocab, cfg.NEmbd, cfg.NLayer, cfg.NHead, cfg.NFF, cfg.NCtx, float64(cfg.ParamCount())/1e6)
	}
	defer t.Close()
	m := t.Model()
	uniform := math.Log(float64(m.Config().NVocab))
	opt := t.Options()
	fmt.Fprintf(log, "training: %d steps of %d tokens (batch %d), lr %.2g, warm-up %d, %d threads\n",
		opt.Steps, t.TokensPerStep(), opt.Batch, opt.LearningRate, opt.Warmup, opt.Threads)

	start := time.Now()
	startStep := t.Step()
	var lastPerStep time.Duration // of the last chunk; 0 before the first
	fitted := c.budget <= 0 || c.resume
	checkpoint := func() error {
		if err := t.SaveCheckpoint(c.out); err != nil {
			return err
		}
		return train.WriteLossSVGFile(filepath.Join(c.out, "loss.svg"), train.LossCurve{
			Title: fmt.Sprintf("ggml-train: %.2fM parameters, %d tokens per step", float64(m.Config().ParamCount())/1e6, t.TokensPerStep()),
			Train: t.Losses(), Eval: t.Evals(), Steps: t.Options().Steps, Reference: uniform, RefLabel: fmt.Sprintf("uniform ln(%d) = %.2f", m.Config().NVocab, uniform),
		})
	}
	for t.Step() < opt.Steps {
		chunk := c.saveEvery - t.Step()%c.saveEvery
		if c.evalEvery > 0 {
			chunk = min(chunk, c.evalEvery-t.Step()%c.evalEvery)
		}
		if !fitted {
			chunk = min(chunk, 20)
		}
		if c.maxTime > 0 {
			// stop near -max-time: chunks sized by the speed of the last one, and no longer
			// than half the time left, so that a machine that slows down (other work on its
			// cores) overshoots by little more than one short chunk
			if lastPerStep == 0 {
				chunk = min(chunk, 20)
			} else {
				chunk = min(chunk, int((c.maxTime-time.Since(start))/2/lastPerStep))
				if chunk < 1 {
					fmt.Fprintf(log, "stopping after %s (-max-time) at step %d\n", time.Since(start).Round(time.Second), t.Step())
					break
				}
			}
		}
		chunkStart, stepBefore := time.Now(), t.Step()
		if err := t.Train(chunk); err != nil {
			return err
		}
		if n := t.Step() - stepBefore; n > 0 {
			lastPerStep = max(time.Since(chunkStart)/time.Duration(n), time.Nanosecond)
		}
		if !fitted {
			fitted = true
			perStep := time.Since(start) / time.Duration(t.Step()-startStep)
			n := t.Step() + int((c.budget-time.Since(start))/perStep)
			if n < opt.Steps {
				if err := t.SetSteps(max(n, t.Step())); err != nil {
					return err
				}
				opt = t.Options()
			}
			fmt.Fprintf(log, "time budget %s at %s per step: %d steps\n", c.budget, perStep.Round(time.Millisecond), opt.Steps)
		}
		if c.evalEvery > 0 && t.Step()%c.evalEvery == 0 {
			loss, err := t.Evaluate(evalData, c.evalBatches)
			if err != nil {
				return err
			}
			t.AddEval(loss)
			fmt.Fprintf(log, "step %d: held-out loss %.4f, perplexity %.2f (uniform %d)\n", t.Step(), loss, train.Perplexity(loss), m.Config().NVocab)
		}
		stop := c.maxTime > 0 && time.Since(start) >= c.maxTime
		if t.Step()%c.saveEvery == 0 || t.Step() == opt.Steps || stop {
			if err := checkpoint(); err != nil {
				return err
			}
		}
		if stop {
			fmt.Fprintf(log, "stopping after %s (-max-time) at step %d\n", time.Since(start).Round(time.Second), t.Step())
			break
		}
	}
	if err := checkpoint(); err != nil {
		return err
	}
	loss, err := t.Evaluate(evalData, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "held-out loss %.4f nats/token: perplexity %.2f (uniform baseline %d)\n", loss, train.Perplexity(loss), m.Config().NVocab)
	final := filepath.Join(c.out, "model.gguf")
	if err := m.Save(final, train.SaveOptions{Name: "ggml-go-train"}); err != nil {
		return err
	}
	fmt.Fprintln(log, "wrote", final)
	if c.typ != "" && typ != gguf.TypeF32 {
		q := filepath.Join(c.out, "model-"+strings.ToLower(c.typ)+".gguf")
		if err := m.Save(q, train.SaveOptions{Name: "ggml-go-train", Type: typ}); err != nil {
			return err
		}
		fmt.Fprintln(log, "wrote", q)
	}
	return nil
}

// prepare loads the corpus, trains the tokenizer, tokenizes the text and caches the tokens
// (and the held-out text) in the output directory.
func prepare(c *config, log io.Writer) (data, evalData []int32, vocab tokenizer.Vocab, err error) {
	t0 := time.Now()
	var hold []string
	for _, p := range strings.Split(c.holdout, ",") {
		if p = strings.TrimSpace(p); p != "" {
			hold = append(hold, p)
		}
	}
	corpus, err := train.LoadGoCorpus(c.corpus, train.CorpusOptions{HoldOut: hold, MaxTrainBytes: c.maxBytes, MaxEvalBytes: c.evalBytes})
	if err != nil {
		return nil, nil, vocab, err
	}
	var nTrain, nEval int
	var tokTexts []string
	for _, d := range corpus.Train {
		if int64(nTrain+len(d.Text)) <= c.tokBytes {
			tokTexts = append(tokTexts, d.Text)
		}
		nTrain += len(d.Text)
	}
	var held strings.Builder
	for _, d := range corpus.Eval {
		nEval += len(d.Text)
		held.WriteString(d.Text)
	}
	fmt.Fprintf(log, "corpus: %d training files (%.1f MB), %d held-out files (%.1f MB) [%s]\n",
		len(corpus.Train), float64(nTrain)/1e6, len(corpus.Eval), float64(nEval)/1e6, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	if vocab, err = train.TrainTokenizer(tokTexts, train.TokenizerOptions{VocabSize: c.vocab}); err != nil {
		return nil, nil, vocab, err
	}
	tok, err := tokenizer.New(vocab)
	if err != nil {
		return nil, nil, vocab, err
	}
	data = train.TokenizeDocuments(tok, corpus.Train, c.opt.Threads)
	evalData = train.TokenizeDocuments(tok, corpus.Eval, c.opt.Threads)
	fmt.Fprintf(log, "tokenizer: %d tokens; training text %d tokens (%.2f bytes/token), held out %d tokens [%s]\n",
		len(vocab.Tokens), len(data), float64(nTrain)/float64(len(data)), len(evalData), time.Since(t0).Round(time.Millisecond))
	if err := saveTokens(c.out, data, evalData); err != nil {
		return nil, nil, vocab, err
	}
	if err := os.WriteFile(filepath.Join(c.out, "heldout.txt"), []byte(held.String()), 0o644); err != nil {
		return nil, nil, vocab, err
	}
	return data, evalData, vocab, nil
}

// token caches: the training and held-out streams as little-endian int32
const trainTokens, evalTokens = "train.tokens", "heldout.tokens"

func saveTokens(dir string, data, eval []int32) error {
	for _, f := range []struct {
		name string
		v    []int32
	}{{trainTokens, data}, {evalTokens, eval}} {
		b := make([]byte, 4*len(f.v))
		for i, x := range f.v {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func loadTokens(dir string) (data, eval []int32, err error) {
	read := func(name string) ([]int32, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		v := make([]int32, len(b)/4)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v, nil
	}
	if data, err = read(trainTokens); err != nil {
		return nil, nil, err
	}
	eval, err = read(evalTokens)
	return data, eval, err
}

// parseType maps a -type name to a tensor type.
func parseType(s string) (gguf.TensorType, bool) {
	switch strings.ToLower(s) {
	case "f32":
		return gguf.TypeF32, true
	case "f16":
		return gguf.TypeF16, true
	case "q8_0":
		return gguf.TypeQ8_0, true
	case "q4_0":
		return gguf.TypeQ4_0, true
	case "q4_1":
		return gguf.TypeQ4_1, true
	case "q5_0":
		return gguf.TypeQ5_0, true
	case "q5_1":
		return gguf.TypeQ5_1, true
	}
	return 0, false
}
