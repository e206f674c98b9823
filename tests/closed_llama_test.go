package tests

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/tokenizer"
	"github.com/ggml-go/ggml/train"
)

// assertClosed runs call, which must not panic and must return an error wrapping ErrClosed.
func assertClosed(t *testing.T, name string, call func() error) {
	t.Helper()
	var err error
	if assert.NotPanics(t, func() { err = call() }, name) {
		assert.True(t, errors.Is(err, ggml.ErrClosed), "%s: want an error wrapping ErrClosed, got %v", name, err)
	}
}

func tinyLlama(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, llama.WriteRandomModel(path, llama.RandomConfig{Seed: 3}))
	return path
}

// TestLlamaClosedObjectsReturnErrClosed: the llama methods with an error result report a
// closed Model, Context or Engine with an error wrapping ggml.ErrClosed, whatever the order of
// the Close calls (the model closed before its context included).
func TestLlamaClosedObjectsReturnErrClosed(t *testing.T) {
	path := tinyLlama(t)
	load := func() *llama.Model {
		m, err := llama.Load(path, llama.Options{Threads: 1})
		require.NoError(t, err)
		return m
	}
	contextCalls := func(name string, c *llama.Context) {
		t.Helper()
		var b llama.Batch
		b.Add(1, 0, 0, true)
		assertClosed(t, name+": Eval", func() error { _, err := c.Eval([]int32{1, 2}, false); return err })
		assertClosed(t, name+": Decode", func() error { return c.Decode(&b) })
		assertClosed(t, name+": RunGreedy", func() error { _, err := c.RunGreedy([]int32{1}, 2); return err })
		assertClosed(t, name+": Embed", func() error { _, err := c.Embed([]int32{1}, llama.EmbedOptions{}); return err })
		assertClosed(t, name+": EmbedBatch", func() error { _, err := c.EmbedBatch([][]int32{{1}}, llama.EmbedOptions{}); return err })
		assertClosed(t, name+": SeqRemove", func() error { return c.SeqRemove(0, 0, -1) })
		assertClosed(t, name+": SeqCopy", func() error { return c.SeqCopy(0, 1, 0, -1) })
		assertClosed(t, name+": SeqKeep", func() error { return c.SeqKeep(0) })
		assertClosed(t, name+": SeqShift", func() error { return c.SeqShift(0, 0, -1, 1) })
		assertClosed(t, name+": SeqState", func() error { _, err := c.SeqState(0); return err })
		assertClosed(t, name+": SetSeqState", func() error { return c.SetSeqState(0, []byte("x")) })
		assertClosed(t, name+": Generate", func() error {
			for _, err := range c.Generate(context.Background(), llama.Request{Tokens: []int32{1}, MaxTokens: 1}) {
				if err != nil {
					return err
				}
			}
			return nil
		})
	}

	// the context closed, the model open
	m := load()
	c, err := m.NewContext(llama.ContextOptions{NCtx: 64, NBatch: 16})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	contextCalls("closed context", c)
	require.NoError(t, m.Close())

	// the model closed before its context (the wrong order): the context reports it
	m = load()
	c, err = m.NewContext(llama.ContextOptions{NCtx: 64, NBatch: 16})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	contextCalls("model closed first", c)
	require.NoError(t, c.Close())

	// the closed model itself
	assertClosed(t, "Model.NewContext", func() error { _, err := m.NewContext(llama.ContextOptions{NCtx: 64}); return err })
	assertClosed(t, "Model.SetThreads", func() error { return m.SetThreads(2) })
	assertClosed(t, "NewEngine", func() error {
		_, err := llama.NewEngine(m, llama.EngineOptions{Parallel: 1, ContextSize: 32})
		return err
	})

	// a closed engine
	m = load()
	defer m.Close()
	e, err := llama.NewEngine(m, llama.EngineOptions{Parallel: 1, ContextSize: 32, BatchSize: 16})
	require.NoError(t, err)
	require.NoError(t, e.Close())
	assertClosed(t, "Engine.Generate", func() error {
		for _, err := range e.Generate(context.Background(), llama.Request{Tokens: []int32{1}, MaxTokens: 1}) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	assertClosed(t, "Engine.EmbedTokens", func() error {
		_, err := e.EmbedTokens(context.Background(), []int32{1}, llama.EmbedOptions{})
		return err
	})
	assert.ErrorIs(t, llama.ErrEngineClosed, ggml.ErrClosed)
}

// TestTrainClosedObjectsReturnErrClosed: the train methods with an error result report a
// closed Model or Trainer with an error wrapping ggml.ErrClosed, in either close order.
func TestTrainClosedObjectsReturnErrClosed(t *testing.T) {
	var docs []string
	for i := 0; i < 20; i++ {
		docs = append(docs, strings.Repeat("func add(x, y int) int { return x + y }\n", 3))
	}
	vocab, err := train.TrainTokenizer(docs, train.TokenizerOptions{VocabSize: 280, MinCharCount: 1})
	require.NoError(t, err)
	tok, err := tokenizer.New(vocab)
	require.NoError(t, err)
	var data []int32
	for _, d := range docs {
		data = append(data, tok.Tokenize(d, false, false)...)
	}
	cfg := train.Config{NEmbd: 16, NLayer: 1, NHead: 2, NCtx: 8}
	opt := train.Options{Steps: 2, Batch: 2, LearningRate: 1e-3, Seed: 1}
	trainerCalls := func(name string, tr *train.Trainer) {
		t.Helper()
		assertClosed(t, name+": Train", func() error { return tr.Train(1) })
		assertClosed(t, name+": Evaluate", func() error { _, err := tr.Evaluate(data, 1); return err })
		assertClosed(t, name+": Logits", func() error { _, err := tr.Logits(data[:16]); return err })
		assertClosed(t, name+": SetSteps", func() error { return tr.SetSteps(4) })
		assertClosed(t, name+": SaveCheckpoint", func() error { return tr.SaveCheckpoint(t.TempDir()) })
	}

	m, err := train.NewModel(cfg, vocab, 1)
	require.NoError(t, err)
	tr, err := train.NewTrainer(m, data, opt)
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	trainerCalls("closed trainer", tr)
	require.NoError(t, m.Close())
	assertClosed(t, "Model.Save", func() error { return m.Save(filepath.Join(t.TempDir(), "m.gguf"), train.SaveOptions{}) })
	assertClosed(t, "NewTrainer", func() error { _, err := train.NewTrainer(m, data, opt); return err })

	// the model closed before its trainer
	m, err = train.NewModel(cfg, vocab, 2)
	require.NoError(t, err)
	tr, err = train.NewTrainer(m, data, opt)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	trainerCalls("model closed first", tr)
	require.NoError(t, tr.Close())
}

// closedRuleAllowed are the exported methods with an error result that need no open-check:
// they only read what stays valid after Close (metadata, the tokenizer) or close.
var closedRuleAllowed = map[string]string{
	"Model.Close":             "closing is idempotent",
	"Context.Close":           "closing is idempotent",
	"Trainer.Close":           "closing is idempotent",
	"Engine.Close":            "closing is idempotent",
	"LlamaBackend.Close":      "closing is idempotent",
	"Engine.Shutdown":         "an Engine's closing",
	"Model.Tokenizer":         "the metadata stay in memory",
	"Model.GrammarVocab":      "the metadata stay in memory",
	"Model.NewConstraint":     "the metadata stay in memory",
	"Engine.Detokenize":       "the tokenizer stays valid",
	"LlamaBackend.Detokenize": "the tokenizer stays valid",
	"LlamaBackend.ChatPrompt": "the template and tokenizer stay valid",
	"Model.Save":              "train.Model.Save: its builder checks",
	"Engine.Generate":         "its submit reports ErrEngineClosed, which wraps ErrClosed",
	"Engine.Embed":            "through EmbedTokens",
	"Engine.EmbedTokens":      "its do reports ErrEngineClosed, which wraps ErrClosed",
}

// TestErrorMethodsReportClosedOutsideGgml extends ggml's rule test (closed_rule_test.go) to
// the llama, train and server packages: every exported method of a type that can be closed,
// with an error result (or a stream of errors), calls its checkOpen, unless it is one of
// closedRuleAllowed.
func TestErrorMethodsReportClosedOutsideGgml(t *testing.T) {
	closable := map[string]map[string]bool{
		"../llama":  {"Model": true, "Context": true, "Engine": true},
		"../train":  {"Model": true, "Trainer": true},
		"../server": {"LlamaBackend": true},
	}
	checked := 0
	for dir, types := range closable {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "nocgo.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			require.NoError(t, err)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil || fd.Recv == nil || !fd.Name.IsExported() || !reportsError(fd) {
					continue
				}
				if !types[recvName(fd)] {
					continue
				}
				checked++
				if callsCheckOpen(fd.Body) {
					continue
				}
				if _, ok := closedRuleAllowed[recvName(fd)+"."+fd.Name.Name]; ok {
					continue
				}
				t.Errorf("%s: %s.%s has an error result: call checkOpen first so that a closed object is reported with an error wrapping ggml.ErrClosed",
					fset.Position(fd.Pos()), recvName(fd), fd.Name.Name)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d methods checked: the rule's scan is broken", checked)
	}
}

func recvName(fd *ast.FuncDecl) string {
	typ := fd.Recv.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// reportsError: an error result, or an iter.Seq2[_, error].
func reportsError(fd *ast.FuncDecl) bool {
	if fd.Type.Results == nil {
		return false
	}
	for _, r := range fd.Type.Results.List {
		if id, ok := r.Type.(*ast.Ident); ok && id.Name == "error" {
			return true
		}
		if ix, ok := r.Type.(*ast.IndexListExpr); ok {
			for _, a := range ix.Indices {
				if id, ok := a.(*ast.Ident); ok && id.Name == "error" {
					return true
				}
			}
		}
	}
	return false
}

func callsCheckOpen(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if ce, ok := n.(*ast.CallExpr); ok {
			if se, ok := ce.Fun.(*ast.SelectorExpr); ok && se.Sel.Name == "checkOpen" {
				found = true
			}
		}
		return !found
	})
	return found
}
