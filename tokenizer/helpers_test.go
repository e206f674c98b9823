package tokenizer

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/require"
)

// modelsDir is where the shared LLaMA test models live, relative to this package.
var modelsDir = filepath.Join("..", "..", "shared", "models")

var (
	llamaOnce sync.Once
	llamaTok  *Tokenizer
	llamaErr  error
)

// llamaVocab returns the tokenizer of ../shared/models/public-f16.gguf (the 32,000-token
// LLaMA vocabulary), or skips the test when the shared files are absent.
func llamaVocab(t testing.TB) *Tokenizer {
	t.Helper()
	path := filepath.Join(modelsDir, "public-f16.gguf")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("the shared LLaMA models are not here (%s): check out ../shared next to the repository to run this test", path)
	}
	llamaOnce.Do(func() {
		f, err := gguf.Open(path)
		if err != nil {
			llamaErr = err
			return
		}
		defer f.Close()
		llamaTok, llamaErr = FromGGUF(f)
	})
	require.NoError(t, llamaErr)
	return llamaTok
}

func filepathStat(path string) (os.FileInfo, error) { return os.Stat(path) }

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }
