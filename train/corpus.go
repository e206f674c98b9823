package train

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/ggml-go/ggml/tokenizer"
)

// Document is one text of a corpus (a source file).
type Document struct {
	Name string // path relative to the corpus root, with forward slashes
	Text string
}

// Corpus is a training text split into training and held-out documents.
type Corpus struct {
	Train, Eval []Document
}

// CorpusOptions configures LoadGoCorpus. Zero fields take the defaults.
type CorpusOptions struct {
	// HoldOut lists package directories (relative to the root, e.g. "encoding/json") whose
	// files, subdirectories included, form the evaluation set (DefaultHoldOut when nil).
	HoldOut []string
	// MaxTrainBytes caps the training text (default 32 MiB): files are taken in an order
	// fixed by a hash of their names until the cap is reached. Negative: no cap.
	MaxTrainBytes int64
	// MaxEvalBytes caps the held-out text the same way (default 1 MiB).
	MaxEvalBytes int64
	// Tests includes _test.go files (default false).
	Tests bool
	// Generated includes generated files (a "Code generated ... DO NOT EDIT." line near the
	// top; default false: tables of numbers teach a small model little).
	Generated bool
}

// DefaultHoldOut are the packages of the Go tree held out for evaluation by default.
// internal/strconv is held out with strconv: since Go 1.26 it holds strconv's implementation,
// and most of strconv's doc comments appear there word for word.
var DefaultHoldOut = []string{"encoding/json", "strconv", "internal/strconv", "text/template"}

// GoRoot returns the root of the Go installation's sources: $(go env GOROOT)/src.
func GoRoot() string { return filepath.Join(runtime.GOROOT(), "src") }

// LoadGoCorpus reads the .go files under root (GoRoot() when empty), skipping testdata and
// hidden directories, and splits them into training and held-out documents by package
// directory.
func LoadGoCorpus(root string, opt CorpusOptions) (*Corpus, error) {
	if root == "" {
		root = GoRoot()
	}
	if opt.HoldOut == nil {
		opt.HoldOut = DefaultHoldOut
	}
	if opt.MaxTrainBytes == 0 {
		opt.MaxTrainBytes = 32 << 20
	}
	if opt.MaxEvalBytes == 0 {
		opt.MaxEvalBytes = 1 << 20
	}
	type file struct {
		rel  string
		size int64
		hash uint64
		eval bool
	}
	var files []file
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || (!opt.Tests && strings.HasSuffix(name, "_test.go")) || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		h := fnv.New64a()
		h.Write([]byte(rel))
		f := file{rel: rel, size: info.Size(), hash: h.Sum64()}
		for _, p := range opt.HoldOut {
			if strings.HasPrefix(rel, strings.TrimSuffix(p, "/")+"/") {
				f.eval = true
			}
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("train: reading the corpus: %w", err)
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].hash != files[j].hash {
			return files[i].hash < files[j].hash
		}
		return files[i].rel < files[j].rel
	})
	c := &Corpus{}
	var nTrain, nEval int64
	for _, f := range files {
		n, limit, dst := &nTrain, opt.MaxTrainBytes, &c.Train
		if f.eval {
			n, limit, dst = &nEval, opt.MaxEvalBytes, &c.Eval
		}
		if limit >= 0 && *n+f.size > limit {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.rel)))
		if err != nil {
			return nil, fmt.Errorf("train: reading the corpus: %w", err)
		}
		if !opt.Generated && isGenerated(b) {
			continue
		}
		*n += int64(len(b))
		*dst = append(*dst, Document{Name: f.rel, Text: string(b)})
	}
	if len(c.Train) == 0 {
		return nil, fmt.Errorf("train: no training files (.go) under %s", root)
	}
	if len(c.Eval) == 0 {
		return nil, errors.New("train: no held-out files: none of the HoldOut packages is in the corpus")
	}
	return c, nil
}

// isGenerated reports whether a Go file says it is generated (the convention of
// https://go.dev/s/generatedcode: a line "// Code generated ... DO NOT EDIT." before the
// package clause; only the first 2 KiB are looked at).
func isGenerated(b []byte) bool {
	head := string(b[:min(len(b), 2048)])
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
		if strings.HasPrefix(line, "package ") {
			break
		}
	}
	return false
}

// Texts returns the texts of docs.
func Texts(docs []Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Text
	}
	return out
}

// TokenizeDocuments tokenizes every document with BOS in front (as the runner tokenizes a
// prompt) and concatenates the results into one token stream, using up to threads
// goroutines.
func TokenizeDocuments(tok *tokenizer.Tokenizer, docs []Document, threads int) []int32 {
	threads = max(threads, 1)
	parts := make([][]int32, len(docs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				parts[i] = tok.Tokenize(docs[i].Text, true, false)
			}
		}()
	}
	for i := range docs {
		next <- i
	}
	close(next)
	wg.Wait()
	var n int
	for _, p := range parts {
		n += len(p)
	}
	out := make([]int32, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
