//go:build cgo

package ggml

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestProfileReportFromGo runs a compute in a child process with GGML_X_PROFILE=1 and checks
// that ProfileReport returns the engine's report to a Go program.
func TestProfileReportFromGo(t *testing.T) {
	if os.Getenv("GGML_TEST_PROFILE_CHILD") == "1" {
		profileChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProfileReportFromGo$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GGML_TEST_PROFILE_CHILD=1", "GGML_X_PROFILE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "REPORT<<ggml profile: 1 computes") || !strings.Contains(s, "MUL_MAT f32") {
		t.Fatalf("no report from the Go program:\n%s", s)
	}
	if strings.Count(s, "ggml profile:") != 1 {
		t.Fatalf("the report taken by Go must not be printed again at exit:\n%s", s)
	}
}

func profileChild(t *testing.T) {
	if !ProfileEnabled() {
		t.Fatal("GGML_X_PROFILE=1 but profiling is off")
	}
	cpu, err := NewCPU(WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	ctx, err := NewContext(Params{NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	w := ctx.NewTensor2D(TypeF32, 8, 4)
	x := ctx.NewTensor1D(TypeF32, 8)
	g := ctx.NewGraph().BuildForwardExpand(ctx.MulMat(w, x))
	buf, err := AllocContextTensors(ctx, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if err := cpu.Compute(g); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("REPORT<<" + ProfileReport() + ">>\n")
}
