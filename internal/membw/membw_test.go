//go:build cgo

package membw

import "testing"

func TestProbe(t *testing.T) {
	p, err := New(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, th := range []int{1, 2, 3} {
		if gbs := p.ReadGBs(th); !(gbs > 0) {
			t.Fatalf("%d threads: %v GB/s", th, gbs)
		}
	}
	p.Close()
	p.Close() // idempotent
	if _, err := New(0); err == nil {
		t.Fatal("New(0) gave no error")
	}
}
