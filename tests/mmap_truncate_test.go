package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/llama"
)

// truncateChildEnv names the case a child process of TestTruncatedModelFile runs.
const truncateChildEnv = "GGML_GO_TRUNCATE_CHILD"

// TestTruncatedModelFile truncates a model file after it was loaded. Mapped (ggml's default;
// the runner's with NoRepack), the next evaluation (or GGUFTensors.CheckFile) returns an error
// wrapping ErrFileChanged instead of touching the pages past the new end (SIGBUS); read into
// memory (NoMmap), or copied out of the mapping (the runner's default), the model does not care.
// Each case runs in a child process, so that a SIGBUS fails the test instead of killing the test
// binary.
func TestTruncatedModelFile(t *testing.T) {
	if c := os.Getenv(truncateChildEnv); c != "" {
		truncateChild(t, c)
		return
	}
	for _, c := range []string{"ggml-mapped", "ggml-nommap", "llama-mapped", "llama-nommap", "llama-default"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTruncatedModelFile$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), truncateChildEnv+"="+c)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: the child failed or crashed:\n%s", c, out)
		assert.Contains(t, string(out), "truncate-case-passed "+c, "%s:\n%s", c, out)
	}
}

func truncateChild(t *testing.T, c string) {
	path := filepath.Join(t.TempDir(), "model.gguf")
	require.NoError(t, llama.WriteRandomModel(path, llama.RandomConfig{Seed: 5}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	truncate := func() { require.NoError(t, os.Truncate(path, st.Size()/2)) }
	switch c {
	case "ggml-mapped", "ggml-nommap":
		f, err := gguf.Open(path)
		require.NoError(t, err)
		defer f.Close()
		g, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{NoMmap: c == "ggml-nommap"})
		require.NoError(t, err)
		defer g.Close()
		require.Equal(t, c == "ggml-mapped", g.Mapped())
		require.NoError(t, g.CheckFile())
		last := f.Tensors()[len(f.Tensors())-1].Name
		want, err := g.Tensor(last).Bytes()
		require.NoError(t, err)
		truncate()
		err = g.CheckFile()
		if c == "ggml-mapped" {
			require.Error(t, err)
			require.True(t, errors.Is(err, ggml.ErrFileChanged), "%v", err)
			require.Contains(t, err.Error(), "truncated")
			fmt.Println("mapped file check:", err)
		} else {
			require.NoError(t, err)
			got, err := g.Tensor(last).Bytes() // in memory: the truncation does not matter
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	case "llama-mapped", "llama-nommap", "llama-default":
		// NoRepack keeps the CPU's weights mapped; by default they are copied out of the mapping
		m, err := llama.Load(path, llama.Options{Threads: 1, NoMmap: c == "llama-nommap", NoRepack: c == "llama-mapped"})
		require.NoError(t, err)
		defer m.Close()
		ctx, err := m.NewContext(llama.ContextOptions{NCtx: 64, NBatch: 16})
		require.NoError(t, err)
		defer ctx.Close()
		want, err := ctx.Eval([]int32{1, 2, 3}, false)
		require.NoError(t, err)
		ctx.Reset()
		truncate()
		got, err := ctx.Eval([]int32{1, 2, 3}, false)
		if c == "llama-mapped" {
			require.Error(t, err)
			require.True(t, errors.Is(err, ggml.ErrFileChanged), "%v", err)
			fmt.Println("mapped model eval:", err)
		} else {
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	}
	fmt.Println("truncate-case-passed", c)
}
