//go:build cgo

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/internal/defaultmodel"
	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/tokenizer"
)

// synopses holds the synopsis of each command's flag set (newFlags), for its usage.
var synopses = map[*flag.FlagSet]string{}

// newFlags returns the flag set of a command; parse gives it the module's command-line
// conventions (internal/cli).
func newFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	synopses[fs] = synopsis
	return fs
}

// llamaCppNames are the groups of names that llama.cpp's tools give the same flag: a command
// that defines one of them understands the others.
var llamaCppNames = [][]string{
	{"m", "model"}, {"p", "prompt"}, {"f", "file"}, {"n", "n-predict", "predict"}, {"c", "ctx-size"},
	{"t", "threads"}, {"b", "batch-size"}, {"s", "seed"}, {"ngl", "n-gpu-layers", "gpu-layers"},
	{"o", "output"}, {"r", "repetitions"}, {"d", "n-depth"},
}

// parse parses args with llama.cpp's long names as aliases. -h/--help prints the usage on
// stdout and returns errHelp (the command then runs nothing and exits 0); a mistake prints
// the problem and the usage on stderr and returns errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	f := cli.Wrap(fs, "ggml-llama "+fs.Name(), synopses[fs], llamaCppNames)
	f.SetOutput(stdout, stderr)
	switch err := f.Parse(args, false); {
	case errors.Is(err, cli.ErrHelp):
		return errHelp
	case err != nil:
		return errUsage
	}
	return nil
}

// modelFlags are the flags shared by the commands that load a model.
type modelFlags struct {
	path    string
	threads int
	backend string
	ngl     int
	rpc     string
	noMmap  bool
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&m.threads, "t", llama.DefaultThreads(), "CPU threads")
	m.registerNoThreads(fs)
}

// registerNoThreads registers the flags but -t.
func (m *modelFlags) registerNoThreads(fs *flag.FlagSet) {
	fs.StringVar(&m.path, "m", "", "model file (GGUF of a supported architecture; default: the embedded model trained on Go code)")
	fs.StringVar(&m.backend, "backend", "CPU", "backend for the offloaded layers (e.g. CUDA0 in a -tags cuda build)")
	fs.IntVar(&m.ngl, "ngl", 0, "number of layers (from the last) to offload to -backend or -rpc")
	fs.BoolVar(&m.noMmap, "no-mmap", false, "read the model into memory instead of mapping it (slower to load; the file may then change while the model runs)")
	fs.StringVar(&m.rpc, "rpc", "", "offload the -ngl layers to RPC servers (host:port[,host:port...]: ggml's rpc-server or ggml-rpc-server; several share the layers)")
}

// cacheFlags are llama.cpp's -ctk and -ctv: the types of the cached keys and values.
type cacheFlags struct {
	k, v llama.CacheType
}

func (c *cacheFlags) register(fs *flag.FlagSet) {
	for _, n := range []string{"ctk", "cache-type-k"} {
		fs.Var(&c.k, n, "type of the cached keys: f16, f32, q8_0, q4_0, q4_1, q5_0, q5_1 (q8_0 takes about half the memory of f16)")
	}
	for _, n := range []string{"ctv", "cache-type-v"} {
		fs.Var(&c.v, n, "type of the cached values, as -ctk")
	}
}

// loaded is a model with its tokenizer and the backend it may offload to.
type loaded struct {
	model   *llama.Model
	tok     *tokenizer.Tokenizer
	offload *ggml.Backend   // -backend
	remote  []*ggml.Backend // -rpc
	elapsed time.Duration
	cleanup func() // removes the temporary copy of the embedded model
}

func (l *loaded) Close() {
	l.model.Close()
	l.closeBackends()
}

// closeBackends closes the backends the model offloads to (after the model).
func (l *loaded) closeBackends() {
	if l.offload != nil {
		l.offload.Close()
	}
	for _, r := range l.remote {
		r.Close()
	}
	if l.cleanup != nil {
		l.cleanup()
	}
}

// load loads the model of mf (the embedded default model when -m is not given), with a
// progress bar on stderr for large files.
func (mf *modelFlags) load() (*loaded, error) {
	path := mf.path
	var cleanup func()
	if path == "" {
		var err error
		if path, cleanup, err = defaultmodel.WriteTemp("ggml-llama-default-"); err != nil {
			return nil, err
		}
		mf.path = defaultmodel.Name
	}
	l, err := mf.loadPath(path)
	if cleanup != nil {
		if err != nil {
			cleanup()
		} else {
			l.cleanup = cleanup
		}
	}
	return l, err
}

// loadPath loads the model file at path.
func (mf *modelFlags) loadPath(path string) (*loaded, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the model: %w", err)
	}
	l := &loaded{}
	opt := llama.Options{Threads: mf.threads, NoMmap: mf.noMmap}
	if mf.rpc != "" {
		if !strings.EqualFold(mf.backend, "CPU") {
			return nil, errors.New("give either -rpc or -backend, not both")
		}
		if mf.ngl <= 0 {
			return nil, errors.New("-rpc offloads the layers that -ngl counts: give -ngl (e.g. -ngl 99 for all)")
		}
		for _, addr := range strings.Split(mf.rpc, ",") {
			r, err := ggml.NewRPC(strings.TrimSpace(addr), ggml.WithRPCTimeout(60*time.Second))
			if err != nil {
				l.closeBackends()
				return nil, fmt.Errorf("-rpc %s: %w", addr, err)
			}
			l.remote = append(l.remote, r)
		}
		opt.Offloads, opt.GPULayers = l.remote, mf.ngl
	} else if mf.ngl > 0 && !strings.EqualFold(mf.backend, "CPU") {
		if l.offload, err = ggml.InitBackend(mf.backend); err != nil {
			return nil, fmt.Errorf("backend %q: %w (registered: %s; CUDA devices need a build with -tags cuda)", mf.backend, err, strings.Join(ggml.Backends(), ", "))
		}
		opt.Offload, opt.GPULayers = l.offload, mf.ngl
	}
	if st.Size() > 64<<20 && isTerminal(stderr) {
		opt.Progress = progressBar(stderr, "loading "+mf.path)
	}
	start := time.Now()
	if l.model, err = llama.Load(path, opt); err != nil {
		l.closeBackends()
		return nil, err
	}
	l.elapsed = time.Since(start)
	if l.tok, err = tokenizer.FromGGUF(l.model.GGUF()); err != nil && testPromptTokens == nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// loadTokenizer reads only the tokenizer of the model of mf (the embedded default model when
// -m is not given): any GGUF with tokenizer.ggml.* keys works, also a vocab-only file without
// tensors. done removes the temporary copy of the embedded model.
func (mf *modelFlags) loadTokenizer() (tok *tokenizer.Tokenizer, done func(), err error) {
	path := mf.path
	done = func() {}
	if path == "" {
		if path, done, err = defaultmodel.WriteTemp("ggml-llama-default-"); err != nil {
			return nil, nil, err
		}
		mf.path = defaultmodel.Name
	}
	f, err := gguf.Open(path)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("not a readable GGUF file: %w", err)
	}
	defer f.Close()
	if tok, err = tokenizer.FromGGUF(f); err != nil {
		done()
		return nil, nil, err
	}
	return tok, done, nil
}

// testPromptTokens, when set by a test, replaces the tokenization of the prompts of logits and
// embed, so that reference files can be run on their own tokens whatever the tokenizer package
// does (and without one, for a vocabulary it does not read).
var testPromptTokens func(prompt string) []int32

// promptTokens tokenizes a prompt with BOS (or the vocabulary's special tokens) and special
// tokens parsed.
func (l *loaded) promptTokens(prompt string) []int32 {
	if testPromptTokens != nil {
		return testPromptTokens(prompt)
	}
	return l.tok.Tokenize(prompt, true, true)
}

// progressBar returns a progress callback drawing a bar on w.
func progressBar(w io.Writer, label string) func(done, total int64) {
	last := -1
	return func(done, total int64) {
		if total <= 0 {
			return
		}
		pct := int(done * 100 / total)
		if pct == last {
			return
		}
		last = pct
		n := pct * 30 / 100
		fmt.Fprintf(w, "\r%s [%s%s] %3d%%", label, strings.Repeat("#", n), strings.Repeat(" ", 30-n), pct)
		if done >= total {
			fmt.Fprintln(w)
		}
	}
}

// isTerminal reports whether w is a character device (a terminal), where a progress bar that
// redraws itself is readable.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
