package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func newTestSet() (*FlagSet, *bytes.Buffer, *bytes.Buffer, *struct {
	threads int
	temp    float32
	model   string
	verbose bool
	wait    time.Duration
}) {
	v := &struct {
		threads int
		temp    float32
		model   string
		verbose bool
		wait    time.Duration
	}{}
	fs := New("tool run", "-m MODEL")
	var out, errOut bytes.Buffer
	fs.SetOutput(&out, &errOut)
	fs.Int(&v.threads, "t,threads", "N", 4, "threads")
	fs.Float32(&v.temp, "temp", "X", 0.8, "temperature")
	fs.String(&v.model, "m,model", "FILE", "", "model file")
	fs.Bool(&v.verbose, "v,verbose", false, "say more")
	fs.Duration(&v.wait, "wait", "D", time.Second, "wait")
	return fs, &out, &errOut, v
}

func TestNamesAndForms(t *testing.T) {
	for _, args := range [][]string{
		{"-t", "3", "-m", "a.gguf", "-v", "-temp", "0.5"},
		{"--threads", "3", "--model", "a.gguf", "--verbose", "--temp", "0.5"},
		{"--threads=3", "-model=a.gguf", "-v=true", "--temp=0.5"},
	} {
		fs, _, errOut, v := newTestSet()
		if err := fs.Parse(args, false); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, errOut)
		}
		if v.threads != 3 || v.model != "a.gguf" || !v.verbose || v.temp != 0.5 {
			t.Errorf("%v: got %+v", args, *v)
		}
		if !fs.Changed("threads") || !fs.Changed("-t") || fs.Changed("wait") {
			t.Errorf("%v: Changed is wrong", args)
		}
	}
}

func TestHelpPrintsOnStdoutAndRunsNothing(t *testing.T) {
	for _, h := range []string{"-h", "--help", "-help"} {
		fs, out, errOut, v := newTestSet()
		err := fs.Parse([]string{"-t", "9", h}, false)
		if !errors.Is(err, ErrHelp) {
			t.Fatalf("%s: err %v", h, err)
		}
		if errOut.Len() != 0 {
			t.Errorf("%s: help wrote to stderr: %q", h, errOut)
		}
		text := out.String()
		for _, want := range []string{"usage: tool run -m MODEL", "-t, --threads N", "(default 4)", "(default 0.8)", "-m, --model FILE", "--wait D", "(default 1s)"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: help lacks %q:\n%s", h, want, text)
			}
		}
		if strings.Contains(text, "0.800000") {
			t.Errorf("float32 default not printed as typed:\n%s", text)
		}
		if v.threads != 4 {
			t.Errorf("%s: flags before -h were applied", h)
		}
	}
}

func TestMistakes(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"-t", "x"}, {"--temp", "warm"}, {"positional"}, {"-wait", "5"}} {
		fs, out, errOut, _ := newTestSet()
		err := fs.Parse(args, false)
		if !errors.Is(err, ErrUsage) {
			t.Errorf("%v: err %v", args, err)
		}
		if out.Len() != 0 || !strings.Contains(errOut.String(), "usage:") {
			t.Errorf("%v: want the usage on stderr only; stdout %q stderr %q", args, out, errOut)
		}
	}
	fs, _, _, _ := newTestSet()
	if err := fs.Parse([]string{"-t", "2", "a", "b"}, true); err != nil || len(fs.Args()) != 2 {
		t.Errorf("positional arguments when allowed: %v %v", err, fs.Args())
	}
}

func TestDuplicateNamePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a name defined twice must panic")
		}
	}()
	fs := New("x", "")
	var a, b int
	fs.Int(&a, "t,threads", "N", 1, "")
	fs.Int(&b, "threads", "N", 1, "")
}

func TestWrap(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	threads := fs.Int("t", 4, "threads")
	temp := fs.Float64("temp", float64(float32(0.8)), "temperature")
	model := fs.String("m", "", "model `FILE`")
	verbose := fs.Bool("v", false, "say more")
	f := Wrap(fs, "tool gen", "-m FILE", [][]string{{"t", "threads"}, {"m", "model"}, {"n", "n-predict"}})
	var out, errOut bytes.Buffer
	f.SetOutput(&out, &errOut)
	if err := f.Parse([]string{"--threads", "3", "--model", "a.gguf", "-v", "--temp", "0.5"}, false); err != nil {
		t.Fatal(err, errOut.String())
	}
	if *threads != 3 || *model != "a.gguf" || !*verbose || *temp != 0.5 {
		t.Fatalf("got %d %q %v %v", *threads, *model, *verbose, *temp)
	}
	if fs.Lookup("n-predict") != nil {
		t.Error("an alias of an undefined flag was defined")
	}
	err := f.Parse([]string{"-h"}, false)
	if !errors.Is(err, ErrHelp) {
		t.Fatal(err)
	}
	for _, want := range []string{"-t, --threads N", "-m, --model FILE", "(default 0.8)", "-v  "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "0.80000001") {
		t.Errorf("float32 default printed with float64 digits:\n%s", out.String())
	}
}
