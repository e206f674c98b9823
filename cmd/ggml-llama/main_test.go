//go:build cgo

package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/defaultmodel"
)

// capture runs the command line with stdout and stderr captured and returns its exit status
// and outputs. Every native object is closed by then.
func capture(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	start := ggml.LiveObjects()
	var o, e bytes.Buffer
	stdout, stderr = &o, &e
	defer func() { stdout, stderr = os.Stdout, os.Stderr }()
	code := run(args)
	assert.Equal(t, start, ggml.LiveObjects(), "live objects after %v: %v", args, ggml.LiveObjectsByKind())
	return code, o.String(), e.String()
}

// randomModel writes a small random model with the command itself.
func randomModel(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "m.gguf")
	code, _, errOut := capture(t, "random", "-o", path, "--embd", "64", "--layers", "2", "--ff", "96", "--vocab", "400", "--type", "q8_0")
	require.Equal(t, 0, code, errOut)
	return path
}

func TestLogitsCommand(t *testing.T) {
	model := randomModel(t)
	out := filepath.Join(t.TempDir(), "run.json")
	code, _, errOut := capture(t, "logits", "-m", model, "-p", "Hello world", "-n", "5", "-o", out, "-t", "2")
	require.Equal(t, 0, code, errOut)
	var res logitsOutput
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, int32(1), res.Tokens[0], "BOS first")
	assert.Len(t, res.Generated, 5)
	assert.Equal(t, len(res.Tokens)+5, res.NRows)
	assert.Equal(t, 400, res.NVocab)
	assert.Contains(t, string(b), `"bin_rows": null`)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(out), res.LogitsFile))
	require.NoError(t, err)
	rows, err := ggml.BytesFloat32(raw)
	require.NoError(t, err)
	require.Len(t, rows, res.NRows*res.NVocab, "every row is written")
	for j, g := range res.Generated {
		row := rows[(len(res.Tokens)-1+j)*400 : (len(res.Tokens)+j)*400]
		best := 0
		for i := range row {
			if row[i] > row[best] {
				best = i
			}
		}
		assert.Equal(t, int32(best), g, "generated[%d] is the argmax of the row before", j)
	}

	// an empty prompt is just BOS
	code, _, errOut = capture(t, "logits", "-m", model, "-p", "", "-n", "1", "-o", out)
	require.Equal(t, 0, code, errOut)
	b, _ = os.ReadFile(out)
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, []int32{1}, res.Tokens)
}

func TestTokenizeCommand(t *testing.T) {
	model := randomModel(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	require.NoError(t, os.WriteFile(in, []byte(`["", "Hi", "a b\n"]`), 0o644))
	out := filepath.Join(dir, "out.json")
	code, _, errOut := capture(t, "tokenize", "-m", model, "-i", in, "-o", out)
	require.Equal(t, 0, code, errOut)
	var res tokFile
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, "llama-tok-v1", res.Format)
	require.Len(t, res.Items, 3)
	assert.Equal(t, []int32{1}, res.Items[0].IDsBOS)
	assert.Equal(t, []int32{}, res.Items[0].IDsNoBOS)
	assert.Equal(t, append([]int32{1}, res.Items[1].IDsNoBOS...), res.Items[1].IDsBOS)
	assert.Equal(t, hex.EncodeToString([]byte(" Hi")), res.Items[1].PiecesHex)

	// the llama-tok-v1 input form
	require.NoError(t, os.WriteFile(in, []byte(`{"format":"llama-tok-v1","items":[{"text":"x"}]}`), 0o644))
	code, _, errOut = capture(t, "tokenize", "-m", model, "-i", in, "-o", out)
	require.Equal(t, 0, code, errOut)
}

func TestGenerateBenchPerplexity(t *testing.T) {
	model := randomModel(t)
	code, text, errOut := capture(t, "generate", "-m", model, "-p", "Once", "-n", "6", "--temp", "0", "-t", "1")
	require.Equal(t, 0, code, errOut)
	assert.NotEmpty(t, text)
	assert.Contains(t, errOut, "generation:")
	assert.Contains(t, errOut, "tokens/s")

	// seeded sampling is reproducible; a stop string ends the text before it
	_, a, _ := capture(t, "generate", "-m", model, "-p", "Once", "-n", "12", "--temp", "1.5", "--seed", "5", "--top-k", "0", "--min-p", "0")
	_, b, _ := capture(t, "generate", "-m", model, "-p", "Once", "-n", "12", "--temp", "1.5", "--seed", "5", "--top-k", "0", "--min-p", "0")
	assert.Equal(t, a, b)
	require.True(t, strings.HasSuffix(a, "\n"), "the output ends with a newline")
	a = strings.TrimSuffix(a, "\n")
	assert.NotEmpty(t, a)
	if len(a) > 3 {
		stop := a[2:4]
		_, c, errOut := capture(t, "generate", "-m", model, "-p", "Once", "-n", "12", "--temp", "1.5", "--seed", "5", "--top-k", "0", "--min-p", "0", "--stop", stop)
		assert.Equal(t, a[:strings.Index(a, stop)]+"\n", c)
		assert.Contains(t, errOut, "stop string")
	}

	code, out, errOut := capture(t, "bench", "-m", model, "-p", "16", "-n", "4", "-t", "1,2", "-r", "1")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "pp16")
	assert.Contains(t, out, "tg4")
	code, out, errOut = capture(t, "bench", "-m", model, "-p", "0", "-n", "4", "-t", "1", "-r", "1", "-np", "1,3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "tg4 np1")
	assert.Contains(t, out, "tg4 np3")
	// -d: the tests after a context of that many tokens (shared by the -np sequences)
	code, out, errOut = capture(t, "bench", "-m", model, "-p", "8", "-n", "4", "--n-depth", "0,16", "-t", "1", "-r", "1", "-np", "2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "pp8 ")
	assert.Contains(t, out, "tg4 np2 ")
	assert.Contains(t, out, "pp8 @ d16")
	assert.Contains(t, out, "tg4 np2 @ d16")
	code, out, errOut = capture(t, "bench", "-m", model, "-p", "0", "-n", "3", "-d", "5", "-t", "1", "-r", "1")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "tg3 @ d5")
	// --bw: a probe pass before every generation repetition, three more columns (a dash for
	// the prompt tests, whose speed is not the memory's)
	code, out, errOut = capture(t, "bench", "-m", model, "-p", "4", "-n", "3", "-t", "1", "-r", "2", "--bw")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "MB of weights read per decode step")
	assert.Contains(t, out, "%read")
	assert.Regexp(t, `pp4 +[0-9.]+ +[0-9.]+ +- +- +-`, out)
	assert.Regexp(t, `tg3 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%`, out)

	txt := filepath.Join(t.TempDir(), "t.txt")
	require.NoError(t, os.WriteFile(txt, []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 20)), 0o644))
	code, out, errOut = capture(t, "perplexity", "-m", model, "-f", txt, "-c", "32")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "perplexity:")
}

// The reference continuation of shared/models, through the generate command.
func TestGenerateMatchesReference(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "models")
	refPath := filepath.Join(dir, "public-f16.ref.hello.json")
	b, err := os.ReadFile(refPath)
	if err != nil {
		t.Skip("shared/models not found")
	}
	var ref struct {
		Hex string `json:"generated_text_hex"`
	}
	require.NoError(t, json.Unmarshal(b, &ref))
	code, text, errOut := capture(t, "generate", "-m", filepath.Join(dir, "public-f16.gguf"), "-p", "Hello world",
		"-n", "24", "--temp", "0", "--repeat-penalty", "1", "-t", "2")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, ref.Hex, hex.EncodeToString([]byte(strings.TrimSuffix(text, "\n"))))
}

func TestCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"logits", "-m", "/nonexistent/m.gguf", "-o", "o.json"}, 1, "no such file"},
		{[]string{"logits", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"generate", "-m", "/nonexistent/m.gguf"}, 1, "cannot open the model"},
		{[]string{"tokenize", "-m", "x.gguf"}, 1, "-i STRINGS.json"},
		{[]string{"bench", "-m", "x.gguf", "-t", "two"}, 1, "comma-separated"},
		{[]string{"random", "-o", "x.gguf", "--type", "q9_9"}, 1, "unknown tensor type"},
	} {
		code, _, errOut := capture(t, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
	}
	// a model of another architecture
	path := filepath.Join(t.TempDir(), "m.gguf")
	code, _, _ := capture(t, "random", "-o", path, "--vocab", "300", "--embd", "32", "--ff", "32", "--layers", "1")
	require.Equal(t, 0, code)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	i := bytes.Index(raw, []byte("llama"))
	require.Greater(t, i, 0)
	copy(raw[i:], "gemma")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	code, _, errOut := capture(t, "logits", "-m", path, "-o", filepath.Join(t.TempDir(), "o.json"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `architecture (general.architecture) is "gemma"`)

	// an offload backend that is not registered
	code, _, errOut = capture(t, "generate", "-m", randomModel(t), "--backend", "NoSuch0", "-ngl", "2")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "-tags cuda")
}

// Without a command and without -m, ggml-llama generates with the embedded model.
func TestDefaultModelGenerate(t *testing.T) {
	require.NotEmpty(t, defaultmodel.GGUF)
	temps := func() map[string]bool {
		m := map[string]bool{}
		names, _ := filepath.Glob(filepath.Join(os.TempDir(), "ggml-llama-default-*.gguf"))
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	before := temps()
	code, out, errOut := capture(t, "-p", "func main() {", "-n", "16", "--seed", "1", "-t", "2")
	require.Equal(t, 0, code, errOut)
	assert.NotEmpty(t, out)
	assert.Contains(t, errOut, "generation: ")
	for n := range temps() {
		assert.True(t, before[n], "the temporary copy of the embedded model %s is removed", n)
	}

	// the other commands use it too
	text := filepath.Join(t.TempDir(), "t.go")
	require.NoError(t, os.WriteFile(text, []byte(strings.Repeat("func f(x int) int {\n\treturn x + 1\n}\n\n", 40)), 0o644))
	code, out, errOut = capture(t, "perplexity", "-f", text, "-c", "64", "-t", "2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out+errOut, "perplexity")
}

// TestHelpRunsNothing: -h and --help print the usage of every subcommand on stdout and exit 0
// without running it; llama.cpp's long flag names work.
func TestHelpRunsNothing(t *testing.T) {
	dir := t.TempDir()
	for name := range commands {
		for _, h := range []string{"-h", "--help"} {
			out := filepath.Join(dir, name+".out")
			code, o, e := capture(t, name, "-o", out, h)
			assert.Equal(t, 0, code, "%s %s: %s", name, h, e)
			assert.Contains(t, o, "usage: ggml-llama "+name, name)
			assert.Empty(t, e, name)
			assert.NoFileExists(t, out, "%s %s ran", name, h)
		}
	}
	code, o, _ := capture(t, "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, o, "commands:")
	code, _, e := capture(t, "generate", "--no-such-flag")
	assert.Equal(t, 2, code)
	assert.Contains(t, e, "usage: ggml-llama generate")
}

// TestLlamaCppFlagNames: the long names of llama.cpp's tools and -f for the prompt.
func TestLlamaCppFlagNames(t *testing.T) {
	model := randomModel(t)
	promptFile := filepath.Join(t.TempDir(), "prompt.txt")
	require.NoError(t, os.WriteFile(promptFile, []byte("Hello"), 0o644))
	code, o, e := capture(t, "generate", "--model", model, "--file", promptFile, "--n-predict", "4", "--threads", "2",
		"--ctx-size", "64", "--batch-size", "16", "--seed", "1", "--temp", "0")
	require.Equal(t, 0, code, e)
	assert.True(t, strings.HasSuffix(o, "\n"), "output ends with a newline: %q", o)
	code, _, e = capture(t, "generate", "-m", model, "-p", "x", "-f", promptFile)
	assert.Equal(t, 1, code)
	assert.Contains(t, e, "not both")
}
