//go:build cuda

package cuda_test

import (
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/cuda"
)

func needDevice(t *testing.T) {
	t.Helper()
	if cuda.DeviceCount() == 0 {
		t.Skip("no CUDA device present (cudaGetDeviceCount found none): device tests skipped")
	}
}

func TestRegistryListsDevices(t *testing.T) {
	needDevice(t)
	names := ggml.Backends()
	for i := 0; i < cuda.DeviceCount(); i++ {
		want := "CUDA" + string(rune('0'+i))
		if ggml.BackendIndex(want) < 0 {
			t.Errorf("registry %v lacks %s", names, want)
		}
	}
}

func TestDeviceInfo(t *testing.T) {
	needDevice(t)
	if err := cuda.Probe(0); err != nil {
		t.Fatal(err)
	}
	if d := cuda.DeviceDescription(0); d == "" {
		t.Error("empty device description")
	}
	free, total := cuda.DeviceMemory(0)
	if total == 0 || free > total {
		t.Errorf("device memory: free %d, total %d", free, total)
	}
	names, err := cuda.BufferTypeNames(0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CUDA0", "CUDA_Host", "CUDA_Split"}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("buffer type %d: %q, want %q", i, names[i], want[i])
		}
	}
	t.Logf("device 0: %s, %d MiB free of %d MiB", cuda.DeviceDescription(0), free>>20, total>>20)
}

func TestNoDeviceIsNotAnError(t *testing.T) {
	if cuda.DeviceCount() > 0 {
		t.Skip("a device is present")
	}
	if err := cuda.Probe(0); err == nil {
		t.Error("Probe(0) succeeded without a device")
	}
	if d := cuda.DeviceDescription(0); d != "" {
		t.Errorf("description without a device: %q", d)
	}
}
